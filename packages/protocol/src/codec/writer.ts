/** A big-endian writer into a buffer sized up front (callers compute the exact length first). */
export class WireWriter {
  offset = 0;
  readonly buf: Buffer;

  constructor(bytes: number) {
    this.buf = Buffer.allocUnsafe(bytes);
  }

  int8(v: number): this {
    this.buf.writeInt8(v, this.offset);
    this.offset += 1;
    return this;
  }

  int16(v: number): this {
    this.buf.writeInt16BE(v, this.offset);
    this.offset += 2;
    return this;
  }

  int32(v: number): this {
    this.buf.writeInt32BE(v, this.offset);
    this.offset += 4;
    return this;
  }

  uint32(v: number): this {
    this.buf.writeUInt32BE(v >>> 0, this.offset);
    this.offset += 4;
    return this;
  }

  /** An int64 from a number; offsets stay within 2^53, so the split into two halves is exact. */
  int64(v: number): this {
    writeInt64(this.buf, v, this.offset);
    this.offset += 8;
    return this;
  }

  /** A u16 length then the UTF-8 bytes (computed with `stringBytes`). */
  string(s: string): this {
    const length = this.buf.write(s, this.offset + 2, 'utf8');
    this.buf.writeUInt16BE(length, this.offset);
    this.offset += 2 + length;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.buf.set(b, this.offset);
    this.offset += b.length;
    return this;
  }

  /** The finished buffer; asserts the size computed up front was exact (a bug of ours, not the peer's). */
  done(): Buffer {
    if (this.offset !== this.buf.length) {
      throw new Error(`WireWriter: wrote ${this.offset} bytes into a buffer of ${this.buf.length}`);
    }
    return this.buf;
  }
}

/** Bytes a string takes on the wire: u16 length plus UTF-8. */
export function stringBytes(s: string): number {
  return 2 + Buffer.byteLength(s, 'utf8');
}

export function writeInt64(buf: Buffer, v: number, offset: number): void {
  const high = Math.floor(v / 0x1_0000_0000);
  buf.writeInt32BE(high, offset);
  buf.writeUInt32BE(v - high * 0x1_0000_0000, offset + 4);
}
