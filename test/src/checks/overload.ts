/**
 * Overload: the real broker (its open-file limit raised with prlimit) holding 10,000 idle connections
 * and 1,000 long fetches, while one client pipelines requests for large answers and never reads
 * them, and producers write faster than the disk takes it (FORCED batches that each wait for an
 * fdatasync, and an ack NONE stream that is never answered, so nothing but the broker can slow it).
 * Meanwhile a probe connection must be answered within 100 ms at the median, and the broker's peak
 * resident memory (VmHWM) must stay under the bound stated below.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { AckPolicy } from '@booblik/protocol';
import { BrokerProcess, tempDir, waitUntil, within } from '@booblik/testkit';
import { budget } from '../kit/budget.js';
import { WireClient } from '../kit/wire-client.js';

/**
 * The broker's peak RSS (VmHWM) may not pass this. What it holds under this load, at its defaults:
 * Node and 11,000 connections, ~140 MiB (measured before the load starts); for the partition written
 * faster than the disk, a full 64 MiB writer queue, the group being written (up to 64 MiB) and the
 * newest group kept in the tail cache (up to 64 MiB); the frames of the five producer connections,
 * up to their 16 MiB budget each (~85 MiB, shared with the queue); the non-reader's 16 MiB budget
 * and 16 MiB of unread answers. About 430 MiB live. Freed buffers reach the allocator only after a
 * garbage collection, and at ~1 GB/s of allocation that lag was measured at up to ~250 MiB (peaks
 * of 375..630 MiB over repeated runs): 768 MiB. Unbounded buffering passes it within seconds: before
 * the fixes this check found, the non-reader alone took the broker past 1 GiB.
 */
const RSS_BOUND_MIB = 768;
const PROBE_MEDIAN_MS_MAX = 100;
/** Open files the broker and the crowd's process each need: every connection is a descriptor. */
const NOFILE_NEEDED = budget.idleConnections + budget.heldFetches + 1_000;
const MIB = 1024 * 1024;

const crowdMain = new URL('../kit/overload-clients.js', import.meta.url).pathname;
const loadMain = new URL('../kit/overload-load.js', import.meta.url).pathname;

/**
 * The open-file limit to run with: as many as needed, up to the hard limit this process may raise its
 * soft limit to (raising the hard limit itself takes a privilege containers often lack). Null when
 * even the hard limit is too low, or prlimit is missing.
 */
function openFileLimit(): number | null {
  const out = spawnSync('prlimit', ['--nofile', '--output=HARD', '--noheadings', `--pid=${process.pid}`], {
    encoding: 'utf8',
  });
  if (out.status !== 0) return null;
  const hard = out.stdout.trim() === 'unlimited' ? Number.POSITIVE_INFINITY : Number(out.stdout.trim());
  return hard >= NOFILE_NEEDED ? Math.min(hard, 2 * NOFILE_NEEDED) : null;
}

/** Starts the crowd process and resolves once all its connections are open. */
async function startCrowd(t: import('node:test').TestContext, port: number, nofile: number) {
  const proc = spawn(
    'prlimit',
    [
      `--nofile=${nofile}:${nofile}`,
      process.execPath,
      crowdMain,
      String(port),
      String(budget.idleConnections),
      String(budget.heldFetches),
      'quiet',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  t.after(async () => {
    proc.stdin.end();
    await exited;
  });
  const lines = createInterface({ input: proc.stdout });
  const nextLine = () =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      void exited.then(() => reject(new Error('the crowd process exited')));
    });
  const ready = await within(nextLine(), 120_000, 'the crowd to open its connections');
  assert.match(ready, /^ready /);
  return {
    /** What the crowd has seen so far. */
    async report() {
      const line = nextLine();
      proc.stdin.write('report\n');
      const m = /closed-by-broker (\d+) answered-early (\d+)/.exec(
        await within(line, 30_000, "the crowd's report"),
      );
      assert.ok(m, 'the crowd reports');
      return { closedByBroker: Number(m[1]), answeredEarly: Number(m[2]) };
    },
  };
}

/** Starts the heavy clients (kit/overload-load.ts); resolves once they are all at it. */
async function startLoad(t: import('node:test').TestContext, port: number) {
  const proc = spawn(process.execPath, [loadMain, String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  t.after(async () => {
    proc.stdin.end();
    proc.kill('SIGKILL');
    await exited;
  });
  const lines = createInterface({ input: proc.stdout });
  const nextLine = () =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', (line) =>
        line.startsWith('error ') ? reject(new Error(`load: ${line}`)) : resolve(line),
      );
      void exited.then((code) => reject(new Error(`the load process exited (${code})`)));
    });
  let failure: Error | null = null;
  // A failure while the probes run is reported by the next call, not lost.
  const watch = () => nextLine().catch((error: Error) => (failure = error));
  assert.equal(await within(nextLine(), 60_000, 'the load to start'), 'running');
  const pendingLine = watch();
  return {
    failed: () => failure,
    /** The broker is being stopped: closed connections are expected from now on. */
    brokerStopping() {
      proc.stdin.write('stopping\n');
    },
    async stop(): Promise<{
      hogRequestBytes: number;
      forcedAcks: number;
      noneBytes: number;
      noneBlockedMs: number;
    }> {
      proc.stdin.write('stop\n');
      const line = await within(pendingLine, 60_000, "the load's report");
      if (failure) throw failure;
      return JSON.parse(line as string);
    },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Registers the overload check. */
export function overloadCheck(): void {
  describe('overload', () => {
    it(`${budget.idleConnections} idle connections, ${budget.heldFetches} held fetches, a client that never reads and producers faster than the disk: the probe is answered within ${PROBE_MEDIAN_MS_MAX} ms at the median and RSS stays under ${RSS_BOUND_MIB} MiB`, async (t) => {
      const nofile = openFileLimit();
      if (nofile === null) {
        t.skip(`needs prlimit and an open-file hard limit of at least ${NOFILE_NEEDED} (ulimit -Hn)`);
        return;
      }
      const dir = tempDir(t, 'overload');
      const broker = await BrokerProcess.start(t, {
        dataDir: dir,
        nofile,
        flags: [
          '--topics=load:2,quiet:1',
          `--max.connections=${budget.idleConnections + budget.heldFetches + 100}`,
          `--segment.capacity.bytes=${64 * MIB}`,
        ],
      });
      const probe = await WireClient.connect(broker.port);
      t.after(() => probe.close());

      // 24 MiB in load-0, so its start is long out of the 8 MiB tail cache: answers must be read from disk.
      const filler = Array.from({ length: 16 }, () => Buffer.alloc(64 * 1024, 0x17));
      for (let i = 0; i < 24; i++)
        assert.equal((await probe.produce('load', 0, AckPolicy.WRITTEN, filler)).errorCode, 0);

      const crowd = await startCrowd(t, broker.port, nofile);
      await waitUntil(
        async () => (await broker.metric('booblik_held_fetches')) === budget.heldFetches,
        `${budget.heldFetches} fetches to be held`,
        60_000,
        200,
      );
      const crowdRssMiB = broker.memoryKb('VmRSS') / 1024;

      const load = await startLoad(t, broker.port);

      const latencies: number[] = [];
      let rssMaxMiB = 0;
      for (let i = 0; i < budget.overloadProbes; i++) {
        const started = performance.now();
        const answer = i % 2 === 0 ? await probe.metadata('quiet') : await probe.fetch('quiet', 0, 0, 1024);
        latencies.push(performance.now() - started);
        assert.equal(answer.errorCode, 0, 'the probe was refused');
        assert.equal(load.failed(), null, 'the load failed');
        rssMaxMiB = Math.max(rssMaxMiB, broker.memoryKb('VmRSS') / 1024);
      }
      const peakMiB = broker.memoryKb('VmHWM') / 1024;
      const held = await broker.metric('booblik_held_fetches');
      const connections = await broker.metric('booblik_connections');
      const seen = await crowd.report();

      // SIGTERM with the crowd and the load still at it: a graceful stop all the same.
      load.brokerStopping();
      const stopStarted = performance.now();
      const exit = await broker.stop(60_000);
      const stopSeconds = (performance.now() - stopStarted) / 1000;
      const { hogRequestBytes, forcedAcks, noneBytes, noneBlockedMs } = await load.stop();

      const sorted = [...latencies].sort((a, b) => a - b);
      t.diagnostic(
        `probe: median ${median(latencies).toFixed(1)} ms, p90 ${sorted[Math.floor(sorted.length * 0.9)]!.toFixed(1)} ms, ` +
          `max ${sorted.at(-1)!.toFixed(1)} ms over ${latencies.length} round trips; RSS with the crowd ${crowdRssMiB.toFixed(0)} MiB, ` +
          `max sampled ${rssMaxMiB.toFixed(0)} MiB, peak (VmHWM) ${peakMiB.toFixed(0)} MiB; ${connections} connections; ` +
          `the non-reader sent ${(hogRequestBytes / MIB).toFixed(1)} MiB of requests; FORCED acks ${forcedAcks}; ` +
          `ack NONE sent ${(noneBytes / MIB).toFixed(0)} MiB and waited ${(noneBlockedMs / 1000).toFixed(1)} s for the broker to read on; SIGTERM to exit ${stopSeconds.toFixed(1)} s`,
      );
      assert.ok(
        median(latencies) < PROBE_MEDIAN_MS_MAX,
        `probe median ${median(latencies).toFixed(1)} ms, expected < ${PROBE_MEDIAN_MS_MAX}`,
      );
      assert.ok(
        peakMiB < RSS_BOUND_MIB,
        `broker peak RSS ${peakMiB.toFixed(0)} MiB, expected < ${RSS_BOUND_MIB}`,
      );
      assert.equal(held, budget.heldFetches, 'every long fetch was still held');
      assert.equal(seen.closedByBroker, 0, 'the broker closed none of the idle or held connections');
      assert.equal(seen.answeredEarly, 0, 'no held fetch was answered before its wait ran out');
      assert.ok(
        noneBlockedMs > 0,
        'the ack NONE producer offered more than the broker took (it had to wait)',
      );
      assert.equal(exit.code, 0, `SIGTERM under load exits 0${broker.tail()}`);
      assert.match(
        broker.lines.at(-1) ?? '',
        /booblik stopped/,
        `the last line says it stopped${broker.tail()}`,
      );
    });
  });
}
