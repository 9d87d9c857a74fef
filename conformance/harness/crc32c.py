"""CRC-32C (Castagnoli), the checksum every stored record carries.

Reflected polynomial 0x82F63B78, init and final xor 0xFFFFFFFF. Not zlib's CRC-32: the check value
of b"123456789" is 0xE3069283 here and 0xCBF43926 there, which is why zlib.crc32 is not used.
"""

_POLYNOMIAL_REFLECTED = 0x82F63B78


def _table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLYNOMIAL_REFLECTED if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
