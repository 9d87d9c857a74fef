"""Every failure the client reports, one class each.

The wire's error codes live in one table; an unknown code is shown as ``UNKNOWN(n)``, never a crash.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ErrorCode(enum.IntEnum):
    """The wire's error codes (protocol section 6). Never renumber."""

    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 1
    OFFSET_OUT_OF_RANGE = 2
    RECORD_TOO_LARGE = 3
    UNSUPPORTED_VERSION = 4
    CORRUPT_REQUEST = 5
    # An addition to the protocol's table: clients that predate it show it as UNKNOWN(6).
    STORAGE_ERROR = 6
    # Additions after v1 (docs/protocol.md). Codes 7, 8 and 11 carry details (booblik.refusals).
    REVISION_MISMATCH = 7
    OFFSET_MISMATCH = 8
    NOT_PRIMARY = 9  # the cluster: go to the route the answer names
    NO_PRIMARY = 10  # the cluster: nobody serves the partition right now
    INVALID_ARGUMENT = 11
    TOPIC_READ_ONLY = 12
    CLUSTER_UNAVAILABLE = 13  # the cluster: etcd unreachable, or a minimum revision not reached
    NOT_ENOUGH_REPLICAS = 14  # the cluster: fewer in-sync replicas than the topic's minimum
    STALE_EPOCH = 15  # broker to broker: a write from a replaced primary
    OUTCOME_UNKNOWN = 16  # taken, outcome not known: it may have been stored; a resend may store it twice
    RECORDS_LOST = 17  # FETCH v5 (not sent by this client): records before the position were lost
    # Security (docs/protocol.md): TLS and AUTHENTICATE. Only 20 carries a body (its reason).
    TLS_REQUIRED = 18  # plaintext to a broker with booblik.tls=required; it closes the connection
    AUTHENTICATION_REQUIRED = 19  # only API_VERSIONS and AUTHENTICATE are served before authenticating
    AUTHENTICATION_FAILED = 20
    CREDENTIALS_EXPIRED = 21  # the token expired: authenticate again on the same connection
    NOT_AUTHORIZED = 22  # authenticated, but this principal may not do that


@dataclass(frozen=True)
class ErrorInfo:
    code: int
    name: str
    retriable: bool  # whether repeating the same request later can succeed without changing it
    description: str


# The same table as every other booblik client (the TypeScript client's @booblik/protocol errorTable).
ERROR_TABLE = (
    ErrorInfo(0, "NONE", False, "success"),
    ErrorInfo(1, "UNKNOWN_TOPIC_OR_PARTITION", False, "no such topic or partition"),
    ErrorInfo(2, "OFFSET_OUT_OF_RANGE", False, "fetchOffset outside [logStartOffset, highWatermark]"),
    ErrorInfo(3, "RECORD_TOO_LARGE", False, "a record cannot fit in a segment"),
    ErrorInfo(4, "UNSUPPORTED_VERSION", False, "unknown apiKey, or a version that API does not have"),
    ErrorInfo(5, "CORRUPT_REQUEST", False, "the frame does not decode or breaks a rule of the protocol"),
    ErrorInfo(
        6,
        "STORAGE_ERROR",
        True,
        "the broker could not write to its disk (full or failing); nothing of the batch was stored",
    ),
    ErrorInfo(
        7,
        "REVISION_MISMATCH",
        False,
        "an APPLY change expected another revision of its topic; nothing of the APPLY was applied",
    ),
    ErrorInfo(
        8,
        "OFFSET_MISMATCH",
        False,
        "the partition's end is not the batch's expected offset; nothing of the batch was written",
    ),
    ErrorInfo(
        9,
        "NOT_PRIMARY",
        True,
        "this broker is not the partition's primary; a client that follows routes goes to the one named",
    ),
    ErrorInfo(10, "NO_PRIMARY", True, "the partition has no primary at the moment (its broker is away); retry later"),
    ErrorInfo(
        11,
        "INVALID_ARGUMENT",
        False,
        "a value is not allowed (a topic spec, a selector); the answer says which and why",
    ),
    ErrorInfo(12, "TOPIC_READ_ONLY", False, "the topic is read-only: its spec refuses appends"),
    ErrorInfo(
        13,
        "CLUSTER_UNAVAILABLE",
        True,
        "the cluster's etcd cannot be reached, or the broker has not caught up with the revision asked for",
    ),
    ErrorInfo(
        14,
        "NOT_ENOUGH_REPLICAS",
        True,
        "fewer replicas are in sync than the topic's minInSync; the batch was not acknowledged"
        " (it may still appear once they are back)",
    ),
    ErrorInfo(
        15,
        "STALE_EPOCH",
        False,
        "broker to broker: a write from a primary that has been replaced by a later epoch",
    ),
    ErrorInfo(
        16,
        "OUTCOME_UNKNOWN",
        False,
        "the request may or may not have taken effect (a batch written but not acknowledged, an APPLY"
        " whose answer from etcd was lost); sending it again may apply it twice",
    ),
    ErrorInfo(
        17,
        "RECORDS_LOST",
        False,
        "FETCH v5: records before the consumer's position, from the offset the answer names, were lost"
        " (the partition was restored from its store); those offsets hold other records now",
    ),
    ErrorInfo(18, "TLS_REQUIRED", False, "the broker requires TLS and this connection is plaintext"),
    ErrorInfo(
        19,
        "AUTHENTICATION_REQUIRED",
        False,
        "the broker requires authentication and this connection has not authenticated",
    ),
    ErrorInfo(20, "AUTHENTICATION_FAILED", False, "the broker refused the credentials; the answer says why"),
    ErrorInfo(
        21,
        "CREDENTIALS_EXPIRED",
        False,
        "the token this connection authenticated with has expired; authenticate again to go on",
    ),
    ErrorInfo(22, "NOT_AUTHORIZED", False, "the connection's principal may not do this"),
)

_BY_CODE = {info.code: info for info in ERROR_TABLE}


def error_info(code: int) -> ErrorInfo | None:
    """The table's row for a wire error code, or None for a code this client does not know."""
    return _BY_CODE.get(code)


def error_name(code: int) -> str:
    """The name of a wire error code, or ``UNKNOWN(n)`` for a code this client does not know."""
    info = _BY_CODE.get(code)
    return info.name if info is not None else f"UNKNOWN({code})"


class BooblikError(Exception):
    """Base class of every error this client raises on purpose."""


class BrokerError(BooblikError):
    """The broker understood the request and answered it with an error code: a refusal (nothing of
    it took effect), or OUTCOME_UNKNOWN (an ``OutcomeUnknownError``: not a refusal).

    A result, not an outage: the framing was intact, so the connection stays usable.
    """

    def __init__(self, code: int, request: str = "") -> None:
        info = error_info(code)
        self.code = code
        self.name = error_name(code)
        self.request = request  # what was refused, for example ``PRODUCE orders/2`` or ``METADATA orders``
        # Whether repeating the same request later can succeed without changing it (STORAGE_ERROR).
        self.retriable = info.retriable if info is not None else False
        detail = f" ({info.description})" if info is not None else ""
        super().__init__(f"{request or 'request'} refused: {self.name}{detail}")

    def __reduce__(self):
        return (type(self), (self.code, self.request))

    @property
    def outcome_unknown(self) -> bool:
        """OUTCOME_UNKNOWN: the request may or may not have taken effect (see OutcomeUnknownError)."""
        return self.code == ErrorCode.OUTCOME_UNKNOWN


# What a lost answer leaves unknown, said in the error of a request that changes something.
UNKNOWN_RECORDS = "the records may or may not have been stored (sending them again may store them twice)"
UNKNOWN_CHANGES = "it may or may not have been applied (sending it again may apply it twice)"


class OutcomeUnknownError(BrokerError):
    """OUTCOME_UNKNOWN: the broker took the request but cannot say whether it took effect (a batch
    written on a primary that stepped down before its replicas confirmed it; an APPLY whose etcd
    transaction got no answer). Not a refusal: the records may appear later. No client sends it
    again on its own, since that may store the records twice. Also what a ``Client`` raises when it
    gives up on a PRODUCE after an earlier send of it was lost in flight (``__cause__``: the last
    error)."""

    def __init__(self, request: str = "", why: str = "the broker took it but could not confirm it") -> None:
        super().__init__(ErrorCode.OUTCOME_UNKNOWN, request)
        self.why = why
        effect = UNKNOWN_RECORDS if request.startswith("PRODUCE") else UNKNOWN_CHANGES
        self.args = (f"{request or 'request'}: outcome unknown: {why}; {effect}",)

    def __reduce__(self):
        return (type(self), (self.request, self.why))


class RevisionMismatchError(BrokerError):
    """APPLY: a change expected another revision of its topic; nothing of the APPLY was applied."""

    def __init__(
        self, request: str, change_index: int, topic: str, expected_revision: int, actual_revision: int
    ) -> None:
        super().__init__(ErrorCode.REVISION_MISMATCH, request)
        self.change_index = change_index  # which change of the APPLY, from 0
        self.topic = topic
        self.expected_revision = expected_revision
        self.actual_revision = actual_revision  # 0 when the topic does not exist
        self.args = (
            f"{request} refused: topic {topic} is at revision {actual_revision}, "
            f"change {change_index} expected {expected_revision}",
        )

    def __reduce__(self):
        return (
            type(self),
            (self.request, self.change_index, self.topic, self.expected_revision, self.actual_revision),
        )


class InvalidArgumentRefusal(BrokerError):
    """The broker does not allow a value (a spec field, a selector); ``detail`` names the field and
    what is allowed, for people: programs decide by ``code`` and ``index``, never by the text."""

    def __init__(self, request: str, index: int, detail: str) -> None:
        super().__init__(ErrorCode.INVALID_ARGUMENT, request)
        self.index = index  # the APPLY change at fault, or -1 (a LIST selector)
        self.detail = detail
        self.args = (f"{request} refused: INVALID_ARGUMENT: {detail}",)

    def __reduce__(self):
        return (type(self), (self.request, self.index, self.detail))


class OffsetMismatchError(BrokerError):
    """PRODUCE with an expected offset: the partition ends elsewhere; nothing of the batch was written."""

    def __init__(self, request: str, expected_offset: int, log_end_offset: int) -> None:
        super().__init__(ErrorCode.OFFSET_MISMATCH, request)
        self.expected_offset = expected_offset
        self.log_end_offset = log_end_offset  # where the partition ends: the offset to expect next
        self.args = (
            f"{request} refused: expected offset {expected_offset}, the partition ends at {log_end_offset}",
        )

    def __reduce__(self):
        return (type(self), (self.request, self.expected_offset, self.log_end_offset))


class NotPrimaryError(BrokerError):
    """PRODUCE v3 / FETCH v3: this broker is not the partition's primary; ``route`` (a
    ``booblik.Route``) names the one that is now (an empty primary: nobody at the moment).
    ``booblik.Client`` follows it on its own."""

    def __init__(self, request: str, route) -> None:
        super().__init__(ErrorCode.NOT_PRIMARY, request)
        self.route = route
        self.args = (f"{request} refused: not the primary; the primary is {route.primary or '(none)'}",)

    def __reduce__(self):
        return (type(self), (self.request, self.route))


class TlsRequiredError(BrokerError):
    """TLS_REQUIRED: the broker takes TLS only; it closes this plaintext connection."""

    def __init__(self, request: str = "") -> None:
        super().__init__(ErrorCode.TLS_REQUIRED, request)
        self.args = (
            f"{request or 'request'} refused: TLS_REQUIRED: the broker requires TLS: connect with TLS (tls=True)",
        )

    def __reduce__(self):
        return (type(self), (self.request,))


class AuthenticationRequiredError(BrokerError):
    """AUTHENTICATION_REQUIRED: the broker serves only connections that authenticated."""

    def __init__(self, request: str = "") -> None:
        super().__init__(ErrorCode.AUTHENTICATION_REQUIRED, request)
        self.args = (
            f"{request or 'request'} refused: AUTHENTICATION_REQUIRED: the broker requires authentication: "
            "connect with user= and password=, or token=",
        )

    def __reduce__(self):
        return (type(self), (self.request,))


class AuthenticationFailedError(BrokerError):
    """AUTHENTICATION_FAILED: the broker refused the credentials; ``reason`` is its word on why (a
    wrong password and an unknown user read the same, on purpose)."""

    def __init__(self, request: str = "", reason: str = "") -> None:
        super().__init__(ErrorCode.AUTHENTICATION_FAILED, request)
        self.reason = reason
        self.args = (f"{request or 'request'} refused: AUTHENTICATION_FAILED: {reason or '(no reason given)'}",)

    def __reduce__(self):
        return (type(self), (self.request, self.reason))


class CredentialsExpiredError(BrokerError):
    """CREDENTIALS_EXPIRED: the token this connection authenticated with expired. A connection given
    a callable token asks it for a new one, authenticates again and sends the request once more."""

    def __init__(self, request: str = "") -> None:
        super().__init__(ErrorCode.CREDENTIALS_EXPIRED, request)
        self.args = (
            f"{request or 'request'} refused: CREDENTIALS_EXPIRED: the token has expired "
            "(give token= a callable that returns a fresh one)",
        )

    def __reduce__(self):
        return (type(self), (self.request,))


class NotAuthorizedError(BrokerError):
    """NOT_AUTHORIZED: authenticated, but this principal may not do that."""

    def __init__(self, request: str = "") -> None:
        super().__init__(ErrorCode.NOT_AUTHORIZED, request)
        self.args = (f"{request or 'request'} refused: NOT_AUTHORIZED: this principal may not do that",)

    def __reduce__(self):
        return (type(self), (self.request,))


class ProtocolError(BooblikError):
    """The bytes from the broker do not follow the protocol.

    When framing itself is lost (a bad length, a wrong correlation id, a frame cut short) the
    connection is closed, because the next frame's start can no longer be found.
    """


class ConnectionClosedError(BooblikError):
    """The connection is closed, or was broken by an earlier failure (kept as ``__cause__``).

    ``outcome_unknown`` is true for a PRODUCE or APPLY that was sent and lost before its answer: it
    may or may not have taken effect (the message says so)."""

    outcome_unknown = False


def lost_in_flight(what: str, address: str, effect: str, cause: BaseException) -> ConnectionClosedError:
    """The error of a request that changes something, sent, whose answer the lost connection took."""
    error = ConnectionClosedError(f"{what}: connection to {address} lost before the answer: {effect}")
    error.outcome_unknown = True
    error.__cause__ = cause
    return error


def timed_out_in_flight(what: str, address: str, timeout, effect: str | None) -> TimeoutError:
    """A request with no answer in time; for one that changes something, its outcome is unknown."""
    error = TimeoutError(f"{what}: no answer from {address} within {timeout} s" + (f": {effect}" if effect else ""))
    error.outcome_unknown = effect is not None  # type: ignore[attr-defined]
    return error


def is_outcome_unknown(error: BaseException) -> bool:
    """Whether ``error`` leaves its request's outcome unknown: OUTCOME_UNKNOWN from the broker, or a
    PRODUCE or APPLY whose connection was lost (or timed out) after it was sent. Its records may or
    may not have been stored: sending them again may store them twice."""
    return bool(getattr(error, "outcome_unknown", False))


class CorruptRecordError(BooblikError):
    """A fetched record's CRC-32C does not match its payload. The record is never returned."""

    def __init__(self, offset: int, expected_crc: int, actual_crc: int) -> None:
        self.offset = offset
        self.expected_crc = expected_crc
        self.actual_crc = actual_crc
        super().__init__(
            f"record at offset {offset} is corrupt: stored crc32c 0x{expected_crc:08x}, "
            f"payload gives 0x{actual_crc:08x}"
        )

    def __reduce__(self):
        return (type(self), (self.offset, self.expected_crc, self.actual_crc))


class RecordExceedsMaxBytesError(BooblikError):
    """The next record is larger than ``max_bytes`` and will never arrive whole.

    Retrying is the stall; raising ``max_bytes`` is the only fix. ``record_size`` is the record's
    payload size from its header, or ``None`` when not even the header fitted in ``max_bytes``.
    """

    def __init__(self, offset: int, record_size: int | None, max_bytes: int) -> None:
        self.offset = offset
        self.record_size = record_size
        self.max_bytes = max_bytes
        if record_size is None:
            what = "does not even fit its 8-byte header"
        else:
            what = f"is {record_size} bytes ({record_size + 8} with its header)"
        super().__init__(
            f"record at offset {offset} {what}, more than max_bytes {max_bytes}: "
            "it can never arrive whole; raise max_bytes"
        )

    def __reduce__(self):
        return (type(self), (self.offset, self.record_size, self.max_bytes))


class ProducerClosedError(BooblikError):
    """A record was sent to a producer that is closed, or whose connection failed."""
