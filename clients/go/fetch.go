package booblik

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// FETCH request v2  => topic partition fetchOffset maxBytes maxWaitMillis minBytes
// FETCH response v2 => highWatermark payloadBytes [size crc32c payload]

// FetchRequest asks for records of one partition from Offset on.
type FetchRequest struct {
	Topic     string
	Partition int32
	Offset    int64
	// MaxBytes caps the answer's record bytes; 0 means DefaultFetchMaxBytes. The broker cuts at
	// this byte, so the last record may arrive incomplete; it is dropped and fetched again.
	MaxBytes int32
	// MaxWait lets the broker hold the request until MinBytes are available; 0 answers at once.
	// The broker caps waits at 60 s, so longer ones are sent as 60 s.
	MaxWait time.Duration
	// MinBytes is how many record bytes are worth answering for; 0 and 1 both mean any.
	MinBytes int32
}

// Record is one stored record and where it is in its partition.
type Record struct {
	Offset  int64
	Payload []byte
}

// FetchResult is one fetch answer.
type FetchResult struct {
	HighWatermark int64    // the partition's end when the broker answered
	Records       []Record // whole, checksum-verified records at Offset, Offset+1, ...
	NextOffset    int64    // Offset + len(Records): where the next fetch starts
}

// Fetch sends one FETCH v2 request and returns the whole records of its answer.
//
// An answer at the high watermark is empty, not an error. A record cut by MaxBytes is dropped, to be
// fetched again from its start. When an answer holds no whole record at all, the next record can
// never fit MaxBytes and Fetch returns a *RecordExceedsMaxBytesError (ErrRecordExceedsMaxBytes).
// A record whose checksum does not match is never returned: Fetch returns a *CorruptRecordError
// (ErrCorruptRecord) together with a result holding the whole records before it.
func (c *Conn) Fetch(ctx context.Context, req FetchRequest) (*FetchResult, error) {
	return c.fetchAs(ctx, req, fetchVersion)
}

// fetchAs is Fetch at a version: 2, or 3 from a client that follows routes (see NotPrimaryError).
func (c *Conn) fetchAs(ctx context.Context, req FetchRequest, version int16) (*FetchResult, error) {
	if req.MaxBytes == 0 {
		req.MaxBytes = DefaultFetchMaxBytes
	}
	if err := validFetch(req); err != nil {
		return nil, err
	}
	frame := appendFetchRequest(beginFrame(apiFetch, version), req)
	body, err := c.exchange(ctx, apiFetch, fmt.Sprintf("FETCH %s/%d", req.Topic, req.Partition), frame, true)
	if err != nil {
		return nil, err
	}
	return decodeFetchResponse(body, req.Offset, req.MaxBytes)
}

func validFetch(req FetchRequest) error {
	if err := validTopic("Topic", req.Topic); err != nil {
		return err
	}
	if err := validPartition(req.Partition); err != nil {
		return err
	}
	switch {
	case req.Offset < 0:
		return &InvalidArgumentError{Field: "Offset", Got: fmt.Sprint(req.Offset), Want: ">= 0"}
	case req.MaxBytes < 0 || req.MaxBytes > fetchMaxBytesMax:
		return &InvalidArgumentError{Field: "MaxBytes", Got: fmt.Sprint(req.MaxBytes),
			Want: fmt.Sprintf("1..%d (a full answer must fit one frame)", fetchMaxBytesMax)}
	case req.MaxWait < 0:
		return &InvalidArgumentError{Field: "MaxWait", Got: req.MaxWait.String(), Want: ">= 0"}
	case req.MinBytes < 0 || req.MinBytes > req.MaxBytes:
		return &InvalidArgumentError{Field: "MinBytes", Got: fmt.Sprint(req.MinBytes),
			Want: fmt.Sprintf("0..MaxBytes (%d)", req.MaxBytes)}
	}
	return nil
}

// waitMillis converts a wait to whole milliseconds, capped where the broker caps it and rounded up
// so that a wait shorter than a millisecond is still a wait.
func waitMillis(d time.Duration) int32 {
	if d > fetchWaitMax {
		d = fetchWaitMax
	}
	return int32((d + time.Millisecond - 1) / time.Millisecond)
}

func appendFetchRequest(b []byte, req FetchRequest) []byte {
	b = appendString(b, req.Topic)
	b = appendInt32(b, req.Partition)
	b = appendInt64(b, req.Offset)
	b = appendInt32(b, req.MaxBytes)
	b = appendInt32(b, waitMillis(req.MaxWait))
	b = appendInt32(b, req.MinBytes)
	return b
}

func decodeFetchResponse(body []byte, offset int64, maxBytes int32) (*FetchResult, error) {
	d := decoder{api: apiFetch, b: body}
	hw := d.int64("highWatermark")
	payloadBytes := d.int32("payloadBytes")
	if d.err != nil {
		return nil, d.err
	}
	if hw < 0 {
		d.fail("highWatermark %d, expected >= 0", hw)
		return nil, d.err
	}
	// The records' extent is known twice, from payloadBytes and from the frame; if they disagree,
	// one of them is wrong and nothing in this answer can be trusted.
	if int(payloadBytes) != d.remaining() {
		d.fail("payloadBytes %d, expected %d (the bytes left in the frame)", payloadBytes, d.remaining())
		return nil, d.err
	}
	records, err := splitRecords(d.take(int(payloadBytes), "records"), offset, maxBytes)
	return &FetchResult{HighWatermark: hw, Records: records, NextOffset: offset + int64(len(records))}, err
}

// splitRecords cuts a FETCH payload into whole, verified records. A cut tail is dropped (the next
// fetch asks for it again from its start); only a tail with nothing whole before it is an error.
func splitRecords(payload []byte, offset int64, maxBytes int32) ([]Record, error) {
	var records []Record
	for pos := 0; pos < len(payload); {
		next := offset + int64(len(records))
		left := len(payload) - pos
		size := int32(-1)
		if left >= 4 {
			size = int32(binary.BigEndian.Uint32(payload[pos:]))
			if size <= 0 {
				return records, &CorruptRecordError{Offset: next, Detail: fmt.Sprintf("size %d, expected > 0", size)}
			}
		}
		if left < recordHeaderBytes || int64(size) > int64(left-recordHeaderBytes) {
			if len(records) == 0 {
				return nil, &RecordExceedsMaxBytesError{Offset: next, Size: size, MaxBytes: maxBytes}
			}
			return records, nil // truncated tail: never checksummed, never returned
		}
		stored := binary.BigEndian.Uint32(payload[pos+4:])
		start, end := pos+recordHeaderBytes, pos+recordHeaderBytes+int(size)
		record := payload[start:end:end] // capped, so a caller's append cannot overwrite the next record
		if got := crc32c(record); got != stored {
			return records, &CorruptRecordError{Offset: next,
				Detail: fmt.Sprintf("crc32c %#08x, stored %#08x", got, stored)}
		}
		records = append(records, Record{Offset: next, Payload: record})
		pos = end
	}
	return records, nil
}
