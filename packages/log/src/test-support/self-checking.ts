import { createHash } from 'node:crypto';

/**
 * Payloads that identify themselves: producer, sequence, and a checksum of their own, so a reader can
 * tell a record that was produced from anything else, and which one it is.
 *   producer:u8 sequence:u32 filler:bytes sha256(producer, sequence, filler)[0..4]:bytes
 */
export function selfCheckingPayload(producer: number, sequence: number, fillerBytes: number): Buffer {
  const body = Buffer.alloc(5 + fillerBytes);
  body.writeUInt8(producer, 0);
  body.writeUInt32BE(sequence, 1);
  for (let i = 0; i < fillerBytes; i++) body[5 + i] = (sequence * 7 + i * 13 + producer) & 0xff;
  return Buffer.concat([body, digest(body)]);
}

export function parseSelfChecking(payload: Buffer): { producer: number; sequence: number } | null {
  if (payload.length < 9) return null;
  const body = payload.subarray(0, payload.length - 4);
  if (!digest(body).equals(payload.subarray(payload.length - 4))) return null;
  return { producer: body.readUInt8(0), sequence: body.readUInt32BE(1) };
}

function digest(body: Buffer): Buffer {
  return createHash('sha256').update(body).digest().subarray(0, 4);
}

/** Record sizes vary with the sequence, so records straddle pages and segment ends. */
export function fillerBytesFor(sequence: number): number {
  return sequence % 200;
}
