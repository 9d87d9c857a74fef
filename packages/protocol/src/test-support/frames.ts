import { lengthPrefixBytes } from '../limits.js';

/** The frame body (after the length prefix) of a whole encoded frame. */
export function body(frame: Buffer): Buffer {
  return frame.subarray(lengthPrefixBytes);
}

/** Builds a raw request frame body from parts, for tests that break one field at a time. */
export function rawRequest(
  apiKey: number,
  apiVersion: number,
  correlationId: number,
  payload: Buffer,
): Buffer {
  const header = Buffer.alloc(8);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(apiVersion, 2);
  header.writeInt32BE(correlationId, 4);
  return Buffer.concat([header, payload]);
}

export function str(s: string | Buffer): Buffer {
  const bytes = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
  const out = Buffer.alloc(2 + bytes.length);
  out.writeUInt16BE(bytes.length, 0);
  bytes.copy(out, 2);
  return out;
}

export function i8(v: number): Buffer {
  const b = Buffer.alloc(1);
  b.writeInt8(v, 0);
  return b;
}

export function i32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(v, 0);
  return b;
}

export function i64(v: bigint | number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(v), 0);
  return b;
}
