/**
 * Starting and stopping the systems under test, each as a process of its own on loopback with its
 * data on a real disk. Only processes started here are ever signalled, each by its own pid.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface Server {
  readonly system: string;
  readonly pid: number;
  readonly port: number;
  /** The broker's HTTP port (metrics), when it serves one. */
  readonly httpPort: number | undefined;
  /** Milliseconds from spawn to "serving". */
  readonly startMs: number;
  /** Lines the server printed (its log). */
  readonly output: string[];
  /** Peak and current resident memory of the server process, MiB, from /proc. */
  memory(): { peakMiB: number; currentMiB: number };
  /** CPU seconds the server process has used so far (user + system), from /proc. */
  cpuSeconds(): number;
  /** SIGTERM, then SIGKILL after `graceMs`. Resolves once the process has exited. */
  stop(graceMs?: number): Promise<number | null>;
  /** SIGKILL (a crash) and wait for the exit. */
  kill(): Promise<void>;
}

/** A free loopback port (for servers that cannot pick their own). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function procStatusMiB(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

export function processCpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** Busy and total CPU time of the whole machine so far, in ticks, from /proc/stat. */
export function machineCpuTicks(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: total - idle, total };
}

interface Launch {
  system: string;
  command: string;
  args: string[];
  logFile: string;
  /** Returns the port once a line shows the server is serving. */
  ready(line: string): number | undefined;
  /** Some servers say nothing when ready; probe them instead. */
  probePort?: number;
  timeoutMs?: number;
}

function launch(o: Launch): Promise<Server & { child: ChildProcess }> {
  const t0 = performance.now();
  const log = fs.createWriteStream(o.logFile, { flags: 'a' });
  const child = spawn(o.command, o.args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let httpPort: number | undefined;
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(new Error(`${o.system} did not start within ${o.timeoutMs ?? 20_000} ms (see ${o.logFile})`));
    }, o.timeoutMs ?? 20_000);
    const server = (port: number) => ({
      child,
      system: o.system,
      pid: child.pid!,
      port,
      httpPort,
      startMs: performance.now() - t0,
      output,
      cpuSeconds: () => processCpuSeconds(child.pid!),
      memory: () => ({
        peakMiB: procStatusMiB(child.pid!, 'VmHWM'),
        currentMiB: procStatusMiB(child.pid!, 'VmRSS'),
      }),
      async stop(graceMs = 10_000) {
        if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const code = await exited;
        clearTimeout(t);
        log.end();
        return code;
      },
      async kill() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
        log.end();
      },
    });
    const onLine = (line: string) => {
      output.push(line);
      log.write(`${line}\n`);
      const http = / http on [\d.]+:(\d+)/.exec(line);
      if (http) httpPort = Number(http[1]);
      const port = o.ready(line);
      if (port !== undefined && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve(server(port));
      }
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => {
        const lines = (rest + d).split('\n');
        rest = lines.pop()!;
        for (const l of lines) onLine(l);
      });
    }
    child.once('error', (e) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        reject(e);
      }
    });
    void exited.then((code) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        reject(new Error(`${o.system} exited with ${code} before serving (see ${o.logFile})`));
      }
    });
    if (o.probePort !== undefined) {
      const port = o.probePort;
      const probe = () => {
        if (settled) return;
        const s = net.connect({ port, host: '127.0.0.1' });
        s.once('connect', () => {
          s.destroy();
          if (!settled) {
            settled = true;
            clearTimeout(timer);
            resolve(server(port));
          }
        });
        s.once('error', () => setTimeout(probe, 20));
      };
      probe();
    }
  });
}

export interface BooblikOptions {
  repoRoot: string;
  dataDir: string;
  logFile: string;
  /** Extra broker flags (--key=value). */
  flags?: string[];
  /** Write a V8 CPU profile of the broker into this directory when it exits. */
  cpuProfileDir?: string;
  /** The `node` to run the broker under (server-node.ts); this process's own by default. */
  node?: string;
  /** With TLS required on its ports, serving this certificate and key (the system booblik-tls). */
  tls?: { cert: string; key: string };
}

export function startBooblik(o: BooblikOptions): Promise<Server> {
  const node = o.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfileDir}`] : [];
  const tls = o.tls ? ['--tls=required', `--tls.cert.file=${o.tls.cert}`, `--tls.key.file=${o.tls.key}`] : [];
  return launch({
    system: o.tls ? 'booblik-tls' : 'booblik',
    command: o.node ?? process.execPath,
    args: [
      ...node,
      path.join(o.repoRoot, 'packages/broker/dist/main.js'),
      '--port=0',
      '--http.port=0',
      `--data.dir=${o.dataDir}`,
      '--topics=bench:1',
      '--metrics.interval.millis=0',
      ...tls,
      ...(o.flags ?? []),
    ],
    logFile: o.logFile,
    ready: (line) => {
      const m = /booblik listening on [\d.]+:(\d+)/.exec(line);
      return m ? Number(m[1]) : undefined;
    },
  });
}

/** The floor of a broker on Node's socket streams (node-floor.ts), from the built suite. */
export function startNodeFloor(
  suiteDir: string,
  dataDir: string,
  logFile: string,
  node = process.execPath,
  tls?: { cert: string; key: string },
): Promise<Server> {
  const tlsFlags = tls ? [`--tls.cert.file=${tls.cert}`, `--tls.key.file=${tls.key}`] : [];
  return launch({
    system: tls ? 'node-floor-tls' : 'node-floor',
    command: node,
    args: [path.join(suiteDir, 'node-floor.js'), `--data.dir=${dataDir}`, ...tlsFlags],
    logFile,
    ready: (line) => {
      const m = /node-floor listening on [\d.]+:(\d+)/.exec(line);
      return m ? Number(m[1]) : undefined;
    },
  });
}

/** Redis with the append-only file as its durable log (RDB snapshots off: no fork mid-run). */
export async function startRedis(dataDir: string, logFile: string, fsyncAlways: boolean): Promise<Server> {
  const port = await freePort();
  return launch({
    system: 'redis',
    command: 'redis-server',
    args: [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--daemonize',
      'no',
      '--dir',
      dataDir,
      '--appendonly',
      'yes',
      '--appendfsync',
      fsyncAlways ? 'always' : 'everysec',
      '--save',
      '',
      '--loglevel',
      'notice',
    ],
    logFile,
    ready: (line) => (/Ready to accept connections/.test(line) ? port : undefined),
  });
}

/** Whether this nats-server can fsync every write (`sync_interval: always`, nats-server 2.10 and later). */
export function natsCanSyncAlways(scratchDir: string): boolean {
  const conf = path.join(scratchDir, 'probe.conf');
  fs.writeFileSync(
    conf,
    `listen: 127.0.0.1:4222\njetstream { store_dir: "${scratchDir}/probe", sync_interval: always }\n`,
  );
  const r = spawnSync('nats-server', ['-t', '-c', conf], { timeout: 10_000, stdio: 'ignore' });
  fs.rmSync(conf, { force: true });
  return r.status === 0;
}

/** NATS with JetStream's file store; `syncAlways` where the server supports it. */
export async function startNats(dataDir: string, logFile: string, syncAlways: boolean): Promise<Server> {
  const port = await freePort();
  const conf = path.join(dataDir, 'nats.conf');
  fs.writeFileSync(
    conf,
    [
      `listen: 127.0.0.1:${port}`,
      'server_name: bench',
      'jetstream {',
      `  store_dir: "${path.join(dataDir, 'js')}"`,
      '  max_memory_store: 256MB',
      '  max_file_store: 64GB',
      syncAlways ? '  sync_interval: always' : '',
      '}',
      '',
    ].join('\n'),
  );
  return launch({
    system: 'nats',
    command: 'nats-server',
    args: ['-c', conf],
    logFile,
    ready: (line) => (/Server is ready/.test(line) ? port : undefined),
  });
}

export function commandVersion(command: string, args: string[]): string | undefined {
  try {
    return execFileSync(command, args, { encoding: 'utf8', timeout: 10_000 }).trim().split('\n')[0];
  } catch {
    return undefined;
  }
}

/** Installs the peers from Debian's packages when they are missing; returns what is usable. */
export function ensurePeers(log: (s: string) => void): { redis: boolean; nats: boolean } {
  const have = (cmd: string) =>
    spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
  const missing = [
    ['redis-server', 'redis-server'],
    ['nats-server', 'nats-server'],
  ].filter(([cmd]) => !have(cmd!));
  if (missing.length > 0 && process.env.BENCH_NO_INSTALL !== '1') {
    const pkgs = missing.map(([, pkg]) => pkg!);
    log(`installing ${pkgs.join(' ')} from Debian's packages`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () =>
      spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], {
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
        timeout: 600_000,
      }).status === 0;
    if (!install()) {
      // A fresh machine may not have the package lists yet.
      spawnSync('apt-get', ['update'], { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 });
      if (!install()) log(`could not install ${pkgs.join(' ')}: the peers that are missing are skipped`);
    }
  }
  return { redis: have('redis-server'), nats: have('nats-server') };
}

/** Fetches the broker's Prometheus text and sums the samples of each named metric. */
export async function scrapeMetrics(httpPort: number, names: string[]): Promise<Record<string, number>> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`, { signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  const out: Record<string, number> = {};
  for (const name of names) {
    out[name] = 0;
    for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([\\d.e+-]+)$`, 'gm'))) {
      out[name] += Number(m[1]);
    }
  }
  return out;
}
