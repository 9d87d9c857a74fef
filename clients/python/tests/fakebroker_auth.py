"""The fake broker's side of AUTHENTICATE: SCRAM-SHA-256 (RFC 5802/7677) and TOKEN (a JWT signed
HS256), and the gate that answers AUTHENTICATION_REQUIRED and CREDENTIALS_EXPIRED.

Written from the wire spec apart from the client's code (hashlib, hmac and base64 only), so a bug
shared by both sides cannot pass. ``make_jwt`` makes the tests' tokens.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import struct
import time
from dataclasses import dataclass

from tests.fakebroker_wire import Decoder, response_frame, string_bytes

API_VERSIONS, AUTHENTICATE = 6, 10
INVALID_ARGUMENT = 11
AUTHENTICATION_REQUIRED, AUTHENTICATION_FAILED, CREDENTIALS_EXPIRED = 19, 20, 21
BAD_CREDENTIALS = "authentication failed: wrong user name or password"


def _hmac(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def make_jwt(secret: bytes, kid: str, claims: dict, alg: str = "HS256") -> str:
    """A JWT (RFC 7519) signed HS256 with ``secret``, its header naming ``kid``."""
    header = _b64url(json.dumps({"alg": alg, "typ": "JWT", "kid": kid}).encode())
    body = _b64url(json.dumps(claims).encode())
    signature = _b64url(_hmac(secret, f"{header}.{body}".encode()))
    return f"{header}.{body}.{signature}"


@dataclass
class _User:
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes


def scram_user(password: str, salt: bytes, iterations: int) -> _User:
    salted = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations, 32)
    return _User(salt, iterations, hashlib.sha256(_hmac(salted, b"Client Key")).digest(), _hmac(salted, b"Server Key"))


class Session:
    """One connection's security state."""

    def __init__(self) -> None:
        self.principal: str | None = None  # authenticated as (or the mTLS certificate's CN)
        self.expires_at: float | None = None  # a token's exp, in seconds
        self.scram: tuple | None = None  # (client-first-bare, server-first, name, user or None, combined nonce)


class FakeAuth:
    """``users``: name -> password (SCRAM); ``token_keys``: kid -> HS256 secret (TOKEN); ``required``:
    the gate is on. ``clock`` (seconds) decides when a token has expired. ``forge_signature`` sends
    a server-final whose signature does not verify: a broker that does not hold the user's keys."""

    def __init__(
        self,
        users: dict | None = None,
        token_keys: dict | None = None,
        *,
        required: bool = True,
        iterations: int = 4096,
        clock=time.time,
        forge_signature: bool = False,
    ) -> None:
        self.users = {name: scram_user(pw, os.urandom(16), iterations) for name, pw in (users or {}).items()}
        self.token_keys = dict(token_keys or {})
        self.required = required
        self.iterations = iterations
        self.clock = clock
        self.forge_signature = forge_signature
        self._secret = os.urandom(32)
        self.exchanges = 0  # AUTHENTICATE requests seen, for tests to count re-authentications

    def gate(self, session: Session, api_key: int) -> int | None:
        """The code that refuses ``api_key`` on this connection now, or None to serve it."""
        if api_key in (API_VERSIONS, AUTHENTICATE):
            return None
        if session.expires_at is not None and self.clock() >= session.expires_at:
            return CREDENTIALS_EXPIRED
        if self.required and session.principal is None:
            return AUTHENTICATION_REQUIRED
        return None

    def authenticate(self, session: Session, correlation_id: int, d: Decoder) -> bytes:
        self.exchanges += 1
        mechanism = d.string()
        data = d.raw(d.take(">i"))
        if mechanism == "SCRAM-SHA-256":
            answer = self._scram(session, data)
        elif mechanism == "TOKEN":
            answer = self._token(session, data)
        else:
            message = f"mechanism {mechanism!r}: expected SCRAM-SHA-256 or TOKEN"
            return response_frame(correlation_id, INVALID_ARGUMENT, struct.pack(">i", -1) + string_bytes(message))
        if isinstance(answer, str):
            session.scram = None
            return response_frame(correlation_id, AUTHENTICATION_FAILED, string_bytes(answer))
        complete, out, principal, expires_ms = answer
        body = struct.pack(">bi", complete, len(out)) + out + string_bytes(principal) + struct.pack(">q", expires_ms)
        return response_frame(correlation_id, 0, body)

    def _scram(self, session: Session, data: bytes):
        text = data.decode("utf-8")
        if text.startswith("n,,"):  # client-first: starts over, whatever was in progress
            bare = text[3:]
            parts = dict(p.split("=", 1) for p in bare.split(","))
            name = parts["n"].replace("=2C", ",").replace("=3D", "=")
            user = self.users.get(name)
            salt = user.salt if user else _hmac(self._secret, name.encode())[:16]  # nothing says who exists
            nonce = parts["r"] + _b64url(os.urandom(12))
            server_first = f"r={nonce},s={base64.b64encode(salt).decode()},i={self.iterations}"
            session.scram = (bare, server_first, name, user, nonce)
            return 0, server_first.encode(), "", -1
        if session.scram is None or not text.startswith("c="):
            return "SCRAM: a client-final with no client-first before it"
        bare, server_first, name, user, nonce = session.scram
        session.scram = None
        without_proof, _, proof_part = text.rpartition(",p=")
        if without_proof != f"c=biws,r={nonce}":
            return "SCRAM: the nonce is not the combined one"
        if user is None:
            return BAD_CREDENTIALS
        auth_message = f"{bare},{server_first},{without_proof}".encode()
        client_key = bytes(a ^ b for a, b in zip(base64.b64decode(proof_part), _hmac(user.stored_key, auth_message)))
        if not hmac.compare_digest(hashlib.sha256(client_key).digest(), user.stored_key):
            return BAD_CREDENTIALS
        signature = _hmac(user.server_key, auth_message)
        if self.forge_signature:
            signature = bytes([signature[0] ^ 1]) + signature[1:]
        session.principal, session.expires_at = name, None
        return 1, f"v={base64.b64encode(signature).decode()}".encode(), name, -1

    def _token(self, session: Session, data: bytes):
        try:
            header_b64, body_b64, signature_b64 = data.decode("utf-8").split(".")
            header = json.loads(_b64url_decode(header_b64))
            claims = json.loads(_b64url_decode(body_b64))
            signature = _b64url_decode(signature_b64)
        except ValueError:
            return "token: not a JWT"
        secret = self.token_keys.get(header.get("kid"))
        if header.get("alg") != "HS256" or secret is None:
            return "token: unknown key"
        if not hmac.compare_digest(signature, _hmac(secret, f"{header_b64}.{body_b64}".encode())):
            return "token: bad signature"
        if not isinstance(claims.get("sub"), str) or not isinstance(claims.get("exp"), int):
            return "token: sub and exp are required"
        if claims["exp"] <= self.clock():
            return "token: expired"
        session.principal, session.expires_at = claims["sub"], claims["exp"]
        return 1, b"", claims["sub"], claims["exp"] * 1000
