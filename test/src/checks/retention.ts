/**
 * Retention under load: the real broker with small segments and a small retention limit checked
 * every few milliseconds, so whole segments are removed while producers write and consumers read
 * them. Every FETCH answer must be whole (never shorter than its own length prefix, payloadBytes
 * equal to what follows, every record's CRC good) and hold the records acknowledged at those offsets.
 * A consumer that fell behind the log start must get OFFSET_OUT_OF_RANGE, at once even when it asked
 * to wait, and must be able to restart from the new start.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy } from '@booblik/protocol';
import { BrokerProcess, tempDir, waitUntil, within } from '@booblik/testkit';
import { budget, seed } from '../kit/budget.js';
import { parseSelfChecking, selfChecking } from '../kit/payloads.js';
import { Rng } from '../kit/rng.js';
import { fetchedOf, offsetsOf, producedOf, WireClient } from '../kit/wire-client.js';

const TOPIC = 'ret';
const SEGMENT_BYTES = 64 * 1024;
const OFFSET_OUT_OF_RANGE = 2;

interface Shared {
  running: boolean;
  /** offset -> payload of every acknowledged record */
  acked: Map<number, Buffer>;
  /** offset -> payload of every record a consumer was served */
  served: Map<number, Buffer>;
  restarts: number;
  answers: number;
  clients: WireClient[];
}

async function connect(port: number, shared: Shared): Promise<WireClient> {
  const c = await WireClient.connect(port);
  shared.clients.push(c);
  return c;
}

async function producer(port: number, id: number, rng: Rng, shared: Shared): Promise<void> {
  const c = await connect(port, shared);
  for (let sequence = 0; shared.running; ) {
    const payloads = Array.from({ length: rng.int(1, 20) }, () =>
      selfChecking(id, sequence++, rng.int(50, 2000)),
    );
    const answer = await c.produce(
      TOPIC,
      0,
      rng.chance(0.3) ? AckPolicy.FORCED : AckPolicy.WRITTEN,
      payloads,
    );
    assert.equal(
      answer.errorCode,
      0,
      `producer ${id}: PRODUCE refused with ${answer.errorCode} while retention ran`,
    );
    const { baseOffset } = producedOf(answer);
    for (const [i, p] of payloads.entries()) shared.acked.set(baseOffset + i, p);
  }
}

/** One FETCH, checked whole; returns the records' offsets and payloads, or null when out of range. */
async function fetchChecked(
  c: WireClient,
  offset: number,
  maxBytes: number,
  maxWaitMs: number,
  shared: Shared,
) {
  const answer = await c.fetch(TOPIC, 0, offset, maxBytes, maxWaitMs);
  shared.answers++;
  if (answer.errorCode === OFFSET_OUT_OF_RANGE) {
    assert.equal(answer.body.length, 0);
    return null;
  }
  assert.equal(answer.errorCode, 0, `FETCH at ${offset}: error ${answer.errorCode}`);
  const read = fetchedOf(answer, offset, maxBytes); // payloadBytes == what follows; every CRC checked
  for (const [i, r] of read.records.entries()) {
    assert.ok(parseSelfChecking(r), `offset ${offset + i} holds bytes no producer wrote`);
    shared.served.set(offset + i, Buffer.from(r));
  }
  return read;
}

/** Reads on from the log start, with cuts of every size and long polls at the end; restarts when left behind. */
async function tailer(port: number, rng: Rng, shared: Shared): Promise<void> {
  const c = await connect(port, shared);
  let offset = (await offsetsOf(c, TOPIC, 0)).logStartOffset;
  while (shared.running) {
    const read = await fetchChecked(
      c,
      offset,
      rng.pick([64, 500, 4096, 30_000, 70_000]),
      rng.pick([0, 50]),
      shared,
    );
    if (read === null) {
      shared.restarts++;
      offset = (await offsetsOf(c, TOPIC, 0)).logStartOffset;
      continue;
    }
    offset = read.nextOffset; // whole records only: a cut record is asked for again from its start
  }
}

/** Reads at the log start again and again: the segment retention removes next. */
async function chaser(port: number, rng: Rng, shared: Shared): Promise<void> {
  const c = await connect(port, shared);
  while (shared.running) {
    const { logStartOffset } = await offsetsOf(c, TOPIC, 0);
    const read = await fetchChecked(
      c,
      logStartOffset + rng.int(0, 3),
      rng.pick([100, 8192, 65_536]),
      0,
      shared,
    );
    if (read === null) shared.restarts++;
  }
}

/**
 * Falls behind on purpose: remembers an offset, waits until retention has removed it, then must be
 * refused with OFFSET_OUT_OF_RANGE (at once, though it asks to wait) and must restart from the new start.
 */
async function laggard(port: number, shared: Shared): Promise<number> {
  const c = await connect(port, shared);
  let rounds = 0;
  while (shared.running) {
    const { highWatermark } = await offsetsOf(c, TOPIC, 0);
    const behind = highWatermark;
    await waitUntil(
      async () => !shared.running || (await offsetsOf(c, TOPIC, 0)).logStartOffset > behind,
      `retention to pass offset ${behind}`,
      60_000,
      10,
    );
    if (!shared.running) break;
    const started = performance.now();
    const refused = await fetchChecked(c, behind, 4096, 5_000, shared);
    assert.equal(refused, null, `offset ${behind}, below the log start: OFFSET_OUT_OF_RANGE`);
    assert.ok(
      performance.now() - started < 2_500,
      'below the log start is refused at once, not after the wait',
    );
    // Restart from the new start (retention may move it again meanwhile: a few tries).
    let restarted = false;
    const tries: string[] = [];
    for (let attempt = 0; attempt < 20 && !restarted; attempt++) {
      const { logStartOffset: start, highWatermark: end } = await offsetsOf(c, TOPIC, 0);
      // Answered, not refused: records, or empty when the start is also the end (a fresh segment).
      restarted = (await fetchChecked(c, start, 65_536, 0, shared)) !== null;
      tries.push(`${start}..${end}`);
    }
    assert.ok(
      restarted,
      `a consumer that fell behind can restart from the new log start (tried ${tries.join(', ')})`,
    );
    rounds++;
  }
  return rounds;
}

async function retentionUnderLoad(t: import('node:test').TestContext, flags: string[]): Promise<void> {
  const dir = tempDir(t, 'retention');
  const broker = await BrokerProcess.start(t, {
    dataDir: dir,
    http: false,
    flags: [
      `--topics=${TOPIC}:1`,
      `--segment.capacity.bytes=${SEGMENT_BYTES}`,
      '--index.interval.bytes=1024',
      '--retention.check.millis=5',
      ...flags,
    ],
  });
  const rng = new Rng(seed);
  const shared: Shared = {
    running: true,
    acked: new Map(),
    served: new Map(),
    restarts: 0,
    answers: 0,
    clients: [],
  };
  t.after(() => {
    for (const c of shared.clients) c.close();
  });
  let removed = 0;
  const removals = () => {
    removed = 0;
    for (const l of broker.lines) removed += Number(/retention removed (\d+) segment/.exec(l)?.[1] ?? 0);
    return removed;
  };
  const stopOnFailure = <T>(p: Promise<T>) =>
    p.catch((error: unknown) => {
      shared.running = false;
      throw error;
    });
  const workers = [
    ...[0, 1].map((id) => stopOnFailure(producer(broker.port, id, rng.fork(), shared))),
    ...[0, 1, 2].map(() => stopOnFailure(tailer(broker.port, rng.fork(), shared))),
    ...[0, 1].map(() => stopOnFailure(chaser(broker.port, rng.fork(), shared))),
  ];
  const lagging = stopOnFailure(laggard(broker.port, shared));
  for (const p of [...workers, lagging]) p.catch(() => {}); // awaited below; handled now
  try {
    await waitUntil(
      () => !shared.running || removals() >= budget.retentionRemovals,
      `retention to remove ${budget.retentionRemovals} segments`,
      budget.retentionRemovals * 1_000,
      20,
    );
  } finally {
    shared.running = false;
  }
  await within(Promise.all(workers), 30_000, 'the producers and consumers to finish').catch(
    (error: Error) => {
      throw new Error(`${error.message}${broker.tail()}`, { cause: error });
    },
  );
  const laggardRounds = await within(lagging, 30_000, 'the laggard to finish');

  for (const c of shared.clients) assert.deepEqual(c.violations, [], 'a response broke its framing');
  let compared = 0;
  for (const [offset, payload] of shared.served) {
    const acked = shared.acked.get(offset);
    if (acked === undefined) continue; // served before its producer heard back: checked as self-identifying
    assert.ok(acked.equals(payload), `offset ${offset}: served bytes differ from the acknowledged ones`);
    compared++;
  }
  assert.ok(laggardRounds > 0, 'the laggard fell behind and restarted at least once');
  const exit = await broker.stop();
  assert.equal(exit.code, 0, `the broker stops cleanly${broker.tail()}`);
  t.diagnostic(
    `${removed} segments removed under load; ${shared.answers} FETCH answers checked whole, ${compared} served records ` +
      `compared with their acknowledgement; ${shared.restarts} out-of-range restarts; the laggard fell behind ${laggardRounds} times`,
  );
}

/** Registers the retention-under-load check. */
export function retentionCheck(): void {
  describe('retention under load', () => {
    it('segments removed while consumers read them: every answer whole and right, a consumer left behind is refused and restarts (reads from segment files)', (t) =>
      retentionUnderLoad(t, ['--retention.bytes=262144', '--tail.cache.bytes=0']));

    it('the same with retention keeping only the active segment and the default tail cache', (t) =>
      retentionUnderLoad(t, ['--retention.bytes=0']));
  });
}
