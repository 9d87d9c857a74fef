import { createRequire } from 'node:module';

/** The native CRC-32C of `@node-rs/crc32` (a prebuilt binary using the CPU's CRC instructions). */
export type NativeCrc32c = (input: Uint8Array) => number;

/**
 * Loads the optional native module; null when it is not installed or has no binary for this
 * platform. The protocol package has no required dependency, so this must never throw.
 */
export function loadNativeCrc32c(): NativeCrc32c | null {
  if (process.env.BOOBLIK_CRC32C === 'js') return null;
  try {
    const require = createRequire(import.meta.url);
    const mod = require('@node-rs/crc32') as { crc32c?: (input: Uint8Array, initial?: number) => number };
    const fn = mod.crc32c;
    if (typeof fn !== 'function') return null;
    // Refuse a binary that disagrees with the check value rather than trusting it.
    if (fn(Buffer.from('123456789')) >>> 0 !== 0xe3069283) return null;
    return (input) => fn(input) >>> 0;
  } catch {
    return null;
  }
}
