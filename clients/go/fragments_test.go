package booblik_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

func TestListFragmentsOnABrokerThatPredatesItIsUnsupportedVersionAndTheConnStaysUsable(t *testing.T) {
	b := startBroker(t, map[string]int{"orders": 1})
	b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) { // as a broker from before the call
		if r.APIKey != fakebroker.APIListFragments {
			return fakebroker.Action{}, false
		}
		return fakebroker.Action{Raw: fakebroker.Answer(r.CorrelationID, fakebroker.CodeUnsupportedVersion, nil)}, true
	})
	c := dial(t, b)
	ctx := testContext(t)
	_, err := c.ListFragments(ctx, "orders", 0)
	if !errors.Is(err, booblik.ErrUnsupportedVersion) || !strings.Contains(err.Error(), "LIST_FRAGMENTS orders/0") {
		t.Fatalf("got %v, want UNSUPPORTED_VERSION naming the request", err)
	}
	if _, err := c.Metadata(ctx, "orders"); err != nil {
		t.Fatalf("the Conn after the refusal: %v", err)
	}
	asked := b.RequestsOf(fakebroker.APIListFragments)
	if len(asked) != 1 || asked[0].Version != 1 || asked[0].Topic != "orders" || asked[0].Partition != 0 {
		t.Fatalf("what went on the wire: %+v", asked)
	}
}

func TestClientListsAPartitionsFragmentsOnItsPrimary(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 2}, 2)
	b.Route("t", 0, 0)
	b.Route("t", 1, 1)
	b.Append("t", 1, []byte("abc"))
	c := newClient(t, quickRoutes, b.NodeAddr(0))
	listed, err := c.ListFragments(testContext(t), "t", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []booblik.PartitionFragments{{Partition: 1, HighWatermark: 1, Fragments: []booblik.Fragment{
		{BaseOffset: 0, EndOffset: 1, SizeBytes: 8 + 3, Location: booblik.FragmentLocal, PersistedMillis: booblik.NotPersisted},
	}}}
	if !reflect.DeepEqual(listed, want) {
		t.Fatalf("%+v\nwant %+v", listed, want)
	}
	var on []int
	for _, r := range b.RequestsOf(fakebroker.APIListFragments) {
		on = append(on, r.Node)
	}
	if !reflect.DeepEqual(on, []int{1}) {
		t.Fatalf("LIST_FRAGMENTS went to nodes %v, want the primary's, 1", on)
	}
}

// A topic with a file:// store and 1 KiB segments: partition 0 rolls three times, and the rolled
// segments reach the store while the active one stays local.
func TestListFragmentsShowsRolledSegmentsInTheStoreOnTheRealBroker(t *testing.T) {
	const (
		segmentBytes = 1024
		records      = 35               // three full segments and an active one
		uploadWait   = 20 * time.Second // the most the test waits for the uploads
	)
	record := bytes.Repeat([]byte("r"), 92) // 100 bytes stored with its header: ten to a segment
	addr := startDefaultBroker(t)
	ctx := testContext(t)
	c, err := booblik.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	started := time.Now()
	spec := booblik.NewTopicSpec("go-fragments", 2)
	spec.SegmentBytes = segmentBytes
	spec.StoreURL = "file://" + t.TempDir()
	spec.Revision = booblik.RevisionMustNotExist
	if _, err := c.ApplyTopics(ctx, []booblik.TopicChange{booblik.UpsertTopic(spec)}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < records; i++ { // one record a request: each segment fills to exactly ten
		if _, err := c.Produce(ctx, "go-fragments", 0, [][]byte{record}, booblik.AckWritten); err != nil {
			t.Fatal(err)
		}
	}

	var p booblik.PartitionFragments
	for deadline := time.Now().Add(uploadWait); ; time.Sleep(50 * time.Millisecond) {
		listed, err := c.ListFragments(ctx, "go-fragments", 0)
		if err != nil || len(listed) != 1 {
			t.Fatalf("%+v, %v", listed, err)
		}
		p = listed[0]
		if rolled := p.Fragments[:len(p.Fragments)-1]; len(rolled) > 0 && allInStore(rolled) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rolled segments not in the store after %v: %+v", uploadWait, p)
		}
	}
	if p.Partition != 0 || p.LogStartOffset != 0 || p.HighWatermark != records {
		t.Fatalf("partition %+v", p)
	}
	var spans []string
	for _, f := range p.Fragments {
		last, _ := f.LastOffset()
		spans = append(spans, fmt.Sprintf("%d..%d", f.BaseOffset, last))
	}
	if want := []string{"0..9", "10..19", "20..29", "30..34"}; !reflect.DeepEqual(spans, want) {
		t.Fatalf("segments %v, want %v", spans, want)
	}
	for _, f := range p.Fragments[:3] {
		at, persisted := f.PersistedAt()
		if !persisted || at.Before(started.Truncate(time.Millisecond)) || at.After(time.Now()) || f.SizeBytes != 10*int64(len(record)+8) {
			t.Fatalf("a rolled segment: %+v (persisted at %v)", f, at)
		}
	}
	if active := p.Fragments[3]; active.Location != booblik.FragmentLocal || active.PersistedMillis != booblik.NotPersisted {
		t.Fatalf("the active segment: %+v", active)
	}

	every, err := c.ListFragments(ctx, "go-fragments", booblik.AllPartitions)
	if err != nil || len(every) != 2 || every[1].Partition != 1 || len(every[1].Fragments) != 1 ||
		every[1].Fragments[0] != (booblik.Fragment{Location: booblik.FragmentLocal, PersistedMillis: booblik.NotPersisted}) {
		t.Fatalf("every partition: %+v, %v", every, err)
	}
	for _, ask := range []struct {
		topic     string
		partition int32
	}{{"go-no-such-topic", booblik.AllPartitions}, {"go-fragments", 2}} {
		if _, err := c.ListFragments(ctx, ask.topic, ask.partition); !errors.Is(err, booblik.ErrUnknownTopicOrPartition) ||
			!strings.Contains(err.Error(), ask.topic) {
			t.Fatalf("%s/%d: %v, want UNKNOWN_TOPIC_OR_PARTITION naming it", ask.topic, ask.partition, err)
		}
	}
	client := newClient(t, quickRoutes, addr)
	routed, err := client.ListFragments(ctx, "go-fragments", 0)
	if err != nil || !reflect.DeepEqual(routed[0].Fragments[:3], p.Fragments[:3]) {
		t.Fatalf("through the Client: %+v, %v", routed, err)
	}
}

func allInStore(fragments []booblik.Fragment) bool {
	for _, f := range fragments {
		if !f.Location.InStore() {
			return false
		}
	}
	return true
}
