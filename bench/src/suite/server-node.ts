/**
 * Which Node the suite's servers (booblik, node-floor) run under: `--node=22` (a release pinned in
 * scripts/node-versions.json, fetched into .cache/node/ when missing), `--node=/path/to/node`, or
 * BENCH_NODE the same way; this process's own Node otherwise. The load generators always run on the
 * suite's Node, so a comparison between Nodes changes the server alone.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export interface ServerNode {
  /** The `node` binary. */
  path: string;
  /** As `process.version`: v22.23.5. */
  version: string;
  v8: string;
}

export function resolveServerNode(repoRoot: string, wanted: string | undefined): ServerNode {
  if (!wanted) return { path: process.execPath, version: process.version, v8: process.versions.v8 };
  let binary = wanted;
  if (!wanted.includes('/')) {
    const fetched = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'node-fetch.mjs'), wanted], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (fetched.status !== 0) throw new Error(`--node=${wanted}: could not fetch it (see above)`);
    binary = fetched.stdout.trim();
  }
  const asked = spawnSync(binary, ['-p', 'process.version + " " + process.versions.v8'], {
    encoding: 'utf8',
  });
  const [version, v8] = (asked.stdout ?? '').trim().split(' ');
  if (asked.status !== 0 || !version || !v8) throw new Error(`--node=${wanted}: ${binary} does not run`);
  return { path: binary, version, v8 };
}
