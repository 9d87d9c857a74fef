"""Parsing a broker address: ``host:port``, or ``[v6 address]:port``."""

from __future__ import annotations


def parse_address(address: str) -> tuple[str, int]:
    if not isinstance(address, str):
        raise TypeError(f"address: expected 'host:port', got {type(address).__name__}")
    host, sep, port_text = address.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise ValueError(f"address: {address!r}, expected 'host:port'")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    port = int(port_text)
    if not 0 < port < 65536:
        raise ValueError(f"address: port {port}, expected 1 .. 65535")
    return host, port
