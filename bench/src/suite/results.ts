/** The report of a run: results.md, results.json and chart.svg in its folder, and the table on stdout. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fsTypeOf } from '../data-dir.js';
import { fmt } from '../stats.js';
import {
  argv,
  quick,
  RECORD_BYTES,
  repoRoot,
  reps,
  serverNode,
  sizes,
  W1_SHAPE,
  withClient,
} from './plan.js';
import { profileTop } from './profile-top.js';
import {
  chartSvg,
  floorTable,
  fullTable,
  headlineTable,
  OURS,
  OURS_TLS,
  type Row,
  summarize,
} from './report.js';
import { commandVersion } from './servers.js';

/** The machine and software a run is measured on, for the report. */
export function machine(dataRoot: string, systems: readonly string[], natsSyncAlways: boolean) {
  const cpu =
    /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model;
  const git = (args: string[]) => commandVersion('git', ['-C', repoRoot, ...args]);
  return {
    cpu,
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    v8: process.versions.v8,
    serverNode: serverNode.version,
    serverV8: serverNode.v8,
    serverNodePath: serverNode.path,
    dataDir: dataRoot,
    dataFs: fsTypeOf(dataRoot),
    dataDevice: commandVersion('findmnt', ['-n', '-o', 'SOURCE', '-T', dataRoot]),
    redis: systems.includes('redis') ? commandVersion('redis-server', ['--version']) : undefined,
    nats: systems.includes('nats') ? commandVersion('nats-server', ['--version']) : undefined,
    natsSyncAlways,
    commit: git(['rev-parse', '--short', 'HEAD']),
    dirty: (git(['status', '--porcelain']) ?? '') !== '',
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

export type Machine = ReturnType<typeof machine>;

export interface RunResults {
  rows: Row[];
  failures: string[];
  /** Folders of the CPU profiles written, one per profiled broker run. */
  profiles: string[];
  systems: readonly string[];
  peerNames: readonly string[];
  natsSyncAlways: boolean;
  machineAtStart: Machine;
  /** performance.now() at the start of the run. */
  t0: number;
  outDir: string;
}

export function writeResults(run: RunResults): void {
  const { rows, failures, profiles, systems, peerNames, natsSyncAlways, machineAtStart, t0, outDir } = run;
  const summary = summarize(rows);
  const reportSystems = [OURS, OURS_TLS, ...(withClient ? ['booblik-client'] : []), ...peerNames].filter(
    (s) => summary.some((x) => x.system === s),
  );
  const peerNotes: Record<string, string> = {};
  if (!natsSyncAlways) {
    for (const c of ['W3 durable, 8 producers', 'W3 durable, 64 producers'])
      peerNotes[`${c}/nats`] = '(no fsync)';
  }
  const headlineMd = headlineTable(summary, peerNames, peerNotes);
  const floors = floorTable(summary);
  const physicalMd = [
    '| physical limit | min | median | max |',
    '|---|---:|---:|---:|',
    ...summary
      .filter((x) => x.system === 'machine')
      .map(
        (x) =>
          `| ${x.metric}, ${x.unit} | ${fmt(x.spread.min)} | **${fmt(x.spread.median)}** | ${fmt(x.spread.max)} |`,
      ),
  ].join('\n');
  const date = new Date().toISOString();
  const command = `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`;
  const minutes = (performance.now() - t0) / 60_000;
  const profileTops: string[] = [];
  for (const dir of profiles) {
    if (!fs.existsSync(dir)) continue;
    for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
      try {
        profileTops.push(`${path.basename(dir)}:\n${profileTop(path.join(dir, f), 15)}`);
      } catch (e) {
        profileTops.push(`${path.basename(dir)}: unreadable profile (${(e as Error).message})`);
      }
    }
  }

  const m = { ...machineAtStart, loadAverageAtEnd: os.loadavg().map((x) => Math.round(x * 100) / 100) };
  const machineMd = [
    `- date: ${date}; command: \`${command}\`; ${fmt(minutes, 1)} minutes`,
    `- machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB; ${m.kernel}; Node ${m.node} (V8 ${m.v8})`,
    `- servers (booblik, node-floor) on Node ${m.serverNode} (V8 ${m.serverV8}); load generators on Node ${m.node}`,
    `- data: ${m.dataFs} on ${m.dataDevice}; commit ${m.commit}${m.dirty ? ' (with uncommitted changes)' : ''}`,
    `- peers: ${m.redis ?? 'redis: not run'}; ${m.nats ?? 'nats: not run'}${systems.includes('nats') ? ` (fsync per write: ${natsSyncAlways ? 'yes' : 'no'})` : ''}`,
    `- load average at start ${m.loadAverage.join(' ')}, at end ${m.loadAverageAtEnd.join(' ')}`,
  ].join('\n');
  const md = [
    `# booblik benchmark suite, ${date.slice(0, 10)}`,
    '',
    machineMd,
    '',
    `Medians of ${reps} run(s); ratios are ours / peer from this run${systems.includes(OURS_TLS) ? `, and ${OURS_TLS} / ${OURS} (TLS required, the same lean driver over TLS) is what TLS costs` : ''}.`,
    '',
    headlineMd,
    '',
    floors.table,
    '',
    physicalMd,
    '',
    '## Every figure',
    '',
    fullTable(summary),
    '',
    ...(failures.length ? ['## Failures', '', ...failures.map((f) => `- ${f}`), ''] : []),
    ...(profileTops.length ? ['## Broker CPU profiles', '', '```', ...profileTops, '```', ''] : []),
  ].join('\n');
  fs.writeFileSync(path.join(outDir, 'results.md'), md);
  fs.writeFileSync(
    path.join(outDir, 'results.json'),
    `${JSON.stringify({ date, command, quick, reps, sizes, w1Shape: W1_SHAPE, recordBytes: RECORD_BYTES, machine: m, summary, runs: rows, floors: floors.missed, failures }, null, 2)}\n`,
  );
  fs.writeFileSync(
    path.join(outDir, 'chart.svg'),
    chartSvg(
      summary,
      reportSystems,
      `booblik vs Redis Streams vs NATS JetStream (${date.slice(0, 10)}, ${m.cores} cores, medians of ${reps})`,
      peerNotes,
    ),
  );

  process.stdout.write(`\n${machineMd}\n\n${headlineMd}\n\n${floors.table}\n\n${physicalMd}\n`);
  if (profileTops.length) process.stdout.write(`\n${profileTops.join('\n\n')}\n`);
  if (failures.length) process.stdout.write(`\nFailures:\n${failures.map((f) => `- ${f}`).join('\n')}\n`);
}
