"""A producer that batches records arriving one at a time, as a task on the event loop.

It owns its connection. Batches are written in the order they come due and pipelined: the producer
does not wait for one answer before sending the next batch; answers complete the futures as they
arrive, in order.

States: OPEN -> CLOSING (close() called: flush, then stop) -> CLOSED; or FAILED when the connection
broke, which fails every outstanding future with the cause.

A connection whose token comes from a callable: batches refused CREDENTIALS_EXPIRED (every one
from the first, since the broker answers in order) are kept; the connection authenticates again and
they are sent once more, in order, before any later batch is written.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable

from .. import wire
from ..batching import Accumulator, ProducerConfig, check_send
from ..errors import (
    UNKNOWN_RECORDS,
    ConnectionClosedError,
    CredentialsExpiredError,
    ProducerClosedError,
    ProtocolError,
    timed_out_in_flight,
)
from ..refusals import refusal
from ..partitioner import Key
from ..wire import AckPolicy
from .connection import Connection

_OPEN, _CLOSING, _CLOSED, _FAILED = "open", "closing", "closed", "failed"

# A send not yet in a batch; partition None means its key (or its turn) picks one.
_Waiting = collections.namedtuple("_Waiting", "topic payload key partition future")


class Producer:
    """``send()`` queues a record and returns an awaitable (an ``asyncio.Future``) of its offset.

    Create it inside a running event loop.
    """

    def __init__(
        self,
        connection: Connection,
        config: ProducerConfig | None = None,
        *,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.connection = connection
        self.config = config if config is not None else ProducerConfig()
        self._loop = asyncio.get_running_loop()
        self._clock = clock if clock is not None else self._loop.time
        self._accumulator = Accumulator(self.config.max_batch_size, self.config.linger)
        self._wakeup = asyncio.Event()
        self._state = _OPEN
        self._failure: BaseException | None = None
        self._flush_requested = False
        self._unfinished: set = set()
        # Sends in call order not yet in a batch: the head may wait for its topic's partitions.
        self._waiting: collections.deque = collections.deque()
        self._routes: dict = {}  # topic -> Topic, or the task reading its partitions
        self._expired: list = []  # batches refused CREDENTIALS_EXPIRED, in order, to send again
        self._refreshing: asyncio.Task | None = None  # authenticating again; nothing new is written meanwhile
        self._task = self._loop.create_task(self._run())

    async def __aenter__(self) -> Producer:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    def send(
        self, topic: str, payload: bytes, *, key: Key | None = None, partition: int | None = None
    ) -> asyncio.Future:
        """Queue one record. Await the result for its offset (``OFFSET_UNKNOWN`` under NONE), or
        the error that stopped its batch (a BrokerError reaches every record of the batch).

        ``partition`` sends there; otherwise ``key`` picks the partition (FNV-1a, as every booblik
        client does) and no key takes the next partition in turn. The first such send to a topic
        asks the broker for its partitions, once; the records behind it wait their turn, in order,
        and an unknown topic fails the records that needed it, naming it.
        """
        payload = check_send(topic, payload, key, partition)
        self._accumulator.check_fits(topic, payload)
        if self._state != _OPEN:
            error = ProducerClosedError(f"producer is {self._state}: cannot send")
            raise error from self._failure
        if self.connection.closed:  # learnt now rather than when this record's batch is due
            error = ProducerClosedError("producer's connection is closed: cannot send")
            raise error from self.connection._closed_because
        future = self._loop.create_future()
        self._unfinished.add(future)
        future.add_done_callback(self._unfinished.discard)
        self._waiting.append(_Waiting(topic, payload, key, partition, future))
        self._admit_waiting()
        return future

    def _admit_waiting(self) -> None:
        """Move waiting sends into batches, in call order, while the head's partition is known."""
        while self._waiting:
            topic, payload, key, partition, future = self._waiting[0]
            if partition is None:
                routing = self._routes.get(topic)
                if routing is None:
                    self._routes[topic] = self._loop.create_task(self._load_routing(topic))
                    return
                if isinstance(routing, asyncio.Task):
                    return  # the head waits for its topic's partitions; the rest wait behind it
                partition = routing.partition_for(key)
            self._waiting.popleft()
            if future.done():  # cancelled while it waited
                continue
            full = self._accumulator.append(topic, partition, payload, future, self._clock())
            if full or len(self._accumulator) == 1:
                self._wakeup.set()  # a full batch goes now; a first record sets the deadline

    async def _load_routing(self, topic: str) -> None:
        try:
            routing = await self.connection.topic(topic)
        except Exception as error:  # a BrokerError naming the topic, or the connection's failure
            del self._routes[topic]
            # Only the records that needed this topic's partitions fail; the rest keep their turn.
            kept = collections.deque()
            for waiting in self._waiting:
                if waiting.topic == topic and waiting.partition is None:
                    if not waiting.future.done():
                        waiting.future.set_exception(error)
                else:
                    kept.append(waiting)
            self._waiting = kept
        else:
            self._routes[topic] = routing
        self._admit_waiting()

    async def _routes_settled(self) -> None:
        """Wait until no send waits for a topic's partitions (loads started meanwhile included)."""
        while True:
            loading = [r for r in self._routes.values() if isinstance(r, asyncio.Task)]
            if not loading:
                return
            await asyncio.wait(loading)

    async def flush(self) -> None:
        """Send everything queued now, and wait until each of those records is answered."""
        waiting = list(self._unfinished)
        await self._routes_settled()
        self._flush_requested = True
        self._wakeup.set()
        if waiting:
            await asyncio.wait(waiting)  # wait() never cancels them, even if flush is cancelled

    async def close(self) -> None:
        """Flush, stop and close the connection. Sends after this fail."""
        await self._routes_settled()  # with no await after it, no send can start another load
        if self._state == _OPEN:
            self._state = _CLOSING
        self._wakeup.set()
        await asyncio.wait([self._task])
        if self._unfinished:
            await asyncio.wait(list(self._unfinished))
        if self._state == _CLOSING:
            self._state = _CLOSED
        await self.connection.close()

    # -- the producer's task --

    async def _run(self) -> None:
        try:
            while True:
                now = self._clock()
                everything = self._flush_requested or self._state != _OPEN
                batches = self._accumulator.ready(now, everything)
                if everything:
                    self._flush_requested = False
                if batches:
                    if self._refreshing is not None:  # order: the expired batches go first
                        await asyncio.wait([self._refreshing])
                    await self._send(batches)
                    continue
                if self._state != _OPEN:
                    return
                deadline = self._accumulator.next_deadline()
                self._wakeup.clear()
                try:
                    await asyncio.wait_for(self._wakeup.wait(), None if deadline is None else max(0.0, deadline - now))
                except asyncio.TimeoutError:
                    pass
        except Exception as error:
            self._fail(error)

    async def _send(self, batches: list) -> None:
        try:
            await self._write(batches)
        except Exception as error:
            for batch in batches:  # whatever no answer will settle now fails with the cause
                for future in batch.waiters:
                    if not future.done():
                        future.set_exception(error)
            raise

    async def _write(self, batches: list) -> None:
        """Write every batch now; answers settle their futures as they arrive."""
        unanswered = []
        for batch in batches:
            kept = [(p, f) for p, f in zip(batch.payloads, batch.waiters) if not f.cancelled()]
            if kept:
                unanswered += self._submit(batch.topic, batch.partition, [p for p, _ in kept], [f for _, f in kept])
        await self.connection._drain()
        for future in unanswered:
            if not future.done():
                future.set_result(wire.OFFSET_UNKNOWN)

    def _submit(self, topic: str, partition: int, payloads: list, futures: list, again: bool = True) -> list:
        """Write one batch; the futures nothing will answer (AckPolicy.NONE). ``again``: one refused
        CREDENTIALS_EXPIRED may be sent once more."""
        ack = self.config.ack
        request = wire.encode_produce_request(topic, partition, ack, payloads)
        what = wire.describe(wire.API_PRODUCE, topic, partition)
        answer = self.connection._submit(
            wire.API_PRODUCE, wire.PRODUCE_VERSION, request, answered=ack != AckPolicy.NONE, what=what
        )
        if answer is None:
            return futures
        expiry = None
        if self.connection.timeout is not None:
            expiry = self._loop.call_later(self.connection.timeout, answer.cancel)
        resend = (topic, partition, payloads) if again else None
        answer.add_done_callback(lambda a, fs=futures, w=what, e=expiry, r=resend: self._settle(a, fs, w, e, r))
        return []

    def _settle(self, answer: asyncio.Future, futures: list, what: str, expiry, resend=None) -> None:
        if expiry is not None:
            expiry.cancel()
        result = error = None
        if answer.cancelled():
            error = timed_out_in_flight(what, self.connection.address, self.connection.timeout, UNKNOWN_RECORDS)
        elif answer.exception() is not None:
            error = answer.exception()
        else:
            error_code, body = answer.result()
            if error_code != 0:
                error = refusal(error_code, what, body)  # it reaches every record of its batch
                if isinstance(error, CredentialsExpiredError) and resend is not None and self._refreshable():
                    self._expired.append((resend, futures))
                    if self._refreshing is None:
                        self._refreshing = self._loop.create_task(self._refresh())
                    return
            else:
                try:
                    result = wire.decode_produce_response(body)
                except ProtocolError as bad:
                    error = bad
        for index, future in enumerate(futures):
            if future.done():
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result.base_offset + index)

    def _refreshable(self) -> bool:
        credentials = self.connection.security.credentials
        return credentials is not None and credentials.refreshable

    async def _refresh(self) -> None:
        """Authenticate again, then send the expired batches once more, in order. The AUTHENTICATE
        is answered after every batch written before it, so all of those are settled by then."""
        try:
            await self.connection.authenticate()
            expired, self._expired = self._expired, []
            for (topic, partition, payloads), futures in expired:
                self._submit(topic, partition, payloads, futures, again=False)
            await self.connection._drain()
        except Exception as error:
            expired, self._expired = self._expired, []
            for _, futures in expired:
                for future in futures:
                    if not future.done():
                        future.set_exception(error)
        finally:
            self._refreshing = None

    def _fail(self, error: BaseException) -> None:
        self._failure = error
        self._state = _FAILED
        waiting, self._waiting = self._waiting, collections.deque()
        for send in waiting:
            if not send.future.done():
                send.future.set_exception(error)
        for batch in self._accumulator.ready(self._clock(), everything=True):
            for future in batch.waiters:
                if not future.done():
                    future.set_exception(error)
        # Requests already written fail through the connection, with the same cause.
        self.connection._shutdown(
            error if isinstance(error, ConnectionClosedError) else ConnectionClosedError(str(error))
        )

    def __repr__(self) -> str:
        return f"<booblik.aio.Producer {self._state} {self.connection.address}>"
