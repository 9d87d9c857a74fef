package booblik

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The bytes are docs/protocol.md's examples for RouteV2, METADATA v4, LIST v2 and FETCH v4 (the
// same the TypeScript codecs' tests pin).

func TestFetchV4RequestIsV2sBytesAtVersion4(t *testing.T) {
	got := finishFrame(appendFetchRequest(beginFrame(apiFetch, replicaReadVersion), FetchRequest{
		Topic: "t", Partition: 0, Offset: 5, MaxBytes: 1 << 20, MaxWait: 500 * time.Millisecond, MinBytes: 1,
	}), 2)
	want := golden(t, `00000023 0002 0004 00000002 000174 00000000 0000000000000005 00100000 000001f4 00000001`)
	if !bytes.Equal(got, want) {
		t.Fatalf("FETCH v4\n got %x\nwant %x", got, want)
	}
}

func TestMetadataV4RequestIsV3sBytesAtVersion4(t *testing.T) {
	got := finishFrame(metadataRoutesFrame(metadataReplicasVersion, 9, []string{"x"}), 5)
	want := golden(t, `00000018 0003 0004 00000005 00000001 000178 0000000000000009 00`)
	if !bytes.Equal(got, want) {
		t.Fatalf("METADATA v4\n got %x\nwant %x", got, want)
	}
}

func TestListV2RequestIsV1sBytesAtVersion2(t *testing.T) {
	got := finishFrame(listFrame(listReplicasVersion, "team=p", noWatch, 0), 9)
	want := golden(t, `0000001c 0005 0002 00000009 0006 7465616d3d70 ffffffffffffffff 00000000`)
	if !bytes.Equal(got, want) {
		t.Fatalf("LIST v2\n got %x\nwant %x", got, want)
	}
}

// metadataV4Answer is the doc's METADATA v4 answer (correlationId 4), whole frame.
const metadataV4Answer = `
	00000076 00000004 0000                         // frameLength, correlationId 4, NONE
	0000000000000003 00000001                      // revision 3, one topic
	000161 00000001                                // "a", one partition
	00000000 0000000000000001 0000000000000002     // partition 0 from 1 to 2
	00000002 0003683a31 00000002                   // epoch 2, primary h:1, two replicas
	00026231 0003683a31 00027a31 03                // b1 at h:1 in z1, in sync and live
	0000000000000000 0000000000000000              //   lag 0 records, 0 ms
	00026232 0003723a32 00027a32 02                // b2 at r:2 in z2, live, not in sync
	0000000000000005 00000000000004b0              //   5 records and 1 200 ms behind
`

// answerBody drops an answer frame's length, correlation id and error code.
func answerBody(t *testing.T, frame []byte) []byte {
	t.Helper()
	if n := binary.BigEndian.Uint32(frame); int(n) != len(frame)-4 {
		t.Fatalf("frameLength %d, frame has %d bytes after it", n, len(frame)-4)
	}
	return frame[4+responseHeaderBytes:]
}

func TestMetadataV4AnswerCarriesEveryReplicaWithItsZoneSyncAndLag(t *testing.T) {
	md, err := decodeRoutedMetadata(answerBody(t, golden(t, metadataV4Answer)), true)
	if err != nil {
		t.Fatal(err)
	}
	want := &RoutedMetadata{Revision: 3, Topics: map[string][]RoutedPartition{"a": {{
		PartitionInfo: PartitionInfo{Partition: 0, LogStartOffset: 1, HighWatermark: 2},
		Route:         Route{Primary: "h:1", Replicas: []string{"r:2"}},
		RouteV2: &RouteV2{Epoch: 2, Primary: "h:1", Replicas: []ReplicaState{
			{Member: "b1", Address: "h:1", Zone: "z1", Flags: ReplicaInSync | ReplicaLive},
			{Member: "b2", Address: "r:2", Zone: "z2", Flags: ReplicaLive, LagRecords: 5, LagMillis: 1200},
		}},
	}}}}
	if !reflect.DeepEqual(md, want) {
		t.Fatalf("%+v\nwant %+v", md.Topics["a"][0].RouteV2, want.Topics["a"][0].RouteV2)
	}
	b1, b2 := md.Topics["a"][0].RouteV2.Replicas[0], md.Topics["a"][0].RouteV2.Replicas[1]
	if !b1.InSync() || !b1.Live() || b2.InSync() || !b2.Live() {
		t.Fatalf("flags read wrong: b1 %+v, b2 %+v", b1, b2)
	}
}

func TestMetadataV4AnswerIsNotReadAsV3(t *testing.T) {
	// A client that asked v4 and read the answer as v3's would take the epoch for the primary.
	if _, err := decodeRoutedMetadata(answerBody(t, golden(t, metadataV4Answer)), false); !errors.Is(err, ErrProtocol) {
		t.Fatalf("v4 bytes read as v3: %v, want a protocol error", err)
	}
}

func TestMalformedRouteV2IsRefusedNamingTheField(t *testing.T) {
	frame := golden(t, metadataV4Answer)
	const epochAt = 4 + 4 + 2 + 8 + 4 + 3 + 4 + 20 // the route starts after the partition's offsets
	for name, c := range map[string]struct {
		at    int
		value []byte
		field string
	}{
		"a lag below -1": {len(frame) - 8, be64(-2), "topics[0].partitions[0].route.replicas[1].lagMillis: -2, expected >= -1"},
		"lagRecords -2":  {len(frame) - 16, be64(-2), "topics[0].partitions[0].route.replicas[1].lagRecords: -2"},
		"a negative epoch": {epochAt, []byte{0xff, 0xff, 0xff, 0xff},
			"topics[0].partitions[0].route.epoch: -1, expected >= 0"},
		"a replicaCount that lies": {epochAt + 4 + 5, []byte{0x00, 0x00, 0x00, 0x09},
			"topics[0].partitions[0].route.replicaCount: 9"},
	} {
		bad := bytes.Clone(frame)
		copy(bad[c.at:], c.value)
		_, err := decodeRoutedMetadata(answerBody(t, bad), true)
		if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v, want a protocol error naming %q", name, err, c.field)
		}
	}
	// Lag -1 is "not known", not malformed.
	unknown := bytes.Clone(frame)
	copy(unknown[len(frame)-16:], append(be64(LagUnknown), be64(LagUnknown)...))
	md, err := decodeRoutedMetadata(answerBody(t, unknown), true)
	if err != nil || md.Topics["a"][0].RouteV2.Replicas[1].LagMillis != LagUnknown {
		t.Fatalf("lags of -1: %v", err)
	}
}

func TestListV2AnswerCarriesRoutesWithReplicas(t *testing.T) {
	body := golden(t, `
		0000000000000005 00000001                                  // revision 5, one topic
		000161 00000001 00000000                                   // "a", 1 partition, no labels
		ffffffffffffffff ffffffffffffffff 00000400 00000000 0001   // unlimited, 1 KiB segments
		0000 0000000000000004                                      // no store, revision 4
		00000001                                                   // one route:
		00000000 0003683a31 00000001                               //   epoch 0, primary h:1, one replica
		00026231 0003683a31 0000 03                                //   b1 at h:1, no zone, in sync and live
		ffffffffffffffff ffffffffffffffff                          //   lags unknown
	`)
	got, err := decodeListResponse(body, true)
	if err != nil {
		t.Fatal(err)
	}
	want := &TopicListing{Revision: 5, Topics: []ListedTopic{{
		Spec: TopicSpec{Name: "a", Partitions: 1, RetentionBytes: -1, RetentionMillis: -1, SegmentBytes: 1024,
			Replication: 1, Revision: 4},
		Routes: []Route{{Primary: "h:1"}},
		RoutesV2: []RouteV2{{Epoch: 0, Primary: "h:1", Replicas: []ReplicaState{
			{Member: "b1", Address: "h:1", Flags: ReplicaInSync | ReplicaLive, LagRecords: LagUnknown, LagMillis: LagUnknown},
		}}},
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v\nwant %+v", got, want)
	}
	cut := body[:len(body)-3]
	if _, err := decodeListResponse(cut, true); !errors.Is(err, ErrProtocol) ||
		!strings.Contains(err.Error(), "topics[0].routes[0].replicas[0].lagMillis") {
		t.Fatalf("a LIST v2 answer cut short: %v, want a protocol error naming the field", err)
	}
}

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
