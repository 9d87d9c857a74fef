"""A refusal from the broker as the error it raises, with the details its body carries.

In v1 an error answer has no body. An answer to a request of the additions (APPLY, LIST, PRODUCE v2)
carries one for three codes, read here; for every other code the bytes, if any, are ignored:

    REVISION_MISMATCH (7) => changeIndex:int32 topic:string expectedRevision:int64 actualRevision:int64
    OFFSET_MISMATCH (8)   => logEndOffset:int64
    INVALID_ARGUMENT (11) => index:int32 message:string
    NOT_PRIMARY (9)       => route:Route   (to PRODUCE v3 and FETCH v3)
    AUTHENTICATION_FAILED (20) => reason:string

The security codes (18 to 22) get their own classes, whatever the body.
"""

from __future__ import annotations

from .errors import (
    AuthenticationFailedError,
    AuthenticationRequiredError,
    BrokerError,
    CredentialsExpiredError,
    ErrorCode,
    InvalidArgumentRefusal,
    NotPrimaryError,
    OffsetMismatchError,
    NotAuthorizedError,
    OutcomeUnknownError,
    ProtocolError,
    RevisionMismatchError,
    TlsRequiredError,
)
from .topics import _decode_route
from .wire import BodyReader

# The expected offset a refusal reports when the caller did not say (a v1 PRODUCE never gets code 8).
EXPECTED_OFFSET_UNKNOWN = -1

_BODILESS = {
    ErrorCode.TLS_REQUIRED: TlsRequiredError,
    ErrorCode.AUTHENTICATION_REQUIRED: AuthenticationRequiredError,
    ErrorCode.CREDENTIALS_EXPIRED: CredentialsExpiredError,
    ErrorCode.NOT_AUTHORIZED: NotAuthorizedError,
}


def refusal(code: int, request: str, body: bytes, expected_offset: int | None = None) -> BrokerError:
    """The error for ``code``; a ProtocolError when a body the code promises does not decode.
    ``expected_offset``: the one a PRODUCE v2 named, for an OffsetMismatchError to report."""
    if code == ErrorCode.OUTCOME_UNKNOWN:  # not a refusal: said as such
        return OutcomeUnknownError(request)
    bodiless = _BODILESS.get(code)
    if bodiless is not None:  # any bytes are ignored, as for the other codes without a body
        return bodiless(request)
    if code == ErrorCode.AUTHENTICATION_FAILED:
        if not body:
            return AuthenticationFailedError(request)
        reader = BodyReader(f"{request} refusal {code}", body)
        failed = AuthenticationFailedError(request, reader.string("reason"))
        reader.end()
        return failed
    if not body:
        return BrokerError(code, request)
    reader = BodyReader(f"{request} refusal {code}", body)
    if code == ErrorCode.REVISION_MISMATCH:
        error: BrokerError = RevisionMismatchError(
            request,
            reader.i32("changeIndex"),
            reader.string("topic"),
            reader.i64("expectedRevision"),
            reader.i64("actualRevision"),
        )
    elif code == ErrorCode.INVALID_ARGUMENT:
        index = reader.i32("index")
        if index < -1:
            raise ProtocolError(f"{request} refusal: index {index}, expected >= -1")
        error = InvalidArgumentRefusal(request, index, reader.string("message"))
    elif code == ErrorCode.OFFSET_MISMATCH:
        expected = EXPECTED_OFFSET_UNKNOWN if expected_offset is None else expected_offset
        error = OffsetMismatchError(request, expected, reader.i64("logEndOffset"))
    elif code == ErrorCode.NOT_PRIMARY:
        error = NotPrimaryError(request, _decode_route(reader, "route"))
    else:
        return BrokerError(code, request)
    reader.end()
    return error
