/**
 * The top of a V8 CPU profile (`node --cpu-prof`): self time per function, heaviest first.
 *
 *   node bench/dist/suite/profile-top.js FILE.cpuprofile [rows=15]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

export function profileTop(file: string, rows = 15): string {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byName = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const n of p.nodes) {
    const hits = n.hitCount ?? 0;
    const f = n.callFrame;
    if (f.functionName === '(idle)') {
      idle += hits;
      continue;
    }
    total += hits;
    const where = f.url
      ? `${f.url.replace(/^file:\/\/.*?\/(packages|node_modules)\//, '$1/')}:${f.lineNumber + 1}`
      : '';
    const name = `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    byName.set(name, (byName.get(name) ?? 0) + hits);
  }
  const seconds = (p.endTime - p.startTime) / 1e6;
  const busy = total / Math.max(1, total + idle);
  const lines = [
    `${path.basename(file)}: ${seconds.toFixed(1)} s profiled, busy ${(busy * 100).toFixed(0)}% of it; self time, share of busy samples:`,
  ];
  for (const [name, hits] of [...byName].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    lines.push(`  ${((hits / Math.max(1, total)) * 100).toFixed(1).padStart(5)}%  ${name}`);
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: profile-top FILE.cpuprofile [rows]\n');
    process.exit(2);
  }
  process.stdout.write(`${profileTop(file, Number(process.argv[3] ?? 15))}\n`);
}
