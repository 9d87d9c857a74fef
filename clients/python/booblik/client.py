"""A client of a whole cluster that follows routes (the synchronous one; ``booblik.aio.Client`` is
its asyncio twin).

It bootstraps from one or more addresses, keeps one ``Connection`` per broker (dialed when first
needed), reads each partition's route from METADATA (v3 at the revision of the last APPLY, or v2,
or v1 from an older broker) and sends PRODUCE and FETCH v3 to the route's primary. When a broker
answers NOT_PRIMARY the route in its answer is used at once; NO_PRIMARY (or another retriable code)
means a pause, then METADATA again; a lost connection to the primary means METADATA again from
another known broker. At most ``route_attempts_max`` sends per call, then the last error is raised.

A PRODUCE refused NOT_PRIMARY, NO_PRIMARY or NOT_ENOUGH_REPLICAS was not written, so the resend is
safe. One whose connection was lost after it was sent may have been written: the resend can store
it twice (at least once, as for any resend after a lost answer; ``expected_offset`` fences it), and
giving up after such a loss raises OutcomeUnknownError. OUTCOME_UNKNOWN is never sent again.

With ``prefer_zone`` it reads METADATA v4 where the broker has it and sends each FETCH to an
in-sync replica in that zone (``booblik.replica_reads`` says which, and why the high watermark it
reports never goes back); without it, nothing of that is sent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from . import limits, wire
from .capabilities import speaks
from .connection import Connection, Topic
from .consumer import Consumer
from .errors import ConnectionClosedError, NotPrimaryError, is_outcome_unknown
from .fragments import list_fragments_call
from .replica_reads import ReplicaReads, check_zone
from .security import security_from
from .routing import (
    AT_ONCE,
    GIVE_UP,
    RoutedMetadata,
    RoutedPartition,
    RoutedTopic,
    RouteTable,
    is_connection_loss,
    no_primary,
    unknown_after_loss,
)
from .topics import Route
from .wire import AckPolicy, FetchResult, ProduceResult


class _Broker:
    """A pooled connection and the versions its broker serves."""

    def __init__(self, address: str, connection: Any, versions: dict) -> None:  # a Connection, sync or aio
        self.address = address
        self.connection = connection
        self.versions = versions

    def speaks(self, api_key: int, capability: str) -> bool:
        """Whether the broker serves a version of ``api_key`` with ``capability`` (capabilities.py)."""
        return speaks(self.versions, api_key, capability)


class Client:
    """``Client.connect("host:port")`` or ``Client.connect(["a:9092", "b:9092"])``, ideally in a
    ``with``. Thread-safe: each broker's Connection serialises its own exchanges."""

    def __init__(
        self,
        bootstrap,
        timeout: float | None = limits.DEFAULT_TIMEOUT,
        *,
        route_attempts_max: int = limits.DEFAULT_ROUTE_ATTEMPTS_MAX,
        route_retry_delay: float = limits.DEFAULT_ROUTE_RETRY_DELAY,
        route_retry_delay_max: float = limits.DEFAULT_ROUTE_RETRY_DELAY_MAX,
        prefer_zone: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        **security,
    ) -> None:
        """``security``: TLS and credentials (booblik.security), for every broker it connects to."""
        self.security = security_from(**security)
        self.routes = RouteTable(bootstrap, route_attempts_max, route_retry_delay, route_retry_delay_max)
        self.prefer_zone = check_zone(prefer_zone)
        self._replica_reads = ReplicaReads(self.prefer_zone) if self.prefer_zone is not None else None
        self.timeout = timeout
        self._sleep = sleep
        self._brokers: dict = {}
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def connect(cls, bootstrap, timeout: float | None = limits.DEFAULT_TIMEOUT, **options) -> Client:
        """Connect to the first reachable of ``bootstrap`` (one ``host:port`` or a list)."""
        client = cls(bootstrap, timeout, **options)
        try:
            client._any_broker()
        except BaseException:
            client.close()
            raise
        return client

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<booblik.Client {len(self._brokers)} connected {'closed' if self._closed else 'open'}>"

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        with self._lock:
            self._closed = True
            brokers, self._brokers = list(self._brokers.values()), {}
        for broker in brokers:
            broker.connection.close()

    def route_of(self, topic: str, partition: int) -> str | None:
        """The primary this client sends ``topic``/``partition`` to ('' while it has none; None: not known yet)."""
        return self.routes.primary(topic, partition)

    # -- the API (as Connection's, routed) --

    def metadata(self, *topics: str) -> list:
        """Partitions and offsets (through any broker); the routes in the answer are kept."""
        return self.metadata_with_routes(*topics).plain()

    def metadata_with_routes(self, *topics: str) -> RoutedMetadata:
        def step(attempt: dict) -> RoutedMetadata:
            broker = self._any_broker(attempt.get("avoid"))
            attempt["at"] = broker.address
            return self._read_routes(broker, topics)

        return self._with_retries(step)

    def produce(
        self,
        topic: str,
        partition: int,
        records: Iterable[bytes],
        ack: AckPolicy = AckPolicy.WRITTEN,
        expected_offset: int | None = None,
    ) -> ProduceResult | None:
        """PRODUCE to the partition's primary (see the module's note on what a resend means)."""
        records = list(records) if not isinstance(records, (bytes, bytearray, memoryview, str)) else records
        return self._on_primary(
            topic,
            partition,
            wire.describe(wire.API_PRODUCE, topic, partition),
            lambda b: b.connection.produce(
                topic,
                partition,
                records,
                ack,
                expected_offset,
                follow_routes=b.speaks(wire.API_PRODUCE, "followsRoutes"),
            ),
        )

    def fetch(
        self,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = limits.DEFAULT_MAX_BYTES,
        max_wait_millis: int = limits.DEFAULT_MAX_WAIT_MILLIS,
        min_bytes: int = limits.DEFAULT_MIN_BYTES,
    ) -> FetchResult:
        """FETCH from the partition's primary; with ``prefer_zone``, from an in-sync replica in that
        zone when there is one, and never with a high watermark below one seen before."""
        if self._replica_reads is not None:
            result = self._fetch_in_zone(topic, partition, offset, max_bytes, max_wait_millis, min_bytes)
            return self._replica_reads.report(topic, partition, result)
        return self._on_primary(
            topic,
            partition,
            wire.describe(wire.API_FETCH, topic, partition),
            lambda b: fetch_call(b, topic, partition, offset, max_bytes, max_wait_millis, min_bytes),
        )

    def apply_topics(self, changes, dry_run: bool = False) -> int:
        """APPLY through any broker. The revision it returns becomes the least the next METADATA
        asks for (v3), so a topic just created is usable through every broker at once."""
        revision = self._any_broker().connection.apply_topics(changes, dry_run)
        if not dry_run:
            self.routes.applied(revision)
        return revision

    def list_topics(self, selector: str = "", replicas: bool = False):
        """Connection.list_topics through any broker (``replicas``: LIST v2, each route's replicas too)."""
        return self._any_broker().connection.list_topics(selector, replicas)

    def watch_topics(self, selector: str = "", max_wait_millis: int | None = None):
        return self._any_broker().connection.watch_topics(selector, max_wait_millis)

    def list_fragments(self, topic: str, partition: int | None = None) -> list:
        """Connection.list_fragments on the partition's primary, which holds its segments; every
        partition (None) through any broker, which lists those it serves."""
        if partition is None:
            return self._any_broker().connection.list_fragments(topic)
        _, what = list_fragments_call(topic, partition)  # a bad partition is refused before any route is read
        return self._on_primary(topic, partition, what, lambda b: b.connection.list_fragments(topic, partition))

    def topic(self, name: str, metadata_max_age: float = limits.DEFAULT_METADATA_MAX_AGE) -> Topic:
        """A topic handle whose sends follow routes; its partitions are read again once they are
        ``metadata_max_age`` seconds old (see Topic)."""
        return Topic.load(self, name, metadata_max_age)

    def consumer(
        self,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = limits.DEFAULT_MAX_BYTES,
        max_wait_millis: int = limits.DEFAULT_MAX_WAIT_MILLIS,
    ) -> Consumer:
        """A consumer of one partition whose fetches go to its primary (with ``prefer_zone``, to an
        in-sync replica in that zone when there is one)."""
        return Consumer(self, topic, partition, offset, max_bytes=max_bytes, max_wait_millis=max_wait_millis)

    # -- routing --

    def _broker(self, address: str) -> _Broker:
        with self._lock:
            if self._closed:
                raise ConnectionClosedError("the client is closed")
            broker = self._brokers.get(address)
        if broker is not None and not broker.connection.closed:
            return broker
        connection = Connection.connect(address, self.timeout, security=self.security)
        try:
            broker = _Broker(address, connection, connection.versions())
        except BaseException:
            connection.close()
            raise
        with self._lock:
            if self._closed:
                connection.close()
                raise ConnectionClosedError("the client is closed")
            raced = self._brokers.get(address)
            if raced is not None and not raced.connection.closed:
                connection.close()  # another thread dialed it first: one connection per broker
                return raced
            self._brokers[address] = broker
        return broker

    def _drop(self, address: str) -> None:
        with self._lock:
            broker = self._brokers.pop(address, None)
        if broker is not None:
            broker.connection.close()

    def _any_broker(self, avoid: str | None = None) -> _Broker:
        last: BaseException | None = None
        for address in self.routes.candidates(set(self._brokers), avoid):
            try:
                return self._broker(address)
            except BaseException as error:
                if not is_connection_loss(error) or self._closed:
                    raise
                last = error
        raise last if last is not None else ConnectionClosedError("no broker address is known")

    def _read_routes(self, broker: _Broker, topics) -> RoutedMetadata:
        reads = self._replica_reads
        if reads is not None and broker.speaks(wire.API_METADATA, "replicaRoutes"):
            answer = broker.connection.metadata_with_routes(
                *topics, min_revision=self.routes.min_revision, replicas=True
            )
        elif broker.speaks(wire.API_METADATA, "atRevision"):
            answer = broker.connection.metadata_with_routes(*topics, min_revision=self.routes.min_revision)
        elif broker.speaks(wire.API_METADATA, "routes"):
            answer = broker.connection.metadata_with_routes(*topics)
        else:  # a broker without routes serves every partition itself
            answer = as_routed(broker.connection.metadata(*topics), broker.address)
        self.routes.record(answer)
        if reads is not None:
            reads.record(answer)  # without v4, route_v2 is None: the partition is read from its primary
        return answer

    def _primary(self, topic: str, partition: int, what: str, attempt: dict, refresh: bool = False) -> str:
        """The partition's primary, from METADATA when not known yet (or ``refresh``)."""
        primary = self.routes.primary(topic, partition)
        if primary is None or refresh:
            # A partition the answer lacks is the answering broker's to refuse
            # (UNKNOWN_TOPIC_OR_PARTITION), so the request goes there.
            broker = self._any_broker(attempt.get("avoid"))
            attempt["at"] = broker.address
            self._read_routes(broker, [topic])
            primary = self.routes.primary(topic, partition)
            if primary is None:
                primary = broker.address
        if primary == "":
            raise no_primary(what)
        return primary

    def _on_primary(self, topic: str, partition: int, what: str, send):
        def step(attempt: dict):
            primary = self._primary(topic, partition, what, attempt)
            attempt["at"] = primary
            return send(self._broker(primary))

        return self._with_retries(step, topic, partition, what)

    def _fetch_in_zone(
        self, topic: str, partition: int, offset: int, max_bytes: int, max_wait_millis: int, min_bytes: int
    ) -> FetchResult:
        reads = self._replica_reads
        assert reads is not None
        what = wire.describe(wire.API_FETCH, topic, partition)
        left = False  # a replica (or the primary) failed this call: the primary serves the rest of it

        def fetch_from(broker: _Broker, replica_read: bool = True) -> FetchResult:
            return fetch_call(
                broker, topic, partition, offset, max_bytes, max_wait_millis, min_bytes, replica_read
            )

        def step(attempt: dict) -> FetchResult:
            nonlocal left
            try:
                refresh = not left and reads.needs_route(topic, partition)
                primary = self._primary(topic, partition, what, attempt, refresh)
                replica = None if left else reads.pick(topic, partition)
                replica_read = True
                if replica is not None and replica != primary:
                    attempt["at"] = replica
                    broker = self._broker(replica)
                    if broker.speaks(wire.API_FETCH, "replicaReadable"):
                        return fetch_from(broker)
                    replica_read = False  # a replica without v4: v3 to the primary
                attempt["at"] = primary  # none in the zone (v4 if the primary has it), or one without v4 (v3)
                return fetch_from(self._broker(primary), replica_read)
            except Exception as error:
                if isinstance(error, NotPrimaryError) or is_connection_loss(error):
                    reads.leave(topic, partition)  # its route is read again before the next pick
                    left = True
                raise

        return self._with_retries(step, topic, partition)

    def _with_retries(
        self, step, topic: str | None = None, partition: int | None = None, what: str | None = None
    ):
        avoid = None
        pauses = 0
        attempt = 0
        lost = None  # an earlier send lost in flight: giving up then says "unknown", not the refusal
        while True:
            attempt += 1
            current: dict = {"avoid": avoid}
            try:
                return step(current)
            except Exception as error:
                verdict = self.routes.verdict(error, attempt, topic, partition)
                if verdict == GIVE_UP or self._closed:
                    unknown = unknown_after_loss(error, lost, what)
                    if unknown is not None:
                        raise unknown from error
                    raise
                if lost is None and is_outcome_unknown(error):
                    lost = error  # sent again all the same: at least once, as documented
                avoid = None
                connection_lost = is_connection_loss(error)
                if connection_lost and "at" in current:
                    self._drop(current["at"])
                    avoid = current["at"]
                if verdict != AT_ONCE or connection_lost:
                    self._sleep(self.routes.pause(pauses))
                    pauses += 1


def fetch_call(
    broker: _Broker,
    topic: str,
    partition: int,
    offset: int,
    max_bytes: int,
    max_wait_millis: int,
    min_bytes: int,
    replica_read: bool = False,
):
    """The FETCH ``broker`` is sent: following routes when it serves that, and with ``replica_read``
    asking for a replica's own copy when it serves that. Returns what its connection returns: the
    result, or the coroutine of it."""
    return broker.connection.fetch(
        topic,
        partition,
        offset,
        max_bytes,
        max_wait_millis,
        min_bytes,
        follow_routes=broker.speaks(wire.API_FETCH, "followsRoutes"),
        from_replica=replica_read and broker.speaks(wire.API_FETCH, "replicaReadable"),
    )


def as_routed(topics: list, address: str) -> RoutedMetadata:
    """A METADATA v1 answer as v2's: every partition's primary is the broker that answered."""
    route = Route(address, ())
    return RoutedMetadata(
        0,
        tuple(
            RoutedTopic(
                t.name,
                tuple(RoutedPartition(p.partition, p.log_start_offset, p.high_watermark, route) for p in t.partitions),
            )
            for t in topics
        ),
    )
