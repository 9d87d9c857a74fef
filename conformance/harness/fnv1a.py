"""FNV-1a (32 bits), the partitioner every client must share.

Bytes are read unsigned and the product is masked to 32 bits at every step: the two traps (a signed
byte, a missing mask) both pick a wrong partition without any error.
"""

_OFFSET_BASIS = 0x811C9DC5
_PRIME = 0x01000193
_MASK = 0xFFFFFFFF


def fnv1a32(key: bytes) -> int:
    hash_ = _OFFSET_BASIS
    for byte in key:
        hash_ = ((hash_ ^ byte) * _PRIME) & _MASK
    return hash_


def partition_for(key: bytes, partition_count: int) -> int:
    return fnv1a32(key) % partition_count
