"""The fourteen checks of the conformance contract, each against a live broker.

A producer's records are read back by the harness, never by the client under test; for the consumer
checks the harness writes the records itself. Each check reads high watermarks before it acts.
"""

from . import expect
from .context import SINGLE, TOPIC, Context
from .registry import CONSUMER, PRODUCER, CheckFailed, check
from .vectors import load

BIG_MAX_BYTES = "1048576"  # a maxBytes no check's records come near


def hex_list(records: list[bytes]) -> str:
    return ",".join(r.hex() for r in records)


def produce_and_verify(ctx: Context, topic: str, partition: int, ack: str, records: list[bytes]):
    """Run the client's `produce`, then check from the outside that the batch landed, in order, at
    the previous high watermark. Returns the client's result."""
    before = ctx.high_watermark(topic, partition)
    result = ctx.client.run("produce", topic, str(partition), ack, hex_list(records))
    expect.no_error(result)
    base = expect.one_int(result, "baseOffset")
    log_end = expect.one_int(result, "logEndOffset")
    if base != before:
        raise CheckFailed(f"baseOffset {base}, expected the previous high watermark {before}; "
                          f"{result.describe()}")
    if log_end < base + len(records):
        raise CheckFailed(f"logEndOffset {log_end}, expected >= {base + len(records)}")
    # One more than was sent: a batch sent twice, or a record too many, shows up here.
    stored = ctx.read(topic, partition, base, len(records) + 1)
    expect.same_records(records, stored, f"read back from {topic}/{partition} at {base}")
    return result


def produce_keyed_and_verify(ctx: Context, topic: str, key: bytes, expected: int, payload: bytes):
    """Run `produce-keyed`; a problem as text (None when all is well): the partition the client
    named must be `expected`, and the record must really be there, at the offset it printed."""
    before = ctx.high_watermarks(topic)
    result = ctx.client.run("produce-keyed", topic, key.hex(), payload.hex())
    expect.no_error(result)
    named = expect.one_int(result, "partition")
    base = expect.one_int(result, "baseOffset")
    if named != expected:
        return f"key {key.hex() or '(empty)'}: expected partition {expected}, client named {named}"
    if base != before[named]:
        return (f"key {key.hex() or '(empty)'}: baseOffset {base}, expected the high watermark "
                f"{before[named]} of partition {named}")
    stored = ctx.read(topic, named, base, 1)
    if stored != [payload]:
        landed = [p for p, hw in ctx.high_watermarks(topic).items() if hw != before[p]]
        return (f"key {key.hex() or '(empty)'}: the record is not at {topic}/{named} offset {base}; "
                f"partitions that grew: {landed}")
    return None


@check(1, PRODUCER, "metadata reports exactly the partitions the broker has")
def metadata_partitions(ctx: Context):
    for topic in (TOPIC, SINGLE):
        truth = ctx.partitions(topic)
        result = ctx.client.run("metadata", topic)
        expect.no_error(result)
        printed = []
        for line in result.all("partition"):
            fields = line.split()
            if len(fields) != 3 or not all(f.isdigit() for f in fields):
                raise CheckFailed(f"partition={line!r}, expected '<id> <logStartOffset> "
                                  f"<highWatermark>'")
            printed.append(tuple(int(f) for f in fields))
        if sorted(printed) != truth:
            raise CheckFailed(f"{topic}: expected (id, logStart, highWatermark) {truth}, "
                              f"client printed {printed}")


@check(2, PRODUCER, "a record with every byte value 0x00..0xff arrives byte for byte")
def every_byte_value(ctx: Context):
    produce_and_verify(ctx, TOPIC, 1, "written", [bytes(range(256))])


@check(3, PRODUCER, "an empty record is refused with CORRUPT_REQUEST, the refusal is printed, "
       "and the high watermark does not move")
def empty_record_refused(ctx: Context):
    before = ctx.high_watermark(TOPIC, 2)
    result = ctx.client.run("produce", TOPIC, "2", "written", "")
    expect.refusal(result, "CORRUPT_REQUEST", "baseOffset", "logEndOffset")
    after = ctx.high_watermark(TOPIC, 2)
    if after != before:
        raise CheckFailed(f"high watermark moved from {before} to {after}")


@check(4, PRODUCER, "a batch of 10 lands contiguously, in order, with baseOffset equal to the "
       "previous high watermark")
def batch_of_ten(ctx: Context):
    records = [ctx.payload(f"batch-{i}") for i in range(10)]
    produce_and_verify(ctx, TOPIC, 0, "written", records)


@check(5, PRODUCER, "ack=none returns within 5 s without waiting for an answer, and the record "
       "still arrives")
def ack_none(ctx: Context):
    before = ctx.high_watermark(TOPIC, 0)
    payload = ctx.payload("none")
    result = ctx.client.run("produce", TOPIC, "0", "none", payload.hex())
    if result.timed_out or result.elapsed_s > 5:
        raise CheckFailed(f"expected to return within 5 s; {result.describe()}")
    expect.no_error(result)
    expect.absent(result, "baseOffset", "logEndOffset")
    arrived = ctx.wait_for(TOPIC, 0, before, 1)
    if arrived != [payload]:
        raise CheckFailed(f"expected the record at {TOPIC}/0 offset {before} within 10 s, "
                          f"found {[expect.show(r) for r in arrived]}")


@check(6, PRODUCER, "ack=forced is answered with the right base offset")
def ack_forced(ctx: Context):
    produce_and_verify(ctx, SINGLE, 0, "forced", [ctx.payload("forced")])


@check(7, PRODUCER, "the partitioner agrees with every vector (p3), and each keyed record really is "
       "in the partition the client named")
def partitioner_vectors(ctx: Context):
    problems = []
    for index, row in enumerate(load("partitioner-fnv1a.tsv")):
        key = bytes.fromhex(row["keyHex"])
        problem = produce_keyed_and_verify(ctx, TOPIC, key, int(row["p3"]),
                                           ctx.payload(f"vector-{index}"))
        if problem:
            problems.append(f"{problem} ({row['name']})")
    if problems:
        raise CheckFailed(f"{len(problems)} vectors wrong: " + "; ".join(problems[:3]))


@check(8, PRODUCER, "an unknown topic is refused with UNKNOWN_TOPIC_OR_PARTITION, not a crash")
def unknown_topic(ctx: Context):
    topic = f"no-such-topic-{ctx.nonce}"
    result = ctx.client.run("produce", topic, "0", "written", ctx.payload("lost").hex())
    expect.refusal(result, "UNKNOWN_TOPIC_OR_PARTITION", "baseOffset")
    result = ctx.client.run("metadata", topic)
    expect.refusal(result, "UNKNOWN_TOPIC_OR_PARTITION", "partition")


@check(9, PRODUCER, "a partition that does not exist is refused with UNKNOWN_TOPIC_OR_PARTITION")
def unknown_partition(ctx: Context):
    for topic, partition in ((TOPIC, 3), (SINGLE, 1)):
        before = ctx.high_watermarks(topic)
        result = ctx.client.run("produce", topic, str(partition), "written",
                                ctx.payload("nowhere").hex())
        expect.refusal(result, "UNKNOWN_TOPIC_OR_PARTITION", "baseOffset")
        after = ctx.high_watermarks(topic)
        if after != before:
            raise CheckFailed(f"{topic} partition {partition} was refused, yet high watermarks "
                              f"moved from {before} to {after}")


@check(10, CONSUMER, "fetch returns exactly the records produced (including a one-byte 0x00 record)")
def fetch_exact(ctx: Context):
    records = [b"\x00", ctx.payload("fetch"), bytes(range(256)), b"\xff\x80\x7f\x00", b"\x00"]
    base = ctx.write(TOPIC, 1, records)
    result = ctx.client.run("fetch", TOPIC, "1", str(base), BIG_MAX_BYTES)
    expect.no_error(result)
    expect.absent(result, "recordExceedsMaxBytes")
    expect.same_records(records, expect.records(result), f"fetch {TOPIC}/1 from {base}")
    high_watermark = expect.one_int(result, "highWatermark")
    if high_watermark != base + len(records):
        raise CheckFailed(f"highWatermark {high_watermark}, expected {base + len(records)}")


@check(11, CONSUMER, "fetching at the high watermark is empty, and not an error")
def fetch_at_high_watermark(ctx: Context):
    high_watermark = ctx.high_watermark(TOPIC, 2)
    result = ctx.client.run("fetch", TOPIC, "2", str(high_watermark), BIG_MAX_BYTES)
    expect.no_error(result)
    expect.absent(result, "record", "recordExceedsMaxBytes")
    printed = expect.one_int(result, "highWatermark")
    if printed != high_watermark:
        raise CheckFailed(f"highWatermark {printed}, expected {high_watermark}")


@check(12, CONSUMER, "a truncated tail is dropped: three 100-byte records with maxBytes 150 give "
       "only whole records, in order, and at least one")
def truncated_tail(ctx: Context):
    records = [bytes([i]) * 50 + ctx.payload(f"tail{i}").ljust(50, b".") for i in range(3)]
    base = ctx.write(TOPIC, 0, records)
    result = ctx.client.run("fetch", TOPIC, "0", str(base), "150")
    expect.no_error(result)
    expect.absent(result, "recordExceedsMaxBytes")
    got = expect.records(result)
    if not got or got != records[: len(got)]:
        raise CheckFailed(f"expected a non-empty prefix of the three 100-byte records, got "
                          f"{[expect.show(r, 8) for r in got]}")


@check(13, CONSUMER, "a 500-byte record fetched with maxBytes 100 prints recordExceedsMaxBytes=500 "
       "and no record")
def record_exceeds_max_bytes(ctx: Context):
    base = ctx.write(SINGLE, 0, [ctx.payload("big").ljust(500, b"#")])
    result = ctx.client.run("fetch", SINGLE, "0", str(base), "100")
    expect.no_error(result)
    expect.absent(result, "record")
    if result.all("recordExceedsMaxBytes") != ["500"]:
        raise CheckFailed(f"expected recordExceedsMaxBytes=500; {result.describe()}")


@check(14, CONSUMER, "an offset past the end (high watermark + 1000) is refused with "
       "OFFSET_OUT_OF_RANGE")
def offset_out_of_range(ctx: Context):
    high_watermark = ctx.high_watermark(TOPIC, 1)
    result = ctx.client.run("fetch", TOPIC, "1", str(high_watermark + 1000), BIG_MAX_BYTES)
    expect.refusal(result, "OFFSET_OUT_OF_RANGE", "record", "recordExceedsMaxBytes")
