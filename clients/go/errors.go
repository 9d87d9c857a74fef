package booblik

import (
	"errors"
	"fmt"
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
)

var codeNames = [...]string{
	CodeNone:                    "NONE",
	CodeUnknownTopicOrPartition: "UNKNOWN_TOPIC_OR_PARTITION",
	CodeOffsetOutOfRange:        "OFFSET_OUT_OF_RANGE",
	CodeRecordTooLarge:          "RECORD_TOO_LARGE",
	CodeUnsupportedVersion:      "UNSUPPORTED_VERSION",
	CodeCorruptRequest:          "CORRUPT_REQUEST",
}

// String returns the code's wire name, or UNKNOWN(n) for a code this client does not know: a newer
// broker may send one, and showing it beats failing on it.
func (c ErrorCode) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("UNKNOWN(%d)", int16(c))
}

// BrokerError is a refusal from the broker. The connection stays usable after one: the framing was
// intact. Match it with errors.Is against the sentinels below, or errors.As for the code.
type BrokerError struct {
	Code ErrorCode
	API  string // the refused request: PRODUCE, FETCH or METADATA; empty in the sentinels
}

// Name is the code's wire name, for example UNKNOWN_TOPIC_OR_PARTITION.
func (e *BrokerError) Name() string { return e.Code.String() }

func (e *BrokerError) Error() string {
	if e.API == "" {
		return "booblik: broker refused: " + e.Code.String()
	}
	return "booblik: broker refused " + e.API + ": " + e.Code.String()
}

// Is makes errors.Is(err, ErrOffsetOutOfRange) true for any refusal with that code.
func (e *BrokerError) Is(target error) bool {
	t, ok := target.(*BrokerError)
	return ok && t.Code == e.Code
}

// Sentinels, one per refusal code, for errors.Is.
var (
	ErrUnknownTopicOrPartition error = &BrokerError{Code: CodeUnknownTopicOrPartition}
	ErrOffsetOutOfRange        error = &BrokerError{Code: CodeOffsetOutOfRange}
	ErrRecordTooLarge          error = &BrokerError{Code: CodeRecordTooLarge}
	ErrUnsupportedVersion      error = &BrokerError{Code: CodeUnsupportedVersion}
	ErrCorruptRequest          error = &BrokerError{Code: CodeCorruptRequest}
)

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
