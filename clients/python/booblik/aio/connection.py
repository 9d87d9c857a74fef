"""The asyncio connection: requests from any number of tasks, pipelined on one stream.

Each request is written whole, at once, and queued with a future; one reader task takes the answers
in order, checks each correlation id and completes the futures. A caller that stops waiting (a
timeout, a cancelled task) leaves its future cancelled and the reader throws that answer away, so
the stream never falls out of step. A framing failure closes the connection and fails every request
still waiting; a refusal from the broker (BrokerError) fails only its own request.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterable

from .. import auth, limits, routing, wire
from ..address import parse_address
from ..capabilities import speaks
from ..connection import UNKNOWN_EFFECT
from ..errors import (
    BrokerError,
    ConnectionClosedError,
    CredentialsExpiredError,
    ErrorCode,
    ProtocolError,
    lost_in_flight,
    timed_out_in_flight,
)
from ..fragments import API_LIST_FRAGMENTS, LIST_FRAGMENTS_VERSION, decode_list_fragments_response, list_fragments_call
from ..partitioner import Key, TopicRouting
from ..refusals import refusal
from ..route_v2 import LIST_REPLICAS_VERSION, decode_list_response_v2
from ..security import PLAINTEXT, Security, security_from
from ..topics import (
    NO_WATCH,
    Delete,
    TopicListing,
    Upsert,
    decode_apply_response,
    decode_list_response,
    describe_apply,
    describe_list,
    encode_apply_request,
    encode_list_request,
)
from ..waits import check_wait_fits_timeout
from ..watch import default_watch_wait_millis
from ..wire import AckPolicy, FetchResult, ProduceResult
from .consumer import Consumer
from .dial import _Connecting, authenticate
from .watch import TopicWatch


class Connection:
    """A connection to one broker. Use ``await Connection.connect("host:port")``, ideally in an
    ``async with``. Safe to share between tasks of one event loop, except with a Producer that owns it.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        address: str,
        timeout: float | None,
        security: Security = PLAINTEXT,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.address = address
        self.timeout = timeout
        self.security = security
        # Who the broker says this connection is (AUTHENTICATE), and until when (Unix ms; -1: no end).
        self.principal: str | None = None
        self.expires_at_ms: int = auth.EXPIRES_NEVER
        # Counts finished AUTHENTICATE exchanges: a request refused CREDENTIALS_EXPIRED that was sent
        # before the latest one is simply sent again; one sent after it asks for a new exchange.
        self._authentications = 0
        self._authenticating: asyncio.Task | None = None
        self._pending: collections.deque = collections.deque()  # (correlation id, future), in request order
        self._next_correlation_id = limits.CORRELATION_ID_FIRST
        self._closed = False
        self._closed_because: BaseException | None = None
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop())
        # apiKey -> the highest version the broker serves: API_VERSIONS, asked once, before the first
        # call that has versions to choose from (None until then).
        self._versions: dict | None = None
        self._asking_versions: asyncio.Task | None = None

    @classmethod
    def connect(
        cls,
        address: str,
        timeout: float | None = limits.DEFAULT_TIMEOUT,
        *,
        security: Security | None = None,
        **options,
    ) -> _Connecting:
        """Connect to ``host:port``: ``await`` it, or use it in ``async with`` (closing at the end).

        ``timeout`` (seconds, or None for none) bounds the connect (TLS and AUTHENTICATE included)
        and each request. ``options``: TLS and credentials, as booblik.security lists them; a token
        callable may return the token or an awaitable of it.
        """
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout: {timeout}, expected > 0 seconds or None")
        if security is not None and options:
            raise TypeError("connect: give security= or the security options, not both")
        security = security if security is not None else security_from(**options)
        host, port = parse_address(address)
        return _Connecting(cls, address, host, port, timeout, security)

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<booblik.aio.Connection {self.address} {'closed' if self._closed else 'open'}>"

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        self._shutdown(ConnectionClosedError(f"connection to {self.address} was closed"))
        if self._read_task is not asyncio.current_task():
            self._read_task.cancel()
            try:
                await self._read_task
            except asyncio.CancelledError:
                pass
        try:
            await self._writer.wait_closed()
        except (OSError, asyncio.CancelledError):
            pass

    # -- the API --

    async def authenticate(self) -> str:
        """AUTHENTICATE with the connection's credentials (again, if called again); returns the
        principal. ``connect`` does it first; concurrent callers share one exchange."""
        auth.check_credentials(self.security.credentials)
        if self._authenticating is None or self._authenticating.done():
            self._authenticating = asyncio.get_running_loop().create_task(authenticate(self))
            # Its failure reaches every waiter; one nobody waits for any more (a connect that timed
            # out) is retrieved here, not reported as lost.
            self._authenticating.add_done_callback(lambda task: task.cancelled() or task.exception())
        return await asyncio.shield(self._authenticating)

    async def metadata(self, *topics: str) -> list:
        """Partitions and offsets of the named topics, or of every topic when none is named
        (METADATA v2 where the broker has it, its routes left out; v1 otherwise)."""
        if speaks(await self.versions(), wire.API_METADATA, "routes"):
            return (await self.metadata_with_routes(*topics)).plain()
        request = wire.encode_metadata_request(topics)
        body = await self._call(wire.API_METADATA, wire.METADATA_VERSION, request, wire.describe_metadata(topics))
        return wire.decode_metadata_response(body)

    async def api_versions(self) -> dict:
        """apiKey -> the highest version the broker serves (asked now, and kept for ``versions``); a
        broker that predates API_VERSIONS (it refuses it UNSUPPORTED_VERSION) gets the v1 set:
        PRODUCE 1, FETCH 1..2, METADATA 1."""
        try:
            body = await self._call(routing.API_API_VERSIONS, routing.API_VERSIONS_VERSION, b"", "API_VERSIONS")
        except BrokerError as error:
            if error.code != ErrorCode.UNSUPPORTED_VERSION:
                raise
            versions = dict(routing.VERSIONS_BEFORE_DISCOVERY)
        else:
            versions = routing.decode_api_versions_response(body)
        self._versions = versions
        return dict(versions)

    async def versions(self) -> dict:
        """What the broker speaks, as API_VERSIONS said: asked once per connection (concurrent
        callers share the one request), the first time a call has versions to choose from."""
        if self._versions is None:
            if self._asking_versions is None or self._asking_versions.done():
                self._asking_versions = asyncio.get_running_loop().create_task(self.api_versions())
            await asyncio.shield(self._asking_versions)
        return dict(self._versions)

    async def metadata_with_routes(
        self, *topics: str, min_revision: int | None = None, replicas: bool = False
    ) -> routing.RoutedMetadata:
        """METADATA v2: the spec store's revision and each partition's route. With ``min_revision``,
        v3 (the broker must have it): answered once the broker's copy of the specs reached it. With
        ``replicas``, v4 (the broker must have it): each partition's ``route_v2`` too."""
        what = wire.describe_metadata(topics)
        if replicas:
            payload = routing.encode_metadata_request_v3(topics, min_revision or 0)
            body = await self._call(wire.API_METADATA, routing.METADATA_REPLICAS_VERSION, payload, what)
            return routing.decode_metadata_response_v4(body)
        if min_revision is None:
            body = await self._call(
                wire.API_METADATA, routing.METADATA_ROUTES_VERSION, wire.encode_metadata_request(topics), what
            )
        else:
            payload = routing.encode_metadata_request_v3(topics, min_revision)
            body = await self._call(wire.API_METADATA, routing.METADATA_REVISION_VERSION, payload, what)
        return routing.decode_metadata_response_v2(body)

    async def produce(
        self,
        topic: str,
        partition: int,
        records: Iterable[bytes],
        ack: AckPolicy = AckPolicy.WRITTEN,
        expected_offset: int | None = None,
        follow_routes: bool = False,
    ) -> ProduceResult | None:
        """Append ``records`` to one partition; ``None`` under AckPolicy.NONE, once written. With
        ``expected_offset``, only if the partition ends there (else OffsetMismatchError)."""
        payload = wire.encode_produce_request(topic, partition, ack, records, expected_offset, v2_layout=follow_routes)
        if follow_routes:  # v3: a broker that is not the primary answers NOT_PRIMARY rather than proxying
            version = routing.ROUTED_VERSION
        else:
            version = wire.PRODUCE_VERSION if expected_offset is None else wire.PRODUCE_EXPECTING_VERSION
        if ack == AckPolicy.NONE:
            self._submit(wire.API_PRODUCE, version, payload, answered=False)
            await self._bounded(self._drain(), "writing a PRODUCE")
            return None
        what = wire.describe(wire.API_PRODUCE, topic, partition)
        body = await self._call(wire.API_PRODUCE, version, payload, what, expected_offset)
        return wire.decode_produce_response(body)

    async def fetch(
        self,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = limits.DEFAULT_MAX_BYTES,
        max_wait_millis: int = limits.DEFAULT_MAX_WAIT_MILLIS,
        min_bytes: int = limits.DEFAULT_MIN_BYTES,
        follow_routes: bool = False,
        from_replica: bool = False,
    ) -> FetchResult:
        """Whole, verified records from ``offset`` on; empty when caught up. The wait must be
        shorter than the timeout (a ValueError otherwise). ``follow_routes`` sends FETCH v3,
        ``from_replica`` FETCH v4 (see ``booblik.Connection.fetch``)."""
        check_wait_fits_timeout(max_wait_millis, self.timeout)
        payload = wire.encode_fetch_request(topic, partition, offset, max_bytes, max_wait_millis, min_bytes)
        if from_replica:  # v4: an in-sync replica may answer (its high watermark can trail the primary's)
            version = routing.REPLICA_READS_VERSION
        else:
            version = routing.ROUTED_VERSION if follow_routes else wire.FETCH_VERSION
        body = await self._call(wire.API_FETCH, version, payload, wire.describe(wire.API_FETCH, topic, partition))
        return wire.decode_fetch_response(body, offset, max_bytes)

    async def apply_topics(self, changes, dry_run: bool = False) -> int:
        """Create, change and delete topics, every change or none; the spec store's new revision.
        As ``booblik.Connection.apply_topics``: RevisionMismatchError for a stale expected revision,
        InvalidArgumentRefusal for a value the broker refuses."""
        changes = list(changes) if not isinstance(changes, (Upsert, Delete)) else changes
        payload = encode_apply_request(changes, dry_run)
        return decode_apply_response(
            await self._call(wire.API_APPLY, wire.APPLY_VERSION, payload, describe_apply(changes))
        )

    async def list_topics(self, selector: str = "", replicas: bool = False) -> TopicListing:
        """The topics a label selector matches ("" for all), with specs, revisions and routes;
        ``replicas`` asks LIST v2 for each topic's ``routes_v2`` too (see ``booblik.Connection.list_topics``)."""
        if replicas:
            payload = encode_list_request(selector, NO_WATCH, 0)
            body = await self._call(wire.API_LIST, LIST_REPLICAS_VERSION, payload, describe_list(selector))
            return decode_list_response_v2(body)
        return await self._list(selector, NO_WATCH, 0)

    async def list_fragments(self, topic: str, partition: int | None = None) -> list:
        """Where each segment of a partition lives (of every partition when ``partition`` is None);
        see ``booblik.Connection.list_fragments``."""
        payload, what = list_fragments_call(topic, partition)
        body = await self._call(API_LIST_FRAGMENTS, LIST_FRAGMENTS_VERSION, payload, what)
        return decode_list_fragments_response(body)

    def watch_topics(self, selector: str = "", max_wait_millis: int | None = None) -> TopicWatch:
        """An async iterator: the listing now, then a new one each time the spec store changes.

        ``async with connection.watch_topics("team=payments") as watch: async for listing in watch:``.
        It holds its LIST on a connection of its own, opened on the first step; leaving the
        ``async with`` (or ``await watch.aclose()``) closes it, and cancelling the task stops it.
        """
        wait = default_watch_wait_millis(self.timeout) if max_wait_millis is None else max_wait_millis
        check_wait_fits_timeout(wait, self.timeout)
        dial = lambda: Connection.connect(self.address, self.timeout, security=self.security)  # noqa: E731
        return TopicWatch(dial, selector, wait)

    async def _list(self, selector: str, watch_revision: int, max_wait_millis: int) -> TopicListing:
        payload = encode_list_request(selector, watch_revision, max_wait_millis)
        body = await self._call(wire.API_LIST, wire.LIST_VERSION, payload, describe_list(selector))
        return decode_list_response(body)

    async def topic(self, name: str, metadata_max_age: float = limits.DEFAULT_METADATA_MAX_AGE) -> Topic:
        """A topic handle; its partitions come from the broker (one METADATA request, now), and are
        read again once they are ``metadata_max_age`` seconds old (see Topic)."""
        return await Topic.load(self, name, metadata_max_age)

    def consumer(
        self,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = limits.DEFAULT_MAX_BYTES,
        max_wait_millis: int = limits.DEFAULT_MAX_WAIT_MILLIS,
    ) -> Consumer:
        """An async iterator over one partition from ``offset`` (it never ends; cancel the task or
        ``break``); or ``await consumer.poll()``. Nothing is fetched until the first record is asked for."""
        return Consumer(self, topic, partition, offset, max_bytes=max_bytes, max_wait_millis=max_wait_millis)

    # -- the exchange (the Producer uses _submit and _drain directly) --

    def _submit(
        self, api_key: int, api_version: int, payload: bytes, answered: bool = True, what: str = "request"
    ) -> asyncio.Future | None:
        """Write one request frame now (no await: requests go out in call order); the future of its
        answer, (errorCode, body), or None when the broker will not answer. A PRODUCE or APPLY
        (``what`` names it) whose answer the connection's end takes fails as ``outcome_unknown``."""
        self._check_open()
        correlation_id = self._next_correlation_id
        self._next_correlation_id = (
            correlation_id + 1 if correlation_id < limits.INT32_MAX else limits.CORRELATION_ID_FIRST
        )
        frame = wire.encode_request(api_key, api_version, correlation_id, payload)
        self._writer.write(frame)
        if not answered:
            return None
        future = asyncio.get_running_loop().create_future()
        self._pending.append((correlation_id, future, what, UNKNOWN_EFFECT.get(api_key)))
        return future

    async def _drain(self) -> None:
        try:
            await self._writer.drain()
        except OSError as error:
            lost = ConnectionClosedError(f"connection lost writing to {self.address}: {error}")
            lost.__cause__ = error
            self._shutdown(lost)
            raise lost

    async def _call(
        self, api_key: int, api_version: int, payload: bytes, what: str, expected_offset: int | None = None
    ) -> bytes:
        """One exchange. CREDENTIALS_EXPIRED with a token callable: a new token, AUTHENTICATE on this
        connection (once for every request that was refused), and the request once more."""
        authentications = self._authentications
        try:
            return await self._call_once(api_key, api_version, payload, what, expected_offset)
        except CredentialsExpiredError:
            credentials = self.security.credentials
            if credentials is None or not credentials.refreshable:
                raise
        if authentications == self._authentications:  # not authenticated since it was sent
            await self.authenticate()
        return await self._call_once(api_key, api_version, payload, what, expected_offset)

    async def _call_once(
        self, api_key: int, api_version: int, payload: bytes, what: str, expected_offset: int | None = None
    ) -> bytes:
        answer = self._submit(api_key, api_version, payload, what=what)
        error_code, body = await self._bounded(self._exchange(answer), what, UNKNOWN_EFFECT.get(api_key))
        if error_code == ErrorCode.TLS_REQUIRED:  # the broker hangs up after it: so does the client
            error = refusal(error_code, what, body, expected_offset)
            self._shutdown(error)
            raise error
        if error_code != 0:
            raise refusal(error_code, what, body, expected_offset)
        return body

    async def _exchange(self, answer: asyncio.Future):
        try:
            await self._drain()
        except BaseException:
            # Nobody will await this answer now; retrieve its failure so it is not reported as lost.
            if not answer.cancel() and not answer.cancelled():
                answer.exception()
            raise
        return await answer

    async def _bounded(self, awaitable, what: str, unknown_effect: str | None = None):
        if self.timeout is None:
            return await awaitable
        try:
            return await asyncio.wait_for(awaitable, self.timeout)
        except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
            raise timed_out_in_flight(what, self.address, self.timeout, unknown_effect) from None

    async def _read_loop(self) -> None:
        try:
            while True:
                prefix = await self._reader.readexactly(4)
                frame = await self._reader.readexactly(wire.response_frame_length(prefix, self.address))
                correlation_id, error_code, body = wire.split_response(frame)
                if not self._pending:
                    raise ProtocolError(f"response with correlation id {correlation_id} while no request was waiting")
                expected_id, future, _, _ = self._pending[0]
                if correlation_id != expected_id:  # left queued, so the shutdown fails it too
                    raise ProtocolError(
                        f"response has correlation id {correlation_id}, expected {expected_id}: responses out of step"
                    )
                self._pending.popleft()
                if not future.done():  # a cancelled caller's answer is read and dropped
                    future.set_result((error_code, body))
        except asyncio.IncompleteReadError as error:
            self._shutdown(
                ConnectionClosedError(
                    f"broker closed the connection after {len(error.partial)} of {error.expected} bytes of a response"
                )
            )
        except OSError as error:
            lost = ConnectionClosedError(f"connection lost reading from {self.address}: {error}")
            lost.__cause__ = error
            self._shutdown(lost)
        except ProtocolError as error:
            self._shutdown(error)

    def _check_open(self) -> None:
        if self._closed:
            error = ConnectionClosedError(f"connection to {self.address} is closed")
            raise error from self._closed_because

    def _shutdown(self, cause: BaseException) -> None:
        """Close once, failing every request still waiting with ``cause``."""
        if self._closed:
            return
        self._closed = True
        self._closed_because = cause
        pending, self._pending = self._pending, collections.deque()
        for _, future, what, effect in pending:
            if not future.done():
                # Sent, answer lost: a PRODUCE or APPLY may have taken effect, and its error says so
                # (a protocol error stays one: the broker's bug, not a loss to retry).
                lost = effect is not None and not isinstance(cause, ProtocolError)
                future.set_exception(lost_in_flight(what, self.address, effect, cause) if lost else cause)
        self._writer.close()


class Topic(TopicRouting):
    """One topic: picks partitions (FNV-1a over the key, round-robin without one) and sends to them.

    As ``booblik.Topic``, its partition list is read again once it is ``metadata_max_age`` seconds
    old, on ``refresh()``, and after a send is refused UNKNOWN_TOPIC_OR_PARTITION. ``send`` waits for
    that read; ``partition_for`` starts it in the background and routes with the list it has."""

    _refreshing: asyncio.Task | None = None

    @classmethod
    async def load(cls, connection, name: str, metadata_max_age: float = limits.DEFAULT_METADATA_MAX_AGE) -> Topic:
        meta = wire.only_topic(await connection.metadata(name), name)
        return cls(connection, meta.name, [p.partition for p in meta.partitions], metadata_max_age)

    async def refresh(self) -> None:
        """Read the partition list again now (concurrent callers share one METADATA); a failure is
        raised and leaves the list as it was."""
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.get_running_loop().create_task(self._read_again())
        await asyncio.shield(self._refreshing)

    async def _read_again(self) -> None:
        try:
            self._read(await self.connection.metadata(self.name))
        except BaseException:
            self._read_failed()
            raise

    def partition_for(self, key: Key | None = None) -> int:
        if self.stale and (self._refreshing is None or self._refreshing.done()):
            self._refreshing = asyncio.get_running_loop().create_task(self._read_again())
            # A failed background read leaves the list as it was; it is tried again an age later.
            self._refreshing.add_done_callback(lambda task: task.cancelled() or task.exception())
        return super().partition_for(key)

    async def send(
        self, payload: bytes, key: Key | None = None, ack: AckPolicy = AckPolicy.WRITTEN
    ) -> ProduceResult | None:
        wire.check_payload(payload)
        if self.stale:
            await self.refresh()
        try:
            return await self.connection.produce(self.name, self.partition_for(key), [payload], ack=ack)
        except BrokerError as error:
            if self._refused_partition(error):
                self._loaded_at = float("-inf")  # read again before the next send
            raise
