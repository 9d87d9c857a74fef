"""TLS to the broker's client port: the options, the client's ``ssl.SSLContext``, and what a failed
handshake is called.

The broker tells TLS from plaintext by a connection's first byte (0x16, a ClientHello), on the same
port. A broker with ``booblik.tls=off`` reads those bytes as a frame length over the cap and hangs up,
so the client sees the handshake end early: that is said as such, not as ssl's "EOF occurred".
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

from .errors import BooblikError

# ssl's reasons that mean the other end is not speaking TLS at all (a plaintext broker hung up, or
# answered bytes that are not a TLS record).
_NOT_TLS_REASONS = ("WRONG_VERSION_NUMBER", "PACKET_LENGTH_TOO_LONG", "RECORD_LAYER_FAILURE", "UNEXPECTED_EOF")


class TlsHandshakeError(BooblikError):
    """The TLS handshake with the broker failed: it does not speak TLS, it refused us, or its
    certificate did not verify (then ``verify_message`` is ssl's reason). ``__cause__`` is ssl's error.
    Not a lost connection: sending again would fail the same way, so a Client does not retry it."""

    def __init__(self, message: str, verify_message: str | None = None) -> None:
        super().__init__(message)
        self.verify_message = verify_message


@dataclass(frozen=True)
class TlsOptions:
    """How to speak TLS: every field None is "TLS on, the system's CAs, the address's host"."""

    ca_file: str | None = None  # PEM: the CAs the broker's certificate must chain to (else the system's)
    cert_file: str | None = None  # PEM: this client's certificate, for a broker that asks (mTLS)
    key_file: str | None = None  # PEM: its private key (unencrypted)
    server_name: str | None = None  # SNI and the name the certificate must carry (else the address's host)

    def __post_init__(self) -> None:
        for name in ("ca_file", "cert_file", "key_file", "server_name"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"tls_{name}: {value!r}, expected a non-empty str or None")
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("tls_cert_file and tls_key_file: give both (a client certificate and its key) or neither")

    def context(self) -> ssl.SSLContext:
        """A client context that verifies the broker's certificate and name (it cannot be turned off)."""
        try:
            context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=self.ca_file)
        except (OSError, ssl.SSLError) as error:
            reason = _reason(error)
            raise ValueError(f"tls_ca_file: cannot load CA certificates from {self.ca_file!r}: {reason}") from error
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if self.cert_file is not None:
            try:
                # A password callback that refuses: an encrypted key is an error, never a prompt on stdin.
                context.load_cert_chain(self.cert_file, self.key_file, password=_no_password)
            except (OSError, ssl.SSLError, _EncryptedKey) as error:
                files = f"{self.cert_file!r} with {self.key_file!r}"
                raise ValueError(f"tls_cert_file / tls_key_file: cannot load {files}: {_reason(error)}") from error
        return context

    def server_hostname(self, host: str) -> str:
        return self.server_name if self.server_name is not None else host


class _EncryptedKey(Exception):
    def __str__(self) -> str:
        return "the key file is encrypted; give an unencrypted key"


def _no_password() -> str:
    raise _EncryptedKey()


def _reason(error: BaseException) -> str:
    if isinstance(error, _EncryptedKey):
        return str(error)
    return getattr(error, "reason", None) or getattr(error, "strerror", None) or str(error)


def handshake_failure(error: BaseException, address: str) -> TlsHandshakeError:
    """What a handshake that raised ``error`` is called: a verification failure keeps ssl's reason."""
    if isinstance(error, ssl.SSLCertVerificationError):
        reason = error.verify_message or error.reason or str(error)
        return TlsHandshakeError(f"TLS with {address}: the broker's certificate did not verify: {reason}", reason)
    reason = getattr(error, "reason", None) or ""
    not_tls = isinstance(error, (ssl.SSLEOFError, ssl.SSLZeroReturnError, ConnectionError, EOFError))
    if not_tls or any(r in reason for r in _NOT_TLS_REASONS):
        return TlsHandshakeError(f"TLS with {address}: the broker did not answer TLS: is booblik.tls on? ({error})")
    return TlsHandshakeError(f"TLS with {address}: the handshake failed: {error}")


def lost_hint(error: BaseException, options: TlsOptions | None) -> str:
    """What to add to a TLS connection's loss without a client certificate: under TLS 1.3 a broker
    that requires one (mTLS) refuses it only after the handshake, so the first exchange fails."""
    refused = isinstance(error, (ssl.SSLError, ConnectionResetError))
    if options is None or options.cert_file is not None or not refused:
        return ""
    return " (a broker that requires client certificates refuses TLS without one: tls_cert_file, tls_key_file)"

