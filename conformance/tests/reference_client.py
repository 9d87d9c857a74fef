#!/usr/bin/env python3
"""A reference client of the conformance contract, for the kit's self-tests.

    reference_client.py [--flaw NAME] <verb> [args...]     (BOOBLIK_BROKER=host:port)

Without a flaw it must pass every check. Each flaw makes it wrong in one way a real client could
be, and the self-tests show the check aimed at that way fails. It shares no code with the harness.
"""

import os
import socket
import struct
import sys
import threading

FLAWS = {
    "metadata-drops-last": "metadata leaves out the last partition",
    "utf8-payload": "records go out as UTF-8 text of their bytes (0x80 becomes c2 80)",
    "silent-refusals": "a broker refusal prints nothing",
    "one-by-one": "a batch goes out one record per request; the last answer is printed",
    "none-waits": "ack=none waits for an answer that never comes",
    "swap-offsets": "prints baseOffset and logEndOffset the wrong way round",
    "signed-byte": "the partitioner reads key bytes as signed",
    "no-mask": "the partitioner forgets the 32-bit mask",
    "crash-on-refusal": "a broker refusal crashes the client",
    "clamp-partition": "a partition past the last one is wrapped onto an existing one",
    "nul-terminated": "fetched records end at their first 0x00 byte",
    "caught-up-is-error": "an empty fetch is reported as OFFSET_OUT_OF_RANGE",
    "truncated-tail-as-record": "the truncated tail of a fetch is returned as a record",
    "exceeds-silent": "a record larger than maxBytes looks like an empty fetch",
    "out-of-range-is-empty": "OFFSET_OUT_OF_RANGE looks like an empty fetch",
    "forced-as-written": "ack=forced goes on the wire as WRITTEN",
    "drop-empty-records": "empty records are quietly left out of a batch",
    "pad-to-even": "odd-length records are padded with a zero byte",
    "hardcoded-3-partitions": "produce-keyed assumes every topic has 3 partitions",
    "ignore-correlation-id": "answers are not matched by correlationId",
    "short-tail-dropped": "a fetch stops when fewer than 12 bytes remain (a 1-byte record is lost)",
    "tail-needs-4-bytes": "a fetch reads a record header when only 4 bytes of it arrived",
    "no-crc-check": "fetched records are not checked against their CRC-32C",
    "eof-ends-frame": "a closed connection ends the frame; what arrived is used",
    "create-ignores-revision": "topics-apply sends revision -1 (any) whatever it is given",
    "list-ignores-selector": "topics-list lists every topic, whatever the selector",
    "mismatch-swaps-revisions": "a REVISION_MISMATCH prints the expected revision as the actual one",
    "delete-ignores-revision": "topics-delete sends revision -1 (any) whatever it is given",
    "producer-only": "declares only the producer role",
    "no-topics-role": "declares the producer and consumer roles, not topics",
    "topics-in-roles": "declares topics in roles= (which the original harness refuses), not in extras=",
    "no-roles": "declares no role",
    "hang": "every verb but capabilities hangs",
}

ERRORS = {1: "UNKNOWN_TOPIC_OR_PARTITION", 2: "OFFSET_OUT_OF_RANGE", 3: "RECORD_TOO_LARGE",
          4: "UNSUPPORTED_VERSION", 5: "CORRUPT_REQUEST", 7: "REVISION_MISMATCH", 11: "INVALID_ARGUMENT"}
ACKS = {"none": 0, "written": 1, "forced": 2}
TIMEOUT_S = 15
NONE_ANSWER_WAIT_S = 5.5  # the none-waits flaw: longer than the contract's 5 s
FLAW = None


class Refused(Exception):
    def __init__(self, code, body=b""):
        super().__init__(ERRORS.get(code, f"UNKNOWN({code})"))
        self.name = str(self)
        self.details = []  # (key, value) lines printed after error=
        if code == 7 and body:
            (length,) = struct.unpack_from(">H", body, 4)
            topic = body[6 : 6 + length].decode()
            expected, actual = struct.unpack_from(">qq", body, 6 + length)
            if FLAW == "mismatch-swaps-revisions":
                expected, actual = actual, expected
            self.details = [("topic", topic), ("expectedRevision", expected), ("actualRevision", actual)]


class BadWire(Exception):
    pass


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def fnv1a(key: bytes) -> int:
    value = 0x811C9DC5
    for byte in key:
        if FLAW == "signed-byte" and byte >= 0x80:
            byte -= 256
        value = (value ^ byte) * 0x01000193
        if FLAW != "no-mask":
            value &= 0xFFFFFFFF
    return value


def text(value: str) -> bytes:
    raw = value.encode()
    return struct.pack(">H", len(raw)) + raw


class Broker:
    def __init__(self):
        host, _, port = os.environ["BOOBLIK_BROKER"].rpartition(":")
        self.sock = socket.create_connection((host.strip("[]"), int(port)), timeout=TIMEOUT_S)
        self.corr = 0

    def send(self, api: int, version: int, payload: bytes) -> int:
        self.corr += 1
        self.sock.sendall(struct.pack(">ihhi", 8 + len(payload), api, version, self.corr) + payload)
        return self.corr

    def exactly(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                if FLAW == "eof-ends-frame":
                    return data
                raise BadWire("connection closed in the middle of a frame")
            data += chunk
        return data

    def call(self, api: int, version: int, payload: bytes) -> bytes:
        corr = self.send(api, version, payload)
        (length,) = struct.unpack(">i", self.exactly(4))
        if not 6 <= length <= 8 * 1024 * 1024:
            raise BadWire(f"response frame length {length}")
        frame = self.exactly(length)
        got, code = struct.unpack_from(">ih", frame)
        if got != corr and FLAW != "ignore-correlation-id":
            raise BadWire(f"answer for correlationId {got}, expected {corr}")
        if code:
            raise Refused(code, frame[6:])
        return frame[6:]

    def partitions(self, topic: str) -> list[tuple[int, int, int]]:
        body = self.call(3, 1, struct.pack(">i", 1) + text(topic))
        pos = 4 + 2 + struct.unpack_from(">H", body, 4)[0]
        (count,) = struct.unpack_from(">i", body, pos)
        return sorted(struct.unpack_from(">iqq", body, pos + 4 + 20 * i) for i in range(count))

    def produce(self, topic: str, partition: int, ack: int, records: list[bytes]):
        payload = text(topic) + struct.pack(">ibi", partition, ack, len(records))
        payload += b"".join(struct.pack(">i", len(r)) + r for r in records)
        if ack == 0:
            self.send(1, 1, payload)
            if FLAW == "none-waits":
                self.sock.settimeout(NONE_ANSWER_WAIT_S)
                try:
                    self.sock.recv(1)
                except socket.timeout:
                    pass
            return None
        return struct.unpack(">qq", self.call(1, 1, payload))


def records_arg(value: str) -> list[bytes]:
    records = [bytes.fromhex(item) for item in value.split(",")]
    if FLAW == "utf8-payload":
        records = [r.decode("latin-1").encode("utf-8") for r in records]
    if FLAW == "pad-to-even":
        records = [r + b"\0" if len(r) % 2 else r for r in records]
    if FLAW == "drop-empty-records":
        records = [r for r in records if r]
    return records


def verb_metadata(broker: Broker, topic: str):
    partitions = broker.partitions(topic)
    if FLAW == "metadata-drops-last":
        partitions = partitions[:-1]
    for partition, start, high in partitions:
        print(f"partition={partition} {start} {high}")


def verb_produce(broker: Broker, topic: str, partition: str, ack: str, hex_records: str):
    partition, records = int(partition), records_arg(hex_records)
    if FLAW == "clamp-partition":
        partition %= len(broker.partitions(topic))
    policy = ACKS[ack]
    if FLAW == "forced-as-written" and policy == 2:
        policy = 1
    if FLAW == "one-by-one" and policy:
        answers = [broker.produce(topic, partition, policy, [r]) for r in records]
        answer = answers[-1]
    else:
        answer = broker.produce(topic, partition, policy, records)
    if answer is not None:
        base, end = answer[::-1] if FLAW == "swap-offsets" else answer
        print(f"baseOffset={base}")
        print(f"logEndOffset={end}")


def verb_produce_keyed(broker: Broker, topic: str, key_hex: str, payload_hex: str):
    ids = [p for p, _, _ in broker.partitions(topic)]
    count = 3 if FLAW == "hardcoded-3-partitions" else len(ids)
    index = fnv1a(bytes.fromhex(key_hex)) % count
    partition = index if FLAW == "hardcoded-3-partitions" else ids[index]
    base, _ = broker.produce(topic, partition, 1, records_arg(payload_hex))
    print(f"partition={partition}")
    print(f"baseOffset={base}")


def verb_fetch(broker: Broker, topic: str, partition: str, offset: str, max_bytes: str):
    payload = text(topic) + struct.pack(">iqiii", int(partition), int(offset), int(max_bytes), 0, 0)
    try:
        body = broker.call(2, 2, payload)
    except Refused as refusal:
        if FLAW == "out-of-range-is-empty" and refusal.name == "OFFSET_OUT_OF_RANGE":
            return
        raise
    high, size = struct.unpack_from(">qi", body)
    data = body[12:]
    if size != len(data) and FLAW != "eof-ends-frame":
        raise BadWire(f"payloadBytes {size}, but {len(data)} bytes follow")
    need = {"short-tail-dropped": 12, "tail-needs-4-bytes": 4}.get(FLAW, 8)
    records, pos, tail_size = [], 0, None
    while len(data) - pos >= need:
        size, crc = struct.unpack_from(">iI", data, pos)
        if size <= 0:
            raise BadWire(f"record size {size}")
        end = pos + 8 + size
        if end > len(data):
            tail_size = size
            if FLAW == "truncated-tail-as-record":
                records.append(data[pos + 8 :])
            break
        record = data[pos + 8 : end]
        if crc32c(record) != crc and FLAW != "no-crc-check":
            raise BadWire(f"corrupt record at offset {int(offset) + len(records)}")
        records.append(record.split(b"\0")[0] if FLAW == "nul-terminated" else record)
        pos = end
    if not records and len(data) > pos and tail_size is None:
        if len(data) - pos < 4:
            raise BadWire(f"a record larger than maxBytes {max_bytes}, its size not yet known")
        (tail_size,) = struct.unpack_from(">i", data, pos)
    if FLAW == "caught-up-is-error" and not data:
        print("error=OFFSET_OUT_OF_RANGE")
        return
    print(f"highWatermark={high}")
    if not records and tail_size is not None:
        if FLAW != "exceeds-silent":
            print(f"recordExceedsMaxBytes={tail_size}")
        return
    for record in records:
        print(f"record={record.hex()}")


def verb_topics_apply(broker: Broker, name: str, partitions: str, labels: str, expected: str):
    pairs = [] if labels == "-" else sorted(tuple(item.split("=", 1)) for item in labels.split(","))
    revision = -1 if FLAW == "create-ignores-revision" else int(expected)
    spec = text(name) + struct.pack(">ii", int(partitions), len(pairs))
    spec += b"".join(text(k) + text(v) for k, v in pairs)
    spec += struct.pack(">qqiih", -2, -2, 0, 0, 0) + text("") + struct.pack(">q", revision)
    body = broker.call(4, 1, struct.pack(">bib", 0, 1, 1) + spec)
    print(f"revision={struct.unpack('>q', body)[0]}")


def verb_topics_delete(broker: Broker, name: str, expected: str):
    revision = -1 if FLAW == "delete-ignores-revision" else int(expected)
    body = broker.call(4, 1, struct.pack(">bib", 0, 1, 2) + text(name) + struct.pack(">q", revision))
    print(f"revision={struct.unpack('>q', body)[0]}")


def verb_topics_list(broker: Broker, selector: str):
    body = broker.call(5, 1, text("" if FLAW == "list-ignores-selector" else selector) + struct.pack(">qi", -1, 0))
    revision, count = struct.unpack_from(">qi", body)
    pos = 12
    print(f"revision={revision}")

    def string():
        nonlocal pos
        (length,) = struct.unpack_from(">H", body, pos)
        pos += 2 + length
        return body[pos - length : pos].decode()

    for _ in range(count):
        name = string()
        partitions, label_count = struct.unpack_from(">ii", body, pos)
        pos += 8
        labels = sorted(f"{string()}={string()}" for _ in range(label_count))
        pos += 8 + 8 + 4 + 4 + 2
        string()
        (spec_revision, routes) = struct.unpack_from(">qi", body, pos)
        pos += 12
        for _ in range(routes):
            string()
            (replicas,) = struct.unpack_from(">i", body, pos)
            pos += 4
            for _ in range(replicas):
                string()
        print(f"topic={name} {partitions} {spec_revision} {','.join(labels) or '-'}")


def main(argv: list[str]) -> int:
    global FLAW
    if argv[:1] == ["--flaw"]:
        FLAW, argv = argv[1], argv[2:]
        if FLAW not in FLAWS:
            print(f"unknown flaw {FLAW}", file=sys.stderr)
            return 2
    verb, args = argv[0], argv[1:]
    if verb == "capabilities":
        roles = {"producer-only": "producer", "no-roles": "",
                 "topics-in-roles": "producer,consumer,topics"}.get(FLAW, "producer,consumer")
        print(f"roles={roles}")
        if FLAW not in ("producer-only", "no-roles", "no-topics-role", "topics-in-roles"):
            print("extras=topics")
        print("name=reference")
        return 0
    if FLAW == "hang":
        threading.Event().wait()
    verbs = {"metadata": verb_metadata, "produce": verb_produce,
             "produce-keyed": verb_produce_keyed, "fetch": verb_fetch,
             "topics-apply": verb_topics_apply, "topics-delete": verb_topics_delete,
             "topics-list": verb_topics_list}
    try:
        verbs[verb](Broker(), *args)
    except Refused as refusal:
        if FLAW == "crash-on-refusal":
            raise
        if FLAW != "silent-refusals":
            print(f"error={refusal.name}")
            for key, value in refusal.details:
                print(f"{key}={value}")
    except (BadWire, OSError) as error:
        print(f"reference client: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
