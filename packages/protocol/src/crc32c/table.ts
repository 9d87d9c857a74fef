/**
 * CRC-32C (Castagnoli) in TypeScript: table-driven, slicing-by-16. Polynomial 0x82F63B78 reflected,
 * init and final xor 0xFFFFFFFF. Used where the native module is missing, and for short inputs,
 * where a call into native code costs more than the whole checksum.
 */

const POLY_REFLECTED = 0x82f63b78;
const SLICES = 16;

/** 16 tables of 256 entries, back to back: table k advances a byte through k further zero bytes. */
const T = buildTables();

function buildTables(): Int32Array {
  const t = new Int32Array(256 * SLICES);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY_REFLECTED : c >>> 1;
    t[i] = c;
  }
  for (let i = 0; i < 256; i++) {
    for (let s = 1; s < SLICES; s++) {
      const prev = t[(s - 1) * 256 + i]!;
      t[s * 256 + i] = (prev >>> 8) ^ t[prev & 0xff]!;
    }
  }
  return t;
}

/** CRC-32C of buf[start, end), unsigned. */
export function crc32cTable(buf: Uint8Array, start = 0, end = buf.length): number {
  let c = -1;
  let i = start;
  const last16 = end - 16;
  for (; i <= last16; i += 16) {
    const a = c ^ (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24));
    c =
      T[3840 + (a & 0xff)]! ^
      T[3584 + ((a >>> 8) & 0xff)]! ^
      T[3328 + ((a >>> 16) & 0xff)]! ^
      T[3072 + (a >>> 24)]! ^
      T[2816 + buf[i + 4]!]! ^
      T[2560 + buf[i + 5]!]! ^
      T[2304 + buf[i + 6]!]! ^
      T[2048 + buf[i + 7]!]! ^
      T[1792 + buf[i + 8]!]! ^
      T[1536 + buf[i + 9]!]! ^
      T[1280 + buf[i + 10]!]! ^
      T[1024 + buf[i + 11]!]! ^
      T[768 + buf[i + 12]!]! ^
      T[512 + buf[i + 13]!]! ^
      T[256 + buf[i + 14]!]! ^
      T[buf[i + 15]!]!;
  }
  for (; i < end; i++) c = T[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
