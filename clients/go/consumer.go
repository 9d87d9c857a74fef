package booblik

import (
	"context"
	"iter"
	"time"
)

// Consumer reads one partition from a position it keeps itself. It uses its Conn for every fetch,
// so it shares the Conn's rule: one goroutine at a time.
//
// The position only ever moves past whole, verified records. Set MaxWait, MaxBytes and MinBytes
// before reading.
type Consumer struct {
	// MaxWait is how long the broker may hold a fetch that finds nothing (default 5 s); a context
	// deadline shortens it to half the time left. At 0 an idle consumer asks again at once, in a
	// busy loop.
	MaxWait time.Duration
	// MaxBytes caps one fetch (default 1 MiB). A record larger than this is reported as
	// ErrRecordExceedsMaxBytes; raise it to read such a record.
	MaxBytes int32
	// MinBytes is how much a held fetch waits for (default 0: any record ends the wait).
	MinBytes int32

	source        fetcher // a Conn, or a Client that follows routes
	topic         string
	partition     int32
	position      int64
	highWatermark int64 // from the last answer; -1 before the first
}

// fetcher is where a Consumer's fetches go.
type fetcher interface {
	Fetch(ctx context.Context, req FetchRequest) (*FetchResult, error)
}

// Consumer returns a Consumer of one partition that starts at offset.
func (c *Conn) Consumer(topic string, partition int32, offset int64) *Consumer {
	return newConsumer(c, topic, partition, offset)
}

func newConsumer(source fetcher, topic string, partition int32, offset int64) *Consumer {
	return &Consumer{
		MaxWait:       DefaultMaxWait,
		MaxBytes:      DefaultFetchMaxBytes,
		source:        source,
		topic:         topic,
		partition:     partition,
		position:      offset,
		highWatermark: -1,
	}
}

// Position is the offset of the next record the Consumer will return.
func (c *Consumer) Position() int64 { return c.position }

// SeekTo moves the position; the next fetch starts there.
func (c *Consumer) SeekTo(offset int64) { c.position = offset }

// Lag is how many records the position is behind the high watermark of the last answer: 0 when
// caught up, -1 before the first answer (not known yet, which is not the same as caught up).
func (c *Consumer) Lag() int64 {
	if c.highWatermark < 0 {
		return -1
	}
	return max(c.highWatermark-c.position, 0)
}

func (c *Consumer) fetch(ctx context.Context) (*FetchResult, error) {
	wait := c.MaxWait
	if deadline, ok := ctx.Deadline(); ok {
		// Half the time left for the broker's wait, half for the way back: an idle poll then ends
		// empty before its deadline instead of failing with it (and leaving an answer owed).
		wait = max(min(wait, time.Until(deadline)/2), 0)
	}
	res, err := c.source.Fetch(ctx, FetchRequest{
		Topic:     c.topic,
		Partition: c.partition,
		Offset:    c.position,
		MaxBytes:  c.MaxBytes,
		MaxWait:   wait,
		MinBytes:  c.MinBytes,
	})
	if res != nil {
		c.highWatermark = res.HighWatermark
	}
	return res, err
}

// Poll makes one fetch at the position and returns its whole records, advancing past them. No
// records and no error means caught up: the broker waited MaxWait and nothing came. When whole
// records precede a corrupt one, Poll returns those; the next Poll starts at the corrupt record and
// returns its error.
func (c *Consumer) Poll(ctx context.Context) ([]Record, error) {
	res, err := c.fetch(ctx)
	if res != nil && len(res.Records) > 0 {
		c.position = res.NextOffset
		return res.Records, nil
	}
	return nil, err
}

// Records reads the partition from the position on, as a range-over-func iterator running on the
// caller's goroutine:
//
//	for record, err := range consumer.Records(ctx) {
//		if err != nil { ... }
//		fmt.Println(record.Offset, record.Payload)
//	}
//
// It never ends on its own: at the high watermark it waits for more. Cancelling ctx ends it without
// an error. Any other error is yielded once and ends it. The position advances one record at a
// time, before that record is yielded, so breaking out of the loop loses nothing and repeats nothing.
func (c *Consumer) Records(ctx context.Context) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for {
			res, err := c.fetch(ctx)
			if ctx.Err() != nil {
				return // the caller's own end; whatever arrived is fetched again next time
			}
			if res == nil || len(res.Records) == 0 {
				if err != nil {
					yield(Record{}, err)
					return
				}
				continue // caught up: the wait ended empty, which is not the end
			}
			for _, record := range res.Records {
				c.position++
				if !yield(record, nil) {
					return
				}
			}
			// An error after whole records returns on the next fetch, which starts at its record.
		}
	}
}
