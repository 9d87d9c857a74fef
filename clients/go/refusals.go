package booblik

import "fmt"

// Refusals that carry details. In v1 an error answer has no body; an answer to a request of the
// additions (APPLY, LIST, PRODUCE v2) carries one for three codes:
//
//	REVISION_MISMATCH (7) => changeIndex:int32 topic:string expectedRevision:int64 actualRevision:int64
//	OFFSET_MISMATCH (8)   => logEndOffset:int64
//	INVALID_ARGUMENT (11) => index:int32 message:string
//	NOT_PRIMARY (9)       => route:Route   (to PRODUCE v3 and FETCH v3; see NotPrimaryError)
//	AUTHENTICATION_FAILED (20) => reason:string
//
// Each error below embeds the BrokerError it is, so errors.Is(err, ErrRevisionMismatch) and
// errors.As(err, &brokerErr) keep working.

// RevisionMismatchError is an APPLY refused because a change expected another revision of its
// topic. Nothing of the APPLY was applied.
type RevisionMismatchError struct {
	BrokerError
	ChangeIndex      int // which change of the APPLY, from 0
	Topic            string
	ExpectedRevision int64
	ActualRevision   int64 // 0 when the topic does not exist
}

func (e *RevisionMismatchError) Error() string {
	return fmt.Sprintf("booblik: %s refused: topic %s is at revision %d, change %d expected %d",
		e.Request, e.Topic, e.ActualRevision, e.ChangeIndex, e.ExpectedRevision)
}

func (e *RevisionMismatchError) Unwrap() error { return &e.BrokerError }

// InvalidArgumentRefusal is a value the broker does not allow: a spec field, a selector. Detail
// names the field and what is allowed, for people; programs decide by the code and Index.
type InvalidArgumentRefusal struct {
	BrokerError
	Index  int // the APPLY change at fault, or -1 (a LIST selector)
	Detail string
}

func (e *InvalidArgumentRefusal) Error() string {
	return "booblik: " + e.Request + " refused: INVALID_ARGUMENT: " + e.Detail
}

func (e *InvalidArgumentRefusal) Unwrap() error { return &e.BrokerError }

// OffsetMismatchError is a PRODUCE with an expected offset refused because the partition ends
// elsewhere. Nothing of the batch was written.
type OffsetMismatchError struct {
	BrokerError
	ExpectedOffset int64 // the offset the batch was to land at
	LogEndOffset   int64 // where the partition ends: the offset to expect next
}

func (e *OffsetMismatchError) Error() string {
	return fmt.Sprintf("booblik: %s refused: expected offset %d, the partition ends at %d", e.Request, e.ExpectedOffset, e.LogEndOffset)
}

func (e *OffsetMismatchError) Unwrap() error { return &e.BrokerError }

// AuthenticationFailedError is an AUTHENTICATE the broker refused: a wrong user name or password
// (the broker does not say which), a bad or expired token, or too many failed attempts. Reason is
// the broker's, for people. Sending the same credentials again fails the same way.
type AuthenticationFailedError struct {
	BrokerError
	Reason string
}

func (e *AuthenticationFailedError) Error() string {
	if e.Reason == "" {
		return "booblik: " + e.Request + " refused: AUTHENTICATION_FAILED"
	}
	return "booblik: " + e.Request + " refused: AUTHENTICATION_FAILED: " + e.Reason
}

func (e *AuthenticationFailedError) Unwrap() error { return &e.BrokerError }

// refusal is the error for a refused request, with the details its body carries for the codes
// that have them; a *ProtocolError when those do not decode. Bytes after a code without details
// are ignored, as the protocol asks.
func refusal(code ErrorCode, api apiKey, request string, body []byte) error {
	base := BrokerError{Code: code, API: api.String(), Request: request}
	if code == CodeOutcomeUnknown { // not a refusal: said as such
		return &OutcomeUnknownError{Request: request, Why: "the broker took it but could not confirm it", Err: &base}
	}
	if code == CodeAuthenticationFailed && len(body) == 0 {
		return &AuthenticationFailedError{BrokerError: base}
	}
	if len(body) == 0 {
		return &base
	}
	d := decoder{api: api, b: body}
	var err error
	switch code {
	case CodeRevisionMismatch:
		e := &RevisionMismatchError{BrokerError: base}
		e.ChangeIndex = int(d.int32("refusal changeIndex"))
		e.Topic = d.string("refusal topic")
		e.ExpectedRevision = d.int64("refusal expectedRevision")
		e.ActualRevision = d.int64("refusal actualRevision")
		err = e
	case CodeInvalidArgument:
		e := &InvalidArgumentRefusal{BrokerError: base}
		e.Index = int(d.int32("refusal index"))
		if d.err == nil && e.Index < -1 {
			d.fail("refusal index: %d, expected >= -1", e.Index)
		}
		e.Detail = d.string("refusal message")
		err = e
	case CodeNotPrimary:
		err = &NotPrimaryError{BrokerError: base, Route: readRoute(&d, "refusal route")}
	case CodeAuthenticationFailed:
		err = &AuthenticationFailedError{BrokerError: base, Reason: d.string("refusal reason")}
	case CodeOffsetMismatch:
		err = &OffsetMismatchError{BrokerError: base, ExpectedOffset: noExpectedOffset, LogEndOffset: d.int64("refusal logEndOffset")}
	default:
		return &base
	}
	if derr := d.done(); derr != nil {
		return derr
	}
	return err
}
