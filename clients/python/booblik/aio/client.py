"""The asyncio client of a whole cluster, following routes: ``booblik.Client``'s twin (its module
says how routes are followed, and what a resend after a lost connection means).

    async with Client.connect(["a:9092", "b:9092"]) as client:
        await client.produce("orders", 2, [b"x"])   # to partition 2's primary, wherever it is

``prefer_zone`` reads from in-sync replicas in that zone, as ``booblik.replica_reads`` describes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from .. import limits, wire
from ..client import _Broker, as_routed, fetch_call
from ..errors import ConnectionClosedError, NotPrimaryError, is_outcome_unknown
from ..fragments import list_fragments_call
from ..replica_reads import ReplicaReads, check_zone
from ..security import security_from
from ..routing import (
    AT_ONCE,
    GIVE_UP,
    RoutedMetadata,
    RouteTable,
    is_connection_loss,
    no_primary,
    unknown_after_loss,
)
from ..wire import AckPolicy, FetchResult, ProduceResult
from .connection import Connection, Topic
from .consumer import Consumer


class Client:
    """``await Client.connect(...)`` or ``async with Client.connect(...) as client``. Safe to share
    between tasks of one event loop: each broker's Connection pipelines their requests."""

    def __init__(
        self,
        bootstrap,
        timeout: float | None = limits.DEFAULT_TIMEOUT,
        *,
        route_attempts_max: int = limits.DEFAULT_ROUTE_ATTEMPTS_MAX,
        route_retry_delay: float = limits.DEFAULT_ROUTE_RETRY_DELAY,
        route_retry_delay_max: float = limits.DEFAULT_ROUTE_RETRY_DELAY_MAX,
        prefer_zone: str | None = None,
        **security,
    ) -> None:
        """``security``: TLS and credentials (booblik.security), for every broker it connects to."""
        self.security = security_from(**security)
        self.routes = RouteTable(bootstrap, route_attempts_max, route_retry_delay, route_retry_delay_max)
        self.prefer_zone = check_zone(prefer_zone)
        self._replica_reads = ReplicaReads(self.prefer_zone) if self.prefer_zone is not None else None
        self.timeout = timeout
        self._brokers: dict = {}  # address -> Task of a _Broker (dialing, or dialed)
        self._closed = False

    @classmethod
    def connect(cls, bootstrap, timeout: float | None = limits.DEFAULT_TIMEOUT, **options) -> _Connecting:
        """Connect to the first reachable of ``bootstrap``: ``await`` it, or ``async with`` it."""
        return _Connecting(cls(bootstrap, timeout, **options))

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<booblik.aio.Client {len(self._brokers)} connected {'closed' if self._closed else 'open'}>"

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        self._closed = True
        tasks, self._brokers = list(self._brokers.values()), {}
        for task in tasks:
            try:
                broker = await task
            except Exception:  # noqa: S112 -- a dial that failed has nothing to close
                continue
            await broker.connection.close()

    def route_of(self, topic: str, partition: int) -> str | None:
        return self.routes.primary(topic, partition)

    # -- the API (as Connection's, routed) --

    async def metadata(self, *topics: str) -> list:
        return (await self.metadata_with_routes(*topics)).plain()

    async def metadata_with_routes(self, *topics: str) -> RoutedMetadata:
        async def step(attempt: dict) -> RoutedMetadata:
            broker = await self._any_broker(attempt.get("avoid"))
            attempt["at"] = broker.address
            return await self._read_routes(broker, topics)

        return await self._with_retries(step)

    async def produce(
        self,
        topic: str,
        partition: int,
        records: Iterable[bytes],
        ack: AckPolicy = AckPolicy.WRITTEN,
        expected_offset: int | None = None,
    ) -> ProduceResult | None:
        records = list(records) if not isinstance(records, (bytes, bytearray, memoryview, str)) else records
        return await self._on_primary(
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

    async def fetch(
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
            result = await self._fetch_in_zone(topic, partition, offset, max_bytes, max_wait_millis, min_bytes)
            return self._replica_reads.report(topic, partition, result)
        return await self._on_primary(
            topic,
            partition,
            wire.describe(wire.API_FETCH, topic, partition),
            lambda b: fetch_call(b, topic, partition, offset, max_bytes, max_wait_millis, min_bytes),
        )

    async def apply_topics(self, changes, dry_run: bool = False) -> int:
        """APPLY through any broker; the next METADATA asks for at least its revision (v3)."""
        revision = await (await self._any_broker()).connection.apply_topics(changes, dry_run)
        if not dry_run:
            self.routes.applied(revision)
        return revision

    async def list_topics(self, selector: str = "", replicas: bool = False):
        """Connection.list_topics through any broker (``replicas``: LIST v2, each route's replicas too)."""
        return await (await self._any_broker()).connection.list_topics(selector, replicas)

    async def list_fragments(self, topic: str, partition: int | None = None) -> list:
        """Connection.list_fragments on the partition's primary; every partition (None) through any broker."""
        if partition is None:
            return await (await self._any_broker()).connection.list_fragments(topic)
        _, what = list_fragments_call(topic, partition)  # a bad partition is refused before any route is read
        return await self._on_primary(topic, partition, what, lambda b: b.connection.list_fragments(topic, partition))

    async def topic(self, name: str, metadata_max_age: float = limits.DEFAULT_METADATA_MAX_AGE) -> Topic:
        """A topic handle whose sends follow routes; its partitions are read again once they are
        ``metadata_max_age`` seconds old (see Topic)."""
        return await Topic.load(self, name, metadata_max_age)

    def consumer(
        self,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = limits.DEFAULT_MAX_BYTES,
        max_wait_millis: int = limits.DEFAULT_MAX_WAIT_MILLIS,
    ) -> Consumer:
        """As ``booblik.Client.consumer``: its fetches follow routes, and ``prefer_zone``."""
        return Consumer(self, topic, partition, offset, max_bytes=max_bytes, max_wait_millis=max_wait_millis)

    # -- routing --

    async def _broker(self, address: str) -> _Broker:
        if self._closed:
            raise ConnectionClosedError("the client is closed")
        task = self._brokers.get(address)
        if task is not None and task.done() and (_failed(task) or task.result().connection.closed):
            task = None
        if task is None:
            task = asyncio.get_running_loop().create_task(self._dial(address))
            self._brokers[address] = task
        try:
            return await asyncio.shield(task)
        except BaseException:
            if self._brokers.get(address) is task and task.done():
                del self._brokers[address]
            raise

    async def _dial(self, address: str) -> _Broker:
        connection = await Connection.connect(address, self.timeout, security=self.security)
        try:
            return _Broker(address, connection, await connection.versions())
        except BaseException:
            await connection.close()
            raise

    async def _drop(self, address: str) -> None:
        task = self._brokers.pop(address, None)
        if task is not None and task.done() and not _failed(task):
            await task.result().connection.close()

    async def _any_broker(self, avoid: str | None = None) -> _Broker:
        last: BaseException | None = None
        for address in self.routes.candidates(set(self._brokers), avoid):
            try:
                return await self._broker(address)
            except Exception as error:
                if not is_connection_loss(error) or self._closed:
                    raise
                last = error
        raise last if last is not None else ConnectionClosedError("no broker address is known")

    async def _read_routes(self, broker: _Broker, topics) -> RoutedMetadata:
        reads = self._replica_reads
        if reads is not None and broker.speaks(wire.API_METADATA, "replicaRoutes"):
            answer = await broker.connection.metadata_with_routes(
                *topics, min_revision=self.routes.min_revision, replicas=True
            )
        elif broker.speaks(wire.API_METADATA, "atRevision"):
            answer = await broker.connection.metadata_with_routes(*topics, min_revision=self.routes.min_revision)
        elif broker.speaks(wire.API_METADATA, "routes"):
            answer = await broker.connection.metadata_with_routes(*topics)
        else:
            answer = as_routed(await broker.connection.metadata(*topics), broker.address)
        self.routes.record(answer)
        if reads is not None:
            reads.record(answer)
        return answer

    async def _primary(self, topic: str, partition: int, what: str, attempt: dict, refresh: bool = False) -> str:
        """The partition's primary, from METADATA when not known yet (or ``refresh``)."""
        primary = self.routes.primary(topic, partition)
        if primary is None or refresh:
            broker = await self._any_broker(attempt.get("avoid"))
            attempt["at"] = broker.address
            await self._read_routes(broker, [topic])
            primary = self.routes.primary(topic, partition)
            if primary is None:
                primary = broker.address
        if primary == "":
            raise no_primary(what)
        return primary

    async def _on_primary(self, topic: str, partition: int, what: str, send):
        async def step(attempt: dict):
            primary = await self._primary(topic, partition, what, attempt)
            attempt["at"] = primary
            return await send(await self._broker(primary))

        return await self._with_retries(step, topic, partition, what)

    async def _fetch_in_zone(
        self, topic: str, partition: int, offset: int, max_bytes: int, max_wait_millis: int, min_bytes: int
    ) -> FetchResult:
        """As ``booblik.Client._fetch_in_zone``."""
        reads = self._replica_reads
        assert reads is not None
        what = wire.describe(wire.API_FETCH, topic, partition)
        left = False

        async def fetch_from(broker: _Broker, replica_read: bool = True) -> FetchResult:
            return await fetch_call(
                broker, topic, partition, offset, max_bytes, max_wait_millis, min_bytes, replica_read
            )

        async def step(attempt: dict) -> FetchResult:
            nonlocal left
            try:
                refresh = not left and reads.needs_route(topic, partition)
                primary = await self._primary(topic, partition, what, attempt, refresh)
                replica = None if left else reads.pick(topic, partition)
                replica_read = True
                if replica is not None and replica != primary:
                    attempt["at"] = replica
                    broker = await self._broker(replica)
                    if broker.speaks(wire.API_FETCH, "replicaReadable"):
                        return await fetch_from(broker)
                    replica_read = False  # a replica without v4: v3 to the primary
                attempt["at"] = primary
                return await fetch_from(await self._broker(primary), replica_read)
            except Exception as error:
                if isinstance(error, NotPrimaryError) or is_connection_loss(error):
                    reads.leave(topic, partition)
                    left = True
                raise

        return await self._with_retries(step, topic, partition)

    async def _with_retries(
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
                return await step(current)
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
                    await self._drop(current["at"])
                    avoid = current["at"]
                if verdict != AT_ONCE or connection_lost:
                    await asyncio.sleep(self.routes.pause(pauses))
                    pauses += 1


def _failed(task: asyncio.Task) -> bool:
    """A finished dial that gave no connection (cancelled, or raised)."""
    return task.cancelled() or task.exception() is not None


class _Connecting:
    """What ``Client.connect`` returns: awaitable, and an async context manager."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def __await__(self):
        return self._open().__await__()

    async def __aenter__(self) -> Client:
        return await self._open()

    async def __aexit__(self, *exc_info) -> None:
        await self._client.close()

    async def _open(self) -> Client:
        try:
            await self._client._any_broker()
        except BaseException:
            await self._client.close()
            raise
        return self._client
