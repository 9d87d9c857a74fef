"""Dialing a broker for ``booblik.aio.Connection.connect``: TCP, then TLS when asked (its handshake
failure said as such), then AUTHENTICATE when there are credentials: the connection is handed over
only once all of that is done, within the connect's timeout."""

from __future__ import annotations

import asyncio
import inspect
import socket
import ssl
from typing import Generic, TypeVar

from .. import auth
from ..errors import BrokerError
from ..security import Security
from ..tls import handshake_failure

# The connection class is handed in (``cls``), so this module needs nothing of connection.py's.
Connection = TypeVar("Connection")


class _Connecting(Generic[Connection]):
    """What ``Connection.connect`` returns: awaitable, and an async context manager."""

    def __init__(self, cls: type[Connection], address: str, host: str, port: int, timeout: float | None, security: Security) -> None:
        self._cls = cls
        self._address = address
        self._host = host
        self._port = port
        self._timeout = timeout
        self._security = security
        self._connection: Connection | None = None

    def __await__(self):
        return self._open().__await__()

    async def __aenter__(self) -> Connection:
        self._connection = await self._open()
        return self._connection

    async def __aexit__(self, *exc_info) -> None:
        if self._connection is not None:
            await self._connection.close()

    async def _open(self) -> Connection:
        try:
            return await asyncio.wait_for(self._dial(), self._timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"connecting to {self._address}: no connection within {self._timeout} s") from None

    async def _dial(self) -> Connection:
        security = self._security
        tls = {}
        if security.context is not None:
            tls = {"ssl": security.context, "server_hostname": security.server_hostname(self._host)}
        try:
            reader, writer = await asyncio.open_connection(self._host, self._port, **tls)
        except ConnectionRefusedError:
            raise  # nobody listening: before any TLS
        except (ssl.SSLError, ConnectionError, EOFError) as error:
            if not tls:
                raise
            raise handshake_failure(error, self._address) from error
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = self._cls(reader, writer, self._address, self._timeout, security)
        if security.credentials is not None:
            try:
                await connection.authenticate()
            except BaseException:
                await connection.close()
                raise
        return connection


async def authenticate(connection) -> str:
    """One AUTHENTICATE exchange on ``connection`` (an aio Connection) with its credentials."""
    credentials = connection.security.credentials
    token = None
    if isinstance(credentials, auth.Token):  # a callable's failure is the caller's: the connection stays
        token = credentials.source()
        token = auth.check_token(await token if inspect.isawaitable(token) else token)
    try:
        exchange = auth.steps(credentials, token)
        request = next(exchange)
        try:
            while True:
                body = await connection._call_once(
                    auth.API_AUTHENTICATE, auth.AUTHENTICATE_VERSION, auth.encode_request(request), auth.WHAT
                )
                request = exchange.send(auth.decode_authenticate_response(body))
        except StopIteration as done:
            answer = done.value
    except BrokerError as error:
        raise auth.refused(error, connection.address) from error
    except BaseException as error:  # the broker did not prove itself, or broke the protocol
        connection._shutdown(error)
        raise
    connection.principal, connection.expires_at_ms = answer.principal, answer.expires_at_ms
    connection._authentications += 1
    return answer.principal
