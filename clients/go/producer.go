package booblik

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ProducerConfig tunes a Producer. The zero value is the defaults: every field left at zero takes
// its default (ProducerConfig{} is DefaultProducerConfig()).
type ProducerConfig struct {
	// MaxBatchSize is the most records in one PRODUCE request; a batch this full is sent at once.
	// 0 means DefaultMaxBatchSize.
	MaxBatchSize int
	// Linger is how long a batch's first record waits for more before the batch is sent. 0 means
	// DefaultLinger; NoLinger sends as soon as the connection is free (records arriving meanwhile
	// still share a request).
	Linger time.Duration
	// Ack is the acknowledgement asked for every batch; the zero value is AckWritten.
	Ack AckPolicy
	// RequestTimeout bounds each PRODUCE exchange. 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// NoLinger, as ProducerConfig.Linger, sends each batch without waiting for company.
const NoLinger time.Duration = -1

// DefaultProducerConfig returns the defaults: DefaultMaxBatchSize, DefaultLinger, AckWritten and
// DefaultRequestTimeout. The zero ProducerConfig means the same.
func DefaultProducerConfig() ProducerConfig {
	return ProducerConfig{
		MaxBatchSize:   DefaultMaxBatchSize,
		Linger:         DefaultLinger,
		Ack:            AckWritten,
		RequestTimeout: DefaultRequestTimeout,
	}
}

// withDefaults fills the fields left at zero, and turns NoLinger into a wait of nothing.
func (cfg ProducerConfig) withDefaults() ProducerConfig {
	if cfg.MaxBatchSize == 0 {
		cfg.MaxBatchSize = DefaultMaxBatchSize
	}
	switch {
	case cfg.Linger == 0:
		cfg.Linger = DefaultLinger
	case cfg.Linger == NoLinger:
		cfg.Linger = 0
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	return cfg
}

func (cfg ProducerConfig) validate() error {
	switch {
	case cfg.MaxBatchSize < 1:
		return &InvalidArgumentError{Field: "ProducerConfig.MaxBatchSize", Got: fmt.Sprint(cfg.MaxBatchSize),
			Want: ">= 1, or 0 for the default"}
	case cfg.Linger < 0:
		return &InvalidArgumentError{Field: "ProducerConfig.Linger", Got: cfg.Linger.String(),
			Want: ">= 0 (0 for the default), or NoLinger"}
	case cfg.RequestTimeout < 0:
		return &InvalidArgumentError{Field: "ProducerConfig.RequestTimeout", Got: cfg.RequestTimeout.String(),
			Want: "> 0, or 0 for the default (without one, a silent broker stalls the producer for good)"}
	}
	return validAck("ProducerConfig.Ack", cfg.Ack)
}

// Producer batches records that arrive one at a time, per partition, and writes each batch as one
// PRODUCE request. It owns its Conn: one goroutine inside it is the only writer to the socket, so
// answers can never interleave. Do not use the Conn after handing it to NewProducer; Close closes it.
//
// A Producer is safe for concurrent use. Batches of one partition are sent in the order their
// records were sent. Close it to send what is still queued.
type Producer struct {
	conn producerTarget // a Conn, or a Client that follows routes
	cfg  ProducerConfig

	mu          sync.Mutex
	room        *sync.Cond              // signalled when queued bytes drop or the producer closes
	open        map[partitionKey]*batch // batches still gathering records
	queue       []work                  // ready to send, in order
	queuedBytes int                     // of records sent but not yet answered
	closed      bool
	wake        chan struct{} // capacity 1: "look at the queue again"
	done        chan struct{} // closed when the writer goroutine has finished
	closeErr    error         // the connection's, set by the writer as it ends
}

type partitionKey struct {
	topic     string
	partition int32
}

type batch struct {
	key        partitionKey
	records    [][]byte
	deliveries []*Delivery
	bytes      int       // the request's frame length so far
	queued     int       // of it, the records' share, counted in queuedBytes
	due        time.Time // when Linger runs out
}

// work is a batch to send, or a flush marker to close once everything before it was sent.
type work struct {
	batch   *batch
	flushed chan error
}

// producerTarget is where a Producer's batches go.
type producerTarget interface {
	Produce(ctx context.Context, topic string, partition int32, records [][]byte, ack AckPolicy) (*ProduceResult, error)
	Close() error
}

// NewProducer starts a Producer on conn, which it owns from now on.
func NewProducer(conn *Conn, cfg ProducerConfig) (*Producer, error) {
	return newProducer(conn, cfg)
}

// NewClientProducer starts a Producer on a Client, which it owns from now on: each batch goes to its
// partition's primary, following routes (see Client).
func NewClientProducer(client *Client, cfg ProducerConfig) (*Producer, error) {
	return newProducer(client, cfg)
}

func newProducer(conn producerTarget, cfg ProducerConfig) (*Producer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p := &Producer{
		conn: conn,
		cfg:  cfg,
		open: make(map[partitionKey]*batch),
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
	p.room = sync.NewCond(&p.mu)
	go p.run()
	return p, nil
}

// Delivery is the outcome of one Send, known once its batch is answered.
type Delivery struct {
	done   chan struct{}
	offset int64
	err    error
}

func resolved(offset int64, err error) *Delivery {
	d := &Delivery{done: make(chan struct{})}
	d.resolve(offset, err)
	return d
}

func (d *Delivery) resolve(offset int64, err error) {
	d.offset, d.err = offset, err
	close(d.done)
}

// Done is closed once the outcome is known.
func (d *Delivery) Done() <-chan struct{} { return d.done }

// Await waits for the record's offset. With AckNone the offset is OffsetUnknown (-1) and a nil error
// means only that the request was written. If ctx ends first, Await returns ctx's error; the record
// is still sent.
func (d *Delivery) Await(ctx context.Context) (int64, error) {
	select {
	case <-d.done:
		return d.offset, d.err
	case <-ctx.Done():
		return OffsetUnknown, ctx.Err()
	}
}

// Send queues a record for a partition of a topic and returns at once; the Delivery tells the
// outcome. Keep the record unchanged until then: the producer holds it, it does not copy it. Send
// waits only when 64 MiB are already queued, until the broker has taken some. After Close begins,
// the Delivery fails with ErrProducerClosed.
//
// Unlike Conn.Produce, Send refuses an empty record itself: in a batch, the broker's refusal of one
// record fails every record that shares its request.
func (p *Producer) Send(topic string, partition int32, record []byte) *Delivery {
	if err := validTopic("topic", topic); err != nil {
		return resolved(OffsetUnknown, err)
	}
	if err := validPartition(partition); err != nil {
		return resolved(OffsetUnknown, err)
	}
	if len(record) == 0 {
		return resolved(OffsetUnknown, emptyRecordError())
	}
	fixed := requestHeaderBytes + produceFixedBytes(topic)
	size := 4 + len(record)
	if fixed+size > frameBytesMax {
		return resolved(OffsetUnknown, &InvalidArgumentError{Field: "record", Got: fmt.Sprintf("%d bytes", len(record)),
			Want: fmt.Sprintf("at most %d (one request is at most %d bytes)", frameBytesMax-fixed-4, frameBytesMax)})
	}

	d := &Delivery{done: make(chan struct{})}
	p.mu.Lock()
	for !p.closed && p.queuedBytes+size > producerQueuedBytesMax {
		p.room.Wait()
	}
	if p.closed {
		p.mu.Unlock()
		d.resolve(OffsetUnknown, ErrProducerClosed)
		return d
	}
	key := partitionKey{topic, partition}
	b := p.open[key]
	if b != nil && b.bytes+size > frameBytesMax {
		p.ship(b) // full by bytes: this record starts the next request
		b = nil
	}
	if b == nil {
		b = &batch{key: key, bytes: fixed, due: time.Now().Add(p.cfg.Linger)}
		p.open[key] = b
	}
	b.records = append(b.records, record)
	b.deliveries = append(b.deliveries, d)
	b.bytes += size
	b.queued += size
	p.queuedBytes += size
	if len(b.records) >= p.cfg.MaxBatchSize {
		p.ship(b)
	}
	p.mu.Unlock()
	// Always wake the writer: a new batch may be due before whatever it is waiting for.
	p.signal()
	return d
}

// emptyRecordError refuses a record of no bytes before it is sent: the broker refuses one with
// CORRUPT_REQUEST, and with it every record that shares its request.
func emptyRecordError() error {
	return &InvalidArgumentError{Field: "record", Got: "0 bytes",
		Want: "at least 1 (the broker refuses an empty record, and every record of its request with it)"}
}

// ship moves an open batch to the send queue. Called with mu held.
func (p *Producer) ship(b *batch) {
	delete(p.open, b.key)
	p.queue = append(p.queue, work{batch: b})
}

func (p *Producer) signal() {
	select {
	case p.wake <- struct{}{}:
	default: // a wake-up is already pending; one is enough
	}
}

// Flush sends every record queued so far without waiting for Linger, and returns once all of them
// are answered (or ctx ends). It returns the first error of any batch sent since the previous
// Flush; each record's own outcome is in its Delivery.
func (p *Producer) Flush(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrProducerClosed
	}
	flushed := p.shipAllAndMark()
	p.mu.Unlock()
	p.signal()
	select {
	case err := <-flushed:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shipAllAndMark queues every open batch and a marker behind them. Called with mu held.
func (p *Producer) shipAllAndMark() chan error {
	for _, b := range p.open {
		p.ship(b)
	}
	flushed := make(chan error, 1)
	p.queue = append(p.queue, work{flushed: flushed})
	return flushed
}

// Close sends what is queued, waits for the answers, and closes the connection. Sends that race
// Close either make it into the last batches or fail with ErrProducerClosed; none is lost silently.
// It returns the first error of the batches sent since the last Flush, or the connection's.
func (p *Producer) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.done
		return p.closeErr
	}
	p.closed = true
	flushed := p.shipAllAndMark()
	p.room.Broadcast() // Sends waiting for room now fail instead
	p.mu.Unlock()
	p.signal()
	err := <-flushed
	<-p.done
	if err == nil {
		err = p.closeErr
	}
	return err
}

// run is the writer: the only goroutine that touches the Conn.
func (p *Producer) run() {
	defer close(p.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var firstErr error // of batches since the last flush marker
	for {
		p.mu.Lock()
		now := time.Now()
		var next time.Time
		for _, b := range p.open {
			if !b.due.After(now) {
				p.ship(b)
			} else if next.IsZero() || b.due.Before(next) {
				next = b.due
			}
		}
		queue := p.queue
		p.queue = nil
		finished := p.closed && len(queue) == 0 && len(p.open) == 0
		p.mu.Unlock()

		for _, w := range queue {
			if w.flushed != nil {
				w.flushed <- firstErr
				firstErr = nil
				continue
			}
			if err := p.send(w.batch); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		if len(queue) > 0 {
			continue // more may have queued while sending
		}
		if finished {
			p.closeErr = p.conn.Close() // before done is closed, so every Close sees it
			return
		}
		if !next.IsZero() {
			timer.Reset(time.Until(next))
		}
		select {
		case <-p.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// send writes one batch and resolves its deliveries.
func (p *Producer) send(b *batch) error {
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.RequestTimeout)
	res, err := p.conn.Produce(ctx, b.key.topic, b.key.partition, b.records, p.cfg.Ack)
	cancel()
	for i, d := range b.deliveries {
		switch {
		case err != nil:
			d.resolve(OffsetUnknown, err)
		case res == nil: // AckNone: written, no offset
			d.resolve(OffsetUnknown, nil)
		default:
			d.resolve(res.BaseOffset+int64(i), nil)
		}
	}
	p.mu.Lock()
	p.queuedBytes -= b.queued
	p.room.Broadcast()
	p.mu.Unlock()
	return err
}
