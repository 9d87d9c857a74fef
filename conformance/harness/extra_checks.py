"""Checks of our own, run after the fourteen. Each one aims at a failure nobody would notice: the
client exits 0, prints something plausible, and data is wrong, lost or late.

Some need a broker that misbehaves on purpose; those point the client at the harness's own rogue
broker instead of the real one.
"""

import random

from . import expect, wire
from .checks import BIG_MAX_BYTES, produce_and_verify, produce_keyed_and_verify
from .context import SINGLE, TOPIC, Context
from .fnv1a import partition_for
from .registry import CONSUMER, PRODUCER, CheckFailed, check
from .rogue_broker import Reply, RogueBroker

RECORD_LENGTH_MAX = 64
KEY_DRAW = 0xB00B11C  # a fixed draw of keys: a failing key is the same key on the next run
REQUEST_ARRIVAL_S = 5.0  # how long the rogue broker waits for a request the client says it sent


def every_length() -> list[bytes]:
    """Records of every length 1..64, with bytes across the whole range (0x00, 0x80 and 0xff too)."""
    return [bytes((length * 37 + i * 101) & 0xFF for i in range(length))
            for length in range(1, RECORD_LENGTH_MAX + 1)]


@check(15, PRODUCER, "ack policies go on the wire as asked (none 0, written 1, forced 2; "
       "produce-keyed written)")
def ack_policy_on_the_wire(ctx: Context):
    # A FORCED request sent as WRITTEN is answered just the same, only not durably: nothing but the
    # bytes on the wire can tell.
    with RogueBroker() as rogue:
        client = ctx.client.at(rogue.address)
        cases = [("none", 1, wire.ACK_NONE), ("written", 2, wire.ACK_WRITTEN),
                 ("forced", 0, wire.ACK_FORCED)]
        for ack, partition, policy in cases:
            payload = ctx.payload(f"ack-{ack}")
            result = client.run("produce", TOPIC, str(partition), ack, payload.hex())
            expect.no_error(result)
            sent = rogue.wait_for(lambda r, p=payload: r.records == [p], REQUEST_ARRIVAL_S)
            if sent is None:
                raise CheckFailed(f"ack={ack}: no PRODUCE carrying the record reached the broker")
            if (sent.topic, sent.partition, sent.ack) != (TOPIC, partition, policy):
                raise CheckFailed(f"ack={ack}: expected topic {TOPIC} partition {partition} "
                                  f"ackPolicy {policy}, the wire said {sent.topic} partition "
                                  f"{sent.partition} ackPolicy {sent.ack}")
        key, payload = b"\x80key\xff", ctx.payload("ack-keyed")
        result = client.run("produce-keyed", TOPIC, key.hex(), payload.hex())
        expect.no_error(result)
        sent = rogue.wait_for(lambda r: r.records == [payload], REQUEST_ARRIVAL_S)
        if sent is None or sent.ack != wire.ACK_WRITTEN:
            raise CheckFailed(f"produce-keyed: expected ackPolicy {wire.ACK_WRITTEN}, the wire "
                              f"said {None if sent is None else sent.ack}")


@check(16, PRODUCER, "an empty record inside a batch refuses the whole batch: nothing lands")
def empty_record_in_batch(ctx: Context):
    # A client that quietly drops the empty record writes the others and reports success.
    before = ctx.high_watermark(TOPIC, 2)
    records = f"{ctx.payload('before').hex()},,{ctx.payload('after').hex()}"
    result = ctx.client.run("produce", TOPIC, "2", "written", records)
    expect.refusal(result, "CORRUPT_REQUEST", "baseOffset", "logEndOffset")
    after = ctx.high_watermark(TOPIC, 2)
    if after != before:
        raise CheckFailed(f"the batch was refused, yet the high watermark moved from {before} "
                          f"to {after}")


@check(17, PRODUCER, "records of every length 1..64 round-trip from one produced batch")
def produce_every_length(ctx: Context):
    produce_and_verify(ctx, TOPIC, 1, "written", every_length())


@check(18, PRODUCER, "keys with bytes >= 0x80 land where FNV-1a says, on 3 partitions and on 1")
def high_byte_keys(ctx: Context):
    # Independent of the vector file: the harness's own FNV-1a over keys it draws, and the partition
    # count taken from the topic (a count remembered from another topic goes wrong on `single`).
    rng = random.Random(KEY_DRAW)
    problems = []
    for index, topic in enumerate([TOPIC] * 8 + [SINGLE] * 4):
        key = bytes([rng.randrange(0x80, 0x100)]) + rng.randbytes(rng.randrange(0, 12))
        count = len(ctx.high_watermarks(topic))
        problem = produce_keyed_and_verify(ctx, topic, key, partition_for(key, count),
                                           ctx.payload(f"key-{index}"))
        if problem:
            problems.append(f"{topic}: {problem}")
    if problems:
        raise CheckFailed(f"{len(problems)} keys wrong: " + "; ".join(problems[:3]))


def wrong_correlation_id(request: wire.Request) -> int:
    return (request.correlation_id + 1) & 0x7FFFFFFF


@check(19, PRODUCER, "a produce answer with the wrong correlationId is not accepted")
def produce_wrong_correlation_id(ctx: Context):
    def answer(request: wire.Request) -> Reply:
        body = wire.produce_body(41, 42)
        return Reply(wire.response_frame(wrong_correlation_id(request), 0, body))

    with RogueBroker(on_produce=answer) as rogue:
        result = ctx.client.at(rogue.address).run("produce", TOPIC, "0", "written",
                                                  ctx.payload("corr").hex())
    expect.absent(result, "baseOffset", "logEndOffset")
    expect.failed_loudly(result, "an answer with another request's correlationId")


@check(20, CONSUMER, "records of every length 1..64 come back whole from one fetch")
def fetch_every_length(ctx: Context):
    # Longest first, so the fetch ends on a one-byte record: the shortest tail a parser can misjudge.
    records = every_length()[::-1]
    base = ctx.write(TOPIC, 2, records)
    result = ctx.client.run("fetch", TOPIC, "2", str(base), BIG_MAX_BYTES)
    expect.no_error(result)
    expect.same_records(records, expect.records(result), f"fetch {TOPIC}/2 from {base}")


@check(21, CONSUMER, "a cut inside a record header is dropped like any truncated tail")
def header_cut(ctx: Context):
    # Check 12 cuts inside a payload; here only 4 of the next record's 8 header bytes arrive.
    records = [ctx.payload(f"hdr{i}").ljust(100, bytes([0x80 + i])) for i in range(3)]
    base = ctx.write(TOPIC, 0, records)
    max_bytes = wire.RECORD_HEADER_BYTES + 100 + 4
    result = ctx.client.run("fetch", TOPIC, "0", str(base), str(max_bytes))
    expect.no_error(result)
    expect.absent(result, "recordExceedsMaxBytes")
    expect.same_records(records[:1], expect.records(result),
                        f"fetch {TOPIC}/0 from {base} with maxBytes {max_bytes}")


@check(22, CONSUMER, "a record with a bad CRC-32C fails the fetch and is never printed")
def corrupt_record(ctx: Context):
    good = ctx.payload("good")
    bad = ctx.payload("corrupt")
    flipped_payload = bytes([bad[0] ^ 0x01]) + bad[1:]
    cases = {
        # the payload changed after its checksum was taken
        "a flipped payload bit": wire.stored_record(bad)[:8] + flipped_payload,
        # the checksum itself damaged
        "a flipped checksum bit": wire.stored_record(bad, crc=wire.crc32c(bad) ^ 0x80000000),
    }
    for what, corrupt in cases.items():
        served = corrupt + wire.stored_record(good)

        def answer(request: wire.Request, served=served) -> Reply:
            body = wire.fetch_body(2, served[: request.max_bytes])
            return Reply(wire.response_frame(request.correlation_id, 0, body))

        with RogueBroker(on_fetch=answer) as rogue:
            result = ctx.client.at(rogue.address).run("fetch", TOPIC, "0", "0", BIG_MAX_BYTES)
        printed = expect.records(result)
        if bad in printed or flipped_payload in printed:
            raise CheckFailed(f"{what}: the corrupt record was printed; {result.describe()}")
        expect.failed_loudly(result, f"a record with {what}")


@check(23, CONSUMER, "a fetch answer with the wrong correlationId is not accepted")
def fetch_wrong_correlation_id(ctx: Context):
    served = ctx.payload("stray")

    def answer(request: wire.Request) -> Reply:
        body = wire.fetch_body(1, wire.stored_record(served))
        return Reply(wire.response_frame(wrong_correlation_id(request), 0, body))

    with RogueBroker(on_fetch=answer) as rogue:
        result = ctx.client.at(rogue.address).run("fetch", TOPIC, "0", "0", BIG_MAX_BYTES)
    if served in expect.records(result):
        raise CheckFailed(f"printed the record of an answer to another request; {result.describe()}")
    expect.failed_loudly(result, "an answer with another request's correlationId")


@check(24, CONSUMER, "a response frame cut short by a closed connection is an error, not a hang "
       "or a short success")
def truncated_frame(ctx: Context):
    records = [ctx.payload(f"cut{i}").ljust(40, b"~") for i in range(3)]
    body = wire.fetch_body(3, b"".join(map(wire.stored_record, records)))
    cases = {
        # frame header, fetch header and the first record arrive, then 10 bytes of the second
        "a frame cut after its first record": 10 + 12 + 48 + 10,
        # not even the 4-byte length arrives whole
        "a frame cut inside its length field": 3,
    }
    for what, cut in cases.items():

        def answer(request: wire.Request, cut=cut) -> Reply:
            frame = wire.response_frame(request.correlation_id, 0, body)
            return Reply(frame[:cut], close=True)

        with RogueBroker(on_fetch=answer) as rogue:
            result = ctx.client.at(rogue.address).run("fetch", TOPIC, "0", "0", BIG_MAX_BYTES)
        expect.failed_loudly(result, what)

