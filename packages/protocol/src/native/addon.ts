import { createRequire } from 'node:module';

/** Why a scan of stored records stopped: the codes the native module returns, in this order. */
export const scanStops = ['end', 'short-header', 'bad-size', 'past-end', 'crc-mismatch'] as const;

export interface NativeFileScan {
  validBytes: number;
  records: number;
  /** Index into `scanStops`. */
  stop: number;
  /** Sparse index built during the scan: offsets relative to the segment base, and file positions. */
  indexOffsets: Uint32Array;
  indexPositions: Uint32Array;
}

/**
 * The optional native module (packages/protocol/native, built at install by scripts/build-native.mjs):
 * batch operations over stored records with the CPU's CRC-32C instruction. Every function has a
 * TypeScript twin that is the reference; tests compare the two.
 */
export interface NativeAddon {
  /** `sse4.2` when the CPU instruction is used, `table` for the portable C fallback. */
  readonly crcKind: string;
  crc32c(buf: Uint8Array, start: number, end: number): number;
  storeRecords(
    wire: Uint8Array,
    count: number,
    target: Uint8Array,
    at: number,
    positions?: Uint32Array,
  ): number;
  /** [validBytes, records, stop] */
  scanRecords(buf: Uint8Array, start: number, end: number): [number, number, number];
  scanFile(fd: number, length: number, indexIntervalBytes: number): NativeFileScan;
}

function load(): NativeAddon | null {
  if (process.env.BOOBLIK_NATIVE === '0') return null;
  try {
    const require = createRequire(import.meta.url);
    const addon = require('../../native/build/booblik_native.node') as NativeAddon;
    // A module that disagrees with the check value is not trusted.
    const check = Buffer.from('123456789');
    if (addon.crc32c(check, 0, check.length) !== 0xe3069283) return null;
    return addon;
  } catch {
    return null;
  }
}

/** The native module, or null when it is not built here (or BOOBLIK_NATIVE=0 turns it off). */
export const nativeAddon: NativeAddon | null = load();
