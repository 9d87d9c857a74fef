package booblik_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

// quickRoutes pauses for a millisecond or two: the tests wait on answers, never on the clock.
var quickRoutes = booblik.ClientConfig{RouteRetryDelay: time.Millisecond, RouteRetryDelayMax: 2 * time.Millisecond}

func newClient(t *testing.T, cfg booblik.ClientConfig, bootstrap ...string) *booblik.Client {
	t.Helper()
	c, err := booblik.NewClient(testContext(t), bootstrap, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// served lists "API vN @node" for the PRODUCE and FETCH requests a node served (not refused).
func served(b *fakebroker.Broker, node int) []string {
	var out []string
	for _, r := range b.Requests() {
		if (r.APIKey == fakebroker.APIProduce || r.APIKey == fakebroker.APIFetch) && r.Node == node {
			out = append(out, fmt.Sprintf("%d v%d", r.APIKey, r.Version))
		}
	}
	return out
}

func metadataAsked(b *fakebroker.Broker) []fakebroker.Request {
	return b.RequestsOf(fakebroker.APIMetadata)
}

func payloadsAt(t *testing.T, res *booblik.FetchResult) []string {
	t.Helper()
	var out []string
	for _, r := range res.Records {
		out = append(out, fmt.Sprintf("%d:%s", r.Offset, r.Payload))
	}
	return out
}

func TestClientSendsAPartitionRoutedToBToB(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 2}, 2)
	b.Route("t", 1, 1)
	c := newClient(t, quickRoutes, b.NodeAddr(0))
	ctx := testContext(t)

	res, err := c.Produce(ctx, "t", 1, [][]byte{[]byte("x"), []byte("y")}, booblik.AckWritten)
	if err != nil || res.BaseOffset != 0 {
		t.Fatalf("produce to t/1: %+v, %v", res, err)
	}
	if _, err := c.Produce(ctx, "t", 0, [][]byte{[]byte("z")}, booblik.AckWritten); err != nil {
		t.Fatal(err)
	}
	got, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "t", Partition: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p := payloadsAt(t, got); !slices.Equal(p, []string{"0:x", "1:y"}) {
		t.Fatalf("fetched %v", p)
	}
	// Node 1 got PRODUCE v3 and FETCH v3 for t/1; node 0 only the PRODUCE for t/0 (and METADATA).
	if s := served(b, 1); !slices.Equal(s, []string{"1 v3", "2 v3"}) {
		t.Fatalf("node 1 served %v", s)
	}
	if s := served(b, 0); !slices.Equal(s, []string{"1 v3"}) {
		t.Fatalf("node 0 served %v", s)
	}
	if r, _ := c.Route("t", 1); r != b.NodeAddr(1) {
		t.Fatalf("route of t/1: %q, want %q", r, b.NodeAddr(1))
	}
}

func TestClientFollowsNotPrimaryWithoutAnotherMetadata(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 1}, 2)
	c := newClient(t, quickRoutes, b.NodeAddr(0), b.NodeAddr(1))
	ctx := testContext(t)
	if _, err := c.Produce(ctx, "t", 0, [][]byte{[]byte("first")}, booblik.AckWritten); err != nil {
		t.Fatal(err)
	}
	asked := len(metadataAsked(b))

	b.Route("t", 0, 1) // the partition moved: node 0 answers NOT_PRIMARY naming node 1
	res, err := c.Produce(ctx, "t", 0, [][]byte{[]byte("second")}, booblik.AckWritten)
	if err != nil || res.BaseOffset != 1 {
		t.Fatalf("produce after the move: %+v, %v", res, err)
	}
	if n := len(metadataAsked(b)); n != asked {
		t.Fatalf("%d METADATA requests after NOT_PRIMARY, want none", n-asked)
	}
	if s := served(b, 1); !slices.Equal(s, []string{"1 v3"}) {
		t.Fatalf("node 1 served %v", s)
	}
}

func TestClientRetriesNoPrimaryTwiceThenTheBatchIsAcknowledged(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 1}, 2)
	b.AnswerNoPrimary(2)
	c := newClient(t, quickRoutes, b.NodeAddr(0))
	res, err := c.Produce(testContext(t), "t", 0, [][]byte{[]byte("r")}, booblik.AckWritten)
	if err != nil || res.BaseOffset != 0 {
		t.Fatalf("produce: %+v, %v", res, err)
	}
	if got := b.Records("t", 0); len(got) != 1 || string(got[0]) != "r" {
		t.Fatalf("stored %q", got)
	}
	if n := len(metadataAsked(b)); n != 3 {
		t.Fatalf("%d METADATA requests, want 3: one to learn the route, one after each NO_PRIMARY", n)
	}
}

func TestClientReturnsNoPrimaryOnceTheAttemptsAreSpent(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 1}, 1)
	b.Route("t", 0, -1) // nobody serves it: METADATA says so
	cfg := quickRoutes
	cfg.RouteAttemptsMax = 3
	c := newClient(t, cfg, b.NodeAddr(0))
	_, err := c.Produce(testContext(t), "t", 0, [][]byte{[]byte("lost")}, booblik.AckWritten)
	var refused *booblik.BrokerError
	if !errors.Is(err, booblik.ErrNoPrimary) || !errors.As(err, &refused) || !refused.Retriable() {
		t.Fatalf("err %v, want a retriable NO_PRIMARY", err)
	}
	if n := len(metadataAsked(b)); n != 3 {
		t.Fatalf("%d METADATA requests, want 3 (one per attempt)", n)
	}
	if got := b.Records("t", 0); len(got) != 0 {
		t.Fatalf("stored %q", got)
	}
}

func TestClientReturnsARefusalThatIsNotRetriableAtOnce(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 1}, 1)
	c := newClient(t, quickRoutes, b.NodeAddr(0))
	_, err := c.Produce(testContext(t), "t", 5, [][]byte{[]byte("x")}, booblik.AckWritten)
	if !errors.Is(err, booblik.ErrUnknownTopicOrPartition) {
		t.Fatalf("err %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
}

func TestClientFindsTheNewPrimaryWhenTheOldOneDiesMidFetch(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 1}, 2)
	b.Route("t", 0, 1)
	c := newClient(t, quickRoutes, b.NodeAddr(0))
	ctx := testContext(t)
	if _, err := c.Produce(ctx, "t", 0, [][]byte{[]byte("a0")}, booblik.AckWritten); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
		if r.APIKey != fakebroker.APIFetch || r.Node != 1 {
			return fakebroker.Action{}, false
		}
		once.Do(func() {
			b.Route("t", 0, 0) // node 0 takes the partition over
			go b.StopNode(1)
		})
		return fakebroker.Action{Close: true}, true
	})
	consumer := c.Consumer("t", 0, 0)
	consumer.MaxWait = 0
	recs, err := consumer.Poll(ctx)
	if err != nil || len(recs) != 1 || string(recs[0].Payload) != "a0" || recs[0].Offset != 0 {
		t.Fatalf("poll across the failover: %v, %v", recs, err)
	}
	if res, err := c.Produce(ctx, "t", 0, [][]byte{[]byte("a1")}, booblik.AckWritten); err != nil || res.BaseOffset != 1 {
		t.Fatalf("produce after the failover: %+v, %v", res, err)
	}
	recs, err = consumer.Poll(ctx)
	if err != nil || len(recs) != 1 || string(recs[0].Payload) != "a1" || recs[0].Offset != 1 {
		t.Fatalf("second poll: %v, %v", recs, err)
	}
	if r, _ := c.Route("t", 0); r != b.NodeAddr(0) {
		t.Fatalf("route of t/0: %q, want node 0 %q", r, b.NodeAddr(0))
	}
}

func TestClientSendsMetadataAtTheRevisionTheApplyReturned(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 1}, 2)
	c := newClient(t, quickRoutes, b.NodeAddr(0), b.NodeAddr(1))
	ctx := testContext(t)
	revision, err := c.ApplyTopics(ctx, []booblik.TopicChange{booblik.UpsertTopic(booblik.NewTopicSpec("t2", 1))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Produce(ctx, "t", 0, [][]byte{[]byte("x")}, booblik.AckWritten); err != nil {
		t.Fatal(err)
	}
	asked := metadataAsked(b)
	if len(asked) != 1 || asked[0].Version != 3 || asked[0].MinRevision != revision || revision < 2 {
		t.Fatalf("METADATA asked %+v after APPLY revision %d, want one v3 at that revision", asked, revision)
	}
}

func TestClientProducerSendsEachBatchToItsPrimary(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 2}, 2)
	b.Route("t", 1, 1)
	c := newClient(t, quickRoutes, b.NodeAddr(0))
	p, err := booblik.NewClientProducer(c, booblik.ProducerConfig{Linger: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	d1, d0 := p.Send("t", 1, []byte("p1")), p.Send("t", 0, []byte("p0"))
	ctx := testContext(t)
	for _, d := range []*booblik.Delivery{d1, d0} {
		if off, err := d.Await(ctx); err != nil || off != 0 {
			t.Fatalf("delivery: %d, %v", off, err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if s := served(b, 1); !slices.Equal(s, []string{"1 v3"}) {
		t.Fatalf("node 1 served %v", s)
	}
}

func TestClientAgainstTheRealBrokerSendsV3AndWorks(t *testing.T) {
	addr := startDefaultBroker(t)
	var mu sync.Mutex
	versions := map[int16]map[int16]bool{}
	c, err := booblik.NewClientRecording(testContext(t), []string{addr}, booblik.ClientConfig{}, func(api, version int16) {
		mu.Lock()
		defer mu.Unlock()
		if versions[api] == nil {
			versions[api] = map[int16]bool{}
		}
		versions[api][version] = true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testContext(t)
	res, err := c.Produce(ctx, "default", 0, [][]byte{[]byte("hello")}, booblik.AckWritten)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "default", Partition: 0, Offset: res.BaseOffset})
	if err != nil {
		t.Fatal(err)
	}
	if p := payloadsAt(t, got); !slices.Equal(p, []string{fmt.Sprintf("%d:hello", res.BaseOffset)}) {
		t.Fatalf("fetched %v", p)
	}
	if r, _ := c.Route("default", 0); r != addr {
		t.Fatalf("route %q, want the broker itself %q", r, addr)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, api := range []int16{fakebroker.APIProduce, fakebroker.APIFetch, fakebroker.APIMetadata} {
		if len(versions[api]) != 1 || !versions[api][3] {
			t.Errorf("API %d sent at versions %v, want only 3", api, versions[api])
		}
	}
}
