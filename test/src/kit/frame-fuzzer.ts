/**
 * Request frames for the fuzzer: valid ones built field by field, then broken one way at a time
 * (a field set to an edge value, a string made empty, overlong or not UTF-8, a count beyond the
 * frame, a frame cut short or padded, bits flipped, random bytes, absurd lengths). Every case is a
 * byte string; what the broker must answer is decided by the specification oracle, not here.
 */
import type { Rng } from './rng.js';

type Kind = 'i8' | 'i16' | 'i32' | 'i64' | 'string' | 'records';

interface Field {
  name: string;
  kind: Kind;
  bytes: Buffer;
  /** For the records field: the payloads it was built from (its bytes may since have been broken). */
  payloads?: Buffer[];
}

export const FRAME_BYTES_MAX = 8 * 1024 * 1024;

/** The broker's view the generator aims at: topics that exist (name, partitions) and the segment size. */
export interface FuzzTarget {
  /** Topics this generator may name, with their partition counts. */
  topics: readonly { name: string; partitions: number }[];
  segmentBytesMax: number;
  /** A plausible fetch offset (somewhere up to the current log end). */
  offsetHint: (topic: string, partition: number) => number;
}

const i8 = (n: number) => Buffer.from([n & 0xff]);
const i16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n, 0);
  return b;
};
const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n | 0, 0);
  return b;
};
const i64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt.asIntN(64, n), 0);
  return b;
};
const str = (s: string | Buffer) => {
  const bytes = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
  const b = Buffer.alloc(2 + bytes.length);
  b.writeUInt16BE(bytes.length, 0);
  bytes.copy(b, 2);
  return b;
};

function records(payloads: Buffer[]): Buffer {
  return Buffer.concat(payloads.flatMap((p) => [i32(p.length), p]));
}

/** Frames a body: the int32 length prefix (the body's own length unless told otherwise), then the body. */
export function framed(body: Buffer, length = body.length): Buffer {
  return Buffer.concat([i32(length), body]);
}

const header = (apiKey: number, version: number, id: number): Field[] => [
  { name: 'apiKey', kind: 'i16', bytes: i16(apiKey) },
  { name: 'apiVersion', kind: 'i16', bytes: i16(version) },
  { name: 'correlationId', kind: 'i32', bytes: i32(id) },
];

const edgeI8 = [-128, -1, 0, 1, 2, 3, 7, 127];
const edgeI16 = [-32768, -1, 0, 1, 2, 3, 4, 99, 32767];
const edgeI32 = [-(2 ** 31), -1, 0, 1, 2, 7, 255, 65_535, 65_537, 8 * 1024 * 1024 + 1, 2 ** 31 - 1];
const edgeI64 = [-1n, -(2n ** 63n), 0n, 1n, 2n ** 31n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n];

/** Topic strings that break a rule (or name nothing), as raw bytes after the length. */
const badNames: Buffer[] = [
  Buffer.alloc(0), // empty
  Buffer.from('a'.repeat(250)), // one character too many
  Buffer.from('é'.repeat(250)), // 250 characters, 500 bytes
  Buffer.from([0xff]), // not UTF-8
  Buffer.from([0xc3, 0x28]), // a broken two-byte sequence
  Buffer.from([0xed, 0xa0, 0x80]), // a UTF-16 surrogate encoded as UTF-8
  Buffer.from([0xc0, 0xaf]), // an overlong encoding of '/'
  Buffer.from([0x61, 0x00, 0x62]), // NUL inside
  Buffer.from('has space'),
  Buffer.from('a/b'),
  Buffer.from('😀'),
  Buffer.from('topic\n'),
];
/** Valid names that exist nowhere: UNKNOWN_TOPIC_OR_PARTITION, never CORRUPT_REQUEST. */
const unknownNames = ['nosuch', 'a'.repeat(249), 'тема', '主题', '.', '..', '_-_', '٣'];

/** A valid request of a random API, as fields. */
export function validRequest(rng: Rng, target: FuzzTarget, id: number, ack?: number): Field[] {
  const t = rng.pick(target.topics);
  const partition = rng.int(0, t.partitions - 1);
  switch (rng.int(0, 2)) {
    case 0: {
      const count = rng.int(1, 5);
      const payloads = Array.from({ length: count }, () => rng.bytes(rng.int(1, 200)));
      return [
        ...header(1, 1, id),
        { name: 'topic', kind: 'string', bytes: str(t.name) },
        { name: 'partition', kind: 'i32', bytes: i32(partition) },
        { name: 'ackPolicy', kind: 'i8', bytes: i8(ack ?? rng.pick([1, 1, 2, 0])) },
        { name: 'recordCount', kind: 'i32', bytes: i32(count) },
        { name: 'records', kind: 'records', bytes: records(payloads), payloads },
      ];
    }
    case 1: {
      // v1, v2, or v5 (v2 with the epoch last read: -1, or one the broker may not have).
      const version = rng.chance(0.7) ? (rng.chance(0.2) ? 5 : 2) : 1;
      const maxBytes = rng.pick([1, 7, 8, 9, 100, 4096, 1 << 20]);
      const fields: Field[] = [
        ...header(2, version, id),
        { name: 'topic', kind: 'string', bytes: str(t.name) },
        { name: 'partition', kind: 'i32', bytes: i32(partition) },
        {
          name: 'fetchOffset',
          kind: 'i64',
          bytes: i64(BigInt(rng.int(0, target.offsetHint(t.name, partition)))),
        },
        { name: 'maxBytes', kind: 'i32', bytes: i32(maxBytes) },
      ];
      if (version >= 2) {
        fields.push(
          { name: 'maxWaitMillis', kind: 'i32', bytes: i32(rng.pick([0, 0, 0, 1, 5])) },
          { name: 'minBytes', kind: 'i32', bytes: i32(rng.int(0, Math.min(maxBytes, 64))) },
        );
      }
      if (version === 5)
        fields.push({ name: 'lastEpoch', kind: 'i32', bytes: i32(rng.pick([-1, -1, 0, 3])) });
      return fields;
    }
    default: {
      const names = Array.from({ length: rng.int(0, 3) }, () => rng.pick(target.topics).name);
      return [
        ...header(3, 1, id),
        { name: 'topicCount', kind: 'i32', bytes: i32(names.length) },
        ...names.map((n, i) => ({ name: `topics[${i}]`, kind: 'string' as const, bytes: str(n) })),
      ];
    }
  }
}

/** Sets one field to a value that breaks (or tests the edge of) its rule. */
function mutateField(rng: Rng, field: Field, target: FuzzTarget): string {
  switch (field.kind) {
    case 'i8':
      field.bytes = i8(rng.chance(0.8) ? rng.pick(edgeI8) : rng.int(-128, 127));
      return `${field.name}=${field.bytes.readInt8(0)}`;
    case 'i16':
      field.bytes = i16(rng.chance(0.8) ? rng.pick(edgeI16) : rng.int(-32768, 32767));
      return `${field.name}=${field.bytes.readInt16BE(0)}`;
    case 'i32':
      field.bytes = i32(rng.chance(0.8) ? rng.pick(edgeI32) : rng.u32() | 0);
      return `${field.name}=${field.bytes.readInt32BE(0)}`;
    case 'i64':
      field.bytes = i64(
        rng.chance(0.8) ? rng.pick(edgeI64) : BigInt(rng.u32()) * 2n ** 32n + BigInt(rng.u32()),
      );
      return `${field.name}=${field.bytes.readBigInt64BE(0)}`;
    case 'string': {
      const how = rng.int(0, 5);
      if (how <= 2) {
        const name = rng.pick(badNames);
        field.bytes = str(name);
        return `${field.name}=bad name ${name.toString('hex').slice(0, 16)}`;
      }
      if (how === 3) {
        field.bytes = str(rng.pick(unknownNames));
        return `${field.name}=unknown name`;
      }
      if (how === 4) {
        // The length says more than there is (it runs into the next fields, or past the frame).
        const b = Buffer.from(field.bytes);
        b.writeUInt16BE(Math.min(0xffff, b.readUInt16BE(0) + rng.pick([1, 2, 7, 300, 0xffff])), 0);
        field.bytes = b;
        return `${field.name} length overstated`;
      }
      field.bytes = str(rng.pick(target.topics).name); // a valid, existing name
      return `${field.name}=valid`;
    }
    case 'records': {
      const payloads = [...field.payloads!];
      const i = rng.int(0, payloads.length - 1);
      const how = rng.int(0, 3);
      const body = records(payloads);
      let at = 0;
      for (let k = 0; k < i; k++) at += 4 + payloads[k]!.length;
      if (how === 0) {
        body.writeInt32BE(rng.pick([0, -1, -(2 ** 31)]), at);
        field.bytes = body;
        return `records[${i}].size <= 0`;
      }
      if (how === 1) {
        body.writeInt32BE(payloads[i]!.length + rng.pick([1, 1000, 2 ** 31 - 1 - payloads[i]!.length]), at);
        field.bytes = body;
        return `records[${i}].size beyond its bytes`;
      }
      if (how === 2) {
        payloads[i] = rng.bytes(target.segmentBytesMax - 8 + rng.int(1, 2000)); // cannot fit a segment
        field.bytes = records(payloads);
        return `records[${i}] larger than a segment`;
      }
      payloads[i] = rng.bytes(target.segmentBytesMax - 8); // exactly fits an empty segment
      field.bytes = records(payloads);
      return `records[${i}] the size of a segment`;
    }
  }
}

/** One fuzz case: the bytes to send and a label saying what was done (for failure messages). */
export interface FuzzCase {
  bytes: Buffer;
  /** What kind of breakage, for the tally. */
  kind: string;
  label: string;
  /** The case ends the connection's use: what follows it on the wire is part of the case. */
  terminal: boolean;
}

function join(fields: Field[]): Buffer {
  return Buffer.concat(fields.map((f) => f.bytes));
}

/** A non-terminal case: after it, the stream is at a frame boundary again. */
export function inlineCase(rng: Rng, target: FuzzTarget, id: number): FuzzCase {
  const roll = rng.int(0, 99);
  if (roll < 10) {
    return {
      bytes: framed(join(validRequest(rng, target, id))),
      kind: 'valid request',
      label: 'valid',
      terminal: false,
    };
  }
  if (roll < 50) {
    // One field (two now and then) of a valid request broken.
    const fields = validRequest(rng, target, id, rng.chance(0.15) ? 0 : undefined);
    const labels: string[] = [];
    for (let n = rng.chance(0.2) ? 2 : 1; n > 0; n--) {
      const body = fields.slice(3);
      const field = body.length > 0 && rng.chance(0.9) ? rng.pick(body) : rng.pick(fields);
      labels.push(mutateField(rng, field, target));
    }
    if (fields[0]!.bytes.readInt16BE(0) === 2 && fields.length === 9 && rng.chance(0.1)) {
      // FETCH v2: minBytes one more than maxBytes.
      fields[8]!.bytes = i32(fields[6]!.bytes.readInt32BE(0) + 1);
      labels.push('minBytes > maxBytes');
    }
    return {
      bytes: framed(join(fields)),
      kind: 'field broken',
      label: `field: ${labels.join(', ')}`,
      terminal: false,
    };
  }
  if (roll < 58) {
    const fields = validRequest(rng, target, id);
    const which = rng.int(0, 2);
    const label = mutateField(rng, fields[which]!, target);
    return { bytes: framed(join(fields)), kind: 'header broken', label: `header: ${label}`, terminal: false };
  }
  if (roll < 66) {
    // Cut short: the length prefix tells the truth about the shorter body (maybe shorter than a header).
    const body = join(validRequest(rng, target, id));
    const cut = rng.int(1, body.length - 1);
    return {
      bytes: framed(body.subarray(0, cut)),
      kind: 'cut short',
      label: `truncated to ${cut} bytes`,
      terminal: false,
    };
  }
  if (roll < 71) {
    const body = Buffer.concat([join(validRequest(rng, target, id)), rng.bytes(rng.int(1, 64))]);
    return { bytes: framed(body), kind: 'trailing bytes', label: 'trailing bytes', terminal: false };
  }
  if (roll < 83) {
    const body = join(validRequest(rng, target, id));
    const flips = rng.int(1, 4);
    for (let k = 0; k < flips; k++) {
      const at = rng.int(0, body.length - 1);
      body[at] = body[at]! ^ (1 << rng.int(0, 7));
    }
    return { bytes: framed(body), kind: 'bits flipped', label: `${flips} bit(s) flipped`, terminal: false };
  }
  if (roll < 91) {
    const body = rng.bytes(rng.int(8, 300));
    if (rng.chance(0.7)) {
      body.writeInt16BE(rng.int(1, 3), 0);
      body.writeInt16BE(rng.int(0, 3), 2);
    }
    return { bytes: framed(body), kind: 'random body', label: 'random body', terminal: false };
  }
  if (roll < 96) {
    const body = rng.bytes(rng.int(1, 7));
    return {
      bytes: framed(body),
      kind: 'shorter than a header',
      label: `short frame of ${body.length}`,
      terminal: false,
    };
  }
  if (roll < 99 || rng.chance(0.7)) {
    // ack NONE with one rule broken: never answered.
    const fields = validRequest(rng, target, id, 0);
    while (fields[0]!.bytes.readInt16BE(0) !== 1)
      fields.splice(0, fields.length, ...validRequest(rng, target, id, 0));
    const field = rng.pick([fields[3]!, fields[4]!, fields[6]!, fields[7]!]);
    return {
      bytes: framed(join(fields)),
      kind: 'ack NONE broken',
      label: `ack NONE, ${mutateField(rng, field, target)}`,
      terminal: false,
    };
  }
  // A frame of exactly 8 MiB: a PRODUCE whose one record cannot fit a segment, or noise.
  const body = Buffer.alloc(FRAME_BYTES_MAX);
  if (rng.chance(0.5)) {
    const t = rng.pick(target.topics);
    const head = join([
      ...header(1, 1, id),
      { name: 'topic', kind: 'string', bytes: str(t.name) },
      { name: 'partition', kind: 'i32', bytes: i32(0) },
      { name: 'ackPolicy', kind: 'i8', bytes: i8(1) },
      { name: 'recordCount', kind: 'i32', bytes: i32(1) },
    ]);
    head.copy(body);
    body.writeInt32BE(FRAME_BYTES_MAX - head.length - 4, head.length);
    return {
      bytes: framed(body),
      kind: '8 MiB frame',
      label: '8 MiB frame, one record larger than a segment',
      terminal: false,
    };
  }
  rng.bytes(64).copy(body);
  return { bytes: framed(body), kind: '8 MiB frame', label: '8 MiB frame of noise', terminal: false };
}

/** A case after which the stream is not at a frame boundary: the connection's last. */
export function terminalCase(
  rng: Rng,
  target: FuzzTarget,
  id: number,
): FuzzCase & { then: 'silence' | 'disconnect' } {
  const roll = rng.int(0, 5);
  const then = rng.chance(0.5) ? ('silence' as const) : ('disconnect' as const);
  if (roll <= 1) {
    const length = rng.pick([
      0,
      -1,
      -(2 ** 31),
      2 ** 31 - 1,
      FRAME_BYTES_MAX + 1,
      rng.int(FRAME_BYTES_MAX + 1, 2 ** 31 - 1),
    ]);
    // The rest of a plausible frame follows; none of it may be read.
    const bytes = Buffer.concat([i32(length), join(validRequest(rng, target, id))]);
    return { bytes, kind: 'absurd length', label: `absurd length ${length}`, terminal: true, then };
  }
  if (roll === 2) {
    const whole = framed(join(validRequest(rng, target, id)));
    const cut = rng.int(1, whole.length - 1);
    return {
      bytes: whole.subarray(0, cut),
      kind: `half a frame, then ${then}`,
      label: `half a frame (${cut} of ${whole.length} bytes), then ${then}`,
      terminal: true,
      then,
    };
  }
  if (roll === 3) {
    const bytes = rng.bytes(rng.int(1, 64));
    return {
      bytes,
      kind: 'random stream',
      label: `random stream of ${bytes.length} bytes, then ${then}`,
      terminal: true,
      then,
    };
  }
  // The length prefix lies about a valid body: the broker reads a frame that is not the one sent.
  const body = join(validRequest(rng, target, id));
  const lie = Math.max(1, body.length + rng.pick([-3, -1, 1, 5, 100]));
  return {
    bytes: framed(body, lie),
    kind: 'lying length',
    label: `length ${lie} for a body of ${body.length}, then ${then}`,
    terminal: true,
    then,
  };
}
