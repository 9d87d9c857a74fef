/** A workload's run: the load generator as a child process, and what it reported. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Figure, LoadSpec } from './loadgen.js';
import { here } from './plan.js';

export interface LoadResult {
  figures: Figure[];
  notes: string[];
  ok: boolean;
}

/** One load generator in a process of its own (loadgen.ts), its diagnostics appended to `logDir`/loadgen.log. */
export function runLoadgen(spec: LoadSpec, label: string, logDir: string): Promise<LoadResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(here, 'loadgen.js'), JSON.stringify(spec)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const diag = fs.createWriteStream(path.join(logDir, 'loadgen.log'), { flags: 'a' });
    diag.write(`## ${label} ${new Date().toISOString()} ${JSON.stringify(spec)}\n`);
    child.stderr.pipe(diag);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), (spec.maxSeconds + 30) * 1000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      let parsed: { figures: Figure[]; notes: string[] } = {
        figures: [],
        notes: [`no result (exit ${code})`],
      };
      try {
        parsed = JSON.parse(out.trim().split('\n').pop() ?? '');
      } catch {
        // keep the placeholder
      }
      resolve({ ...parsed, ok: code === 0 });
    });
  });
}
