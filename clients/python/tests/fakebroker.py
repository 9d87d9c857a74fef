"""An in-process fake broker for the client's tests.

A thread with a listening socket on a random port that DECODES what the client encoded, with its own
struct-based reader and its own bitwise CRC-32C (sharing the client's code would let a bug on both
sides pass). It keeps logs in memory, answers PRODUCE, FETCH (v1 and v2, with long-poll),
METADATA, APPLY, LIST (with watch; selectors of the forms k=v, k!=v, k, !k only) and LIST_FRAGMENTS
(every partition one local segment: it has no store) as the protocol says, records every request it
decoded, and can be told to misbehave per request through ``respond``.

In cluster mode (``routes`` given, or ``share`` with a broker in it) it also answers API_VERSIONS,
METADATA v2/v3 with the routes (a dict (topic, partition) -> primary address, '' for none, shared
by every broker of the fake cluster), and PRODUCE/FETCH v3: served only where the route names this
broker, NOT_PRIMARY with the route (or NO_PRIMARY) otherwise. Brokers made with ``share`` keep one
set of logs, as a cluster keeps one copy of each partition whoever serves it.

Reads from replicas (unless made with ``replica_reads=False``, a broker of before them): METADATA v4
with RouteV2 routes from ``replica_sets`` (shared: (topic, partition) -> a list of ``Replica``; by
default the primary alone), LIST v2, and FETCH v4, which a broker listed there as in sync and live
serves from "its copy": the shared log up to its ``commit`` offset (per broker; by default the log's
end), that offset as the high watermark. Every FETCH served, by any broker of the cluster, is
recorded in ``served`` (shared), in order.

Security (the wire of docs/protocol.md's security part): ``tls`` (a server ``ssl.SSLContext``) takes
TLS on the same port, told from plaintext by the first byte, and with ``tls_required`` answers a
plaintext connection's first request TLS_REQUIRED and hangs up; an mTLS client certificate's CN is
the connection's principal. ``auth`` (a ``FakeAuth``) serves AUTHENTICATE and gates the rest
(``fakebroker_auth``); without it AUTHENTICATE is UNSUPPORTED_VERSION, as from an older broker.
Each request records the principal it was served as.

Its own wire (codes, frames, stored records, the request decoder) is in ``fakebroker_wire``, its
spec store (APPLY, LIST) in ``fakebroker_specs``.
"""

from __future__ import annotations

import socket
import ssl
import struct
import threading
from collections.abc import Callable

from tests.fakebroker_auth import AUTHENTICATE, FakeAuth, Session
from tests.fakebroker_specs import SpecStore, stored_spec
from tests.fakebroker_wire import (
    CORRUPT_REQUEST,
    FRAME_BYTES_MAX,
    NO_PRIMARY,
    NOT_PRIMARY,
    OFFSET_MISMATCH,
    OFFSET_OUT_OF_RANGE,
    TLS_REQUIRED,
    UNKNOWN_TOPIC_OR_PARTITION,
    UNSUPPORTED_VERSION,
    Decoder,
    Replica,
    Reply,
    Request,
    Served,
    crc32c_bitwise,  # the tests of the client's CRC import it from here
    response_frame,
    route_bytes,
    stored_record,
    string_bytes,
)


class FakeBroker(SpecStore):
    def __init__(
        self,
        topics: dict | None = None,
        respond: Callable[[Request], Reply | None] | None = None,
        *,
        routes: dict | None = None,
        share: FakeBroker | None = None,
        replica_reads: bool = True,
        tls: ssl.SSLContext | None = None,
        tls_required: bool = False,
        auth: FakeAuth | None = None,
    ) -> None:
        self.respond = respond
        self.tls, self.tls_required, self.auth = tls, tls_required, auth
        self.replica_reads = replica_reads
        self.commit: dict = {}  # (topic, partition) -> the commit offset this broker knows (default: the log's end)
        if share is not None:
            self.topics, self.logs, self.specs, self.revision = share.topics, share.logs, share.specs, share.revision
            self.routes = share.routes
            self.replica_sets, self.epochs, self.served = share.replica_sets, share.epochs, share.served
            self._cond = share._cond
        else:
            self.topics = dict(topics if topics is not None else {"orders": 3, "single": 1})
            self.logs: dict = {(t, p): [] for t, n in self.topics.items() for p in range(n)}  # stored record bytes
            # The spec store: the startup topics are its first revision, as the broker's booblik.topics are.
            self.revision = 1 if self.topics else 0
            self.specs: dict = {name: stored_spec(name, n, {}, self.revision) for name, n in self.topics.items()}
            self.routes = routes
            self.replica_sets: dict = {}
            self.epochs: dict = {}
            self.served: list = []
            self._cond = threading.Condition()
        self.requests: list = []
        self.no_primary_next = 0  # cluster mode: answer this many more v3 PRODUCE/FETCH NO_PRIMARY
        self._closing = False
        self._connections: list = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self._accepter = threading.Thread(target=self._accept, name="fake-broker", daemon=True)
        self._accepter.start()

    def __enter__(self) -> FakeBroker:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            connections = list(self._connections)
        self._listener.close()
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    # -- what tests use --

    def append(self, topic: str, partition: int, *payloads: bytes, crc: int | None = None) -> None:
        """Store records directly (``crc`` forces a stored checksum, to corrupt one on purpose)."""
        with self._cond:
            for payload in payloads:
                self.logs[(topic, partition)].append(stored_record(payload, crc))
            self._cond.notify_all()

    def payloads(self, topic: str, partition: int) -> list:
        with self._cond:
            return [record[8:] for record in self.logs[(topic, partition)]]

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list:
        """Block until ``count`` requests have been decoded; returns them all."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= count, timeout):
                raise AssertionError(f"fake broker saw {len(self.requests)} requests, expected {count}")
            return list(self.requests)

    def wait_for_fetch_waiting(self, timeout: float = 5.0) -> None:
        """Block until a long fetch or a watching LIST is being held (in its wait, nothing to answer yet)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._waiting > 0, timeout):
                raise AssertionError("no fetch is waiting")

    _waiting = 0

    # -- serving --

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._cond:  # a connection accepted while closing is closed, not served
                if self._closing:
                    conn.close()
                    return
                self._connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), name="fake-broker-conn", daemon=True).start()

    def _read_exactly(self, conn: socket.socket, size: int) -> bytes | None:
        data = bytearray()
        while len(data) < size:
            chunk = conn.recv(size - len(data))
            if not chunk:
                return None
            data += chunk
        return bytes(data)

    def _secure(self, conn: socket.socket, session: Session) -> socket.socket | None:
        """TLS when the first byte is a ClientHello's (0x16); else plaintext, or TLS_REQUIRED and a
        hang-up. None: the connection is over."""
        first = conn.recv(1, socket.MSG_PEEK)
        if not first:
            return None
        if first[0] != 0x16:
            if not self.tls_required:
                return conn
            frame = self._read_exactly(conn, 12)
            if frame is not None:
                conn.sendall(response_frame(struct.unpack_from(">i", frame, 8)[0], TLS_REQUIRED))
            return None
        try:
            secured = self.tls.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            return None  # the client refused our certificate, or we refused its
        with self._cond:
            self._connections.append(secured)
        peer = secured.getpeercert()
        if peer:  # mTLS: the certificate's subject CN is the principal
            session.principal = dict(pair[0] for pair in peer["subject"]).get("commonName")
        return secured

    def _serve(self, conn: socket.socket) -> None:
        session = Session()
        try:
            if self.tls is not None:
                secured = self._secure(conn, session)
                if secured is None:
                    return
                conn = secured
            while True:
                prefix = self._read_exactly(conn, 4)
                if prefix is None:
                    return
                (length,) = struct.unpack(">i", prefix)
                if not 1 <= length <= FRAME_BYTES_MAX:
                    return  # framing lost: hang up without answering, as the broker does
                frame = self._read_exactly(conn, length)
                if frame is None:
                    return
                if length < 8:
                    conn.sendall(response_frame(0, CORRUPT_REQUEST))
                    continue
                api_key, api_version, correlation_id = struct.unpack_from(">hhi", frame)
                request = Request(api_key, api_version, correlation_id, prefix + frame)
                answer = self._handle(request, frame[8:], session)
                request.answer, request.principal = answer, session.principal
                with self._cond:
                    self.requests.append(request)
                    self._cond.notify_all()
                if self.respond is not None:
                    reply = self.respond(request)
                    if reply is not None:
                        if reply.dribble:
                            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                            for i in range(len(reply.data)):
                                conn.sendall(reply.data[i : i + 1])
                        else:
                            conn.sendall(reply.data)
                        if reply.close:
                            conn.shutdown(socket.SHUT_RDWR)
                            return
                        continue
                if answer is not None:
                    conn.sendall(answer)
        except OSError:
            return
        finally:
            conn.close()

    def _handle(self, request: Request, payload: bytes, session: Session) -> bytes | None:
        if self.auth is not None:
            try:
                if request.api_key == AUTHENTICATE and request.api_version == 1:
                    return self.auth.authenticate(session, request.correlation_id, Decoder(payload))
            except (ValueError, KeyError, struct.error, UnicodeDecodeError):
                return response_frame(request.correlation_id, CORRUPT_REQUEST)
            refused = self.auth.gate(session, request.api_key)
            if refused is not None:
                return response_frame(request.correlation_id, refused)
        cluster = self.routes is not None
        v4 = {4} if cluster and self.replica_reads else set()
        handlers = {
            1: (self._produce, {1, 2, 3} if cluster else {1, 2}),
            2: (self._fetch, ({1, 2, 3} | v4) if cluster else {1, 2}),
            3: (self._metadata, ({1, 2, 3} | v4) if cluster else {1}),
            4: (self._apply, {1}),
            5: (self._list, {1, 2} if v4 else {1}),
            7: (self._list_fragments, {1}),
        }
        if cluster:
            handlers[6] = (self._api_versions, {1})
        handler, versions = handlers.get(request.api_key, (None, set()))
        if handler is None or request.api_version not in versions:
            return response_frame(request.correlation_id, UNSUPPORTED_VERSION)
        try:
            return handler(request, Decoder(payload))
        except (ValueError, struct.error, UnicodeDecodeError):
            return response_frame(request.correlation_id, CORRUPT_REQUEST)

    def _produce(self, request: Request, d: Decoder) -> bytes | None:
        f = request.fields
        f["topic"] = d.string()
        f["partition"] = d.take(">i")
        f["ack"] = d.take(">b")
        if request.api_version >= 2:
            f["expected_offset"] = d.take(">q")
        count = d.take(">i")
        f["records"] = [d.raw(d.take(">i")) for _ in range(max(count, 0))]
        answer = f["ack"] != 0
        key = (f["topic"], f["partition"])
        if count <= 0 or f["ack"] not in (0, 1, 2) or any(len(r) == 0 for r in f["records"]):
            return response_frame(request.correlation_id, CORRUPT_REQUEST) if answer else None
        if key not in self.logs:
            return response_frame(request.correlation_id, UNKNOWN_TOPIC_OR_PARTITION) if answer else None
        elsewhere = self._not_primary(request, key)
        if elsewhere is not None:
            return elsewhere if answer else None
        with self._cond:
            log = self.logs[key]
            base = len(log)
            if f.get("expected_offset", -1) >= 0 and f["expected_offset"] != base:
                refused = response_frame(request.correlation_id, OFFSET_MISMATCH, struct.pack(">q", base))
                return refused if answer else None
            log.extend(stored_record(r) for r in f["records"])
            end = len(log)
            self._cond.notify_all()
        return response_frame(request.correlation_id, 0, struct.pack(">qq", base, end)) if answer else None

    def _fetch(self, request: Request, d: Decoder) -> bytes:
        f = request.fields
        f["topic"] = d.string()
        f["partition"] = d.take(">i")
        f["offset"] = d.take(">q")
        f["max_bytes"] = d.take(">i")
        if request.api_version >= 2:
            f["max_wait_millis"] = d.take(">i")
            f["min_bytes"] = d.take(">i")
        key = (f["topic"], f["partition"])
        if key not in self.logs:
            return response_frame(request.correlation_id, UNKNOWN_TOPIC_OR_PARTITION)
        elsewhere = self._not_primary(request, key)
        if elsewhere is not None:
            return elsewhere
        wait = f.get("max_wait_millis", 0) / 1000
        with self._cond:
            log = self.logs[key]

            def committed() -> int:  # what this broker may serve: up to the commit offset it knows
                return min(len(log), self.commit.get(key, len(log)))

            arrived = lambda: self._closing or committed() > f["offset"]  # noqa: E731
            if wait > 0 and not arrived():
                self._waiting += 1
                self._cond.notify_all()
                self._cond.wait_for(arrived, min(wait, 60))
                self._waiting -= 1
            high_watermark = committed()
            if f["offset"] > high_watermark and not (request.api_version == 4 and high_watermark < len(log)):
                return response_frame(request.correlation_id, OFFSET_OUT_OF_RANGE)
            # A replica whose commit offset trails answers empty with it, below fetchOffset: v4 allows that.
            data = b"".join(log[f["offset"] : high_watermark])[: f["max_bytes"]]
            self.served.append(Served(self.address, request.api_version, f["offset"], high_watermark))
        return response_frame(request.correlation_id, 0, struct.pack(">qi", high_watermark, len(data)) + data)

    def _metadata(self, request: Request, d: Decoder) -> bytes:
        count = d.take(">i")
        names = [d.string() for _ in range(count)]
        request.fields["topics"] = names
        if request.api_version >= 3:
            request.fields["min_revision"] = d.take(">q")
            request.fields["flags"] = d.take(">b")
        if any(n not in self.topics for n in names):
            return response_frame(request.correlation_id, UNKNOWN_TOPIC_OR_PARTITION)
        body = bytearray()
        if request.api_version >= 2:
            body += struct.pack(">q", self.revision)
        chosen = sorted(set(names) if names else self.topics)
        body += struct.pack(">i", len(chosen))
        with self._cond:
            for name in chosen:
                encoded = name.encode("utf-8")
                body += struct.pack(">H", len(encoded)) + encoded + struct.pack(">i", self.topics[name])
                for p in range(self.topics[name]):
                    body += struct.pack(">iqq", p, 0, len(self.logs[(name, p)]))
                    if request.api_version == 4:
                        body += self._route_v2_bytes((name, p))
                    elif request.api_version >= 2:
                        body += route_bytes(self.routes.get((name, p), self.address))
        return response_frame(request.correlation_id, 0, bytes(body))

    # -- cluster mode --

    def _api_versions(self, request: Request, d: Decoder) -> bytes:
        if self.replica_reads:
            ranges = [(1, 1, 3), (2, 1, 4), (3, 1, 4), (4, 1, 1), (5, 1, 2), (6, 1, 1)]
        else:
            ranges = [(1, 1, 3), (2, 1, 3), (3, 1, 3), (4, 1, 1), (5, 1, 1), (6, 1, 1)]
        body = struct.pack(">i", len(ranges)) + b"".join(struct.pack(">hhh", *r) for r in ranges)
        return response_frame(request.correlation_id, 0, body)

    def _not_primary(self, request: Request, key: tuple) -> bytes | None:
        """A v3/v4 request for a partition this broker is not the primary of (nor, to FETCH v4, an
        in-sync live replica): its refusal, else None."""
        if request.api_version < 3:
            return None  # v1/v2 are proxied by a cluster broker: served here as if they were
        if self.no_primary_next > 0:
            self.no_primary_next -= 1
            return response_frame(request.correlation_id, NO_PRIMARY)
        primary = self.routes.get(key, self.address)
        if primary == self.address:
            return None
        if request.api_key == 2 and request.api_version == 4:
            mine = [r for r in self._replicas(key) if r.address == self.address]
            if mine and mine[0].flags & 3 == 3:
                return None
        if primary == "":
            return response_frame(request.correlation_id, NO_PRIMARY)
        return response_frame(request.correlation_id, NOT_PRIMARY, route_bytes(primary))

    def _list_fragments(self, request: Request, d: Decoder) -> bytes:
        f = request.fields
        f["topic"] = d.string()
        f["partition"] = d.take(">i")
        cid = request.correlation_id
        if f["partition"] < -1:
            return response_frame(cid, CORRUPT_REQUEST)
        count = self.topics.get(f["topic"])
        if count is None or f["partition"] >= count:
            return response_frame(cid, UNKNOWN_TOPIC_OR_PARTITION)
        ids = range(count) if f["partition"] == -1 else [f["partition"]]
        body = bytearray(struct.pack(">i", len(ids)))
        with self._cond:
            for p in ids:
                log = self.logs[(f["topic"], p)]
                body += struct.pack(">iqqi", p, 0, len(log), 1)
                body += struct.pack(">qqqbq", 0, len(log), sum(len(r) for r in log), 1, -1)  # local, not persisted
        return response_frame(cid, 0, bytes(body))

    def _replicas(self, key: tuple) -> list:
        primary = self.routes.get(key, self.address)
        listed = self.replica_sets.get(key)
        if listed is None:  # as on one node: the primary alone, in sync, level
            return [Replica(primary)] if primary else []
        return listed

    def _route_v2_bytes(self, key: tuple, lags_known: bool = True) -> bytes:
        out = bytearray(struct.pack(">i", self.epochs.get(key, 0)) + string_bytes(self.routes.get(key, self.address)))
        replicas = self._replicas(key)
        out += struct.pack(">i", len(replicas))
        for r in replicas:
            lags = (r.lag_records, r.lag_millis) if lags_known else (-1, -1)
            out += string_bytes(r.member) + string_bytes(r.address) + string_bytes(r.zone) + struct.pack(">bqq", r.flags, *lags)
        return bytes(out)
