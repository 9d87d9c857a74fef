/**
 * The partitioner every client shares (spec section 7): FNV-1a, 32 bits, over the key's bytes read
 * unsigned, then an unsigned remainder. Two clients that disagree put one key in two partitions and
 * nothing errors, so this is pinned by golden vectors.
 */

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

export function fnv1a32(key: Uint8Array): number {
  let hash = FNV_OFFSET_BASIS;
  for (let i = 0; i < key.length; i++) {
    // Uint8Array bytes are already unsigned; Math.imul keeps the product in 32 bits.
    hash = Math.imul(hash ^ key[i]!, FNV_PRIME);
  }
  return hash >>> 0;
}

/** The index (into partitions sorted by id) a key belongs to. */
export function partitionForKey(key: Uint8Array, partitionCount: number): number {
  if (!Number.isInteger(partitionCount) || partitionCount <= 0) {
    throw new RangeError(`partitionCount: ${partitionCount}, expected an integer > 0`);
  }
  return fnv1a32(key) % partitionCount;
}
