import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { brokerMain, LISTENING_LINE } from './entry-points.js';
import { dyingWithParent } from './parent-death.js';
import { type Exit, ProcessLines } from './process-lines.js';

export interface BrokerProcessOptions {
  /** The data directory; a fresh one removed when the test ends if not given. */
  dataDir?: string;
  /** The client port (default 0: a free one, read from the broker's `listening on` line). */
  port?: number;
  /** More flags, `--key=value` (the `booblik.` prefix may be dropped). */
  flags?: string[];
  /** Serve /metrics on a free port (default true). */
  http?: boolean;
  /** Run under `prlimit --nofile=<n>:<n>`: the open-file limit of the broker process. */
  nofile?: number;
  /** How long startup (recovery included) may take. */
  startTimeoutMs?: number;
  /** Environment of the broker besides PATH (BOOBLIK_BOOTSTRAP_USER, say). */
  env?: Record<string, string>;
}

/**
 * The real broker as a child process, in a process group of its own (so a SIGKILL to the group takes
 * every thread and child it has). Listens on a free port, read from its `booblik listening on` line.
 * Killed at the end of the test if it is still running.
 */
export class BrokerProcess {
  readonly lines: string[];
  readonly exited: Promise<Exit>;
  host = '';
  port = 0;
  httpPort = 0;
  /** Set once `kill()` or `stop()` was called: the broker may be gone before its exit is seen. */
  stopRequested = false;
  private exit: Exit | null = null;
  private readonly out: ProcessLines;

  private constructor(
    readonly proc: ChildProcess,
    readonly pid: number,
  ) {
    this.exited = new Promise((resolve) =>
      proc.on('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
    this.out = new ProcessLines(proc, 'broker');
    this.lines = this.out.lines;
  }

  static async start(
    t: Pick<TestContext, 'after'>,
    options: BrokerProcessOptions = {},
  ): Promise<BrokerProcess> {
    // Removed only after the broker is gone, so it never writes into a directory being deleted.
    const ownDataDir =
      options.dataDir === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-broker-')) : null;
    const args = [
      brokerMain,
      `--port=${options.port ?? 0}`,
      `--http.port=${options.http === false ? -1 : 0}`,
      `--data.dir=${options.dataDir ?? ownDataDir}`,
      '--metrics.interval.millis=0',
      ...(options.flags ?? []),
    ];
    const [command, argv] =
      options.nofile === undefined
        ? dyingWithParent(process.execPath, args)
        : dyingWithParent('prlimit', [
            `--nofile=${options.nofile}:${options.nofile}`,
            process.execPath,
            ...args,
          ]);
    const proc = spawn(command, argv, {
      // Only PATH and what the test asks: BOOBLIK_* variables of the test run must not configure the broker.
      env: { PATH: process.env.PATH ?? '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    if (proc.pid === undefined) throw new Error(`could not start ${command}`);
    const broker = new BrokerProcess(proc, proc.pid);
    t.after(async () => {
      await broker.kill();
      if (ownDataDir !== null) fs.rmSync(ownDataDir, { recursive: true, force: true });
    });
    const listening = await broker.waitForLine(LISTENING_LINE, options.startTimeoutMs ?? 30_000);
    broker.host = listening[1]!;
    broker.port = Number(listening[2]);
    broker.httpPort = Number(listening[3] ?? 0);
    return broker;
  }

  /** `host:port` the broker listens on, for a client to connect to. */
  get address(): string {
    return `${this.host}:${this.port}`;
  }

  get running(): boolean {
    return this.exit === null;
  }

  /** The first line (logged already or still to come) matching `re`; fails if the broker exits first. */
  waitForLine(re: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    return this.out.waitForLine(re, timeoutMs);
  }

  /** The last lines of output, for failure messages. */
  tail(lines = 15): string {
    return this.out.tail(lines);
  }

  /** SIGKILL to the broker's process group (which only it leads); resolves once it is gone. */
  async kill(): Promise<Exit> {
    this.stopRequested = true;
    if (this.exit === null) {
      try {
        process.kill(-this.pid, 'SIGKILL');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
    return this.exited;
  }

  /** Graceful stop: SIGTERM, then the exit (a SIGKILL after `timeoutMs` so a test never hangs). */
  async stop(timeoutMs = 30_000): Promise<Exit> {
    if (this.exit !== null) return this.exit;
    this.stopRequested = true;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => void this.kill(), timeoutMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }

  /** The Prometheus text of /metrics. */
  async metrics(): Promise<string> {
    if (this.httpPort === 0) throw new Error('broker started without HTTP');
    const res = await fetch(`http://127.0.0.1:${this.httpPort}/metrics`);
    return res.text();
  }

  /** One sample from /metrics: `name` with the labels given (exactly), or undefined if absent. */
  async metric(name: string, labels = ''): Promise<number | undefined> {
    const text = await this.metrics();
    const escaped = `${name}${labels}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const m = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  }

  /** A field of /proc/<pid>/status in KiB (VmRSS: resident now; VmHWM: the peak resident size). */
  memoryKb(field: 'VmRSS' | 'VmHWM'): number {
    const status = fs.readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!m) throw new Error(`no ${field} in /proc/${this.pid}/status`);
    return Number(m[1]);
  }
}
