#!/usr/bin/env python3
"""An in-memory reference broker for the kit's self-tests: PRODUCE v1, FETCH v1 and v2 (with the
long-poll wait), METADATA v1, APPLY v1 and LIST v1 (no watch; selectors of k=v, k and !k joined by
commas), per the protocol. It shares no code with the harness, on purpose: the
self-tests check the harness against an independent reading of the protocol.

`flaws` make it wrong in one named way, to show the broker checks can fail:
    refuses-none-loudly  answers a refused ack=none request with its error
    no-wakeup            a held long fetch ignores writes and answers when its wait ends

Run as a program it behaves like the real broker's start command: BOOBLIK_PORT (0 = any free
port) and BOOBLIK_TOPICS from the environment, a `booblik listening on <host>:<port>` line on
stdout, and a clean exit on SIGTERM.
"""

import os
import signal
import socket
import struct
import sys
import threading
import time

FRAME_MAX = 8 * 1024 * 1024
WAIT_CAP_MS = 60_000
RECORD_MAX = 1024 * 1024  # stands in for a segment's capacity
FLAWS = {"refuses-none-loudly", "no-wakeup"}

NONE, UNKNOWN_TOPIC_OR_PARTITION, OFFSET_OUT_OF_RANGE = 0, 1, 2
RECORD_TOO_LARGE, UNSUPPORTED_VERSION, CORRUPT_REQUEST = 3, 4, 5
REVISION_MISMATCH, INVALID_ARGUMENT = 7, 11
DETAILED = {REVISION_MISMATCH, INVALID_ARGUMENT}  # codes whose refusal carries a body


def crc32c(data: bytes) -> int:
    # Bit by bit (the harness uses a table): two independent ways to the same checksum.
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


class Corrupt(Exception):
    pass


class Cursor:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def get(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise Corrupt(fmt)
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return value

    def raw(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise Corrupt("bytes")
        self.pos += size
        return self.data[self.pos - size : self.pos]

    def left(self) -> int:
        return len(self.data) - self.pos

    def topic(self) -> str:
        name = self.raw(self.get(">H")).decode("utf-8", errors="strict")
        if not 1 <= len(name) <= 249 or not all(c.isalnum() or c in "._-" for c in name):
            raise Corrupt("topic name")
        return name


class FakeBroker:
    def __init__(self, topics: dict[str, int] | None = None, flaws: set[str] = frozenset()):
        unknown = set(flaws) - FLAWS
        if unknown:
            raise ValueError(f"unknown flaws {unknown}")
        self.flaws = set(flaws)
        self.logs = {(t, p): [] for t, n in (topics or {"conformance": 3, "single": 1}).items()
                     for p in range(n)}
        self.grew = threading.Condition()
        # The spec store: name -> (partitions, labels, revision); the startup topics are revision 1.
        self.revision = 1
        self.specs = {t: (n, {}, 1) for t, n in (topics or {"conformance": 3, "single": 1}).items()}
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.closing = False
        self.refused_none = 0

    def start(self) -> str:
        threading.Thread(target=self._accept, daemon=True).start()
        return self.address

    def stop(self) -> None:
        self.closing = True
        self.listener.close()
        with self.grew:
            self.grew.notify_all()

    # ---- connections ----

    def _accept(self):
        while not self.closing:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket):
        with conn:
            try:
                while True:
                    head = self._read(conn, 4)
                    if head is None:
                        return
                    (length,) = struct.unpack(">i", head)
                    if not 1 <= length <= FRAME_MAX:
                        return  # the framing is lost: close without answering
                    frame = self._read(conn, length)
                    if frame is None:
                        return
                    answer = self._handle(frame)
                    if answer is not None:
                        conn.sendall(answer)
            except OSError:
                return

    @staticmethod
    def _read(conn, size):
        data = b""
        while len(data) < size:
            chunk = conn.recv(size - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def _handle(self, frame: bytes) -> bytes | None:
        if len(frame) < 8:
            return struct.pack(">iih", 6, 0, CORRUPT_REQUEST)
        api, version, corr = struct.unpack_from(">hhi", frame)
        cursor = Cursor(frame[8:])
        handlers = {(1, 1): self._produce, (2, 1): self._fetch, (2, 2): self._fetch,
                    (3, 1): self._metadata, (4, 1): self._apply, (5, 1): self._list}
        handler = handlers.get((api, version))
        if handler is None:
            return struct.pack(">iih", 6, corr, UNSUPPORTED_VERSION)
        state = {}
        try:
            code, body = handler(cursor, version, state)
        except (Corrupt, UnicodeDecodeError):
            code, body = CORRUPT_REQUEST, b""
        if state.get("ack") == 0:
            if code == NONE or "refuses-none-loudly" not in self.flaws:
                self.refused_none += code != NONE
                return None
        if code != NONE and not (api in (4, 5) and code in DETAILED):
            body = b""
        return struct.pack(">iih", 6 + len(body), corr, code) + body

    # ---- APIs ----

    def _produce(self, cur: Cursor, _version, state):
        topic = cur.topic()
        partition = cur.get(">i")
        ack = cur.get(">b")
        if ack in (0, 1, 2):
            state["ack"] = ack
        count = cur.get(">i")
        if partition < 0 or ack not in (0, 1, 2) or count <= 0 or count * 4 > cur.left():
            raise Corrupt("produce header")
        records = []
        for _ in range(count):
            size = cur.get(">i")
            if size <= 0:
                raise Corrupt("record size")
            records.append(cur.raw(size))
        log = self.logs.get((topic, partition))
        if log is None:
            return UNKNOWN_TOPIC_OR_PARTITION, b""
        if any(len(r) + 8 > RECORD_MAX for r in records):
            return RECORD_TOO_LARGE, b""
        with self.grew:
            base = len(log)
            log.extend(struct.pack(">iI", len(r), crc32c(r)) + r for r in records)
            end = len(log)
            self.grew.notify_all()
        return NONE, struct.pack(">qq", base, end)

    def _fetch(self, cur: Cursor, version, _state):
        topic = cur.topic()
        partition, offset, max_bytes = cur.get(">i"), cur.get(">q"), cur.get(">i")
        wait_ms, min_bytes = (cur.get(">i"), cur.get(">i")) if version == 2 else (0, 0)
        if partition < 0 or offset < 0 or max_bytes <= 0 or wait_ms < 0 or min_bytes < 0 \
                or min_bytes > max_bytes:
            raise Corrupt("fetch fields")
        log = self.logs.get((topic, partition))
        if log is None:
            return UNKNOWN_TOPIC_OR_PARTITION, b""
        if wait_ms > 0:
            self._wait(log, offset, max(min_bytes, 1), min(wait_ms, WAIT_CAP_MS) / 1000)
        with self.grew:
            high_watermark = len(log)
            if offset > high_watermark:
                return OFFSET_OUT_OF_RANGE, b""
            payload = b"".join(log[offset:])[:max_bytes]
        return NONE, struct.pack(">qi", high_watermark, len(payload)) + payload

    def _wait(self, log, offset, wanted_bytes, seconds):
        deadline = time.monotonic() + seconds
        with self.grew:
            while sum(map(len, log[offset:])) < wanted_bytes and not self.closing:
                if "no-wakeup" in self.flaws:
                    self.grew.release()
                    try:
                        threading.Event().wait(seconds)  # deaf to writes until the wait ends
                    finally:
                        self.grew.acquire()
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self.grew.wait(left)

    def _metadata(self, cur: Cursor, _version, _state):
        count = cur.get(">i")
        if count < 0:
            raise Corrupt("topic count")
        names = sorted({cur.topic() for _ in range(count)})
        known = sorted({t for t, _ in self.logs})
        if any(n not in known for n in names):
            return UNKNOWN_TOPIC_OR_PARTITION, b""
        body = struct.pack(">i", len(names or known))
        with self.grew:
            for name in names or known:
                ids = sorted(p for t, p in self.logs if t == name)
                raw = name.encode()
                body += struct.pack(">H", len(raw)) + raw + struct.pack(">i", len(ids))
                for p in ids:
                    body += struct.pack(">iqq", p, 0, len(self.logs[(name, p)]))
        return NONE, body

    def _apply(self, cur: Cursor, _version, _state):
        dry_run, count = cur.get(">b"), cur.get(">i")
        if dry_run not in (0, 1) or count < 0:
            raise Corrupt("apply header")
        changes = []
        for _ in range(count):
            op = cur.get(">b")
            name = cur.topic()
            if op == 2:
                changes.append((name, None, None, cur.get(">q")))
                continue
            if op != 1:
                raise Corrupt("op")
            partitions = cur.get(">i")
            labels = {}
            for _ in range(cur.get(">i")):
                key = cur.raw(cur.get(">H")).decode()
                labels[key] = cur.raw(cur.get(">H")).decode()
            cur.raw(8 + 8 + 4 + 4 + 2)
            cur.raw(cur.get(">H"))
            changes.append((name, partitions, labels, cur.get(">q")))
        with self.grew:
            for index, (name, partitions, _, expected) in enumerate(changes):
                actual = self.specs[name][2] if name in self.specs else 0
                if expected != -1 and expected != actual:
                    raw = name.encode()
                    return REVISION_MISMATCH, struct.pack(">iH", index, len(raw)) + raw + struct.pack(
                        ">qq", expected, actual)
                if partitions is not None and not 1 <= partitions <= 10_000:
                    message = f"changes[{index}].partitions: {partitions}, expected 1..10000".encode()
                    return INVALID_ARGUMENT, struct.pack(">iH", index, len(message)) + message
            if dry_run or not changes:
                return NONE, struct.pack(">q", self.revision)
            self.revision += 1
            for name, partitions, labels, _ in changes:
                gone = [k for k in self.logs if k[0] == name and (partitions is None or k[1] >= partitions)]
                for key in gone:
                    del self.logs[key]
                if partitions is None:
                    self.specs.pop(name, None)
                    continue
                self.specs[name] = (partitions, labels, self.revision)
                for p in range(partitions):
                    self.logs.setdefault((name, p), [])
            return NONE, struct.pack(">q", self.revision)

    def _list(self, cur: Cursor, _version, _state):
        selector = cur.raw(cur.get(">H")).decode()
        cur.get(">q")
        cur.get(">i")
        requirements = [part.strip() for part in selector.split(",") if part.strip()]
        body = b""
        with self.grew:
            chosen = [n for n in sorted(self.specs) if matches(requirements, n, self.specs[n][1])]
            for name in chosen:
                partitions, labels, revision = self.specs[name]
                body += text(name) + struct.pack(">ii", partitions, len(labels))
                for key in sorted(labels):
                    body += text(key) + text(labels[key])
                body += struct.pack(">qqiih", -1, -1, RECORD_MAX, 0, 1) + text("")
                body += struct.pack(">qi", revision, partitions)
                body += (text(self.address) + struct.pack(">i", 0)) * partitions
            return NONE, struct.pack(">qi", self.revision, len(chosen)) + body


def matches(requirements: list[str], name: str, labels: dict) -> bool:
    for requirement in requirements:
        key, has_value, value = requirement.partition("=")
        negated = key.startswith("!")
        key = key.lstrip("!").strip()
        have = name if key == "name" else labels.get(key)
        if has_value and have != value.strip():
            return False
        if not has_value and (have is None) != negated:
            return False
    return True


def text(value: str) -> bytes:
    raw = value.encode()
    return struct.pack(">H", len(raw)) + raw


def main() -> int:
    topics = {}
    for item in os.environ.get("BOOBLIK_TOPICS", "conformance:3,single:1").split(","):
        name, _, count = item.partition(":")
        topics[name] = int(count or 1)
    if os.environ.get("BOOBLIK_PORT", "0") != "0":
        print("fake broker: only BOOBLIK_PORT=0 is supported", file=sys.stderr)
        return 2
    broker = FakeBroker(topics)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    print("fake broker starting, data dir %s" % os.environ.get("BOOBLIK_DATA_DIR"), flush=True)
    print("booblik listening on %s" % broker.start(), flush=True)
    stopped.wait()
    broker.stop()
    print("fake broker stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
