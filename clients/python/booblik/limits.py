"""Every limit and default of the client, in one place, each with its reason.

Relations between them are checked at the bottom, at import time: with ``if``, not ``assert``, so
``python -O`` (which strips asserts) still refuses a change that breaks one.
"""

# The protocol's frame cap (both directions). A length prefix outside it is a protocol error.
FRAME_BYTES_MAX = 8 * 1024 * 1024

# frameLength(4) apiKey(2) apiVersion(2) correlationId(4): what precedes a request payload.
REQUEST_HEADER_BYTES = 12
# correlationId(4) errorCode(2): what a response frame holds before its body.
RESPONSE_HEADER_BYTES = 6
# frameLength(4) + response header + highWatermark(8) + payloadBytes(4) in front of fetched records.
FETCH_RESPONSE_OVERHEAD_BYTES = 4 + RESPONSE_HEADER_BYTES + 8 + 4
# A stored record: int32 size, int32 crc32c, then the payload.
RECORD_HEADER_BYTES = 8

# The largest max_bytes a fetch may ask for: any larger and a full answer would not fit in a frame.
FETCH_MAX_BYTES_MAX = FRAME_BYTES_MAX - (FETCH_RESPONSE_OVERHEAD_BYTES - 4)

INT16_MAX = 2**15 - 1
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT16_MAX = 2**16 - 1

# Topic names: 1..249 characters (code points), letters, decimal digits, ".", "_" and "-" (spec
# section 2). Checked before a PRODUCE is sent: the broker's answer to a bad name is a bare
# CORRUPT_REQUEST.
TOPIC_NAME_CHARS_MAX = 249

# Socket timeout in seconds. Must exceed the long-poll wait below, or a healthy caught-up consumer
# would see a timeout instead of an empty answer.
DEFAULT_TIMEOUT = 30.0
# How long the broker may hold a fetch when nothing is there yet: long enough that a caught-up
# consumer is not a busy loop; the broker answers the moment a record lands anyway.
DEFAULT_MAX_WAIT_MILLIS = 5000
# 0 and 1 both mean "anything"; 1 says it plainly.
DEFAULT_MIN_BYTES = 1
# Per fetch. A record larger than this (with its 8-byte header) can never arrive whole.
DEFAULT_MAX_BYTES = 1024 * 1024

# Producer: how long the first record of a batch waits for company. Short enough to be invisible to
# a request handler, long enough to gather the records a busy process sends in a burst.
DEFAULT_LINGER = 0.005
# Producer: records per batch before it goes out without waiting for the linger.
DEFAULT_MAX_BATCH_SIZE = 100

# Topic: how old (seconds) its partition list may get before it is read again, so partitions added
# at runtime get records within this long: one small METADATA per topic every few seconds of
# sending. Five seconds, as the TypeScript client (and a Kafka client's metadata age).
DEFAULT_METADATA_MAX_AGE = 5.0

# Client: sends of one request across route changes and failures. Eight covers a NOT_PRIMARY hop or
# two plus pauses of 0.1 + 0.2 + ... + 2 s (about 8 s in all): longer than a broker lease (5 s by
# default) takes to expire and its partitions to show who serves them next.
DEFAULT_ROUTE_ATTEMPTS_MAX = 8
# Client: first pause (seconds) after NO_PRIMARY or a lost connection, doubled up to the cap.
DEFAULT_ROUTE_RETRY_DELAY = 0.1
DEFAULT_ROUTE_RETRY_DELAY_MAX = 2.0

# Topics at runtime (docs/protocol.md, "Additions after v1"): the broker refuses a spec with more
# partitions, and an APPLY with more changes, than these; checked here so the error names the field.
TOPIC_PARTITIONS_MAX = 10_000
APPLY_CHANGES_MAX = 10_000
# The broker holds a watching LIST at most this long, whatever it is asked (as it caps a FETCH's wait).
LIST_WAIT_MILLIS_MAX = 60_000
# A watch's held LIST asks again after this long without a change: each wait is one cheap request,
# and it stays below the default timeout so a quiet watch never reads as a dead broker.
DEFAULT_WATCH_WAIT_MILLIS = 20_000

# SCRAM-SHA-256: the wire's least iteration count; a broker asking fewer is refused (a downgrade).
SCRAM_ITERATIONS_MIN = 4096
# ... and the most this client pays: PBKDF2 runs here, so a broker asking more would burn seconds of
# CPU per connect. Above OWASP's 600 000 for PBKDF2-HMAC-SHA256 (2023), with room.
SCRAM_ITERATIONS_MAX = 1_000_000
# The client nonce's random bytes (24 characters of base64): 144 bits, never guessed or repeated.
SCRAM_NONCE_BYTES = 18

# Correlation ids count up from 1 and wrap before leaving int32.
CORRELATION_ID_FIRST = 1


def _check(relation_holds: bool, what: str) -> None:
    if not relation_holds:
        raise RuntimeError(f"booblik limits: {what}")


_check(DEFAULT_MAX_WAIT_MILLIS / 1000 < DEFAULT_TIMEOUT, "the default wait must be shorter than the default timeout")
_check(0 < DEFAULT_MAX_BYTES <= FETCH_MAX_BYTES_MAX, "the default max_bytes must be one a fetch may ask for")
_check(DEFAULT_MIN_BYTES <= DEFAULT_MAX_BYTES, "min_bytes > max_bytes is a refused request")
_check(FETCH_MAX_BYTES_MAX > RECORD_HEADER_BYTES, "a fetch must be able to carry a record header")
_check(DEFAULT_WATCH_WAIT_MILLIS / 1000 < DEFAULT_TIMEOUT, "a quiet watch must not time out by default")
_check(DEFAULT_WATCH_WAIT_MILLIS <= LIST_WAIT_MILLIS_MAX, "the broker cuts a longer watch wait short")
_check(1 <= DEFAULT_MAX_BATCH_SIZE <= INT32_MAX, "a batch holds at least one record")
_check(SCRAM_ITERATIONS_MIN <= SCRAM_ITERATIONS_MAX, "a SCRAM iteration count must be allowed")
_check(DEFAULT_ROUTE_RETRY_DELAY <= DEFAULT_ROUTE_RETRY_DELAY_MAX, "route pauses must start below their cap")
