package booblik

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
)

// Topic routes records to a topic's partitions. It knows the partitions as they were when
// Conn.Topic read them; call Conn.Topic again after partitions are added.
type Topic struct {
	conn       *Conn
	name       string
	partitions []int32 // sorted by id: the partitioner indexes into this order
	roundRobin atomic.Uint32
}

// Topic reads the topic's partitions and returns a Topic that routes to them.
func (c *Conn) Topic(ctx context.Context, name string) (*Topic, error) {
	md, err := c.Metadata(ctx, name)
	if err != nil {
		return nil, err
	}
	infos, ok := md[name]
	if !ok || len(infos) == 0 {
		return nil, &ProtocolError{API: apiMetadata.String(),
			Detail: fmt.Sprintf("topic %q: answered without partitions", name)}
	}
	t := &Topic{conn: c, name: name, partitions: make([]int32, len(infos))}
	for i, p := range infos {
		t.partitions[i] = p.Partition
	}
	slices.Sort(t.partitions)
	return t, nil
}

// Name is the topic's name.
func (t *Topic) Name() string { return t.name }

// Partitions returns the topic's partition ids, sorted.
func (t *Topic) Partitions() []int32 { return slices.Clone(t.partitions) }

// PartitionFor returns the partition a record with this key belongs to: FNV-1a of the key, the
// same in every booblik client. A nil key takes the next partition of a round-robin counter that
// advances on every call, so calling PartitionFor twice turns it twice, record or not. An empty,
// non-nil key is a key like any other: it is hashed. Safe for concurrent use.
func (t *Topic) PartitionFor(key []byte) int32 {
	n := len(t.partitions)
	if key == nil {
		turn := t.roundRobin.Add(1) - 1
		return t.partitions[turn%uint32(n)]
	}
	return t.partitions[partitionIndex(key, n)]
}

// Send writes one record to the partition PartitionFor(key) picks. Like Conn.Produce, it returns
// (nil, nil) with AckNone. It uses the Topic's Conn, so it is not safe for concurrent use either.
// An empty payload is refused before anything is sent (ErrInvalidArgument): the broker refuses an
// empty record.
func (t *Topic) Send(ctx context.Context, key, payload []byte, ack AckPolicy) (*ProduceResult, error) {
	if len(payload) == 0 {
		return nil, emptyRecordError()
	}
	return t.conn.Produce(ctx, t.name, t.PartitionFor(key), [][]byte{payload}, ack)
}
