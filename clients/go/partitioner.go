package booblik

// The partitioner every booblik client shares (protocol section 7): FNV-1a over the key's bytes,
// unsigned remainder. Clients that disagree here put the same key in different partitions and
// nobody is told, so the vectors in testdata pin it.

const (
	fnvOffsetBasis uint32 = 0x811C9DC5
	fnvPrime       uint32 = 0x01000193
)

// fnv1a hashes bytes read as unsigned; uint32 arithmetic is the mod 2^32 the algorithm asks for.
func fnv1a(key []byte) uint32 {
	h := fnvOffsetBasis
	for _, b := range key {
		h ^= uint32(b)
		h *= fnvPrime
	}
	return h
}

// partitionIndex picks an index into the partitions sorted by id. The remainder is unsigned: a
// signed one goes negative for half of all keys.
func partitionIndex(key []byte, partitionCount int) int {
	return int(fnv1a(key) % uint32(partitionCount))
}
