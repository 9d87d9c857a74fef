#!/usr/bin/env node
// The `prepare` step of the client, CLI and broker packages: it makes `npm install <clone>/packages/client`
// (and `npm install -g <clone>/packages/cli` or `<clone>/packages/broker`) work on a clone that was
// never built. npm runs it in the package's folder when another project installs that folder; it
// installs the workspace's own dependencies when they are missing (npm ci: TypeScript is needed to
// build) and compiles the package with what it imports (`tsc -b`). Within the workspace's own install
// and build it does nothing: `npm ci`, `npm start` and `npm test` at the root build everything already.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const packageDir = process.cwd();
/** Where npm was started: inside this clone means the workspace is installing or packing itself. */
const startedIn = path.resolve(process.env.INIT_CWD ?? packageDir);
const insideClone = startedIn === root || startedIn.startsWith(`${root}${path.sep}`);
if (insideClone || process.env.BOOBLIK_PREPARING === '1') process.exit(0);

// The outer install's own settings would steer the clone's install: `npm install -g` passes
// npm_config_global and npm_config_prefix down, and `npm ci` refuses to run globally.
const env = { ...process.env, BOOBLIK_PREPARING: '1' };
for (const key of Object.keys(env)) {
  if (/^npm_config_(global|location|prefix|local_prefix)$/i.test(key)) delete env[key];
}
const run = (command, args) => {
  const result = spawnSync(command, args, { cwd: root, stdio: ['ignore', 2, 2], env });
  if (result.status !== 0) {
    process.stderr.write(`booblik: ${command} ${args.join(' ')} failed in ${root}\n`);
    process.exit(result.status ?? 1);
  }
};
process.stderr.write(`booblik: building ${path.relative(root, packageDir)} for an install from ${root}\n`);
run(process.execPath, [path.join(root, 'scripts', 'ensure-installed.mjs')]);
run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', packageDir]);
