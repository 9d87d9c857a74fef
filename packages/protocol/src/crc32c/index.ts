import { loadNativeCrc32c } from './native.js';
import { crc32cTable } from './table.js';

export { crc32cTable } from './table.js';

const native = loadNativeCrc32c();

/**
 * Inputs at least this long go to the native module. Below it the TypeScript table wins: a call into
 * native code (with the view it needs) costs ~0.4 µs, as much as ~400 bytes of table work. Measured
 * with `npm run bench:crc` (docs/benchmarks.md): TypeScript 1.0 GB/s at 64 B, native 2.1 GB/s at 1 KiB.
 */
export const NATIVE_CRC_MIN_BYTES = 512;

/** Which implementation serves long inputs: reported in the broker's startup summary. */
export const crc32cImplementation: 'native' | 'typescript' = native ? 'native' : 'typescript';

/** CRC-32C (Castagnoli) of buf[start, end), as an unsigned 32-bit number. */
export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  if (native !== null && end - start >= NATIVE_CRC_MIN_BYTES) {
    return native(start === 0 && end === buf.length ? buf : buf.subarray(start, end));
  }
  return crc32cTable(buf, start, end);
}

/** The native implementation alone, or null (for benchmarks and vector tests). */
export const crc32cNative = native;
