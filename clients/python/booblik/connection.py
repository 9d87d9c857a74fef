"""The synchronous connection: one socket, one request at a time (or a pipelined run of them).

States: OPEN -> CLOSED. A framing failure (bad length, wrong correlation id, a frame cut short, a
timeout mid-frame) closes the connection, because where the next frame starts is no longer known;
a refusal from the broker (BrokerError) does not.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterable

from . import auth, limits, routing, wire
from .address import parse_address
from .capabilities import speaks
from .consumer import Consumer
from .errors import (
    UNKNOWN_CHANGES,
    UNKNOWN_RECORDS,
    BooblikError,
    BrokerError,
    ConnectionClosedError,
    CredentialsExpiredError,
    ErrorCode,
    ProtocolError,
    lost_in_flight,
    timed_out_in_flight,
)
from .fragments import API_LIST_FRAGMENTS, LIST_FRAGMENTS_VERSION, decode_list_fragments_response, list_fragments_call
from .partitioner import Key, TopicRouting
from .refusals import refusal
from .route_v2 import LIST_REPLICAS_VERSION, decode_list_response_v2
from .security import PLAINTEXT, Security, security_from
from .tls import handshake_failure, lost_hint
from .topics import (
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
from .waits import check_wait_fits_timeout
from .watch import TopicWatch, default_watch_wait_millis
from .wire import AckPolicy, FetchResult, ProduceResult


class Connection:
    """A connection to one broker. Use ``Connection.connect("host:port")``, ideally in a ``with``.

    Thread-safe: a lock makes each request and its answer one exchange. A ``Producer`` owns its
    connection; do not use it directly while the producer has it.
    """

    def __init__(
        self, sock: socket.socket, address: str, timeout: float | None, security: Security = PLAINTEXT
    ) -> None:
        self._sock = sock
        self.address = address
        self.timeout = timeout
        self.security = security
        # Who the broker says this connection is (AUTHENTICATE), and until when (Unix ms; -1: no end).
        self.principal: str | None = None
        self.expires_at_ms: int = auth.EXPIRES_NEVER
        self._lock = threading.RLock()
        self._next_correlation_id = limits.CORRELATION_ID_FIRST
        self._closed_because: BaseException | None = None
        self._closed = False
        # apiKey -> the highest version the broker serves: API_VERSIONS, asked once, before the first
        # call that has versions to choose from (None until then).
        self._versions: dict | None = None

    @classmethod
    def connect(
        cls,
        address: str,
        timeout: float | None = limits.DEFAULT_TIMEOUT,
        *,
        security: Security | None = None,
        **options,
    ) -> Connection:
        """Connect to ``host:port``. ``timeout`` (seconds, or None for none) bounds every socket call.
        ``options``: TLS and credentials, as booblik.security lists them (it authenticates first)."""
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout: {timeout}, expected > 0 seconds or None")
        if security is not None and options:
            raise TypeError("connect: give security= or the security options, not both")
        security = security if security is not None else security_from(**options)
        host, port = parse_address(address)
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if security.context is not None:
            try:
                sock = security.context.wrap_socket(sock, server_hostname=security.server_hostname(host))
            except (ssl.SSLError, ConnectionError, EOFError) as error:
                sock.close()
                raise handshake_failure(error, address) from error
            except BaseException:
                sock.close()
                raise
        connection = cls(sock, address, timeout, security)
        if security.credentials is not None:
            try:
                connection.authenticate()
            except BaseException:
                connection.close()
                raise
        return connection

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<booblik.Connection {self.address} {'closed' if self._closed else 'open'}>"

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close now. Not behind the lock: a thread blocked in a long fetch is woken (with a
        ConnectionClosedError), rather than holding the close up until its wait ends."""
        if self._closed:
            return
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # never connected, or already gone
        self._sock.close()

    # -- the API --

    def authenticate(self) -> str:
        """AUTHENTICATE with the connection's credentials (again, if called again: the broker allows
        it at any time); returns the principal. ``connect`` calls it first."""
        credentials = auth.check_credentials(self.security.credentials)
        with self._lock:
            token = auth.check_token(credentials.source()) if isinstance(credentials, auth.Token) else None
            exchange = auth.steps(credentials, token)
            try:
                request = next(exchange)
                while True:
                    payload = auth.encode_request(request)
                    body = self._call_once(auth.API_AUTHENTICATE, auth.AUTHENTICATE_VERSION, payload, auth.WHAT)
                    request = exchange.send(auth.decode_authenticate_response(body))
            except StopIteration as done:
                self.principal, self.expires_at_ms = done.value.principal, done.value.expires_at_ms
                return done.value.principal
            except BrokerError as error:
                raise auth.refused(error, self.address) from error
            except BaseException as error:  # the broker did not prove itself, or broke the protocol
                self._break(error)
                raise

    def metadata(self, *topics: str) -> list:
        """Partitions and offsets of the named topics, or of every topic when none is named
        (METADATA v2 where the broker has it, its routes left out; v1 otherwise).

        Naming a topic that does not exist is a BrokerError (UNKNOWN_TOPIC_OR_PARTITION).
        """
        if speaks(self.versions(), wire.API_METADATA, "routes"):
            return self.metadata_with_routes(*topics).plain()
        request = wire.encode_metadata_request(topics)
        body = self._call(wire.API_METADATA, wire.METADATA_VERSION, request, wire.describe_metadata(topics))
        return wire.decode_metadata_response(body)

    def api_versions(self) -> dict:
        """apiKey -> the highest version the broker serves (asked now, and kept for ``versions``); a
        broker that predates API_VERSIONS (it refuses it UNSUPPORTED_VERSION) gets the v1 set:
        PRODUCE 1, FETCH 1..2, METADATA 1."""
        try:
            body = self._call(routing.API_API_VERSIONS, routing.API_VERSIONS_VERSION, b"", "API_VERSIONS")
        except BrokerError as error:
            if error.code != ErrorCode.UNSUPPORTED_VERSION:
                raise
            versions = dict(routing.VERSIONS_BEFORE_DISCOVERY)
        else:
            versions = routing.decode_api_versions_response(body)
        self._versions = versions
        return dict(versions)

    def versions(self) -> dict:
        """What the broker speaks, as API_VERSIONS said: asked once per connection, the first time a
        call has versions to choose from."""
        with self._lock:
            if self._versions is None:
                self.api_versions()
            return dict(self._versions)

    def metadata_with_routes(
        self, *topics: str, min_revision: int | None = None, replicas: bool = False
    ) -> routing.RoutedMetadata:
        """METADATA v2: the spec store's revision and each partition's route. With ``min_revision``,
        v3 (the broker must have it): answered once the broker's copy of the specs reached it. With
        ``replicas``, v4 (the broker must have it): each partition's ``route_v2`` too (the epoch,
        every replica with its zone, whether it is in sync and live, and its lag)."""
        what = wire.describe_metadata(topics)
        if replicas:
            payload = routing.encode_metadata_request_v3(topics, min_revision or 0)
            body = self._call(wire.API_METADATA, routing.METADATA_REPLICAS_VERSION, payload, what)
            return routing.decode_metadata_response_v4(body)
        if min_revision is None:
            body = self._call(
                wire.API_METADATA, routing.METADATA_ROUTES_VERSION, wire.encode_metadata_request(topics), what
            )
        else:
            payload = routing.encode_metadata_request_v3(topics, min_revision)
            body = self._call(wire.API_METADATA, routing.METADATA_REVISION_VERSION, payload, what)
        return routing.decode_metadata_response_v2(body)

    def produce(
        self,
        topic: str,
        partition: int,
        records: Iterable[bytes],
        ack: AckPolicy = AckPolicy.WRITTEN,
        expected_offset: int | None = None,
        follow_routes: bool = False,
    ) -> ProduceResult | None:
        """Append ``records`` to one partition, contiguously and in order.

        Returns ``ProduceResult(base_offset, log_end_offset)``; under ``AckPolicy.NONE`` the broker
        answers nothing, so this returns ``None`` once the request is written. With
        ``expected_offset`` the batch lands only if the partition ends there (a single writer
        fences itself); otherwise nothing is written and OffsetMismatchError says where it ends.
        ``follow_routes`` sends PRODUCE v3 (the broker must have it): a cluster broker that is not
        the primary refuses with NotPrimaryError carrying the route (``booblik.Client`` sets it).
        """
        payload = wire.encode_produce_request(topic, partition, ack, records, expected_offset, v2_layout=follow_routes)
        if follow_routes:  # v3: a broker that is not the primary answers NOT_PRIMARY rather than proxying
            version = routing.ROUTED_VERSION
        else:
            version = wire.PRODUCE_VERSION if expected_offset is None else wire.PRODUCE_EXPECTING_VERSION
        if ack == AckPolicy.NONE:
            with self._lock:
                self._send(wire.API_PRODUCE, version, payload)
            return None
        what = wire.describe(wire.API_PRODUCE, topic, partition)
        body = self._call(wire.API_PRODUCE, version, payload, what, expected_offset)
        return wire.decode_produce_response(body)

    def fetch(
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
        """Whole, verified records from ``offset`` on; an empty list when caught up.

        The broker holds the request up to ``max_wait_millis`` while nothing is there, so the wait
        must be shorter than the socket timeout: the combination is refused with a ValueError rather
        than surfacing as a timeout on a healthy long fetch. ``follow_routes`` sends FETCH v3 (see
        ``produce``); ``from_replica`` FETCH v4, which a live in-sync replica answers from its own copy
        (``booblik.Client`` with ``prefer_zone`` sends it).
        """
        check_wait_fits_timeout(max_wait_millis, self.timeout)
        payload = wire.encode_fetch_request(topic, partition, offset, max_bytes, max_wait_millis, min_bytes)
        if from_replica:  # v4: an in-sync replica may answer (its high watermark can trail the primary's)
            version = routing.REPLICA_READS_VERSION
        else:
            version = routing.ROUTED_VERSION if follow_routes else wire.FETCH_VERSION
        body = self._call(wire.API_FETCH, version, payload, wire.describe(wire.API_FETCH, topic, partition))
        return wire.decode_fetch_response(body, offset, max_bytes)

    def apply_topics(self, changes, dry_run: bool = False) -> int:
        """Create, change and delete topics: every change or none (APPLY). Returns the spec store's
        new revision, which every upserted spec now carries.

        ``changes`` is a list of ``Upsert(TopicSpec(...))`` and ``Delete(name)``, each with the
        revision it expects (0 must not exist, -1 any, N exactly N). A stale one raises
        RevisionMismatchError (topic, both revisions), a value the broker refuses
        InvalidArgumentRefusal (its ``detail`` names the field). ``dry_run`` checks everything on the
        broker and changes nothing; the answer is then the current revision.
        """
        changes = list(changes) if not isinstance(changes, (Upsert, Delete)) else changes
        payload = encode_apply_request(changes, dry_run)
        body = self._call(wire.API_APPLY, wire.APPLY_VERSION, payload, describe_apply(changes))
        return decode_apply_response(body)

    def list_topics(self, selector: str = "", replicas: bool = False) -> TopicListing:
        """The topics a label selector matches (``team=payments,env in (prod,dev)``; "" for all),
        sorted by name, each with its spec, revision and one route per partition. ``replicas`` asks
        LIST v2 (the broker must have it): each topic's ``routes_v2`` too, one RouteV2 per partition
        (lags -1: METADATA v4 carries them)."""
        if replicas:
            payload = encode_list_request(selector, NO_WATCH, 0)
            body = self._call(wire.API_LIST, LIST_REPLICAS_VERSION, payload, describe_list(selector))
            return decode_list_response_v2(body)
        return self._list(selector, NO_WATCH, 0)

    def watch_topics(self, selector: str = "", max_wait_millis: int | None = None) -> TopicWatch:
        """Follow the topics a selector matches: iterating yields the listing now, then a new one
        each time the spec store changes. It holds its LIST on a connection of its own, so this one
        stays free; ``close()`` it (from any thread) or use it in a ``with`` to stop.

        ``max_wait_millis`` is how long each held LIST waits before asking again (default 20 s, or
        half the timeout when that is shorter); it must be shorter than the timeout.
        """
        wait = default_watch_wait_millis(self.timeout) if max_wait_millis is None else max_wait_millis
        check_wait_fits_timeout(wait, self.timeout)
        return TopicWatch(Connection.connect(self.address, self.timeout, security=self.security), selector, wait)

    def _list(self, selector: str, watch_revision: int, max_wait_millis: int) -> TopicListing:
        payload = encode_list_request(selector, watch_revision, max_wait_millis)
        return decode_list_response(self._call(wire.API_LIST, wire.LIST_VERSION, payload, describe_list(selector)))

    def list_fragments(self, topic: str, partition: int | None = None) -> list:
        """Where each segment of a partition lives (of every partition when ``partition`` is None):
        a list of ``PartitionFragments``, each with its ``Fragment``s oldest first (offsets, bytes,
        ``FragmentLocation`` local, store or both, and when it was persisted). An unknown topic or
        partition is a BrokerError UNKNOWN_TOPIC_OR_PARTITION; a broker that predates the call
        refuses it UNSUPPORTED_VERSION."""
        payload, what = list_fragments_call(topic, partition)
        return decode_list_fragments_response(self._call(API_LIST_FRAGMENTS, LIST_FRAGMENTS_VERSION, payload, what))

    def topic(self, name: str, metadata_max_age: float = limits.DEFAULT_METADATA_MAX_AGE) -> Topic:
        """A topic handle; its partitions come from the broker (one METADATA request, now), and are
        read again once they are ``metadata_max_age`` seconds old (see Topic)."""
        return Topic.load(self, name, metadata_max_age)

    def consumer(
        self,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = limits.DEFAULT_MAX_BYTES,
        max_wait_millis: int = limits.DEFAULT_MAX_WAIT_MILLIS,
    ) -> Consumer:
        """A consumer of one partition from ``offset``: iterate it (it never ends) or ``poll()`` it.

        Nothing is fetched until the first record is asked for.
        """
        return Consumer(self, topic, partition, offset, max_bytes=max_bytes, max_wait_millis=max_wait_millis)

    # -- the exchange (the Producer uses _send and _receive directly to pipeline) --

    def _call(
        self, api_key: int, api_version: int, payload: bytes, what: str, expected_offset: int | None = None
    ) -> bytes:
        """One exchange. CREDENTIALS_EXPIRED with a token callable: a new token, AUTHENTICATE on
        this connection, and the request once more (it was refused, so nothing of it took effect)."""
        with self._lock:
            try:
                return self._call_once(api_key, api_version, payload, what, expected_offset)
            except CredentialsExpiredError:
                credentials = self.security.credentials
                if credentials is None or not credentials.refreshable:
                    raise
            self.authenticate()
            return self._call_once(api_key, api_version, payload, what, expected_offset)

    def _call_once(
        self, api_key: int, api_version: int, payload: bytes, what: str, expected_offset: int | None = None
    ) -> bytes:
        with self._lock:
            correlation_id = self._send(api_key, api_version, payload)
            return self._receive(correlation_id, what, expected_offset, UNKNOWN_EFFECT.get(api_key))

    def _send(self, api_key: int, api_version: int, payload: bytes) -> int:
        """Write one request frame; returns its correlation id. Caller holds the lock."""
        self._check_open()
        correlation_id = self._next_correlation_id
        self._next_correlation_id = (
            correlation_id + 1 if correlation_id < limits.INT32_MAX else limits.CORRELATION_ID_FIRST
        )
        frame = wire.encode_request(api_key, api_version, correlation_id, payload)
        try:
            self._sock.sendall(frame)
        except BaseException as error:  # a partial write leaves the broker mid-frame
            self._break(error)
            if isinstance(error, OSError) and not isinstance(error, TimeoutError):
                hint = lost_hint(error, self.security.tls)
                raise ConnectionClosedError(
                    f"connection lost writing a request to {self.address}: {error}{hint}"
                ) from error
            raise
        return correlation_id

    def _receive(
        self, correlation_id: int, what: str, expected_offset: int | None = None, unknown_effect: str | None = None
    ) -> bytes:
        """Read the answer to ``correlation_id``: its body, or a BrokerError. Caller holds the lock.
        ``unknown_effect``, for a request that changes something, is what losing the answer leaves
        unknown: the error then says so (``outcome_unknown``)."""
        if self._closed and unknown_effect is not None:
            raise lost_in_flight(what, self.address, unknown_effect, self._closed_because or ConnectionClosedError())
        self._check_open()
        try:
            length = wire.response_frame_length(self._read_exactly(4, "a response frame length"), self.address)
            frame = self._read_exactly(length, f"a {length}-byte response frame")
            answered_id, error_code, body = wire.split_response(frame)
            if answered_id != correlation_id:
                raise ProtocolError(
                    f"response has correlation id {answered_id}, expected {correlation_id}: responses out of step"
                )
        except BaseException as error:
            self._break(error)
            if unknown_effect is not None and isinstance(error, TimeoutError):
                raise timed_out_in_flight(what, self.address, self.timeout, unknown_effect) from error
            if unknown_effect is not None and isinstance(error, (OSError, ConnectionClosedError)):
                raise lost_in_flight(what, self.address, unknown_effect, error) from error
            if isinstance(error, OSError) and not isinstance(error, TimeoutError):
                hint = lost_hint(error, self.security.tls)
                raise ConnectionClosedError(
                    f"connection lost reading a response from {self.address}: {error}{hint}"
                ) from error
            raise
        if error_code == ErrorCode.TLS_REQUIRED:  # the broker hangs up after it: so does the client
            error = refusal(error_code, what, body, expected_offset)
            self._break(error)
            raise error
        if error_code != 0:
            raise refusal(error_code, what, body, expected_offset)
        return body

    def _read_exactly(self, size: int, what: str) -> bytes:
        buffer = bytearray(size)
        view = memoryview(buffer)
        got = 0
        while got < size:
            n = self._sock.recv_into(view[got:])
            if n == 0:
                raise ConnectionClosedError(f"broker closed the connection after {got} of {size} bytes of {what}")
            got += n
        return bytes(buffer)

    def _check_open(self) -> None:
        if self._closed:
            error = ConnectionClosedError(f"connection to {self.address} is closed")
            raise error from self._closed_because

    def _break(self, cause: BaseException) -> None:
        self._closed_because = cause
        self.close()


# Requests that change something: what a lost answer leaves unknown.
UNKNOWN_EFFECT = {wire.API_PRODUCE: UNKNOWN_RECORDS, wire.API_APPLY: UNKNOWN_CHANGES}


class Topic(TopicRouting):
    """One topic: picks partitions (FNV-1a over the key, round-robin without one) and sends to them.

    Its partition list is read again (one METADATA) once it is ``metadata_max_age`` seconds old, when
    ``refresh()`` is called, and after a send is refused UNKNOWN_TOPIC_OR_PARTITION: partitions added
    at runtime get records. A connection or a Client works behind it."""

    @classmethod
    def load(cls, connection, name: str, metadata_max_age: float = limits.DEFAULT_METADATA_MAX_AGE) -> Topic:
        meta = wire.only_topic(connection.metadata(name), name)
        return cls(connection, meta.name, [p.partition for p in meta.partitions], metadata_max_age)

    def refresh(self) -> None:
        """Read the partition list again now; a failure is raised and leaves the list as it was."""
        try:
            self._read(self.connection.metadata(self.name))
        except BaseException:
            self._read_failed()
            raise

    def partition_for(self, key: Key | None = None) -> int:
        """The partition for ``key`` (the next in turn without one), from a list read again first
        when it is stale; a failed read routes with the list as it is and tries again an age later."""
        if self.stale:
            try:
                self.refresh()
            except (BooblikError, OSError):
                pass
        return super().partition_for(key)

    def send(self, payload: bytes, key: Key | None = None, ack: AckPolicy = AckPolicy.WRITTEN) -> ProduceResult | None:
        """Send one record to the partition its key picks. One record per request: batch when you can."""
        wire.check_payload(payload)
        if self.stale:
            self.refresh()
        try:
            return self.connection.produce(self.name, self.partition_for(key), [payload], ack=ack)
        except BrokerError as error:
            if self._refused_partition(error):
                self._loaded_at = float("-inf")  # read again before the next send
            raise
