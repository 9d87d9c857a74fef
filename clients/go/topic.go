package booblik

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// MetadataEverySend, as TopicConfig.MetadataMaxAge, reads the partition list before every Send.
const MetadataEverySend time.Duration = -1

// TopicConfig tunes a Topic. The zero value is the defaults.
type TopicConfig struct {
	// MetadataMaxAge is how old the partition list may get before Send reads it again (0 means
	// DefaultMetadataMaxAge; MetadataEverySend reads it before every Send).
	MetadataMaxAge time.Duration
}

// Topic routes records to a topic's partitions. Send reads the partition list again (one METADATA)
// once it is MetadataMaxAge old, and after a send is refused ErrUnknownTopicOrPartition; Refresh
// reads it at once. So partitions added at runtime get records. PartitionFor routes with the list
// as last read.
type Topic struct {
	conn       *Conn
	name       string
	maxAge     time.Duration
	now        func() time.Time
	partitions atomic.Pointer[[]int32] // sorted by id: the partitioner indexes into this order
	roundRobin atomic.Uint32

	mu       sync.Mutex
	loadedAt time.Time
	stale    bool // a send was refused UNKNOWN_TOPIC_OR_PARTITION: read again before the next
}

// Topic reads the topic's partitions and returns a Topic that routes to them, with the default
// TopicConfig.
func (c *Conn) Topic(ctx context.Context, name string) (*Topic, error) {
	return c.TopicWith(ctx, name, TopicConfig{})
}

// TopicWith is Topic with a TopicConfig.
func (c *Conn) TopicWith(ctx context.Context, name string, cfg TopicConfig) (*Topic, error) {
	maxAge := cfg.MetadataMaxAge
	switch {
	case maxAge == 0:
		maxAge = DefaultMetadataMaxAge
	case maxAge < 0 && maxAge != MetadataEverySend:
		return nil, &InvalidArgumentError{Field: "TopicConfig.MetadataMaxAge", Got: maxAge.String(),
			Want: "> 0, 0 for the default, or MetadataEverySend"}
	}
	t := &Topic{conn: c, name: name, maxAge: maxAge, now: time.Now}
	if err := t.Refresh(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// Refresh reads the topic's partitions again now. On failure the list stays as it was.
func (t *Topic) Refresh(ctx context.Context) error {
	md, err := t.conn.Metadata(ctx, t.name)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.loadedAt = t.now() // a failed read too: the next try waits out another age
	if err != nil {
		return err
	}
	infos, ok := md[t.name]
	if !ok || len(infos) == 0 {
		return &ProtocolError{API: apiMetadata.String(),
			Detail: fmt.Sprintf("topic %q: answered without partitions", t.name)}
	}
	ids := make([]int32, len(infos))
	for i, p := range infos {
		ids[i] = p.Partition
	}
	slices.Sort(ids)
	t.partitions.Store(&ids)
	t.stale = false
	return nil
}

// Name is the topic's name.
func (t *Topic) Name() string { return t.name }

// Partitions returns the topic's partition ids, sorted, as last read.
func (t *Topic) Partitions() []int32 { return slices.Clone(*t.partitions.Load()) }

// PartitionFor returns the partition a record with this key belongs to: FNV-1a of the key, the
// same in every booblik client. A nil key takes the next partition of a round-robin counter that
// advances on every call, so calling PartitionFor twice turns it twice, record or not. An empty,
// non-nil key is a key like any other: it is hashed. It routes with the list as last read (it sends
// nothing). Safe for concurrent use.
func (t *Topic) PartitionFor(key []byte) int32 {
	partitions := *t.partitions.Load()
	n := len(partitions)
	if key == nil {
		turn := t.roundRobin.Add(1) - 1
		return partitions[turn%uint32(n)]
	}
	return partitions[partitionIndex(key, n)]
}

// Send writes one record to the partition PartitionFor(key) picks, reading the partition list
// again first when it is MetadataMaxAge old or a send was refused ErrUnknownTopicOrPartition. Like
// Conn.Produce, it returns (nil, nil) with AckNone. It uses the Topic's Conn, so it is not safe for
// concurrent use either. An empty payload is refused before anything is sent (ErrInvalidArgument):
// the broker refuses an empty record.
func (t *Topic) Send(ctx context.Context, key, payload []byte, ack AckPolicy) (*ProduceResult, error) {
	if len(payload) == 0 {
		return nil, emptyRecordError()
	}
	if t.due() {
		if err := t.Refresh(ctx); err != nil {
			return nil, err
		}
	}
	res, err := t.conn.Produce(ctx, t.name, t.PartitionFor(key), [][]byte{payload}, ack)
	if errors.Is(err, ErrUnknownTopicOrPartition) {
		t.mu.Lock()
		t.stale = true // the list is out of date (or the topic gone): read it before the next send
		t.mu.Unlock()
	}
	return res, err
}

// due says whether the partition list must be read before the next send.
func (t *Topic) due() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stale || t.maxAge == MetadataEverySend || t.now().Sub(t.loadedAt) >= t.maxAge
}
