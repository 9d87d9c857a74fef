"""CRC-32C (Castagnoli), the checksum of every stored record.

Not zlib's CRC-32: same width, different polynomial, different answers. Reflected polynomial
0x82F63B78, init and final xor 0xFFFFFFFF; the check value of b"123456789" is 0xE3069283.
Table-driven, one byte per step. The result is always read unsigned (0 .. 2**32 - 1).
"""

from __future__ import annotations

_POLYNOMIAL_REFLECTED = 0x82F63B78


def _make_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLYNOMIAL_REFLECTED if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _make_table()


def crc32c(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-32C of ``data``; pass a previous result as ``crc`` to continue over more bytes."""
    table = _TABLE
    crc ^= 0xFFFFFFFF
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
