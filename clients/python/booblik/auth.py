"""AUTHENTICATE (apiKey 10, version 1): its codec, the credentials, and the exchange as steps that
the synchronous and the asyncio connection both drive (no sockets here).

    AUTHENTICATE request v1  => mechanism:string data:bytes
    AUTHENTICATE response v1 => complete:int8 data:bytes principal:string expiresAtMs:int64

SCRAM-SHA-256 is two requests (client-first, client-final) and a check of the broker's signature;
TOKEN is one (a JWT the broker verifies). ``steps`` yields each request's (mechanism, data), is sent
each answer, and returns the last answer once the connection is authenticated.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Generator
from dataclasses import dataclass

from . import wire
from .errors import BrokerError, ErrorCode, ProtocolError
from .scram import ScramClient

API_AUTHENTICATE = 10
AUTHENTICATE_VERSION = 1
SCRAM_SHA_256 = "SCRAM-SHA-256"
TOKEN = "TOKEN"
EXPIRES_NEVER = -1  # expiresAtMs of credentials that do not expire (SCRAM)
WHAT = "AUTHENTICATE"  # the request's label in errors

_I32 = struct.Struct(">i")


@dataclass(frozen=True)
class AuthAnswer:
    complete: bool
    data: bytes
    principal: str
    expires_at_ms: int


class Scram:
    """A user name and password for SCRAM-SHA-256. The password never leaves this process: only
    proofs computed from it are sent, and it is never shown (``repr`` hides it)."""

    def __init__(self, user: str, password: str) -> None:
        if not isinstance(user, str) or not user:
            raise ValueError("user: expected a non-empty str")
        if not isinstance(password, str) or not password:
            raise ValueError("password: expected a non-empty str (it is never shown)")
        self.user = user
        self._password = password

    def __repr__(self) -> str:
        return f"Scram(user={self.user!r}, password=<hidden>)"

    refreshable = False


class Token:
    """A token (a JWT) for TOKEN: a string, or a callable returning one (asked at each connect and
    again when the broker says it expired). Never shown (``repr`` hides it)."""

    def __init__(self, token: str | Callable[[], object]) -> None:
        if isinstance(token, str):
            if not token:
                raise ValueError("token: empty, expected a token or a callable that returns one")
        elif not callable(token):
            raise TypeError(f"token: expected a str or a callable returning one, got {type(token).__name__}")
        self._token = token

    def __repr__(self) -> str:
        return f"Token({'<callable>' if self.refreshable else '<hidden>'})"

    @property
    def refreshable(self) -> bool:
        """Whether a new token can be asked for (a callable), so an expired one is replaced."""
        return callable(self._token)

    def source(self):
        """The token, or (from a callable) what it returned: a str, or for asyncio an awaitable of one."""
        return self._token() if callable(self._token) else self._token


def check_token(value) -> str:
    """What a token callable returned, refused when it is not a usable token (never shown)."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"token: the callable returned {type(value).__name__} (empty or not a str), expected a token")
    return value


def check_credentials(credentials):
    if credentials is None:
        raise ValueError("authenticate: the connection has no credentials (connect with user=/password= or token=)")
    return credentials


def refused(error: BrokerError, address: str) -> BaseException:
    """What an AUTHENTICATE refusal is raised as: an old broker's UNSUPPORTED_VERSION said plainly."""
    if error.code == ErrorCode.UNSUPPORTED_VERSION:
        return ProtocolError(f"AUTHENTICATE: {address} does not serve it (a broker from before authentication)")
    return error


def encode_request(request: tuple) -> bytes:
    """The payload of the (mechanism, data) a step yields."""
    mechanism, data = request
    return wire.encode_string("mechanism", mechanism) + _I32.pack(len(data)) + data


def decode_authenticate_response(body: bytes) -> AuthAnswer:
    reader = wire.BodyReader("AUTHENTICATE response", body)
    complete = reader.i8("complete")
    if complete not in (0, 1):
        raise ProtocolError(f"AUTHENTICATE response: complete {complete}, expected 0 or 1")
    size = reader.i32("data length")
    if size < 0:
        raise ProtocolError(f"AUTHENTICATE response: data length {size}, expected >= 0")
    data = reader.rest("data", size)
    answer = AuthAnswer(complete == 1, data, reader.string("principal"), reader.i64("expiresAtMs"))
    reader.end()
    return answer


Steps = Generator[tuple, AuthAnswer, AuthAnswer]


def steps(credentials: Scram | Token, token: str | None = None) -> Steps:
    """The exchange for ``credentials`` (``token``: the TOKEN's string, already asked for)."""
    if isinstance(credentials, Scram):
        return _scram_steps(ScramClient(credentials.user, credentials._password))
    assert token is not None, "a TOKEN exchange needs the token asked for first"
    return _token_steps(token)


def _scram_steps(client: ScramClient) -> Steps:
    first = yield (SCRAM_SHA_256, client.first())
    if first.complete:
        raise ProtocolError("AUTHENTICATE SCRAM-SHA-256: complete after client-first, before any proof")
    final = yield (SCRAM_SHA_256, client.final(first.data))
    if not final.complete:
        raise ProtocolError("AUTHENTICATE SCRAM-SHA-256: not complete after client-final")
    client.verify(final.data)  # a broker that cannot prove itself fails the connect
    return final


def _token_steps(token: str) -> Steps:
    answer = yield (TOKEN, token.encode("utf-8"))
    if not answer.complete:
        raise ProtocolError("AUTHENTICATE TOKEN: not complete after the token")
    return answer
