package booblik

import (
	"context"
	"fmt"
	"time"
)

// Where each segment of a partition lives (docs/protocol.md, "LIST_FRAGMENTS"):
//
//	LIST_FRAGMENTS request v1  => topic:string partition:int32
//	LIST_FRAGMENTS response v1 => partitionCount:int32
//	  [partition:int32 logStartOffset:int64 highWatermark:int64 fragmentCount:int32
//	    [baseOffset:int64 endOffset:int64 sizeBytes:int64 location:int8 persistedMillis:int64]*fragmentCount
//	  ]*partitionCount

const (
	apiListFragments     apiKey = 7
	listFragmentsVersion        = 1

	fragmentBytes               = 8 + 8 + 8 + 1 + 8
	fragmentsPartitionHeadBytes = 4 + 8 + 8 + 4
)

// AllPartitions asks ListFragments for every partition of the topic.
const AllPartitions int32 = -1

// NotPersisted is the PersistedMillis of a segment that is not in the store.
const NotPersisted int64 = -1

// FragmentLocation says where a segment's bytes are.
type FragmentLocation int8

const (
	FragmentLocal FragmentLocation = 1 // only on the broker's disk
	FragmentStore FragmentLocation = 2 // only in the topic's store, read through it
	FragmentBoth  FragmentLocation = 3
)

// String is "local", "store" or "both".
func (l FragmentLocation) String() string {
	switch l {
	case FragmentLocal:
		return "local"
	case FragmentStore:
		return "store"
	case FragmentBoth:
		return "both"
	}
	return fmt.Sprintf("FragmentLocation(%d)", int8(l))
}

// InStore says whether the segment's bytes are in the topic's store (FragmentStore or FragmentBoth).
func (l FragmentLocation) InStore() bool { return l == FragmentStore || l == FragmentBoth }

// Fragment is one segment of a partition's history.
type Fragment struct {
	BaseOffset int64 // the first offset
	EndOffset  int64 // one past the last offset; BaseOffset when the segment is empty
	SizeBytes  int64 // the stored bytes
	Location   FragmentLocation
	// PersistedMillis is when its upload completed (ms since the epoch); NotPersisted (-1) when the
	// segment is not in the store.
	PersistedMillis int64
}

// LastOffset is the segment's last offset; false when it holds no record.
func (f Fragment) LastOffset() (int64, bool) {
	if f.EndOffset > f.BaseOffset {
		return f.EndOffset - 1, true
	}
	return 0, false
}

// PersistedAt is when the upload completed; false when the segment is not in the store.
func (f Fragment) PersistedAt() (time.Time, bool) {
	if f.PersistedMillis == NotPersisted {
		return time.Time{}, false
	}
	return time.UnixMilli(f.PersistedMillis), true
}

// PartitionFragments is one partition's segments, oldest first; the last is the active one, never
// persisted yet.
type PartitionFragments struct {
	Partition      int32
	LogStartOffset int64 // the oldest offset of the whole history, store included
	HighWatermark  int64
	Fragments      []Fragment
}

// ListFragments says where each segment of a partition lives (partition AllPartitions: of every
// partition, by id): its offsets, bytes, location and when it was persisted. A topic without a
// store has only local segments. An unknown topic or partition fails with
// ErrUnknownTopicOrPartition; a broker that predates the call refuses it ErrUnsupportedVersion.
func (c *Conn) ListFragments(ctx context.Context, topic string, partition int32) ([]PartitionFragments, error) {
	frame, label, err := listFragmentsRequest(topic, partition)
	if err != nil {
		return nil, err
	}
	body, err := c.exchange(ctx, apiListFragments, label, frame, true)
	if err != nil {
		return nil, err
	}
	return decodeListFragmentsResponse(body)
}

// listFragmentsRequest is the request frame and its label in errors: "LIST_FRAGMENTS orders/2",
// "LIST_FRAGMENTS orders" for every partition.
func listFragmentsRequest(topic string, partition int32) ([]byte, string, error) {
	if err := validTopic("topic", topic); err != nil {
		return nil, "", err
	}
	label := fmt.Sprintf("%s %s/%d", apiListFragments, topic, partition)
	switch {
	case partition == AllPartitions:
		label = fmt.Sprintf("%s %s", apiListFragments, topic)
	case partition < 0:
		return nil, "", &InvalidArgumentError{Field: "partition", Got: fmt.Sprint(partition),
			Want: ">= 0, or AllPartitions (-1)"}
	}
	frame := appendString(beginFrame(apiListFragments, listFragmentsVersion), topic)
	return appendInt32(frame, partition), label, nil
}

func decodeListFragmentsResponse(body []byte) ([]PartitionFragments, error) {
	d := decoder{api: apiListFragments, b: body}
	atLeast := func(field string, v, low int64) int64 {
		if d.err == nil && v < low {
			d.fail("%s: %d, expected >= %d", field, v, low)
		}
		return v
	}
	n := d.count("partitionCount", fragmentsPartitionHeadBytes)
	out := make([]PartitionFragments, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		at := fmt.Sprintf("partitions[%d]", i)
		p := PartitionFragments{Partition: int32(atLeast(at+".partition", int64(d.int32(at+".partition")), 0))}
		p.LogStartOffset = atLeast(at+".logStartOffset", d.int64(at+".logStartOffset"), 0)
		p.HighWatermark = atLeast(at+".highWatermark", d.int64(at+".highWatermark"), 0)
		count := d.count(at+".fragmentCount", fragmentBytes)
		p.Fragments = make([]Fragment, 0, count)
		for k := 0; k < count && d.err == nil; k++ {
			f := fmt.Sprintf("%s.fragments[%d]", at, k)
			frag := Fragment{BaseOffset: atLeast(f+".baseOffset", d.int64(f+".baseOffset"), 0)}
			frag.EndOffset = d.int64(f + ".endOffset")
			if d.err == nil && frag.EndOffset < frag.BaseOffset {
				d.fail("%s.endOffset: %d, expected >= baseOffset (%d)", f, frag.EndOffset, frag.BaseOffset)
			}
			frag.SizeBytes = atLeast(f+".sizeBytes", d.int64(f+".sizeBytes"), 0)
			location := d.take(1, f+".location")
			if location != nil {
				frag.Location = FragmentLocation(int8(location[0]))
				if frag.Location < FragmentLocal || frag.Location > FragmentBoth {
					d.fail("%s.location: %d, expected 1 (local), 2 (store) or 3 (both)", f, frag.Location)
				}
			}
			frag.PersistedMillis = atLeast(f+".persistedMillis", d.int64(f+".persistedMillis"), NotPersisted)
			p.Fragments = append(p.Fragments, frag)
		}
		out = append(out, p)
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return out, nil
}
