import { nativeAddon } from '../native/addon.js';
import { loadNativeCrc32c } from './native.js';
import { crc32cTable } from './table.js';

export { crc32cTable } from './table.js';

const nodeRs = loadNativeCrc32c();

/**
 * Below these lengths the TypeScript table is faster than a call into native code, whose fixed cost
 * is ~0.08 µs for booblik's own module and ~0.4 µs for @node-rs/crc32 (which also needs a view of the
 * range). Measured with `npm run bench:crc`; the figures are in docs/benchmarks.md.
 */
export const OWN_NATIVE_CRC_MIN_BYTES = 96;
export const NPM_NATIVE_CRC_MIN_BYTES = 512;

/** Which implementation serves long inputs: reported in the broker's startup summary. */
export const crc32cImplementation: string = nativeAddon
  ? `booblik native (${nativeAddon.crcKind})`
  : nodeRs
    ? '@node-rs/crc32'
    : 'typescript';

/** CRC-32C (Castagnoli) of buf[start, end), as an unsigned 32-bit number. */
export const crc32c: (buf: Uint8Array, start?: number, end?: number) => number = nativeAddon
  ? (buf, start = 0, end = buf.length) =>
      end - start >= OWN_NATIVE_CRC_MIN_BYTES
        ? nativeAddon!.crc32c(buf, start, end)
        : crc32cTable(buf, start, end)
  : nodeRs
    ? (buf, start = 0, end = buf.length) =>
        end - start >= NPM_NATIVE_CRC_MIN_BYTES
          ? nodeRs(start === 0 && end === buf.length ? buf : buf.subarray(start, end))
          : crc32cTable(buf, start, end)
    : crc32cTable;

/** The @node-rs/crc32 implementation alone, or null (for benchmarks and vector tests). */
export const crc32cNative = nodeRs;
