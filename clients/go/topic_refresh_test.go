package booblik_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

// metadataVersions lists the API_VERSIONS and METADATA requests a fake saw, as "key vN".
func metadataVersions(b *fakebroker.Broker) []int16 {
	var out []int16
	for _, r := range b.Requests() {
		if r.APIKey == fakebroker.APIAPIVersions || r.APIKey == fakebroker.APIMetadata {
			out = append(out, r.APIKey*10+r.Version)
		}
	}
	return out
}

// grow makes topic have partitions partitions, through an APPLY on conn.
func grow(t *testing.T, conn *booblik.Conn, topic string, partitions int32) {
	t.Helper()
	if _, err := conn.ApplyTopics(testContext(t), []booblik.TopicChange{booblik.UpsertTopic(booblik.NewTopicSpec(topic, partitions))}); err != nil {
		t.Fatal(err)
	}
}

func TestConnAsksAPIVersionsOnceAndSendsMetadataV2WhereTheBrokerHasIt(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 2}, 1) // speaks API_VERSIONS and METADATA v2
	conn := dialAddr(t, b.NodeAddr(0))
	ctx := testContext(t)
	md, err := conn.Metadata(ctx, "t")
	if err != nil || len(md["t"]) != 2 {
		t.Fatalf("metadata: %v, %v", md, err)
	}
	if _, err := conn.Topic(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if got, want := metadataVersions(b), []int16{61, 32, 32}; !slices.Equal(got, want) {
		t.Fatalf("API_VERSIONS/METADATA as key*10+version: %v, want %v", got, want)
	}
}

func TestABrokerThatRefusesAPIVersionsGetsMetadataV1(t *testing.T) {
	b := fakebroker.Start(t, map[string]int{"t": 2}) // predates the additions
	conn := dial(t, b)
	ctx := testContext(t)
	conn.Metadata(ctx, "t")
	conn.Metadata(ctx, "t")
	if got, want := metadataVersions(b), []int16{61, 31, 31}; !slices.Equal(got, want) {
		t.Fatalf("API_VERSIONS/METADATA as key*10+version: %v, want %v", got, want)
	}
	v, err := conn.Versions(ctx)
	if err != nil || v[3] != 1 {
		t.Fatalf("Versions: %v, %v", v, err)
	}
}

// spread counts, per partition, the records the fake holds for topic.
func spread(b *fakebroker.Broker, topic string, partitions int) []int {
	out := make([]int, partitions)
	for p := range out {
		out[p] = len(b.Records(topic, p))
	}
	return out
}

func TestATopicSendsToPartitionsAddedAtRuntimeOnceItsListIsOld(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 2}, 1)
	conn := dialAddr(t, b.NodeAddr(0))
	ctx := testContext(t)
	topic, err := conn.TopicWith(ctx, "t", booblik.TopicConfig{MetadataMaxAge: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	booblik.SetTopicClock(topic, func() time.Time { return now })
	grow(t, conn, "t", 4)
	for range 4 {
		if _, err := topic.Send(ctx, nil, []byte("young"), booblik.AckWritten); err != nil {
			t.Fatal(err)
		}
	}
	if got := spread(b, "t", 4); !slices.Equal(got, []int{2, 2, 0, 0}) {
		t.Fatalf("while the list is young: %v, want [2 2 0 0]", got)
	}
	now = now.Add(5 * time.Second)
	for range 4 {
		if _, err := topic.Send(ctx, nil, []byte("old"), booblik.AckWritten); err != nil {
			t.Fatal(err)
		}
	}
	if got := spread(b, "t", 4); !slices.Equal(got, []int{3, 3, 1, 1}) {
		t.Fatalf("once the list is old: %v, want [3 3 1 1]", got)
	}
}

func TestRefreshAndARefusedSendReadThePartitionsAgain(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 2}, 1)
	conn := dialAddr(t, b.NodeAddr(0))
	ctx := testContext(t)
	topic, err := conn.TopicWith(ctx, "t", booblik.TopicConfig{MetadataMaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	grow(t, conn, "t", 3)
	if err := topic.Refresh(ctx); err != nil || !slices.Equal(topic.Partitions(), []int32{0, 1, 2}) {
		t.Fatalf("after Refresh: %v, %v", topic.Partitions(), err)
	}
	// The topic is deleted and made again with one partition: partitions 1 and 2 are gone.
	if _, err := conn.ApplyTopics(ctx, []booblik.TopicChange{booblik.DeleteTopic("t", -1)}); err != nil {
		t.Fatal(err)
	}
	grow(t, conn, "t", 1)
	topic.PartitionFor(nil) // the round robin now points at partition 1
	if _, err := topic.Send(ctx, nil, []byte("lost"), booblik.AckWritten); !errors.Is(err, booblik.ErrUnknownTopicOrPartition) {
		t.Fatalf("send to a partition that went: %v, want ErrUnknownTopicOrPartition", err)
	}
	res, err := topic.Send(ctx, nil, []byte("next"), booblik.AckWritten)
	if err != nil || res.BaseOffset != 0 || !slices.Equal(topic.Partitions(), []int32{0}) {
		t.Fatalf("the next send: %+v, %v, partitions %v", res, err, topic.Partitions())
	}
}

func TestATopicSeesPartitionsAddedOnARealBroker(t *testing.T) {
	addr := startDefaultBroker(t)
	conn := dialAddr(t, addr)
	ctx := testContext(t)
	v, err := conn.Versions(ctx)
	if err != nil || v[3] < 2 {
		t.Fatalf("Versions: %v, %v (want METADATA v2 or later)", v, err)
	}
	grow(t, conn, "grown", 1)
	topic, err := conn.TopicWith(ctx, "grown", booblik.TopicConfig{MetadataMaxAge: booblik.MetadataEverySend})
	if err != nil {
		t.Fatal(err)
	}
	topic.Send(ctx, nil, []byte("before"), booblik.AckWritten) // round robin, turn 0: partition 0
	grow(t, conn, "grown", 3)
	for range 3 { // turns 1, 2, 3: partitions 1, 2, 0
		if _, err := topic.Send(ctx, nil, []byte("after"), booblik.AckWritten); err != nil {
			t.Fatal(err)
		}
	}
	md, err := conn.Metadata(ctx, "grown")
	if err != nil {
		t.Fatal(err)
	}
	var hw []int64
	for _, p := range md["grown"] {
		hw = append(hw, p.HighWatermark)
	}
	if !slices.Equal(hw, []int64{2, 1, 1}) {
		t.Fatalf("high watermarks %v, want [2 1 1]", hw)
	}
}
