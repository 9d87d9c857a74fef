/**
 * What the protocol specification says a broker must do with a stream of request bytes, written from
 * the specification alone (it shares no decoding code with the broker): which answers come back, in
 * which order, with which correlationIds and codes, and whether the connection ends.
 *
 *   - A frameLength outside 1..8 MiB closes the connection without an answer; nothing after it counts.
 *   - A frame shorter than its 8-byte header is CORRUPT_REQUEST with correlationId 0.
 *   - An unknown apiKey, or a version the API does not have, is UNSUPPORTED_VERSION.
 *   - A request that does not decode or breaks a field rule is CORRUPT_REQUEST, its id echoed.
 *   - A PRODUCE whose ack byte was read and is 0 (NONE) is never answered, refused or not.
 *   - Then UNKNOWN_TOPIC_OR_PARTITION, RECORD_TOO_LARGE, OFFSET_OUT_OF_RANGE as the spec orders them.
 *
 * The additions after v1 (docs/protocol.md) are judged too, since a fuzzed apiKey or apiVersion lands
 * on them: PRODUCE v2 (an expected offset, which may refuse the batch with OFFSET_MISMATCH), METADATA
 * v2 (v1's request), v3, v4 and v5 (a minimum revision and flags), FETCH v3 and v4 (v2's bytes), FETCH v5
 * (v2's bytes and a last epoch of -1 or more; a broker that never restored a partition has no epoch to
 * refuse it by, so its codes are v2's and its answer carries the epoch fields), APPLY v1 and v2,
 * LIST v1 and v2, API_VERSIONS, LIST_FRAGMENTS and REPLICATE (any of their codes; only their
 * framing is judged).
 */

export const Code = {
  NONE: 0,
  UNKNOWN_TOPIC_OR_PARTITION: 1,
  OFFSET_OUT_OF_RANGE: 2,
  RECORD_TOO_LARGE: 3,
  UNSUPPORTED_VERSION: 4,
  CORRUPT_REQUEST: 5,
  REVISION_MISMATCH: 7,
  OFFSET_MISMATCH: 8,
  INVALID_ARGUMENT: 11,
  CLUSTER_UNAVAILABLE: 13,
  AUTHENTICATION_FAILED: 20,
} as const;

/** Codes whose error responses carry a body (only ever in answer to an addition's request). */
export const codesWithBody: ReadonlySet<number> = new Set([
  Code.REVISION_MISMATCH,
  Code.OFFSET_MISMATCH,
  Code.INVALID_ARGUMENT,
  Code.AUTHENTICATION_FAILED,
]);

const FRAME_BYTES_MAX = 8 * 1024 * 1024;
const HEADER_BYTES = 8;
const TOPIC_CHARS_MAX = 249;
const topicChars = /^[\p{L}\p{Nd}._-]+$/u;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** What the oracle knows of the broker: its topics, its segment size, and bounds on each high watermark. */
export interface BrokerModel {
  /** topic -> partition count */
  topics: ReadonlyMap<string, number>;
  segmentBytesMax: number;
  /**
   * Bounds on a partition's high watermark when a FETCH is processed: `low` is known reached, `high`
   * cannot be passed. Offsets in between may be answered either way.
   */
  watermark(topic: string, partition: number): { low: number; high: number };
}

/** One answer the broker owes: its correlationId and the codes the spec allows for it. */
export interface ExpectedAnswer {
  correlationId: number;
  codes: number[];
  api: 'produce' | 'fetch' | 'metadata' | 'other';
  /** For a FETCH: what it asked, to settle its code and check the body. */
  fetch?: {
    topic: string;
    partition: number;
    fetchOffset: number;
    maxBytes: number;
    waitMs: number;
    /** Writes earlier in the stream than this FETCH. */
    writesBefore: number;
    /** 5: the answer carries the epoch fields before the payload. */
    version: number;
  };
  /** Why the oracle expects this: the rule that decided it. */
  why: string;
}

/** A PRODUCE that may have been written: the model's high watermark must allow for it. */
export interface PossibleWrite {
  topic: string;
  partition: number;
  records: number;
  /** Whether an answer will say so (WRITTEN, FORCED), or nobody will ever be told (NONE). */
  answered: boolean;
}

export interface StreamVerdict {
  answers: ExpectedAnswer[];
  /** How the stream ends: the broker closed it, it waits inside a frame, or at a frame boundary. */
  end: 'closed' | 'mid-frame' | 'boundary';
  writes: PossibleWrite[];
  /** Longest long-poll wait among FETCHes that may be held (ms). */
  longestHoldMs: number;
  /** Frames judged (complete ones). */
  frames: number;
}

class Short extends Error {}

/** A bounds-checked reader that fails with Short when a field runs past the frame. */
class Fields {
  pos = HEADER_BYTES;
  constructor(readonly frame: Buffer) {}
  get remaining(): number {
    return this.frame.length - this.pos;
  }
  private take(n: number): number {
    if (this.remaining < n) throw new Short();
    const at = this.pos;
    this.pos += n;
    return at;
  }
  i8(): number {
    return this.frame.readInt8(this.take(1));
  }
  i32(): number {
    return this.frame.readInt32BE(this.take(4));
  }
  i64(): bigint {
    return this.frame.readBigInt64BE(this.take(8));
  }
  string(): Buffer {
    const length = this.frame.readUInt16BE(this.take(2));
    const at = this.take(length);
    return this.frame.subarray(at, at + length);
  }
}

/** A topic name as the spec defines it, or null: UTF-8, 1..249 characters, letters, digits, `.`, `_`, `-`. */
export function topicName(bytes: Buffer): string | null {
  let name: string;
  try {
    name = utf8.decode(bytes);
  } catch {
    return null;
  }
  const chars = [...name].length;
  if (chars < 1 || chars > TOPIC_CHARS_MAX || !topicChars.test(name)) return null;
  return name;
}

/** Judges a whole request stream as the broker will see it, frame by frame. */
export function judgeStream(stream: Buffer, model: BrokerModel): StreamVerdict {
  const verdict: StreamVerdict = { answers: [], end: 'boundary', writes: [], longestHoldMs: 0, frames: 0 };
  verdict.end = readFrames(stream, model, verdict);
  settleFetchCodes(verdict, model);
  return verdict;
}

function readFrames(stream: Buffer, model: BrokerModel, verdict: StreamVerdict): StreamVerdict['end'] {
  let pos = 0;
  while (pos < stream.length) {
    if (stream.length - pos < 4) return 'mid-frame';
    const length = stream.readInt32BE(pos);
    if (length < 1 || length > FRAME_BYTES_MAX) return 'closed';
    if (stream.length - pos - 4 < length) return 'mid-frame';
    const frame = stream.subarray(pos + 4, pos + 4 + length);
    pos += 4 + length;
    verdict.frames++;
    judgeFrame(frame, model, verdict);
  }
  return 'boundary';
}

function offsetCodes(offset: number, low: number, high: number): number[] {
  if (offset <= low) return [Code.NONE];
  if (offset > high) return [Code.OFFSET_OUT_OF_RANGE];
  return [Code.NONE, Code.OFFSET_OUT_OF_RANGE];
}

/**
 * A FETCH is answered against the high watermark when it is read, or (with a wait) when its wait
 * ends: by then writes earlier in the stream may have landed, and with a wait, later ones too (the
 * broker reads on while a FETCH is held).
 */
function settleFetchCodes(verdict: StreamVerdict, model: BrokerModel): void {
  for (const a of verdict.answers) {
    const f = a.fetch;
    if (f === undefined) continue; // refused before its offset mattered
    const { low, high } = model.watermark(f.topic, f.partition);
    const counted = f.waitMs > 0 ? verdict.writes : verdict.writes.slice(0, f.writesBefore);
    let reachable = high;
    for (const w of counted) if (w.topic === f.topic && w.partition === f.partition) reachable += w.records;
    a.codes = offsetCodes(f.fetchOffset, low, reachable);
    a.why = `FETCH offset ${f.fetchOffset} (wait ${f.waitMs} ms), high watermark in [${low}, ${reachable}]`;
  }
}

/** The answer one frame must get, or null when the spec forbids any answer (ack NONE). */
type Judged = ExpectedAnswer | null;

function judgeFrame(frame: Buffer, model: BrokerModel, v: StreamVerdict): void {
  let judged: Judged;
  if (frame.length < HEADER_BYTES) {
    judged = { correlationId: 0, codes: [Code.CORRUPT_REQUEST], api: 'other', why: 'short frame' };
  } else {
    const apiKey = frame.readInt16BE(0);
    const version = frame.readInt16BE(2);
    const id = frame.readInt32BE(4);
    // Version 3 of PRODUCE and FETCH is v2's bytes (a client that follows routes).
    if (apiKey === 1 && version >= 1 && version <= 3) judged = judgeProduce(frame, id, version, model, v);
    else if (apiKey === 2 && version >= 1 && version <= 5) judged = judgeFetch(frame, id, version, model, v);
    else if (apiKey === 3 && (version === 1 || version === 2))
      judged = judgeMetadata(frame, id, version, model);
    // v4 and v5 ask v3's question (their answers carry RouteV2, and v5 where offsets come from).
    else if (apiKey === 3 && version >= 3 && version <= 5) judged = judgeMetadataV3(frame, id, model, v);
    // APPLY v2 is v1 with one more op; LIST v2 asks v1's question.
    else if (
      (apiKey === 4 || apiKey === 5 || apiKey === 6 || apiKey === 8) &&
      (version === 1 || ((apiKey === 4 || apiKey === 5) && version === 2))
    )
      judged = judgeTopicApi(frame, id, apiKey, v);
    else if (apiKey === 7 && version === 1) judged = judgeListFragments(id);
    else if (apiKey === 9 && version === 1) judged = judgeReplicate(id);
    else if ((apiKey === 10 || apiKey === 11) && version === 1) judged = judgeSecurityApi(id, apiKey);
    else {
      judged = {
        correlationId: id,
        codes: [Code.UNSUPPORTED_VERSION],
        api: 'other',
        why: `apiKey ${apiKey} version ${version}`,
      };
    }
  }
  if (judged !== null) v.answers.push(judged);
}

function judgeProduce(
  frame: Buffer,
  id: number,
  version: number,
  model: BrokerModel,
  v: StreamVerdict,
): Judged {
  const f = new Fields(frame);
  let ack: number | undefined;
  // The ack byte, once read, decides whether anything may be said at all.
  const refuse = (code: number, why: string): Judged =>
    ack === 0 ? null : { correlationId: id, codes: [code], api: 'produce', why };
  try {
    const topicBytes = f.string();
    const partition = f.i32();
    ack = f.i8();
    const topic = topicName(topicBytes);
    if (topic === null) return refuse(Code.CORRUPT_REQUEST, 'PRODUCE topic name');
    if (partition < 0) return refuse(Code.CORRUPT_REQUEST, 'PRODUCE partition < 0');
    if (ack < 0 || ack > 2) return refuse(Code.CORRUPT_REQUEST, `PRODUCE ack ${ack}`);
    const expectedOffset = version >= 2 ? f.i64() : -1n;
    if (expectedOffset < -1n || expectedOffset > BigInt(Number.MAX_SAFE_INTEGER)) {
      return refuse(Code.CORRUPT_REQUEST, 'PRODUCE v2 expectedOffset out of range');
    }
    const count = f.i32();
    if (count <= 0) return refuse(Code.CORRUPT_REQUEST, 'PRODUCE recordCount <= 0');
    if (count * 4 > f.remaining) return refuse(Code.CORRUPT_REQUEST, 'PRODUCE recordCount beyond the frame');
    let largest = 0;
    for (let i = 0; i < count; i++) {
      const size = f.i32();
      if (size <= 0) return refuse(Code.CORRUPT_REQUEST, `PRODUCE record ${i} size <= 0`);
      if (size > f.remaining) return refuse(Code.CORRUPT_REQUEST, `PRODUCE record ${i} beyond the frame`);
      f.pos += size;
      largest = Math.max(largest, size);
    }
    const partitions = model.topics.get(topic);
    if (partitions === undefined || partition >= partitions) {
      return refuse(Code.UNKNOWN_TOPIC_OR_PARTITION, 'PRODUCE unknown topic or partition');
    }
    if (largest + 8 > model.segmentBytesMax) return refuse(Code.RECORD_TOO_LARGE, 'PRODUCE record too large');
    v.writes.push({ topic, partition, records: count, answered: ack !== 0 });
    if (expectedOffset >= 0n) {
      // Written only if the partition ends there when its turn comes: either answer is the spec's.
      return ack === 0
        ? null
        : {
            correlationId: id,
            codes: [Code.NONE, Code.OFFSET_MISMATCH],
            api: 'produce',
            why: 'PRODUCE v2 expectedOffset',
          };
    }
    return refuse(Code.NONE, 'PRODUCE valid');
  } catch (error) {
    if (!(error instanceof Short)) throw error;
    return refuse(Code.CORRUPT_REQUEST, 'PRODUCE field runs past the frame');
  }
}

function judgeFetch(
  frame: Buffer,
  id: number,
  version: number,
  model: BrokerModel,
  v: StreamVerdict,
): Judged {
  const f = new Fields(frame);
  const answer = (codes: number[], why: string): ExpectedAnswer => ({
    correlationId: id,
    codes,
    api: 'fetch',
    why,
  });
  const corrupt = (why: string) => answer([Code.CORRUPT_REQUEST], why);
  try {
    const topic = topicName(f.string());
    if (topic === null) return corrupt('FETCH topic name');
    const partition = f.i32();
    if (partition < 0) return corrupt('FETCH partition < 0');
    const fetchOffset = f.i64();
    if (fetchOffset < 0n) return corrupt('FETCH fetchOffset < 0');
    const maxBytes = f.i32();
    if (maxBytes <= 0) return corrupt('FETCH maxBytes <= 0');
    let waitMs = 0;
    if (version >= 2) {
      waitMs = f.i32();
      if (waitMs < 0) return corrupt('FETCH maxWaitMillis < 0');
      const minBytes = f.i32();
      if (minBytes < 0) return corrupt('FETCH minBytes < 0');
      if (minBytes > maxBytes) return corrupt('FETCH minBytes > maxBytes');
    }
    if (version === 5 && f.i32() < -1) return corrupt('FETCH v5 lastEpoch < -1');
    const partitions = model.topics.get(topic);
    if (partitions === undefined || partition >= partitions) {
      return answer([Code.UNKNOWN_TOPIC_OR_PARTITION], 'FETCH unknown topic or partition');
    }
    v.longestHoldMs = Math.max(v.longestHoldMs, waitMs);
    const offset = Number(fetchOffset);
    const { low, high } = model.watermark(topic, partition);
    const fetch = {
      topic,
      partition,
      fetchOffset: offset,
      maxBytes,
      waitMs,
      writesBefore: v.writes.length,
      version,
    };
    return { ...answer(offsetCodes(offset, low, high), `FETCH offset ${offset}`), fetch };
  } catch (error) {
    if (!(error instanceof Short)) throw error;
    return corrupt('FETCH field runs past the frame');
  }
}

function judgeMetadata(frame: Buffer, id: number, version: number, model: BrokerModel): Judged {
  const f = new Fields(frame);
  const answer = (codes: number[], why: string): ExpectedAnswer => ({
    correlationId: id,
    codes,
    // v2's answer has another layout: only v1's body is decoded by the checker.
    api: version === 1 ? 'metadata' : 'other',
    why,
  });
  try {
    const count = f.i32();
    if (count < 0) return answer([Code.CORRUPT_REQUEST], 'METADATA topicCount < 0');
    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      const name = topicName(f.string());
      if (name === null) return answer([Code.CORRUPT_REQUEST], `METADATA topic ${i} name`);
      names.push(name);
    }
    if (names.some((n) => !model.topics.has(n))) {
      return answer([Code.UNKNOWN_TOPIC_OR_PARTITION], 'METADATA names an unknown topic');
    }
    return answer([Code.NONE], 'METADATA valid');
  } catch (error) {
    if (!(error instanceof Short)) throw error;
    return answer([Code.CORRUPT_REQUEST], 'METADATA field runs past the frame');
  }
}

/**
 * METADATA v3: v1's topics, then a minimum revision and flags as the frame's last 9 bytes (bytes
 * between are ignored, as after v1's topics). A minimum the broker has not reached holds the answer
 * up to 5 s, then CLUSTER_UNAVAILABLE; reached, it is judged as v1 (only the codes: v2's layout).
 */
function judgeMetadataV3(frame: Buffer, id: number, model: BrokerModel, v: StreamVerdict): Judged {
  const answer = (codes: number[], why: string): ExpectedAnswer => ({
    correlationId: id,
    codes,
    api: 'other',
    why,
  });
  if (frame.length - HEADER_BYTES < 13)
    return answer([Code.CORRUPT_REQUEST], 'METADATA v3 shorter than its fields');
  const tail = frame.length - 9;
  const minRevision = frame.readBigInt64BE(tail);
  const flags = frame.readInt8(tail + 8);
  const topics = judgeMetadata(frame.subarray(0, tail), id, 3, model)!;
  if (topics.codes.includes(Code.CORRUPT_REQUEST)) return answer(topics.codes, topics.why);
  if (minRevision < 0n) return answer([Code.CORRUPT_REQUEST], 'METADATA v3 minRevision < 0');
  if ((flags & ~1) !== 0) return answer([Code.CORRUPT_REQUEST], 'METADATA v3 unknown flag');
  if (minRevision === 0n) return answer(topics.codes, `${topics.why} (v3)`);
  v.longestHoldMs = Math.max(v.longestHoldMs, 5000);
  return answer(
    [...topics.codes, Code.CLUSTER_UNAVAILABLE],
    `${topics.why} (v3, minimum revision ${minRevision})`,
  );
}

/**
 * APPLY (4), LIST (5), API_VERSIONS (6), MOVE (8): answered, in order, with one of their codes. A LIST naming a
 * watch revision may be held for its wait (capped at 60 s), which the caller must allow for.
 */
/** LIST_FRAGMENTS reads only: answered, an unknown topic or partition, or a request that does not decode. */
function judgeListFragments(id: number): Judged {
  return {
    correlationId: id,
    codes: [Code.NONE, Code.UNKNOWN_TOPIC_OR_PARTITION, Code.CORRUPT_REQUEST],
    api: 'other',
    why: 'apiKey 7 (LIST_FRAGMENTS)',
  };
}

/**
 * REPLICATE is broker to broker: a single broker holds no replica, so it answers a request that
 * decodes UNKNOWN_TOPIC_OR_PARTITION, and one that does not CORRUPT_REQUEST. Nothing is written.
 */
function judgeReplicate(id: number): Judged {
  return {
    correlationId: id,
    codes: [Code.UNKNOWN_TOPIC_OR_PARTITION, Code.CORRUPT_REQUEST],
    api: 'other',
    why: 'apiKey 9 (REPLICATE)',
  };
}

/**
 * AUTHENTICATE (10) and USERS (11) on a broker with auth off: a step of an exchange, a refusal of
 * the credentials or of a value, or a request that does not decode. Nothing is written to a partition.
 */
function judgeSecurityApi(id: number, apiKey: number): Judged {
  const codes =
    apiKey === 10
      ? [Code.NONE, Code.AUTHENTICATION_FAILED, Code.INVALID_ARGUMENT, Code.CORRUPT_REQUEST]
      : [Code.NONE, Code.INVALID_ARGUMENT, Code.CORRUPT_REQUEST];
  return { correlationId: id, codes, api: 'other', why: `apiKey ${apiKey} (security)` };
}

function judgeTopicApi(frame: Buffer, id: number, apiKey: number, v: StreamVerdict): Judged {
  const codes =
    apiKey === 6
      ? [Code.NONE]
      : [Code.NONE, Code.CORRUPT_REQUEST, Code.INVALID_ARGUMENT, Code.REVISION_MISMATCH];
  if (apiKey === 5) {
    const f = new Fields(frame);
    try {
      f.string();
      const watchRevision = f.i64();
      const waitMs = f.i32();
      if (watchRevision >= 0n && waitMs > 0)
        v.longestHoldMs = Math.max(v.longestHoldMs, Math.min(waitMs, 60_000));
    } catch (error) {
      if (!(error instanceof Short)) throw error;
    }
  }
  return { correlationId: id, codes, api: 'other', why: `apiKey ${apiKey} (an addition)` };
}
