package booblik_test

import (
	"errors"
	"strconv"
	"testing"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

func TestMetadataReportsEveryPartitionInOrder(t *testing.T) {
	b := startBroker(t, map[string]int{"orders": 3, "single": 1})
	b.Append("orders", 2, []byte("a"), []byte("b"))
	b.Append("single", 0, []byte("c"))
	c := dial(t, b)

	all, err := c.Metadata(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || len(all["orders"]) != 3 || len(all["single"]) != 1 {
		t.Fatalf("all topics: %+v", all)
	}
	for i, p := range all["orders"] {
		want := booblik.PartitionInfo{Partition: int32(i)}
		if i == 2 {
			want.HighWatermark = 2
		}
		if p != want {
			t.Fatalf("orders[%d] = %+v, want %+v", i, p, want)
		}
	}
	if all["single"][0].HighWatermark != 1 {
		t.Fatalf("single: %+v", all["single"])
	}

	one, err := c.Metadata(testContext(t), "single", "single")
	if err != nil || len(one) != 1 || len(one["single"]) != 1 {
		t.Fatalf("one topic: %+v, %v", one, err)
	}
	if got := b.RequestsOf(fakebroker.APIMetadata)[1].Topics; len(got) != 2 || got[0] != "single" {
		t.Fatalf("broker decoded topics %q", got)
	}
}

func TestMetadataOfAMissingTopicIsRefusedNotEmpty(t *testing.T) {
	b := startBroker(t, map[string]int{"orders": 1})
	c := dial(t, b)
	md, err := c.Metadata(testContext(t), "orders", "missing")
	if !errors.Is(err, booblik.ErrUnknownTopicOrPartition) || md != nil {
		t.Fatalf("missing topic: %v, %v", md, err)
	}
	if _, err := c.Topic(testContext(t), "missing"); !errors.Is(err, booblik.ErrUnknownTopicOrPartition) {
		t.Fatalf("Topic of a missing topic: %v", err)
	}
}

// The conformance broker's topic has three partitions on purpose: with a power of two, a wrong hash
// that shares FNV-1a's low bit would still pick the right partition far too often.
func TestKeyedSendLandsInThePartitionEveryClientPicks(t *testing.T) {
	b := startBroker(t, map[string]int{"conformance": 3})
	c := dial(t, b)
	ctx := testContext(t)
	topic, err := c.Topic(ctx, "conformance")
	if err != nil {
		t.Fatal(err)
	}
	rows := booblik.ReadVectors(t, "testdata/partitioner-fnv1a.tsv")
	for i, v := range rows {
		key := unhex(t, v["keyHex"])
		if key == nil {
			key = []byte{} // the empty key is a key, not a missing one
		}
		want, _ := strconv.Atoi(v["p3"])
		if got := topic.PartitionFor(key); got != int32(want) {
			t.Errorf("%s: PartitionFor = %d, want %d", v["name"], got, want)
		}
		res, err := topic.Send(ctx, key, []byte(v["name"]), booblik.AckWritten)
		if err != nil {
			t.Fatal(err)
		}
		sent := b.RequestsOf(fakebroker.APIProduce)[i]
		if res.Partition != int32(want) || sent.Partition != int32(want) {
			t.Errorf("%s: sent to %d (result says %d), want %d", v["name"], sent.Partition, res.Partition, want)
		}
	}
}

func TestNilKeyAdvancesRoundRobinOnEveryCall(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 3})
	c := dial(t, b)
	topic, err := c.Topic(testContext(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	// Asking twice turns the counter twice, whether or not a record follows.
	for i, want := range []int32{0, 1, 2, 0} {
		if got := topic.PartitionFor(nil); got != want {
			t.Fatalf("call %d: partition %d, want %d", i, got, want)
		}
	}
	res, err := topic.Send(testContext(t), nil, []byte("x"), booblik.AckWritten)
	if err != nil || res.Partition != 1 {
		t.Fatalf("send with a nil key after four calls: %+v, %v, want partition 1", res, err)
	}
}

func TestEmptyKeyIsHashedNotRoundRobin(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 3})
	c := dial(t, b)
	topic, err := c.Topic(testContext(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if got := topic.PartitionFor([]byte{}); got != 1 { // FNV-1a of no bytes, mod 3
			t.Fatalf("call %d: empty key went to %d, want 1 every time", i, got)
		}
	}
}

func TestTopicKnowsItsPartitions(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 4})
	c := dial(t, b)
	topic, err := c.Topic(testContext(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	if topic.Name() != "t" || len(topic.Partitions()) != 4 || topic.Partitions()[3] != 3 {
		t.Fatalf("%s %v", topic.Name(), topic.Partitions())
	}
}
