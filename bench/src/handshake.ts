/**
 * What a secured connection costs to open: connect and API_VERSIONS on a plaintext broker, then
 * connect, API_VERSIONS and a whole SCRAM-SHA-256 exchange (4096 iterations) on a broker with
 * `booblik.auth=required`, each timed per connection, one connection at a time, repeated.
 *
 *   npm run bench:handshake                       200 connections per repetition, 3 repetitions
 *   npm run bench:handshake -- --connections=50
 *
 * The brokers run as their own processes on a real disk (benchDataDir). The client side of SCRAM is
 * @booblik/protocol's (the TypeScript client's): its PBKDF2 is in the figure, as a user pays it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
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

const here = path.dirname(fileURLToPath(import.meta.url));
const brokerMain = path.resolve(here, '../../packages/broker/dist/main.js');
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const connections = Number(option('connections') ?? 200);
const repetitions = Number(option('reps') ?? 3);
const USER = 'bench';
const PASSWORD = 'bench-password';

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
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-4096);
      const m = /booblik listening on \S+:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]), dataDir });
    });
    child.once('exit', (code) => reject(new Error(`broker exited ${code} before listening`)));
  });
}

async function stopBroker(r: Running): Promise<void> {
  const exited = new Promise((resolve) => r.child.once('exit', resolve));
  r.child.kill('SIGTERM');
  await exited;
  fs.rmSync(r.dataDir, { recursive: true, force: true });
}

/** A socket and the answers it reads, in order. */
function open(port: number): Promise<{ socket: net.Socket; next: () => Promise<ResponseFrame> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', noDelay: true }, () => resolve({ socket, next }));
    socket.once('error', reject);
    const frames: ResponseFrame[] = [];
    const waiters: ((f: ResponseFrame) => void)[] = [];
    const splitter = new FrameSplitter(responseFrameLimits);
    const sink = {
      frame: (f: Buffer) => {
        const frame = readResponseFrame(Buffer.from(f));
        const waiter = waiters.shift();
        if (waiter) waiter(frame);
        else frames.push(frame);
      },
      shortFrame: () => socket.destroy(),
      invalidLength: () => socket.destroy(),
    };
    socket.on('data', (chunk: Buffer) => splitter.push(chunk, sink));
    const next = () => {
      const f = frames.shift();
      return f ? Promise.resolve(f) : new Promise<ResponseFrame>((r) => waiters.push(r));
    };
  });
}

async function plaintextConnection(port: number): Promise<void> {
  const c = await open(port);
  c.socket.write(encodeApiVersionsRequest(1));
  await c.next();
  c.socket.destroy();
}

async function scramConnection(port: number): Promise<void> {
  const c = await open(port);
  c.socket.write(encodeApiVersionsRequest(1));
  await c.next();
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
async function timeConnections(port: number, one: (port: number) => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < connections; i++) {
    const started = performance.now();
    await one(port);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

const plain = await startBroker([]);
const secured = await startBroker(['--auth=required']);
const rows: Record<string, { p50: number[]; p99: number[] }> = {
  'connect + API_VERSIONS (auth off)': { p50: [], p99: [] },
  'connect + API_VERSIONS + SCRAM-SHA-256 (4096 iterations)': { p50: [], p99: [] },
};
try {
  for (let rep = 0; rep < repetitions; rep++) {
    // Alternating, so the machine's drift falls on both.
    for (const [name, port, one] of [
      ['connect + API_VERSIONS (auth off)', plain.port, plaintextConnection],
      ['connect + API_VERSIONS + SCRAM-SHA-256 (4096 iterations)', secured.port, scramConnection],
    ] as const) {
      const times = await timeConnections(port, one);
      rows[name]!.p50.push(quantile(times, 0.5));
      rows[name]!.p99.push(quantile(times, 0.99));
    }
  }
} finally {
  await stopBroker(plain);
  await stopBroker(secured);
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
