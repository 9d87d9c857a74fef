"""A producer that batches records arriving one at a time, on a thread of its own.

It owns its connection: the producer's thread is the only writer to that socket, because responses
are matched in order and a second writer would take somebody else's answer. Given a
``booblik.Client`` instead, it sends each batch to its partition's primary through the Client, one
batch at a time (the Client follows routes and retries; a batch it gives up on fails alone).

States: OPEN -> CLOSING (close() called: flush, then stop) -> CLOSED; or FAILED when the connection
broke, which fails every outstanding future with the cause.

A connection whose token comes from a callable: the batches of a run refused CREDENTIALS_EXPIRED
(every one from the first, as the broker answers in order) are sent once more, in order, after the
connection authenticates again.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable

from . import wire
from .batching import Accumulator, ProducerConfig, check_send
from .client import Client
from .connection import Connection
from .errors import (
    UNKNOWN_RECORDS,
    BooblikError,
    CredentialsExpiredError,
    ProducerClosedError,
    is_outcome_unknown,
    lost_in_flight,
)
from .partitioner import Key, TopicRouting
from .wire import AckPolicy

_OPEN, _CLOSING, _CLOSED, _FAILED = "open", "closing", "closed", "failed"


class Producer:
    """``send()`` queues a record and returns a ``concurrent.futures.Future`` of its offset."""

    def __init__(
        self,
        connection: Connection | Client,
        config: ProducerConfig | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.connection = connection
        self.config = config if config is not None else ProducerConfig()
        self._clock = clock
        self._accumulator = Accumulator(self.config.max_batch_size, self.config.linger)
        self._cond = threading.Condition()
        self._state = _OPEN
        self._failure: BaseException | None = None
        self._flush_requested = False
        self._unfinished: set = set()
        self._routes: dict = {}  # topic -> Topic (its partitions), for sends without a partition
        self._thread = threading.Thread(target=self._run, name="booblik-producer", daemon=True)
        self._thread.start()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def send(
        self, topic: str, payload: bytes, *, key: Key | None = None, partition: int | None = None
    ) -> concurrent.futures.Future:
        """Queue one record. The future gives its offset, ``OFFSET_UNKNOWN`` under AckPolicy.NONE,
        or the error that stopped its batch (a BrokerError reaches every record of the batch).

        ``partition`` sends there; otherwise ``key`` picks the partition (FNV-1a, as every booblik
        client does) and no key takes the next partition in turn. The first such send to a topic
        asks the broker for its partitions, once; an unknown topic is refused here, naming it.
        """
        payload = check_send(topic, payload, key, partition)
        self._accumulator.check_fits(topic, payload)
        self._check_open()
        if partition is None:
            partition = self._routing(topic).partition_for(key)
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._cond:
            self._check_open()
            full = self._accumulator.append(topic, partition, payload, future, self._clock())
            self._unfinished.add(future)
            if full or len(self._accumulator) == 1:
                self._cond.notify_all()  # a full batch goes now; a first record sets the deadline
        future.add_done_callback(self._finished)
        return future

    def _check_open(self) -> None:
        if self._state != _OPEN:
            error = ProducerClosedError(f"producer is {self._state}: cannot send")
            raise error from self._failure
        if self.connection.closed:  # learnt now rather than when this record's batch is due
            error = ProducerClosedError("producer's connection is closed: cannot send")
            raise error from getattr(self.connection, "_closed_because", None)

    def _routing(self, topic: str) -> TopicRouting:
        """The topic's partitioner, from one METADATA the first time. The exchange takes the
        connection's lock, so it never interleaves with the batches the producer's thread sends."""
        routing = self._routes.get(topic)
        if routing is None:
            routing = self._routes.setdefault(topic, self.connection.topic(topic))
        return routing

    def flush(self, timeout: float | None = None) -> None:
        """Send everything queued now, and wait until each of those records is answered."""
        with self._cond:
            waiting = list(self._unfinished)
            self._flush_requested = True
            self._cond.notify_all()
        _, not_done = concurrent.futures.wait(waiting, timeout)
        if not_done:
            raise TimeoutError(f"flush: {len(not_done)} records still unanswered after {timeout} s")

    def close(self, timeout: float | None = None) -> None:
        """Flush, stop the thread and close the connection. Sends after this fail."""
        with self._cond:
            if self._state == _OPEN:
                self._state = _CLOSING
            self._cond.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        with self._cond:
            if self._state == _CLOSING:
                self._state = _CLOSED
        self.connection.close()

    # -- the producer's thread --

    def _finished(self, future: concurrent.futures.Future) -> None:
        with self._cond:
            self._unfinished.discard(future)

    def _run(self) -> None:
        try:
            while True:
                batches = self._wait_for_batches()
                if batches is None:
                    return
                self._send(batches)
        except BaseException as error:
            self._fail(error)

    def _wait_for_batches(self) -> list | None:
        """Block until some batch is due; None once closing and nothing is left."""
        with self._cond:
            while True:
                now = self._clock()
                everything = self._flush_requested or self._state != _OPEN
                batches = self._accumulator.ready(now, everything)
                if everything:
                    self._flush_requested = False
                if batches:
                    return batches
                if self._state != _OPEN:
                    return None
                deadline = self._accumulator.next_deadline()
                self._cond.wait(None if deadline is None else max(0.0, deadline - now))

    def _send(self, batches: list) -> None:
        """Write every batch, then read the answers in order (pipelined on the one socket)."""
        if isinstance(self.connection, Client):
            self._send_routed(batches)
            return
        ack = self.config.ack
        connection = self.connection
        live = []
        for batch in batches:
            # A future cancelled before its batch went out is simply not sent.
            kept = [(p, f) for p, f in zip(batch.payloads, batch.waiters) if f.set_running_or_notify_cancel()]
            if kept:
                live.append((batch, [p for p, _ in kept], [f for _, f in kept]))
        sent = []
        try:
            with connection._lock:
                for batch, payloads, futures in live:
                    request = wire.encode_produce_request(batch.topic, batch.partition, ack, payloads)
                    correlation_id = connection._send(wire.API_PRODUCE, wire.PRODUCE_VERSION, request)
                    if ack == AckPolicy.NONE:
                        for future in futures:
                            future.set_result(wire.OFFSET_UNKNOWN)
                    else:
                        sent.append((correlation_id, batch, futures, payloads))
                expired = []
                for correlation_id, batch, futures, payloads in sent:
                    what = wire.describe(wire.API_PRODUCE, batch.topic, batch.partition)
                    try:
                        body = connection._receive(correlation_id, what, unknown_effect=UNKNOWN_RECORDS)
                        result = wire.decode_produce_response(body)
                    except BooblikError as error:
                        if connection.closed:
                            raise
                        if isinstance(error, CredentialsExpiredError) and self._refreshable():
                            expired.append((batch, futures, payloads))
                            continue
                        for future in futures:  # a refusal reaches every record of its batch
                            future.set_exception(error)
                        continue
                    for index, future in enumerate(futures):
                        future.set_result(result.base_offset + index)
                if expired:
                    self._send_again(expired)
        except BaseException as error:
            # The batches sent behind the one whose answer was lost may have been stored too.
            unanswered = {id(futures): batch for _, batch, futures, _ in sent}
            for batch, _, futures in live:
                failure = error
                if is_outcome_unknown(error) and id(futures) in unanswered:
                    what = wire.describe(wire.API_PRODUCE, batch.topic, batch.partition)
                    failure = lost_in_flight(what, connection.address, UNKNOWN_RECORDS, error)
                for future in futures:
                    if not future.done():
                        future.set_exception(failure)
            raise

    def _refreshable(self) -> bool:
        credentials = self.connection.security.credentials
        return credentials is not None and credentials.refreshable

    def _send_again(self, expired: list) -> None:
        """Authenticate again, then each batch refused CREDENTIALS_EXPIRED once more, in order."""
        connection = self.connection
        connection.authenticate()
        for batch, futures, payloads in expired:
            try:
                result = connection._call_once(
                    wire.API_PRODUCE,
                    wire.PRODUCE_VERSION,
                    wire.encode_produce_request(batch.topic, batch.partition, self.config.ack, payloads),
                    wire.describe(wire.API_PRODUCE, batch.topic, batch.partition),
                )
            except BooblikError as error:
                if connection.closed:
                    raise
                for future in futures:
                    future.set_exception(error)
                continue
            for index, future in enumerate(futures):
                future.set_result(wire.decode_produce_response(result).base_offset + index)

    def _send_routed(self, batches: list) -> None:
        """Over a Client: each batch to its partition's primary, in turn; a failure fails its batch only."""
        for batch in batches:
            kept = [(p, f) for p, f in zip(batch.payloads, batch.waiters) if f.set_running_or_notify_cancel()]
            if not kept:
                continue
            try:
                result = self.connection.produce(batch.topic, batch.partition, [p for p, _ in kept], self.config.ack)
            except Exception as error:  # the Client's last error, after its retries: this batch's
                for _, future in kept:
                    future.set_exception(error)
                continue
            for index, (_, future) in enumerate(kept):
                future.set_result(wire.OFFSET_UNKNOWN if result is None else result.base_offset + index)

    def _fail(self, error: BaseException) -> None:
        with self._cond:
            self._failure = error
            self._state = _FAILED
            batches = self._accumulator.ready(self._clock(), everything=True)
        for batch in batches:
            for future in batch.waiters:
                if future.set_running_or_notify_cancel():
                    future.set_exception(error)
        self.connection.close()

    def __repr__(self) -> str:
        return f"<booblik.Producer {self._state} {self.connection.address}>"
