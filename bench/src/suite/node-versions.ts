/**
 * The suite's servers on several Nodes in one sitting: `npm run bench:versions`. Runs the suite
 * (main.ts) once per Node and repetition, with `--node=<major>` and `--reps=1`, the Nodes in rotating
 * order from one repetition to the next so that the machine's drift spreads over all of them, and
 * Redis in every run as the yardstick that shows that drift. Then one table: booblik's medians per
 * Node, each against the first Node's; Redis's in the same runs; how busy the machine was.
 *
 *   npm run bench:versions                                  W1, W2, W3, W5 vs Redis on 20, 22, 24, 26
 *   npm run bench:versions -- --nodes=22,26 --reps=5 --profile    any other flag goes to every run
 *
 * Output: versions.md and versions.json in bench/results/<time>-node-versions/ (or --out=DIR), with
 * each run's own results beside them (r<rep>-node<major>/).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt } from '../stats.js';
import { HEADLINES, lowerIsBetter, median, OURS, type Row, summarize } from './report.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
const argv = process.argv.slice(2);
const option = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const pins = JSON.parse(fs.readFileSync(path.join(repoRoot, 'scripts/node-versions.json'), 'utf8'));
const nodes = (option('nodes') ?? Object.keys(pins.supported).join(',')).split(',');
const reps = Number(option('reps') ?? 3);
const own = ['nodes', 'reps', 'out'];
const passed = argv.filter((a) => !own.some((o) => a.startsWith(`--${o}=`)));
const defaults = [
  ...(passed.some((a) => a.startsWith('--only=')) ? [] : ['--only=W1,W2,W3,W5']),
  ...(passed.some((a) => a.startsWith('--systems=')) ? [] : ['--systems=booblik,redis']),
  ...(passed.includes('--client') ? [] : ['--no-client']),
];
const stamp = new Date()
  .toISOString()
  .replace(/[:.]/g, '-')
  .replace(/-\d\d\dZ$/, 'Z');
const outDir = path.resolve(option('out') ?? path.join(repoRoot, 'bench/results', `${stamp}-node-versions`));
fs.mkdirSync(outDir, { recursive: true });
const log = (s: string) => process.stderr.write(`# ${s}\n`);

function runSuite(node: string, dir: string): Promise<number | null> {
  const args = [
    path.join(here, 'main.js'),
    `--node=${node}`,
    '--reps=1',
    `--out=${dir}`,
    ...defaults,
    ...passed,
  ];
  log(`node ${args.join(' ')}`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' });
    child.once('exit', (code) => resolve(code));
  });
}

interface Run {
  node: string;
  rep: number;
  dir: string;
  exit: number | null;
}

const t0 = performance.now();
const loadAtStart = os.loadavg();
const runs: Run[] = [];
let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true;
});
for (let rep = 1; rep <= reps && !interrupted; rep++) {
  const shift = (rep - 1) % nodes.length;
  for (const node of [...nodes.slice(shift), ...nodes.slice(0, shift)]) {
    if (interrupted) break;
    const dir = path.join(outDir, `r${rep}-node${node}`);
    runs.push({ node, rep, dir, exit: await runSuite(node, dir) });
  }
}

// Every run's rows, booblik's and Redis's labelled with the Node of that run's servers.
const rows: Row[] = [];
const versions: Record<string, { node: string; v8: string }> = {};
const failures: string[] = [];
for (const r of runs) {
  const file = path.join(r.dir, 'results.json');
  if (r.exit !== 0) failures.push(`node ${r.node} rep ${r.rep}: exit ${r.exit} (see ${r.dir})`);
  if (!fs.existsSync(file)) continue;
  const result = JSON.parse(fs.readFileSync(file, 'utf8'));
  versions[r.node] = { node: result.machine.serverNode, v8: result.machine.serverV8 };
  for (const row of result.runs as Row[])
    rows.push({ ...row, system: `${row.system}@${r.node}`, rep: r.rep });
}
const summary = summarize(rows);

const cell = (v: number | undefined) =>
  v === undefined ? '—' : fmt(v, Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2);
const label = (n: string) => `Node ${versions[n]?.node ?? n}`;
const head = (first: string[]) => [
  `| ${[...first, ...nodes.map(label)].join(' | ')} |`,
  `|${[...first, ...nodes].map((_, i) => (i < first.length ? '---' : '---:')).join('|')}|`,
];
const headlines = HEADLINES.filter((h) => rows.some((r) => r.case === h.case && r.metric === h.metric));
const oursTable = [...head(['workload', 'metric'])];
for (const h of headlines) {
  const values = nodes.map((n) => median(summary, h.case, `${OURS}@${n}`, h.metric));
  if (values.every((v) => v === undefined)) continue;
  const base = values[0];
  const cells = values.map((v, i) =>
    i === 0 || v === undefined || !base ? `**${cell(v)}**` : `**${cell(v)}** (${fmt(v / base, 2)}x)`,
  );
  oursTable.push(
    `| ${h.case} | ${h.metric}, ${h.unit}${lowerIsBetter(h.unit) ? ' (lower is better)' : ''} | ${cells.join(' | ')} |`,
  );
}
const yardstick = [...head(['workload', 'metric (Redis in the same runs; machine busy before each case)'])];
for (const h of headlines) {
  const redis = nodes.map((n) => median(summary, h.case, `redis@${n}`, h.metric));
  if (redis.some((v) => v !== undefined))
    yardstick.push(`| ${h.case} | Redis ${h.metric}, ${h.unit} | ${redis.map(cell).join(' | ')} |`);
}
for (const kase of [...new Set(headlines.map((h) => h.case))]) {
  const busy = nodes.map((n) => median(summary, kase, `${OURS}@${n}`, 'machine busy before'));
  if (busy.every((v) => v === undefined)) continue; // W4 reads back on W1's server: no wait of its own
  yardstick.push(
    `| ${kase} | booblik: machine busy before, % of all cores | ${busy.map(cell).join(' | ')} |`,
  );
}
const machineMd = [
  `- date: ${new Date().toISOString()}; command: \`npm run bench:versions${argv.length ? ` -- ${argv.join(' ')}` : ''}\`; ${fmt((performance.now() - t0) / 60_000, 1)} minutes`,
  `- each run: \`npm run bench -- --node=<major> --reps=1 ${[...defaults, ...passed].join(' ')}\`, ${reps} per Node, Nodes in rotating order`,
  `- servers on ${nodes.map((n) => `${label(n)} (V8 ${versions[n]?.v8 ?? '?'})`).join(', ')}; load generators on Node ${process.version}`,
  `- load average at start ${loadAtStart.map((x) => fmt(x, 2)).join(' ')}, at end ${os
    .loadavg()
    .map((x) => fmt(x, 2))
    .join(' ')}`,
].join('\n');
const md = [
  '# booblik on each Node',
  '',
  machineMd,
  '',
  `booblik, medians of ${reps} run(s) per Node; in brackets, against ${label(nodes[0]!)}.`,
  '',
  oursTable.join('\n'),
  '',
  yardstick.join('\n'),
  '',
  ...(failures.length ? ['Failures:', '', ...failures.map((f) => `- ${f}`), ''] : []),
].join('\n');
fs.writeFileSync(path.join(outDir, 'versions.md'), md);
fs.writeFileSync(
  path.join(outDir, 'versions.json'),
  `${JSON.stringify({ nodes, reps, versions, runs, summary }, null, 2)}\n`,
);
process.stdout.write(`\n${md}\nresults: ${outDir}/{versions.md,versions.json}\n`);
process.exit(failures.length > 0 ? 1 : 0);
