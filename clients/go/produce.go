package booblik

import (
	"context"
	"errors"
	"fmt"
)

// PRODUCE request v1  => topic partition ackPolicy recordCount [size record]
// PRODUCE request v2  => topic partition ackPolicy expectedOffset recordCount [size record]
// PRODUCE response    => baseOffset logEndOffset

const (
	produceVersion = 1

	noExpectedOffset = -1
)

// AckPolicy says how long the broker waits before answering a write. Its zero value is AckWritten,
// so a zero ProducerConfig never loses records silently. The constants are not the wire's numbers
// (AckNone is 0 there); use them by name.
type AckPolicy int8

const (
	// AckWritten: answered once the batch is in the log (readable by fetches, in the page cache).
	// The zero value.
	AckWritten AckPolicy = iota
	// AckNone: the broker never answers, not even a refusal. The only mode in which an accepted
	// record may be lost without anyone being told; use it when losing some is fine.
	AckNone
	// AckForced: answered once the batch is on stable storage.
	AckForced
)

// wire is the ackPolicy byte of a PRODUCE request (protocol section 4).
func (a AckPolicy) wire() int8 {
	switch a {
	case AckNone:
		return 0
	case AckWritten:
		return 1
	}
	return 2 // AckForced; validAck has refused anything else
}

func (a AckPolicy) String() string {
	switch a {
	case AckNone:
		return "none"
	case AckWritten:
		return "written"
	case AckForced:
		return "forced"
	}
	return fmt.Sprintf("AckPolicy(%d)", int8(a))
}

func validAck(field string, a AckPolicy) error {
	if a < AckWritten || a > AckForced {
		return &InvalidArgumentError{Field: field, Got: fmt.Sprint(int8(a)), Want: "AckNone, AckWritten or AckForced"}
	}
	return nil
}

// ProduceResult is where a batch landed: its records have offsets BaseOffset, BaseOffset+1, ...
type ProduceResult struct {
	Partition    int32 // the partition written
	BaseOffset   int64 // offset of the batch's first record
	LogEndOffset int64 // the partition's end when the broker answered; may be past this batch
}

// Produce appends records to one partition as one batch; they land contiguously, in order.
//
// With AckNone it returns (nil, nil) as soon as the request is written: no offset exists until the
// broker reaches the batch, and the broker sends nothing back, so there is nothing to return.
//
// Records go to the broker as given: a zero-length record is the broker's to refuse
// (CORRUPT_REQUEST, and nothing of the batch is written).
func (c *Conn) Produce(ctx context.Context, topic string, partition int32, records [][]byte, ack AckPolicy) (*ProduceResult, error) {
	return c.produce(ctx, topic, partition, noExpectedOffset, records, ack)
}

// ProduceAt is Produce, landing the batch only if the partition ends at expectedOffset (PRODUCE
// v2): a single writer fences itself. Otherwise nothing of the batch is written and the call fails
// with an *OffsetMismatchError (errors.Is ErrOffsetMismatch) carrying where the partition ends.
func (c *Conn) ProduceAt(ctx context.Context, topic string, partition int32, expectedOffset int64, records [][]byte, ack AckPolicy) (*ProduceResult, error) {
	if expectedOffset < 0 {
		return nil, &InvalidArgumentError{Field: "expectedOffset", Got: fmt.Sprint(expectedOffset), Want: ">= 0"}
	}
	res, err := c.produce(ctx, topic, partition, expectedOffset, records, ack)
	var mismatch *OffsetMismatchError
	if errors.As(err, &mismatch) {
		mismatch.ExpectedOffset = expectedOffset
	}
	return res, err
}

func (c *Conn) produce(ctx context.Context, topic string, partition int32, expectedOffset int64, records [][]byte, ack AckPolicy) (*ProduceResult, error) {
	return c.produceAs(ctx, topic, partition, expectedOffset, records, ack, false)
}

// produceAs is produce; followRoutes sends PRODUCE v3 (v2's bytes, the expected offset -1 when
// there is none), which a cluster broker that is not the primary refuses with *NotPrimaryError.
func (c *Conn) produceAs(ctx context.Context, topic string, partition int32, expectedOffset int64, records [][]byte, ack AckPolicy, followRoutes bool) (*ProduceResult, error) {
	if err := validTopic("topic", topic); err != nil {
		return nil, err
	}
	if err := validPartition(partition); err != nil {
		return nil, err
	}
	if err := validAck("ack", ack); err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, &InvalidArgumentError{Field: "records", Got: "none", Want: "at least one"}
	}
	extra := expectingBytes(expectedOffset)
	if followRoutes {
		extra = 8
	}
	if n := produceRequestBytes(topic, records) + extra; n > frameBytesMax {
		return nil, &InvalidArgumentError{Field: "records", Got: fmt.Sprintf("%d bytes in one request", n),
			Want: fmt.Sprintf("<= %d (the broker drops a connection that sends a larger frame)", frameBytesMax)}
	}
	var frame []byte
	if followRoutes {
		frame = appendProduceRequestAt(beginFrame(apiProduce, routedVersion), topic, partition, ack, expectedOffset, records)
	} else if expectedOffset == noExpectedOffset {
		frame = appendProduceRequest(beginFrame(apiProduce, produceVersion), topic, partition, ack, records)
	} else {
		frame = appendProduceRequestAt(beginFrame(apiProduce, produceExpectingVersion), topic, partition, ack, expectedOffset, records)
	}
	body, err := c.exchange(ctx, apiProduce, fmt.Sprintf("PRODUCE %s/%d", topic, partition), frame, ack != AckNone)
	if err != nil || ack == AckNone {
		return nil, err
	}
	return decodeProduceResponse(body, partition)
}

// produceRequestBytes is the frame length (after the length field) a PRODUCE request will have.
func produceRequestBytes(topic string, records [][]byte) int {
	n := requestHeaderBytes + produceFixedBytes(topic)
	for _, r := range records {
		n += 4 + len(r)
	}
	return n
}

// produceFixedBytes is a PRODUCE payload without its records: topic, partition, ack, count.
func produceFixedBytes(topic string) int { return 2 + len(topic) + 4 + 1 + 4 }

// expectingBytes is what PRODUCE v2 adds to a request: the expected offset, when there is one.
func expectingBytes(expectedOffset int64) int {
	if expectedOffset == noExpectedOffset {
		return 0
	}
	return 8
}

func appendProduceRequest(b []byte, topic string, partition int32, ack AckPolicy, records [][]byte) []byte {
	b = appendString(b, topic)
	b = appendInt32(b, partition)
	b = appendInt8(b, ack.wire())
	return appendRecords(b, records)
}

func appendProduceRequestAt(b []byte, topic string, partition int32, ack AckPolicy, expectedOffset int64, records [][]byte) []byte {
	b = appendString(b, topic)
	b = appendInt32(b, partition)
	b = appendInt8(b, ack.wire())
	b = appendInt64(b, expectedOffset)
	return appendRecords(b, records)
}

func appendRecords(b []byte, records [][]byte) []byte {
	b = appendInt32(b, int32(len(records)))
	for _, r := range records {
		b = appendInt32(b, int32(len(r)))
		b = append(b, r...)
	}
	return b
}

func decodeProduceResponse(body []byte, partition int32) (*ProduceResult, error) {
	d := decoder{api: apiProduce, b: body}
	res := &ProduceResult{Partition: partition, BaseOffset: d.int64("baseOffset"), LogEndOffset: d.int64("logEndOffset")}
	if err := d.done(); err != nil {
		return nil, err
	}
	if res.BaseOffset < 0 || res.LogEndOffset < res.BaseOffset {
		d.fail("baseOffset %d, logEndOffset %d: expected 0 <= baseOffset <= logEndOffset", res.BaseOffset, res.LogEndOffset)
		return nil, d.err
	}
	return res, nil
}
