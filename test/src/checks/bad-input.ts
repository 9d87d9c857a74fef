/**
 * Bad input: a seeded frame fuzzer against the real broker. Each case is followed on the same
 * connection by a METADATA, and every answer is checked against what the specification requires
 * (kit/spec-oracle.ts, written from the spec, sharing no code with the broker): the correlationId,
 * the code, an error's empty body, a success body that decodes. Cases after which the stream cannot
 * go on (absurd lengths, half a frame then silence or a disconnect, a lying length prefix, random
 * bytes) are the last of their connection. After every batch a fresh connection must still produce
 * and fetch back, and at the end every partition holds exactly the records the oracle says were
 * accepted: nothing refused was written.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AckPolicy,
  encodeFetchRequestV2,
  encodeMetadataRequest,
  type ResponseFrame,
} from '@booblik/protocol';
import { BrokerProcess, tempDir, waitUntil } from '@booblik/testkit';
import { budget, seed } from '../kit/budget.js';
import {
  FRAME_BYTES_MAX,
  type FuzzCase,
  type FuzzTarget,
  inlineCase,
  terminalCase,
} from '../kit/frame-fuzzer.js';
import { Rng } from '../kit/rng.js';
import { type BrokerModel, codesWithBody, type ExpectedAnswer, judgeStream } from '../kit/spec-oracle.js';
import { fetchedOf, metadataOf, offsetsOf, producedOf, readRange, WireClient } from '../kit/wire-client.js';

const SEGMENT_BYTES = 65_536;
/** One topic per lane (names far apart, so a flipped bit cannot turn one into another). */
const LANE_TOPICS = ['amber', 'cobalt', 'indigo', 'violet'];
const PARTITIONS = 2;
const CHECK_TOPIC = 'check';
const TOPIC_MAP = new Map([...LANE_TOPICS.map((n) => [n, PARTITIONS] as const), [CHECK_TOPIC, 1] as const]);
/** FETCHes the fuzzer sends may wait this long at most, so a batch never stalls on a long poll. */
const HOLD_MS_MAX = 20;

/** Per partition of a lane: `low` is known reached, `high` counts every record that may be accepted. */
class LaneModel implements BrokerModel {
  readonly topics = TOPIC_MAP;
  readonly segmentBytesMax = SEGMENT_BYTES;
  readonly low = new Map<string, number>();
  readonly high = new Map<string, number>();

  constructor(readonly own: string) {}

  watermark(topic: string, partition: number) {
    if (topic !== this.own) return { low: 0, high: Number.POSITIVE_INFINITY }; // another lane's
    const key = `${topic}-${partition}`;
    return { low: this.low.get(key) ?? 0, high: this.high.get(key) ?? 0 };
  }

  accept(writes: ReturnType<typeof judgeStream>['writes']): void {
    for (const w of writes) {
      if (w.topic !== this.own) continue;
      const key = `${w.topic}-${w.partition}`;
      this.high.set(key, (this.high.get(key) ?? 0) + w.records);
    }
  }
}

interface Tally {
  cases: number;
  answers: number;
  /** Frames the spec forbids answering (ack NONE), checked by the METADATA after them coming next. */
  unanswered: number;
  closedByBroker: number;
  batches: number;
  byLabel: Map<string, number>;
  deliveries: Map<string, number>;
}

function checkAnswer(frame: ResponseFrame | null, want: ExpectedAnswer, where: () => string): void {
  assert.ok(
    frame,
    `${where()}: the connection closed before the answer to ${want.correlationId} (${want.why})`,
  );
  assert.equal(
    frame.correlationId,
    want.correlationId,
    `${where()}: expected the answer to ${want.correlationId} (${want.why}), got id ${frame.correlationId} code ${frame.errorCode}`,
  );
  assert.ok(
    want.codes.includes(frame.errorCode),
    `${where()}: ${want.why}: code ${frame.errorCode}, the spec requires ${want.codes.join(' or ')}`,
  );
  if (frame.errorCode !== 0) {
    if (!codesWithBody.has(frame.errorCode)) {
      assert.equal(frame.body.length, 0, `${where()}: an error response has no body (frameLength 6)`);
    }
    return;
  }
  if (want.api === 'produce') {
    const r = producedOf(frame);
    assert.equal(frame.body.length, 16, `${where()}: PRODUCE answer body is 16 bytes`);
    assert.ok(
      r.logEndOffset > r.baseOffset,
      `${where()}: logEndOffset ${r.logEndOffset} > baseOffset ${r.baseOffset}`,
    );
  } else if (want.api === 'fetch') {
    // payloadBytes and every CRC checked
    fetchedOf(frame, want.fetch!.fetchOffset, want.fetch!.maxBytes, want.fetch!.version);
  } else if (want.api === 'metadata') {
    metadataOf(frame);
  }
}

/** Writes the stream whole, in random pieces, or one byte at a time (each write a turn of its own). */
async function deliver(c: WireClient, stream: Buffer, rng: Rng): Promise<string> {
  const mode = stream.length <= 4096 && rng.chance(0.05) ? 'bytes' : rng.chance(0.25) ? 'pieces' : 'whole';
  if (mode === 'whole') {
    c.send(stream);
    return mode;
  }
  for (let at = 0; at < stream.length && !c.closed; ) {
    const n = mode === 'bytes' ? 1 : rng.int(1, Math.max(1, Math.min(stream.length - at, 4096)));
    c.send(stream.subarray(at, at + n));
    at += n;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return mode;
}

/** A fresh connection produces a record and reads it back: the broker still serves newcomers. */
async function freshConnectionWorks(port: number, rng: Rng, where: string): Promise<void> {
  const c = await WireClient.connect(port);
  try {
    const payload = rng.bytes(rng.int(1, 100));
    const answer = await c.produce(CHECK_TOPIC, 0, AckPolicy.WRITTEN, [payload]);
    assert.equal(answer.errorCode, 0, `${where}: a fresh connection's PRODUCE failed`);
    const { baseOffset } = producedOf(answer);
    const [back] = await readRange(c, CHECK_TOPIC, 0, baseOffset, baseOffset + 1);
    assert.ok(back?.equals(payload), `${where}: a fresh connection read back another record`);
  } finally {
    c.close();
  }
}

async function runLane(
  lane: number,
  port: number,
  cases: number,
  rng: Rng,
  tally: Tally,
  silent: WireClient[],
): Promise<LaneModel> {
  const model = new LaneModel(LANE_TOPICS[lane]!);
  const target: FuzzTarget = {
    topics: [{ name: model.own, partitions: PARTITIONS }],
    segmentBytesMax: SEGMENT_BYTES,
    offsetHint: (topic, partition) => model.watermark(topic, partition).high + 2,
  };
  const nextId = () => (rng.chance(0.1) ? rng.pick([0, -1, 2 ** 31 - 1, -(2 ** 31)]) : rng.u32() | 0);
  const probe = () => encodeMetadataRequest(nextId(), { topics: [] });
  let done = 0;
  for (let batch = 0; done < cases; batch++) {
    const size = Math.min(cases - done, rng.int(1, 40));
    const labels: string[] = [];
    const kinds: string[] = [];
    const parts: Buffer[] = [];
    let terminal: (FuzzCase & { then: 'silence' | 'disconnect' }) | null = null;
    for (let i = 0; i < size; i++) {
      if (i === size - 1 && rng.chance(0.3)) {
        terminal = terminalCase(rng, target, nextId());
        parts.push(terminal.bytes, probe()); // the METADATA after it must be read as the case decides
        labels.push(terminal.label);
        kinds.push(terminal.kind);
        break;
      }
      // A case whose FETCH may be held for long is drawn again (the batch would stall on it).
      let c: FuzzCase;
      let tries = 0;
      do c = inlineCase(rng, target, nextId());
      while (judgeStream(c.bytes, model).longestHoldMs > HOLD_MS_MAX && ++tries < 20);
      if (tries === 20) continue;
      parts.push(c.bytes, probe());
      labels.push(c.label);
      kinds.push(c.kind);
    }
    const stream = Buffer.concat(parts);
    const verdict = judgeStream(stream, model);
    if (verdict.longestHoldMs > HOLD_MS_MAX) continue; // a lying length made a long poll: draw again
    model.accept(verdict.writes);
    done += labels.length;
    tally.cases += labels.length;
    tally.batches++;
    for (const k of kinds) tally.byLabel.set(k, (tally.byLabel.get(k) ?? 0) + 1);

    const c = await WireClient.connect(port);
    const mode = await deliver(c, stream, rng);
    tally.deliveries.set(mode, (tally.deliveries.get(mode) ?? 0) + 1);
    const where = (i?: number) =>
      `lane ${lane} batch ${batch} (seed ${seed}, ${mode})${i === undefined ? '' : ` answer ${i}`}; cases: ${labels.join(' | ')}`;
    for (const [i, want] of verdict.answers.entries()) {
      checkAnswer(await c.next(), want, () => where(i));
      tally.answers++;
    }
    if (verdict.end === 'closed') {
      const after = await c.next();
      assert.equal(
        after,
        null,
        `${where()}: after an absurd length nothing may be answered, and the connection closes`,
      );
      tally.closedByBroker++;
    } else if (verdict.end === 'mid-frame') {
      if (terminal?.then === 'silence') silent.push(c);
      else c.close();
    } else {
      // At a frame boundary: the connection still answers, and nothing unexpected came before.
      const id = nextId();
      c.send(encodeMetadataRequest(id, { topics: [] }));
      checkAnswer(
        await c.next(),
        { correlationId: id, codes: [0], api: 'metadata', why: 'closing METADATA' },
        where,
      );
      c.close();
    }
    tally.unanswered += verdict.frames - verdict.answers.length;
    assert.deepEqual(c.violations, [], `${where()}: the broker broke the protocol`);

    await freshConnectionWorks(port, rng, where());
    // What is known written now; never more than the oracle allowed.
    const check = await WireClient.connect(port);
    for (let p = 0; p < PARTITIONS; p++) {
      const { highWatermark } = await offsetsOf(check, model.own, p);
      const { high } = model.watermark(model.own, p);
      assert.ok(
        highWatermark <= high,
        `${where()}: ${model.own}-${p} holds ${highWatermark} records, at most ${high} were accepted`,
      );
      model.low.set(`${model.own}-${p}`, highWatermark);
    }
    check.close();
  }
  return model;
}

/** Registers the bad-input check. */
export function badInputCheck(): void {
  describe('bad input: a frame fuzzer against the real broker', () => {
    it(`${budget.fuzzCases} fuzzed cases are each answered as the spec requires, cost only their own connection, and write nothing refused (seed ${seed})`, async (t) => {
      const dir = tempDir(t, 'fuzz');
      const broker = await BrokerProcess.start(t, {
        dataDir: dir,
        flags: [
          `--topics=${[...TOPIC_MAP].map(([n, p]) => `${n}:${p}`).join(',')}`,
          `--segment.capacity.bytes=${SEGMENT_BYTES}`,
        ],
      });
      const rng = new Rng(seed);
      const tally: Tally = {
        cases: 0,
        answers: 0,
        unanswered: 0,
        closedByBroker: 0,
        batches: 0,
        byLabel: new Map(),
        deliveries: new Map(),
      };
      const silent: WireClient[] = [];
      t.after(() => {
        for (const c of silent) c.close();
      });
      const perLane = Math.ceil(budget.fuzzCases / LANE_TOPICS.length);
      const models = await Promise.all(
        LANE_TOPICS.map((_, lane) => runLane(lane, broker.port, perLane, rng.fork(), tally, silent)),
      );
      assert.ok(broker.running, `the broker is still running${broker.tail()}`);

      // Every accepted record landed (ack NONE ones too, eventually), and nothing else.
      const c = await WireClient.connect(broker.port);
      for (const model of models) {
        for (let p = 0; p < PARTITIONS; p++) {
          const expected = model.watermark(model.own, p).high;
          await waitUntil(
            async () => (await offsetsOf(c, model.own, p)).highWatermark >= expected,
            `${model.own}-${p} to hold the ${expected} accepted records`,
            10_000,
            10,
          );
          assert.equal(
            (await offsetsOf(c, model.own, p)).highWatermark,
            expected,
            `${model.own}-${p}: only accepted records`,
          );
        }
      }
      c.close();

      // Connections left with half a frame are still open and were never answered.
      await waitUntil(
        async () => (await broker.metric('booblik_connections')) === silent.length,
        `booblik_connections to count just the ${silent.length} silent connections`,
        10_000,
        10,
      );
      for (const s of silent) {
        assert.equal(s.closed, false, 'a connection waiting inside a frame is left open');
        assert.equal(s.buffered, 0, 'a connection waiting inside a frame got no answer');
        s.close();
      }
      await waitUntil(
        async () => (await broker.metric('booblik_connections')) === 0,
        'every connection to close',
        10_000,
        10,
      );
      const exit = await broker.stop();
      assert.equal(exit.code, 0, `SIGTERM after the fuzzing stops the broker cleanly${broker.tail()}`);
      t.diagnostic(
        `${tally.cases} cases in ${tally.batches} batches; ${tally.answers} answers checked; ${tally.unanswered} ack NONE frames left unanswered as required; ${tally.closedByBroker} connections closed by the broker; ` +
          `${silent.length} left silent mid-frame; kinds: ${[...tally.byLabel].map(([k, n]) => `${k} ${n}`).join(', ')}; ` +
          `batches written ${[...tally.deliveries].map(([k, n]) => `${k} ${n}`).join(', ')}`,
      );
    });

    it('a FETCH asking for more than a response frame can carry is answered within the 8 MiB frame limit', async (t) => {
      const dir = tempDir(t, 'fuzz-big');
      const broker = await BrokerProcess.start(t, { dataDir: dir, flags: ['--topics=big:1'], http: false });
      const c = await WireClient.connect(broker.port);
      t.after(() => c.close());
      // 12 MiB in records of 512 KiB: more than one frame holds, in segment files and in the tail cache.
      const record = Buffer.alloc(512 * 1024, 0x5a);
      const bases: number[] = [];
      for (let i = 0; i < 3; i++) {
        const answer = await c.produce(
          'big',
          0,
          AckPolicy.WRITTEN,
          Array.from({ length: 8 }, () => record),
        );
        assert.equal(answer.errorCode, 0);
        bases.push(producedOf(answer).baseOffset);
      }
      const payloadMax = FRAME_BYTES_MAX - 6 - 12; // the frame less the response header and the FETCH fixed fields
      const asks = [
        {
          what: 'from a segment, maxBytes 2^31-1',
          fetchOffset: 0,
          maxBytes: 2 ** 31 - 1,
          maxWaitMs: 0,
          minBytes: 0,
        },
        { what: 'maxBytes 8 MiB', fetchOffset: 0, maxBytes: FRAME_BYTES_MAX, maxWaitMs: 0, minBytes: 0 },
        {
          what: 'from the newest records',
          fetchOffset: bases[2]!,
          maxBytes: 2 ** 31 - 1,
          maxWaitMs: 0,
          minBytes: 0,
        },
        // A long poll for more than a frame can carry is answered once a frame's worth is there.
        {
          what: 'minBytes 9 MiB',
          fetchOffset: 0,
          maxBytes: 2 ** 31 - 1,
          maxWaitMs: 60_000,
          minBytes: 9 << 20,
        },
      ];
      for (const ask of asks) {
        const id = c.id();
        c.send(encodeFetchRequestV2(id, { topic: 'big', partition: 0, ...ask }));
        const answer = await c.next(10_000);
        assert.deepEqual(c.violations, [], `${ask.what}: the answer broke the frame limit`);
        assert.ok(answer, `${ask.what}: answered`);
        assert.equal(answer.correlationId, id);
        assert.equal(answer.errorCode, 0);
        const read = fetchedOf(answer, ask.fetchOffset, ask.maxBytes);
        assert.ok(read.records.length > 0, `${ask.what}: whole records came back`);
        assert.ok(read.records.length * (record.length + 8) + read.truncatedBytes <= payloadMax);
      }
    });
  });
}
