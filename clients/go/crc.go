package booblik

import "hash/crc32"

// castagnoli is CRC-32C, the checksum the broker stores with every record. It is not the IEEE
// polynomial of crc32.ChecksumIEEE (zlib's): both give 32 bits, only one matches the broker.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
