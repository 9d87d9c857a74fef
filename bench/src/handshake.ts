/**
 * What a secured connection costs to open: connect and API_VERSIONS on a plaintext broker, then
 * connect, API_VERSIONS and a whole SCRAM-SHA-256 exchange (4096 iterations) on a broker with
 * `booblik.auth=required`; and the same two over TLS on brokers with `booblik.tls=required` (a full
 * TLS handshake per connection: no session is resumed, as for a client that starts afresh). Each
 * is timed per connection, one connection at a time, the four kinds alternating, repeated.
 *
 *   npm run bench:handshake                       200 connections per repetition, 3 repetitions
 *   npm run bench:handshake -- --connections=50
 *
 * The brokers run as their own processes on a real disk (benchDataDir); their certificate and CA
 * are made at the start with the openssl command (suite/certs.ts). The client side of SCRAM is
 * @booblik/protocol's (the TypeScript client's): its PBKDF2 is in the figure, as a user pays it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import {
  AuthMechanism,
  checkServerFinal,
  clientFinal,
  clientFirst,
  decodeAuthenticateResponse,
  encodeApiVersionsRequest,
  encodeAuthenticateRequest,
  FrameSplitter,
  type ResponseFrame,
  readResponseFrame,
  responseFrameLimits,
} from '@booblik/protocol';
import { benchDataDir } from './data-dir.js';
import { fmt, quantile, spread } from './stats.js';
import { makeBenchCertificates } from './suite/certs.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const brokerMain = path.resolve(here, '../../packages/broker/dist/main.js');
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const connections = Number(option('connections') ?? 200);
const repetitions = Number(option('reps') ?? 3);
const USER = 'bench';
const PASSWORD = 'bench-password';
/** The floor for a SCRAM handshake at 4096 iterations, p50. */
const SCRAM_P50_MS_MAX = 5;
/** A broker on loopback says it listens well within this; past it, the run fails rather than hangs. */
const START_MS_MAX = 20_000;

interface Running {
  child: ChildProcess;
  port: number;
  dataDir: string;
}

function startBroker(flags: string[]): Promise<Running> {
  const dataDir = benchDataDir('booblik-handshake-');
  const child = spawn(
    process.execPath,
    [
      brokerMain,
      '--port=0',
      '--http.port=-1',
      `--data.dir=${dataDir}`,
      '--metrics.interval.millis=0',
      ...flags,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { PATH: process.env.PATH ?? '', BOOBLIK_BOOTSTRAP_USER: `${USER}:${PASSWORD}` },
    },
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`broker (${flags.join(' ')}) not listening within ${START_MS_MAX} ms`));
    }, START_MS_MAX);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-4096);
      const m = /booblik listening on \S+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), dataDir });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`broker exited ${code} before listening`));
    });
  });
}

async function stopBroker(r: Running): Promise<void> {
  if (r.child.exitCode === null && r.child.signalCode === null) {
    const exited = new Promise((resolve) => r.child.once('exit', resolve));
    r.child.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(r.dataDir, { recursive: true, force: true });
}

interface Opened {
  socket: net.Socket;
  next: () => Promise<ResponseFrame>;
}

/**
 * A socket and the answers it reads, in order; with `ca`, over TLS verified against it, resolved
 * once the TLS handshake is done.
 */
function open(port: number, ca?: Buffer): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ready = () => resolve({ socket, next });
    const socket = ca
      ? tls.connect({ port, host: '127.0.0.1', ca }, ready)
      : net.connect({ port, host: '127.0.0.1', noDelay: true }, ready);
    if (ca) socket.once('connect', () => socket.setNoDelay(true));
    socket.once('error', reject);
    const frames: ResponseFrame[] = [];
    const waiters: { resolve: (f: ResponseFrame) => void; reject: (e: Error) => void }[] = [];
    // A broker that closes (or a TLS failure) fails the waiting answer instead of leaving it hanging.
    socket.once('close', () => {
      for (const w of waiters.splice(0)) w.reject(new Error('the broker closed the connection'));
    });
    const splitter = new FrameSplitter(responseFrameLimits);
    const sink = {
      frame: (f: Buffer) => {
        const frame = readResponseFrame(Buffer.from(f));
        const waiter = waiters.shift();
        if (waiter) waiter.resolve(frame);
        else frames.push(frame);
      },
      shortFrame: () => socket.destroy(),
      invalidLength: () => socket.destroy(),
    };
    socket.on('data', (chunk: Buffer) => splitter.push(chunk, sink));
    const next = () => {
      const f = frames.shift();
      if (f) return Promise.resolve(f);
      if (socket.destroyed) return Promise.reject(new Error('the broker closed the connection'));
      return new Promise<ResponseFrame>((resolve, reject) => waiters.push({ resolve, reject }));
    };
  });
}

async function apiVersions(c: Opened): Promise<void> {
  c.socket.write(encodeApiVersionsRequest(1));
  const answer = await c.next();
  if (answer.errorCode !== 0) throw new Error(`API_VERSIONS refused: code ${answer.errorCode}`);
}

async function plaintextConnection(port: number, ca?: Buffer): Promise<void> {
  const c = await open(port, ca);
  await apiVersions(c);
  c.socket.destroy();
}

async function scramConnection(port: number, ca?: Buffer): Promise<void> {
  const c = await open(port, ca);
  await apiVersions(c);
  const first = clientFirst(USER);
  c.socket.write(
    encodeAuthenticateRequest(2, {
      mechanism: AuthMechanism.SCRAM_SHA_256,
      data: Buffer.from(first.message),
    }),
  );
  const serverFirst = decodeAuthenticateResponse((await c.next()).body).data.toString();
  const final = clientFinal(first, serverFirst, PASSWORD);
  c.socket.write(
    encodeAuthenticateRequest(3, {
      mechanism: AuthMechanism.SCRAM_SHA_256,
      data: Buffer.from(final.message),
    }),
  );
  const answer = await c.next();
  if (answer.errorCode !== 0) throw new Error(`SCRAM refused: code ${answer.errorCode}`);
  checkServerFinal(final, decodeAuthenticateResponse(answer.body).data.toString());
  c.socket.destroy();
}

/** Milliseconds per connection, sorted. */
async function timeConnections(
  port: number,
  ca: Buffer | undefined,
  one: (port: number, ca?: Buffer) => Promise<void>,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < connections; i++) {
    const started = performance.now();
    await one(port, ca);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

const certDir = benchDataDir('booblik-handshake-certs-');
const certs = makeBenchCertificates(certDir);
const ca = fs.readFileSync(certs.ca);
const tlsFlags = ['--tls=required', `--tls.cert.file=${certs.cert}`, `--tls.key.file=${certs.key}`];
const brokers: Running[] = [];
const start = async (flags: string[]) => {
  const b = await startBroker(flags);
  brokers.push(b);
  return b;
};

const PLAIN = 'connect + API_VERSIONS (auth off)';
const SCRAM = 'connect + API_VERSIONS + SCRAM-SHA-256 (4096 iterations)';
const TLS = 'connect + TLS handshake + API_VERSIONS (TLS required, auth off)';
const TLS_SCRAM = 'connect + TLS handshake + API_VERSIONS + SCRAM-SHA-256 (TLS required)';
const rows: Record<string, { p50: number[]; p99: number[] }> = {};
try {
  const kinds = [
    { name: PLAIN, port: (await start([])).port, ca: undefined, one: plaintextConnection },
    { name: SCRAM, port: (await start(['--auth=required'])).port, ca: undefined, one: scramConnection },
    { name: TLS, port: (await start(tlsFlags)).port, ca, one: plaintextConnection },
    { name: TLS_SCRAM, port: (await start([...tlsFlags, '--auth=required'])).port, ca, one: scramConnection },
  ];
  for (const k of kinds) rows[k.name] = { p50: [], p99: [] };
  for (let rep = 0; rep < repetitions; rep++) {
    // Alternating, so the machine's drift falls on all of them.
    for (const k of kinds) {
      const times = await timeConnections(k.port, k.ca, k.one);
      rows[k.name]!.p50.push(quantile(times, 0.5));
      rows[k.name]!.p99.push(quantile(times, 0.99));
    }
  }
} finally {
  for (const b of brokers) await stopBroker(b);
  fs.rmSync(certDir, { recursive: true, force: true });
}
console.log(
  `connection setup, ${connections} connections one at a time, ${repetitions} repetitions (median [min..max] of their p50 and p99):`,
);
console.log('| connection | p50 ms | p99 ms |');
console.log('|---|---:|---:|');
for (const [name, r] of Object.entries(rows)) {
  const p50 = spread(r.p50);
  const p99 = spread(r.p99);
  console.log(
    `| ${name} | ${fmt(p50.median, 2)} [${fmt(p50.min, 2)}..${fmt(p50.max, 2)}] | ${fmt(p99.median, 2)} [${fmt(p99.min, 2)}..${fmt(p99.max, 2)}] |`,
  );
}
// The whole connection is held to the floor (connect and API_VERSIONS included): stricter than the
// exchange alone.
const scramP50 = spread(rows[SCRAM]!.p50).median;
console.log(
  `floor: a SCRAM-SHA-256 connection (4096 iterations) p50 <= ${SCRAM_P50_MS_MAX} ms: ${fmt(scramP50, 2)} ms, ${scramP50 <= SCRAM_P50_MS_MAX ? 'met' : 'NOT met'}`,
);
