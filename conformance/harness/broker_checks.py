"""Checks of the broker itself, made once per run with the harness's own wire client and raw
sockets. Every client check rests on these: a broker that answers ack=none would shift every later
answer on a connection, and one that sleeps through writes makes every consumer late."""

import time

from . import wire
from .connection import FETCH_MAX_BYTES, BrokerRefusal
from .context import PARTITION_COUNTS, SINGLE, TOPIC, Context
from .registry import BROKER, CheckFailed, check

LONG_WAIT_MS = 5000  # the held fetch's wait; a wake-up must come long before it ends
WAKE_UP_S_MAX = 2.0  # from the write to the held fetch's answer


@check("B1", BROKER, "the broker serves topics conformance (3 partitions) and single (1)")
def topics(ctx: Context):
    with ctx.connect() as conn:
        try:
            served = conn.metadata(*PARTITION_COUNTS)
        except BrokerRefusal as refusal:
            raise CheckFailed(f"METADATA for {list(PARTITION_COUNTS)} refused: {refusal.name}")
    for topic, count in PARTITION_COUNTS.items():
        ids = [p for p, _, _ in served.get(topic, [])]
        if ids != list(range(count)):
            raise CheckFailed(f"{topic}: expected partitions {list(range(count))}, got {ids}")


@check("B2", BROKER, "ack=none is never answered, not even a refusal, so no stray frame shifts "
       "the next answer")
def none_is_never_answered(ctx: Context):
    before = ctx.high_watermark(SINGLE, 0)
    payload = ctx.payload("raw-none")
    requests = [
        (101, wire.produce_v1(SINGLE, 0, wire.ACK_NONE, [payload])),  # accepted
        (102, wire.produce_v1(f"no-such-topic-{ctx.nonce}", 0, wire.ACK_NONE, [b"x"])),  # refused
        (103, wire.produce_v1(SINGLE, 0, wire.ACK_NONE, [b""])),  # refused: empty record
    ]
    frames = [wire.request_frame(wire.API_PRODUCE, 1, cid, p) for cid, p in requests]
    frames.append(wire.request_frame(wire.API_METADATA, 1, 104, wire.metadata_v1([SINGLE])))
    with ctx.connect() as conn:
        conn.send(b"".join(frames))  # pipelined, in one write
        correlation_id, error_code, _ = conn.read_response()
    if correlation_id != 104:
        raise CheckFailed(f"the first answer carries correlationId {correlation_id} (error "
                          f"{wire.error_name(error_code)}); expected 104, the METADATA after three "
                          f"ack=none requests")
    if ctx.wait_for(SINGLE, 0, before, 1) != [payload]:
        raise CheckFailed(f"the accepted ack=none record never reached {SINGLE}/0 offset {before}")


@check("B3", BROKER, "a held long fetch is woken by a write, not by the end of its wait")
def long_fetch_wakes_up(ctx: Context):
    before = ctx.high_watermark(TOPIC, 1)
    payload = ctx.payload("wake")
    with ctx.connect() as waiter, ctx.connect() as writer:
        request = wire.fetch_v2(TOPIC, 1, before, FETCH_MAX_BYTES, LONG_WAIT_MS, 1)
        waiter.send(wire.request_frame(wire.API_FETCH, 2, 7, request))
        # A round trip on the other connection first, so the fetch is most likely held by the time
        # the write lands. (If it is not, the fetch finds the record at once: still a pass.)
        writer.metadata(TOPIC)
        written_at = time.monotonic()
        writer.produce(TOPIC, 1, [payload])
        body = waiter.answer(7, timeout_s=LONG_WAIT_MS / 1000 + 10)
        answered_after = time.monotonic() - written_at
    _, fetched = wire.parse_fetch_body(body)
    records = wire.split_records(fetched).records
    if records[:1] != [payload]:
        raise CheckFailed(f"the held fetch was answered without the record "
                          f"({len(records)} records, {answered_after:.1f} s after the write)")
    if answered_after > WAKE_UP_S_MAX:
        raise CheckFailed(f"answered {answered_after:.1f} s after the write (wait {LONG_WAIT_MS} "
                          f"ms): woken by its timer, not by the write")
