"""The client side of SCRAM-SHA-256 (RFC 5802 with RFC 7677's hash), without channel binding.

No sockets: ``ScramClient`` makes the messages and checks the broker's. States: START ->
FIRST_SENT (client-first made) -> FINAL_SENT (client-final made) -> PROVEN (the server signature
verified). A broker that cannot prove it knows the password's keys is an error, never a success.
The password is used as its UTF-8 bytes (no SASLprep, as Kafka's clients).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

from . import limits
from .errors import BooblikError, ProtocolError

GS2_HEADER = "n,,"  # no channel binding, no authzid
CHANNEL_BINDING = base64.b64encode(GS2_HEADER.encode()).decode()  # "biws"

_START, _FIRST_SENT, _FINAL_SENT, _PROVEN = "start", "first sent", "final sent", "proven"


class BrokerNotProvenError(BooblikError):
    """SCRAM: the broker's server signature does not verify, so it does not hold this user's keys:
    it may not be the broker meant. The connection is closed."""


def saslname(user: str) -> str:
    """A user name as RFC 5802 writes it: ``=`` as ``=3D``, ``,`` as ``=2C``."""
    return user.replace("=", "=3D").replace(",", "=2C")


def new_nonce() -> str:
    """Printable, without a comma: base64 of random bytes from ``secrets``."""
    return base64.b64encode(secrets.token_bytes(limits.SCRAM_NONCE_BYTES)).decode("ascii")


def _hmac(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


def _attributes(message: str, what: str) -> dict:
    """``k=v,k=v`` as a dict; a mandatory extension (``m=``) is refused, as RFC 5802 says."""
    out = {}
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ProtocolError(f"SCRAM {what}: {part!r} is not an attribute (k=value)")
        out.setdefault(part[0], part[2:])
    if "m" in out:
        raise ProtocolError(f"SCRAM {what}: a mandatory extension (m=) this client does not know")
    return out


class ScramClient:
    """One exchange. ``first()``, then ``final(server_first)``, then ``verify(server_final)``."""

    def __init__(self, user: str, password: str, nonce: str | None = None) -> None:
        self._user = user
        self._password = password.encode("utf-8")
        self._nonce = nonce if nonce is not None else new_nonce()
        self._state = _START
        self._client_first_bare = ""
        self._server_key = b""
        self._auth_message = b""

    def __repr__(self) -> str:  # never the password
        return f"<ScramClient {self._state}>"

    def first(self) -> bytes:
        self._expect(_START)
        self._client_first_bare = f"n={saslname(self._user)},r={self._nonce}"
        self._state = _FIRST_SENT
        return (GS2_HEADER + self._client_first_bare).encode("utf-8")

    def final(self, server_first: bytes) -> bytes:
        self._expect(_FIRST_SENT)
        text = _text(server_first, "server-first-message")
        attrs = _attributes(text, "server-first-message")
        nonce, salt_b64, iterations_text = attrs.get("r"), attrs.get("s"), attrs.get("i")
        if nonce is None or salt_b64 is None or iterations_text is None:
            raise ProtocolError("SCRAM server-first-message: expected r=, s= and i=")
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise ProtocolError("SCRAM server-first-message: its nonce does not extend this client's")
        try:
            salt = base64.b64decode(salt_b64, validate=True)
        except (binascii.Error, ValueError) as error:
            raise ProtocolError("SCRAM server-first-message: the salt is not base64") from error
        if not iterations_text.isdigit():
            raise ProtocolError(f"SCRAM server-first-message: iterations {iterations_text!r}, expected a number")
        iterations = int(iterations_text)
        if not limits.SCRAM_ITERATIONS_MIN <= iterations <= limits.SCRAM_ITERATIONS_MAX:
            raise ProtocolError(
                f"SCRAM server-first-message: iterations {iterations}, expected "
                f"{limits.SCRAM_ITERATIONS_MIN} .. {limits.SCRAM_ITERATIONS_MAX}"
            )
        salted = hashlib.pbkdf2_hmac("sha256", self._password, salt, iterations, 32)
        client_key = _hmac(salted, b"Client Key")
        stored_key = hashlib.sha256(client_key).digest()
        self._server_key = _hmac(salted, b"Server Key")
        without_proof = f"c={CHANNEL_BINDING},r={nonce}"
        self._auth_message = f"{self._client_first_bare},{text},{without_proof}".encode("utf-8")
        signature = _hmac(stored_key, self._auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        self._state = _FINAL_SENT
        return f"{without_proof},p={base64.b64encode(proof).decode('ascii')}".encode("utf-8")

    def verify(self, server_final: bytes) -> None:
        """Raises BrokerNotProvenError unless the server signature is the one the password gives."""
        self._expect(_FINAL_SENT)
        attrs = _attributes(_text(server_final, "server-final-message"), "server-final-message")
        expected = _hmac(self._server_key, self._auth_message)
        try:
            given = base64.b64decode(attrs.get("v", ""), validate=True)
        except (binascii.Error, ValueError):
            given = b""
        if not given or not hmac.compare_digest(given, expected):
            raise BrokerNotProvenError(
                "SCRAM: the broker's server signature does not verify: it did not prove it knows this "
                "user's keys (is it the broker you meant?)"
            )
        self._state = _PROVEN

    def _expect(self, state: str) -> None:
        if self._state != state:
            raise RuntimeError(f"ScramClient: in state {self._state!r}, expected {state!r}")


def _text(message: bytes, what: str) -> str:
    try:
        return message.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ProtocolError(f"SCRAM {what}: not UTF-8") from error
