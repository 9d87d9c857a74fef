import { createHash } from 'node:crypto';

/**
 * Record payloads that identify themselves: which producer wrote it, its sequence, and a checksum of
 * its own (independent of the CRC-32C the broker stores), so a reader can tell a produced record from
 * any other bytes, and which one it is.
 *   producer:u16 sequence:u32 filler:bytes sha256(producer, sequence, filler)[0..4]
 */
export function selfChecking(producer: number, sequence: number, fillerBytes = fillerFor(sequence)): Buffer {
  const body = Buffer.alloc(6 + fillerBytes);
  body.writeUInt16BE(producer, 0);
  body.writeUInt32BE(sequence, 2);
  for (let i = 0; i < fillerBytes; i++) body[6 + i] = (sequence * 7 + i * 13 + producer) & 0xff;
  return Buffer.concat([body, digest(body)]);
}

/** The producer and sequence of a self-checking payload, or null for any other bytes. */
export function parseSelfChecking(payload: Uint8Array): { producer: number; sequence: number } | null {
  if (payload.length < 10) return null;
  const buf = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const body = buf.subarray(0, buf.length - 4);
  if (!digest(body).equals(buf.subarray(buf.length - 4))) return null;
  return { producer: body.readUInt16BE(0), sequence: body.readUInt32BE(2) };
}

/** Sizes vary with the sequence (0..299 bytes of filler), so records straddle pages and segment ends. */
export function fillerFor(sequence: number): number {
  return (sequence * 37) % 300;
}

function digest(body: Buffer): Buffer {
  return createHash('sha256').update(body).digest().subarray(0, 4);
}
