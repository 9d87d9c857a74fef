package booblik

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The literal bytes of docs/protocol.md and the TypeScript codec test
// (packages/protocol/src/requests/list-fragments): an encoder that agreed only with its own
// decoder would pass a round trip, not these.

func TestListFragmentsRequestIsEncodedByteForByte(t *testing.T) {
	frame, label, err := listFragmentsRequest("ab", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := golden(t, `00000010 0007 0001 00000009 0002 6162 00000002`)
	if got := finishFrame(frame, 9); !bytes.Equal(got, want) || label != "LIST_FRAGMENTS ab/2" {
		t.Fatalf("LIST_FRAGMENTS\n got %x (%q)\nwant %x", got, label, want)
	}
	every, label, _ := listFragmentsRequest("ab", AllPartitions)
	if !bytes.HasSuffix(every, golden(t, `0002 6162 ffffffff`)) || label != "LIST_FRAGMENTS ab" {
		t.Fatalf("every partition: %x (%q)", every, label)
	}
}

func TestListFragmentsAnswerIsDecodedFromLiteralBytes(t *testing.T) {
	body := golden(t, `
		00000001                                            // one partition
		00000000 0000000000000000 0000000000000007 00000002 // partition 0, offsets 0..7, two fragments
		0000000000000000 0000000000000005 000000000000012c 02 00000000000003e8 // 0..4, 300 B, store, at 1 s
		0000000000000005 0000000000000007 0000000000000028 01 ffffffffffffffff // 5..6, 40 B, local
	`)
	got, err := decodeListFragmentsResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	stored := Fragment{BaseOffset: 0, EndOffset: 5, SizeBytes: 300, Location: FragmentStore, PersistedMillis: 1000}
	active := Fragment{BaseOffset: 5, EndOffset: 7, SizeBytes: 40, Location: FragmentLocal, PersistedMillis: NotPersisted}
	want := []PartitionFragments{{Partition: 0, LogStartOffset: 0, HighWatermark: 7, Fragments: []Fragment{stored, active}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v\nwant %+v", got, want)
	}
	if last, ok := stored.LastOffset(); !ok || last != 4 || !stored.Location.InStore() || stored.Location.String() != "store" {
		t.Fatalf("the stored segment: last %d %v, in store %v, %s", last, ok, stored.Location.InStore(), stored.Location)
	}
	if at, ok := stored.PersistedAt(); !ok || !at.Equal(time.UnixMilli(1000)) {
		t.Fatalf("persisted at %v %v", at, ok)
	}
	if _, ok := active.PersistedAt(); ok || active.Location.InStore() || active.Location.String() != "local" {
		t.Fatalf("the active segment looks persisted: %+v", active)
	}
	if _, ok := (Fragment{BaseOffset: 3, EndOffset: 3}).LastOffset(); ok {
		t.Fatal("an empty segment has a last offset")
	}
}

func TestListFragmentsAnswersThatBreakTheRulesAreProtocolErrorsNamingTheField(t *testing.T) {
	const head = "00000001 00000000 0000000000000000 0000000000000001 00000001"
	for want, fragment := range map[string]string{
		"fragments[0].location: 4":                              "0000000000000000 0000000000000001 0000000000000009 04 0000000000000005",
		"fragments[0].endOffset: 0, expected >= baseOffset (3)": "0000000000000003 0000000000000000 0000000000000009 03 0000000000000005",
		"fragments[0].persistedMillis: -2":                      "0000000000000000 0000000000000001 0000000000000009 01 fffffffffffffffe",
		"fragments[0].sizeBytes: -1":                            "0000000000000000 0000000000000001 ffffffffffffffff 01 ffffffffffffffff",
	} {
		if _, err := decodeListFragmentsResponse(golden(t, head+fragment)); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	for name, body := range map[string]string{
		"partitionCount":             "7fffffff",
		"fragmentCount":              "00000001 00000000" + strings.Repeat("00", 16) + "7fffffff",
		"bytes after the last field": "00000000 00",
	} {
		if _, err := decodeListFragmentsResponse(golden(t, body)); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want a protocol error naming it", name, err)
		}
	}
}

func TestListFragmentsOfABadPartitionOrTopicIsRefusedBeforeAnythingIsSent(t *testing.T) {
	for want, call := range map[string]func() error{
		"partition: -2": func() error { _, _, err := listFragmentsRequest("t", -2); return err },
		"topic":         func() error { _, _, err := listFragmentsRequest("a b", 0); return err },
	} {
		if err := call(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}
