/**
 * A real etcd for tests: one member on free loopback ports (client and peer) with a temporary data
 * directory, installed with apt-get when missing. It can be stopped (SIGTERM or SIGKILL, by pid)
 * and restarted on the same data and ports, and is always cleaned up: `cleanup()` in the test's
 * `after`, and the process dies with the test process (a parent-death signal) if that is killed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { dyingWithParent, reservePorts } from '@booblik/testkit';
import { ensureEtcdInstalled } from './etcd-install.js';

export { enableEtcdAuth } from './etcd-auth.js';
export { ensureEtcdInstalled, findEtcd } from './etcd-install.js';

/** etcd 3.4 starts in about a second here; a loaded 2-core machine can take several. */
const READY_TIMEOUT_MS = 30_000;
/** SIGTERM gets this long to end etcd before SIGKILL does. */
const STOP_TIMEOUT_MS = 10_000;
/** etcd 3.4 logs one of these once its client listener serves (the health check then confirms). */
const servingPattern = /serving client traffic|ready to serve client requests/;
/** Lines of etcd's log kept to explain a failed start. */
const LOG_LINES_KEPT = 40;

export interface EtcdServer {
  /** `http://127.0.0.1:<port>`, what a client dials. */
  readonly endpoint: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly dataDir: string;
  /** The running etcd's pid, or undefined while it is stopped. */
  readonly pid: number | undefined;
  /** Stops etcd by its pid and waits for it to exit (SIGTERM escalates to SIGKILL after 10 s). */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts etcd again on the same data directory and ports; resolves once it answers. */
  restart(): Promise<void>;
  /** Kills etcd if running and removes its data directory. Safe to call twice. */
  cleanup(): Promise<void>;
  /** The last lines etcd logged. */
  log(): string;
}

export interface StartEtcdOptions {
  /** Defaults to a new temporary directory, removed by cleanup(). */
  dataDir?: string;
  /**
   * A process group of its own, so a terminal's Ctrl-C reaches only the process that started it,
   * which stops etcd last (`npm run cluster`: the brokers leave the cluster first). Tests leave it
   * in theirs: a Ctrl-C of the test run stops etcd with it.
   */
  ownProcessGroup?: boolean;
  /** TLS on the client port, clients' certificates required (etcd's --client-cert-auth): PEM files. */
  tls?: { certFile: string; keyFile: string; caFile: string; clientCertFile: string; clientKeyFile: string };
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdServer> {
  const binary = ensureEtcdInstalled();
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'booblik-etcd-')));
  const reserved = await reservePorts(2);
  const [clientPort, peerPort] = reserved.map((r) => r.port) as [number, number];
  await Promise.all(reserved.map((r) => r.release()));
  const tls = options.tls;
  const clientUrl = `${tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const name = `booblik-test-${clientPort}`;
  const args = [
    '--name',
    name,
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    clientUrl,
    '--advertise-client-urls',
    clientUrl,
    '--listen-peer-urls',
    peerUrl,
    '--initial-advertise-peer-urls',
    peerUrl,
    '--initial-cluster',
    `${name}=${peerUrl}`,
    '--initial-cluster-token',
    name,
    '--logger',
    'zap',
    '--log-outputs',
    'stderr',
    ...(tls
      ? [
          '--cert-file',
          tls.certFile,
          '--key-file',
          tls.keyFile,
          '--trusted-ca-file',
          tls.caFile,
          '--client-cert-auth',
        ]
      : []),
  ];
  const logLines: string[] = [];
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const launch = async (): Promise<void> => {
    // A parent-death signal: a killed test leaves no etcd behind.
    const [command, commandArgs] = dyingWithParent(binary, args);
    const proc = spawn(command, commandArgs, {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: options.ownProcessGroup ?? false,
    });
    child = proc;
    running.add(proc);
    exited = new Promise((resolve) =>
      proc.once('exit', () => {
        running.delete(proc);
        if (child === proc) child = undefined;
        resolve();
      }),
    );
    let pending = '';
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`etcd did not answer within ${READY_TIMEOUT_MS} ms:\n${logLines.join('\n')}`)),
        READY_TIMEOUT_MS,
      );
      proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          logLines.push(line);
          if (logLines.length > LOG_LINES_KEPT) logLines.shift();
          if (servingPattern.test(line)) {
            clearTimeout(timer);
            resolve();
          }
        }
      });
      proc.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`etcd could not be started (${binary}): ${error.message}`));
      });
      proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`etcd exited (${signal ?? code}) before it answered:\n${logLines.join('\n')}`));
      });
    });
    try {
      await ready;
      await healthy(clientUrl, tls);
    } catch (error) {
      proc.kill('SIGKILL');
      await exited;
      throw error;
    }
  };

  const stop = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> => {
    const proc = child;
    if (proc?.pid === undefined) return;
    process.kill(proc.pid, signal);
    const timer = setTimeout(() => {
      if (proc.pid !== undefined && proc.exitCode === null) process.kill(proc.pid, 'SIGKILL');
    }, STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  await launch().catch(async (error) => {
    if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  let cleaned = false;
  return {
    endpoint: clientUrl,
    clientPort,
    peerPort,
    dataDir,
    get pid() {
      return child?.pid;
    },
    stop,
    async restart() {
      if (child !== undefined) throw new Error('etcd is running: stop it before restarting');
      await launch();
    },
    async cleanup() {
      await stop('SIGKILL');
      if (cleaned) return;
      cleaned = true;
      if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
    },
    log: () => logLines.join('\n'),
  };
}

/** etcd said it serves; confirm over its HTTP health endpoint (one request, bounded). */
async function healthy(clientUrl: string, tls: StartEtcdOptions['tls']): Promise<void> {
  const body = (
    tls
      ? await httpsJson(`${clientUrl}/health`, tls)
      : await (await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(READY_TIMEOUT_MS) })).json()
  ) as { health?: string };
  if (body.health !== 'true') throw new Error(`etcd at ${clientUrl} is not healthy: ${JSON.stringify(body)}`);
}

/** GET over TLS with the test CA and a client certificate (fetch takes neither). */
function httpsJson(url: string, tls: NonNullable<StartEtcdOptions['tls']>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = https.get(
      url,
      {
        ca: readFileSync(tls.caFile),
        cert: readFileSync(tls.clientCertFile),
        key: readFileSync(tls.clientKeyFile),
        timeout: READY_TIMEOUT_MS,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (d: string) => {
          text += d;
        });
        response.on('end', () => {
          try {
            resolve(JSON.parse(text));
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer from ${url}`)));
    request.on('error', reject);
  });
}
