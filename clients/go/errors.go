package booblik

import (
	"errors"
	"fmt"
	"strings"
)

// ErrorCode is a wire error code (protocol section 6). Codes are never renumbered.
type ErrorCode int16

const (
	CodeNone                    ErrorCode = 0
	CodeUnknownTopicOrPartition ErrorCode = 1
	CodeOffsetOutOfRange        ErrorCode = 2
	CodeRecordTooLarge          ErrorCode = 3
	CodeUnsupportedVersion      ErrorCode = 4
	CodeCorruptRequest          ErrorCode = 5
	// CodeStorageError is an addition to the protocol's table: the broker could not write to its
	// disk. Clients that predate it show it as UNKNOWN(6).
	CodeStorageError ErrorCode = 6

	// Additions after v1 (docs/protocol.md). Codes 7, 8 and 11 carry details: the refusal is then
	// a *RevisionMismatchError, *OffsetMismatchError or *InvalidArgumentRefusal.
	CodeRevisionMismatch ErrorCode = 7
	CodeOffsetMismatch   ErrorCode = 8
	CodeNotPrimary       ErrorCode = 9  // the cluster: go to the route the answer names
	CodeNoPrimary        ErrorCode = 10 // the cluster: nobody serves the partition right now
	CodeInvalidArgument  ErrorCode = 11
	CodeTopicReadOnly    ErrorCode = 12
	// CodeClusterUnavailable: etcd cannot be reached, or a minimum revision was not reached in time.
	CodeClusterUnavailable ErrorCode = 13
	// CodeNotEnoughReplicas: fewer replicas in sync than the topic's minimum; the batch was not acknowledged.
	CodeNotEnoughReplicas ErrorCode = 14
	// CodeStaleEpoch: broker to broker only (a write from a replaced primary).
	CodeStaleEpoch ErrorCode = 15
	// CodeOutcomeUnknown: the request was taken but its outcome is not known (a batch written but
	// not acknowledged, an APPLY whose answer from etcd was lost): sending it again may apply it twice.
	CodeOutcomeUnknown ErrorCode = 16
	// CodeRecordsLost: FETCH v5 only (this client sends v2/v3): records before the consumer's
	// position were lost by a restore from the store; those offsets hold other records now.
	CodeRecordsLost ErrorCode = 17

	// Security (docs/protocol.md, AUTHENTICATE). AUTHENTICATION_FAILED carries the broker's reason:
	// the refusal is then an *AuthenticationFailedError.
	CodeTLSRequired            ErrorCode = 18 // the broker closes the connection after it
	CodeAuthenticationRequired ErrorCode = 19
	CodeAuthenticationFailed   ErrorCode = 20
	CodeCredentialsExpired     ErrorCode = 21
	CodeNotAuthorized          ErrorCode = 22
)

// codeInfo is one row of the error table, the same in every booblik client (the TypeScript
// client's @booblik/protocol errorTable).
type codeInfo struct {
	name        string
	retriable   bool // repeating the same request later can succeed without changing it
	description string
}

var codeTable = [...]codeInfo{
	CodeNone:                    {"NONE", false, "success"},
	CodeUnknownTopicOrPartition: {"UNKNOWN_TOPIC_OR_PARTITION", false, "no such topic or partition"},
	CodeOffsetOutOfRange:        {"OFFSET_OUT_OF_RANGE", false, "fetchOffset outside [logStartOffset, highWatermark]"},
	CodeRecordTooLarge:          {"RECORD_TOO_LARGE", false, "a record cannot fit in a segment"},
	CodeUnsupportedVersion:      {"UNSUPPORTED_VERSION", false, "unknown apiKey, or a version that API does not have"},
	CodeCorruptRequest:          {"CORRUPT_REQUEST", false, "the frame does not decode or breaks a rule of the protocol"},
	CodeStorageError: {"STORAGE_ERROR", true,
		"the broker could not write to its disk (full or failing); nothing of the batch was stored"},
	CodeRevisionMismatch: {"REVISION_MISMATCH", false,
		"an APPLY change expected another revision of its topic; nothing of the APPLY was applied"},
	CodeOffsetMismatch: {"OFFSET_MISMATCH", false,
		"the partition's end is not the batch's expected offset; nothing of the batch was written"},
	CodeNotPrimary: {"NOT_PRIMARY", true,
		"this broker is not the partition's primary; a client that follows routes goes to the one named"},
	CodeNoPrimary: {"NO_PRIMARY", true, "the partition has no primary at the moment (its broker is away); retry later"},
	CodeInvalidArgument: {"INVALID_ARGUMENT", false,
		"a value is not allowed (a topic spec, a selector); the answer says which and why"},
	CodeTopicReadOnly: {"TOPIC_READ_ONLY", false, "the topic is read-only: its spec refuses appends"},
	CodeClusterUnavailable: {"CLUSTER_UNAVAILABLE", true,
		"the cluster's etcd cannot be reached, or the broker has not caught up with the revision asked for"},
	CodeNotEnoughReplicas: {"NOT_ENOUGH_REPLICAS", true,
		"fewer replicas are in sync than the topic's minInSync; the batch was not acknowledged (it may still appear once they are back)"},
	CodeStaleEpoch: {"STALE_EPOCH", false,
		"broker to broker: a write from a primary that has been replaced by a later epoch"},
	CodeOutcomeUnknown: {"OUTCOME_UNKNOWN", false,
		"the request may or may not have taken effect (a batch written but not acknowledged, an APPLY whose answer from etcd was lost); sending it again may apply it twice"},
	CodeRecordsLost: {"RECORDS_LOST", false,
		"FETCH v5: records before the consumer's position, from the offset the answer names, were lost (the partition was restored from its store); those offsets hold other records now"},
	CodeTLSRequired: {"TLS_REQUIRED", false, "the broker requires TLS: connect with TLS (--tls)"},
	CodeAuthenticationRequired: {"AUTHENTICATION_REQUIRED", false,
		"the broker requires authentication: connect with credentials (a user and password, or a token)"},
	CodeAuthenticationFailed: {"AUTHENTICATION_FAILED", false, "the broker refused the credentials"},
	CodeCredentialsExpired: {"CREDENTIALS_EXPIRED", false,
		"the token this connection authenticated with has expired: authenticate again with a new one"},
	CodeNotAuthorized: {"NOT_AUTHORIZED", false, "the authenticated principal may not do this"},
}

func (c ErrorCode) info() (codeInfo, bool) {
	if c >= 0 && int(c) < len(codeTable) {
		return codeTable[c], true
	}
	return codeInfo{}, false
}

// String returns the code's wire name, or UNKNOWN(n) for a code this client does not know: a newer
// broker may send one, and showing it beats failing on it.
func (c ErrorCode) String() string {
	if info, ok := c.info(); ok {
		return info.name
	}
	return fmt.Sprintf("UNKNOWN(%d)", int16(c))
}

// Retriable says whether repeating the same request later can succeed without changing it
// (STORAGE_ERROR: the disk may have room again). False for a code this client does not know.
func (c ErrorCode) Retriable() bool {
	info, _ := c.info()
	return info.retriable
}

// Description says what the code means, or "" for a code this client does not know.
func (c ErrorCode) Description() string {
	info, _ := c.info()
	return info.description
}

// BrokerError is a refusal from the broker. The connection stays usable after one: the framing was
// intact. Match it with errors.Is against the sentinels below, or errors.As for the code.
type BrokerError struct {
	Code ErrorCode
	API  string // the refused request: PRODUCE, FETCH or METADATA; empty in the sentinels
	// Request names what was refused, topic included: "PRODUCE orders/2", "METADATA orders".
	Request string
}

// Name is the code's wire name, for example UNKNOWN_TOPIC_OR_PARTITION.
func (e *BrokerError) Name() string { return e.Code.String() }

// Retriable says whether the same request may succeed later unchanged (see ErrorCode.Retriable).
func (e *BrokerError) Retriable() bool { return e.Code.Retriable() }

func (e *BrokerError) Error() string {
	what := e.Request
	if what == "" {
		what = e.API
	}
	detail := ""
	if d := e.Code.Description(); d != "" {
		detail = " (" + d + ")"
	}
	if what == "" {
		return "booblik: broker refused: " + e.Code.String() + detail
	}
	return "booblik: " + what + " refused: " + e.Code.String() + detail
}

// Is makes errors.Is(err, ErrOffsetOutOfRange) true for any refusal with that code, and
// errors.Is(err, ErrOutcomeUnknown) true for OUTCOME_UNKNOWN.
func (e *BrokerError) Is(target error) bool {
	if target == ErrOutcomeUnknown {
		return e.Code == CodeOutcomeUnknown
	}
	t, ok := target.(*BrokerError)
	return ok && t.Code == e.Code
}

// OutcomeUnknownError is a request that may or may not have taken effect: not a refusal. The
// broker answered OUTCOME_UNKNOWN (Err is that *BrokerError: a batch written on a primary that
// stepped down before its replicas confirmed it, an APPLY whose etcd transaction got no answer), or
// the connection was lost (or the context ended) after a PRODUCE or APPLY was sent (Err says how),
// or a Client gave up on a PRODUCE after a send of it was lost so (Err: the last error). The
// records may appear later. No client sends it again on its own: that may store the records twice.
// It matches ErrOutcomeUnknown; errors.As reaches Err's types too.
type OutcomeUnknownError struct {
	Request string // "PRODUCE orders/2", "APPLY of 1 change(s)"
	Why     string // why the outcome is not known
	Err     error
}

func (e *OutcomeUnknownError) Error() string {
	effect := "it may or may not have been applied (sending it again may apply it twice)"
	if strings.HasPrefix(e.Request, apiProduce.String()) {
		effect = "the records may or may not have been stored (sending them again may store them twice)"
	}
	return "booblik: " + e.Request + ": outcome unknown: " + e.Why + "; " + effect
}

func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }
func (e *OutcomeUnknownError) Unwrap() error        { return e.Err }

// changesSomething says whether losing the answer to a request of api leaves its effect unknown.
func changesSomething(api apiKey) bool { return api == apiProduce || api == apiApply }

// Sentinels, one per refusal code, for errors.Is.
var (
	ErrUnknownTopicOrPartition error = &BrokerError{Code: CodeUnknownTopicOrPartition}
	ErrOffsetOutOfRange        error = &BrokerError{Code: CodeOffsetOutOfRange}
	ErrRecordTooLarge          error = &BrokerError{Code: CodeRecordTooLarge}
	ErrUnsupportedVersion      error = &BrokerError{Code: CodeUnsupportedVersion}
	ErrCorruptRequest          error = &BrokerError{Code: CodeCorruptRequest}
	ErrStorageError            error = &BrokerError{Code: CodeStorageError}
	ErrRevisionMismatch        error = &BrokerError{Code: CodeRevisionMismatch}
	ErrOffsetMismatch          error = &BrokerError{Code: CodeOffsetMismatch}
	ErrNotPrimary              error = &BrokerError{Code: CodeNotPrimary}
	ErrNoPrimary               error = &BrokerError{Code: CodeNoPrimary}
	// ErrArgumentRefused is the broker's INVALID_ARGUMENT; ErrInvalidArgument is the client's own.
	ErrArgumentRefused error = &BrokerError{Code: CodeInvalidArgument}
	ErrTopicReadOnly   error = &BrokerError{Code: CodeTopicReadOnly}

	ErrTLSRequired            error = &BrokerError{Code: CodeTLSRequired}
	ErrAuthenticationRequired error = &BrokerError{Code: CodeAuthenticationRequired}
	// ErrAuthenticationFailed matches the broker's AUTHENTICATION_FAILED (an
	// *AuthenticationFailedError, with its reason).
	ErrAuthenticationFailed error = &BrokerError{Code: CodeAuthenticationFailed}
	ErrCredentialsExpired   error = &BrokerError{Code: CodeCredentialsExpired}
	ErrNotAuthorized        error = &BrokerError{Code: CodeNotAuthorized}
)

// ErrOutcomeUnknown matches every error whose request may or may not have taken effect: an
// OUTCOME_UNKNOWN answer, and a PRODUCE or APPLY lost after it was sent (see OutcomeUnknownError).
var ErrOutcomeUnknown = errors.New("booblik: outcome unknown")

var (
	// ErrProtocol matches every ProtocolError.
	ErrProtocol = errors.New("booblik: protocol error")

	// ErrInvalidArgument matches every InvalidArgumentError.
	ErrInvalidArgument = errors.New("booblik: invalid argument")

	// ErrRecordExceedsMaxBytes matches every RecordExceedsMaxBytesError.
	ErrRecordExceedsMaxBytes = errors.New("booblik: record exceeds maxBytes")

	// ErrCorruptRecord matches every CorruptRecordError.
	ErrCorruptRecord = errors.New("booblik: corrupt record")

	// ErrConnBroken is returned by every call on a connection that lost step with the broker (a
	// write cut short, an answer cut short, a protocol error in the framing). Dial again.
	ErrConnBroken = errors.New("booblik: connection unusable")

	// ErrClosed is returned by calls on a closed Conn.
	ErrClosed = errors.New("booblik: connection closed")

	// ErrProducerClosed fails a Send made after Close began.
	ErrProducerClosed = errors.New("booblik: producer closed")
)

// ProtocolError is an answer that breaks the protocol: a bad frame length, a correlation id that is
// not the request's, a body that does not decode. It is the broker's fault, or the network's.
type ProtocolError struct {
	API    string // the request whose answer it was
	Detail string // what was wrong, and where
}

func (e *ProtocolError) Error() string {
	return "booblik: protocol error in " + e.API + " answer: " + e.Detail
}

func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }

// HTTPAnswerError is an HTTP server's answer where a booblik frame was expected: the address is
// the broker's HTTP port (metrics, health), not its booblik port. It matches ErrProtocol.
type HTTPAnswerError struct {
	Addr string // the address dialled
}

func (e *HTTPAnswerError) Error() string {
	return "booblik: " + e.Addr + " speaks HTTP; the booblik port is set by booblik.port"
}

func (e *HTTPAnswerError) Is(target error) bool { return target == ErrProtocol }

// InvalidArgumentError is a request the client refused to send; it says which field and why.
type InvalidArgumentError struct {
	Field string // for example "partition" or "ProducerConfig.Linger"
	Got   string
	Want  string
}

func (e *InvalidArgumentError) Error() string {
	return "booblik: " + e.Field + ": " + e.Got + ", expected " + e.Want
}

func (e *InvalidArgumentError) Is(target error) bool { return target == ErrInvalidArgument }

// RecordExceedsMaxBytesError reports a record that will never arrive whole: a fetch answer held no
// whole record, only the start of one. Retrying with the same MaxBytes would stall forever while
// looking exactly like a caught-up consumer, so the client stops and says so.
type RecordExceedsMaxBytesError struct {
	Offset   int64 // the record's offset
	Size     int32 // its payload size from its header, or -1 when not even the size arrived
	MaxBytes int32 // the fetch's maxBytes
}

func (e *RecordExceedsMaxBytesError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("booblik: record at offset %d does not arrive whole within maxBytes %d (not even its size did)",
			e.Offset, e.MaxBytes)
	}
	return fmt.Sprintf("booblik: record at offset %d is %d bytes (+%d header), more than maxBytes %d lets through",
		e.Offset, e.Size, recordHeaderBytes, e.MaxBytes)
}

func (e *RecordExceedsMaxBytesError) Is(target error) bool { return target == ErrRecordExceedsMaxBytes }

// CorruptRecordError is a stored record whose bytes do not match its CRC-32C, or whose size field
// is impossible. The record is never returned.
type CorruptRecordError struct {
	Offset int64
	Detail string
}

func (e *CorruptRecordError) Error() string {
	return fmt.Sprintf("booblik: corrupt record at offset %d: %s", e.Offset, e.Detail)
}

func (e *CorruptRecordError) Is(target error) bool { return target == ErrCorruptRecord }

// brokenError is the sticky error of a connection that lost step; it keeps the first cause.
type brokenError struct{ cause error }

func (e *brokenError) Error() string        { return "booblik: connection unusable after: " + e.cause.Error() }
func (e *brokenError) Is(target error) bool { return target == ErrConnBroken }
func (e *brokenError) Unwrap() error        { return e.cause }
