package booblik_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

// Reads from replicas (ClientConfig.PreferZone) against a fake cluster of three nodes: node 0 is
// every partition's primary, in zone z1, unless a test says otherwise.

const inSyncLive = fakebroker.ReplicaInSync | fakebroker.ReplicaLive

func preferring(zone string) booblik.ClientConfig {
	cfg := quickRoutes
	cfg.PreferZone = zone
	return cfg
}

// threeNodes starts the fake with topic t (one partition, records r0..r4) and t/0's replicas.
func threeNodes(t *testing.T, replicas ...fakebroker.Replica) *fakebroker.Broker {
	t.Helper()
	b := fakebroker.StartCluster(t, map[string]int{"t": 1}, 3)
	for i := range 5 {
		b.Append("t", 0, []byte(fmt.Sprintf("r%d", i)))
	}
	b.Replicas("t", 0, 0, replicas...)
	return b
}

func primaryInZ1() fakebroker.Replica {
	return fakebroker.Replica{Node: 0, Member: "b0", Zone: "z1", Flags: inSyncLive}
}

// servedBy lists the node that answered each fetch, as "node vN".
func servedBy(b *fakebroker.Broker) []string {
	var out []string
	for _, f := range b.FetchesServed() {
		out = append(out, fmt.Sprintf("%d v%d", f.Node, f.Version))
	}
	return out
}

// versionsSent lists "API vN" of every request any node received at version 4.
func versionsSent(b *fakebroker.Broker, version int16) []string {
	var out []string
	for _, r := range b.Requests() {
		if r.Version == version {
			out = append(out, fmt.Sprintf("%d v%d @%d", r.APIKey, r.Version, r.Node))
		}
	}
	return out
}

func fetchAt(t *testing.T, c *booblik.Client, offset int64) *booblik.FetchResult {
	t.Helper()
	res, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t", Partition: 0, Offset: offset})
	if err != nil {
		t.Fatalf("fetch at %d: %v", offset, err)
	}
	return res
}

func TestConsumerPreferringZ2ReadsFromTheZ2InSyncReplicaNotThePrimary(t *testing.T) {
	b := threeNodes(t, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: inSyncLive},
		fakebroker.Replica{Node: 2, Member: "b2", Zone: "z3", Flags: inSyncLive, LagRecords: 1, LagMillis: 7})
	c := newClient(t, preferring("z2"), b.NodeAddr(0))
	consumer := c.Consumer("t", 0, 0)
	consumer.MaxWait = 0
	recs, err := consumer.Poll(testContext(t))
	if err != nil || len(recs) != 5 || string(recs[4].Payload) != "r4" {
		t.Fatalf("poll: %v, %v", recs, err)
	}
	if s := servedBy(b); !slices.Equal(s, []string{"1 v4"}) {
		t.Fatalf("fetches served by %v, want only node 1 (z2) at v4", s)
	}
	if asked := metadataAsked(b); len(asked) != 1 || asked[0].Version != 4 {
		t.Fatalf("METADATA asked %+v, want one v4", asked)
	}

	// The metadata result shows the replicas with their zones, sync state and lag.
	md, err := c.MetadataRoutes(testContext(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	route := md.Topics["t"][0].RouteV2
	if route == nil || route.Primary != b.NodeAddr(0) || len(route.Replicas) != 3 {
		t.Fatalf("RouteV2 %+v", route)
	}
	if r := route.Replicas[2]; r.Zone != "z3" || !r.InSync() || !r.Live() || r.LagRecords != 1 || r.LagMillis != 7 ||
		r.Address != b.NodeAddr(2) || r.Member != "b2" {
		t.Fatalf("replica b2 as read: %+v", r)
	}
}

func TestAReplicaNotInSyncOrNotLiveIsNeverPicked(t *testing.T) {
	b := threeNodes(t, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: fakebroker.ReplicaLive},   // behind
		fakebroker.Replica{Node: 2, Member: "b2", Zone: "z2", Flags: fakebroker.ReplicaInSync}) // lease lost
	c := newClient(t, preferring("z2"), b.NodeAddr(0))
	for range 3 {
		fetchAt(t, c, 0)
	}
	if s := servedBy(b); !slices.Equal(s, []string{"0 v4", "0 v4", "0 v4"}) {
		t.Fatalf("fetches served by %v, want the primary (node 0) each time", s)
	}
	for _, r := range b.RequestsOf(fakebroker.APIFetch) {
		if r.Node != 0 {
			t.Fatalf("a fetch was sent to node %d, which is not in sync and live", r.Node)
		}
	}
}

func TestThePrimaryInThePreferredZoneIsPickedOverAReplicaListedBeforeIt(t *testing.T) {
	b := threeNodes(t,
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: inSyncLive},
		fakebroker.Replica{Node: 0, Member: "b0", Zone: "z2", Flags: inSyncLive})
	c := newClient(t, preferring("z2"), b.NodeAddr(0))
	fetchAt(t, c, 0)
	if s := servedBy(b); !slices.Equal(s, []string{"0 v4"}) {
		t.Fatalf("fetches served by %v, want the primary, which is in z2 too", s)
	}
}

func TestNoReplicaInThePreferredZoneReadsFromThePrimary(t *testing.T) {
	b := threeNodes(t, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: inSyncLive})
	c := newClient(t, preferring("z9"), b.NodeAddr(1))
	if res := fetchAt(t, c, 3); len(res.Records) != 2 {
		t.Fatalf("fetched %d records, want r3 and r4", len(res.Records))
	}
	if s := servedBy(b); !slices.Equal(s, []string{"0 v4"}) {
		t.Fatalf("fetches served by %v, want the primary (node 0)", s)
	}
}

func TestNotPrimaryFromTheReplicaIsServedByThePrimaryAndTheNextPickUsesTheRefreshedRoute(t *testing.T) {
	b := threeNodes(t, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: inSyncLive},
		fakebroker.Replica{Node: 2, Member: "b2", Zone: "z2", Flags: fakebroker.ReplicaLive})
	c := newClient(t, preferring("z2"), b.NodeAddr(0))
	fetchAt(t, c, 0)

	// b1 leaves the in-sync set and b2 joins it: b1 answers NOT_PRIMARY from now on.
	b.Replicas("t", 0, 0, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: fakebroker.ReplicaLive},
		fakebroker.Replica{Node: 2, Member: "b2", Zone: "z2", Flags: inSyncLive})
	if res := fetchAt(t, c, 1); len(res.Records) != 4 || res.Records[0].Offset != 1 {
		t.Fatalf("the fetch b1 refused: %+v", res)
	}
	if s := servedBy(b); !slices.Equal(s, []string{"1 v4", "0 v4"}) {
		t.Fatalf("fetches served by %v, want b1's refusal served by the primary", s)
	}
	fetchAt(t, c, 2)
	if s := servedBy(b); !slices.Equal(s, []string{"1 v4", "0 v4", "2 v4"}) {
		t.Fatalf("fetches served by %v, want the next one picked from the refreshed route (b2, node 2)", s)
	}
	if n := len(metadataAsked(b)); n != 2 {
		t.Fatalf("%d METADATA requests, want 2: the first route and its refresh after NOT_PRIMARY", n)
	}
}

func TestAReplicaThatCannotBeReachedIsLeftForThePrimary(t *testing.T) {
	b := threeNodes(t, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: inSyncLive})
	b.StopNode(1)
	c := newClient(t, preferring("z2"), b.NodeAddr(0))
	if res := fetchAt(t, c, 0); len(res.Records) != 5 {
		t.Fatalf("fetched %d records, want 5", len(res.Records))
	}
	if s := servedBy(b); !slices.Equal(s, []string{"0 v4"}) {
		t.Fatalf("fetches served by %v, want the primary", s)
	}
}

func TestTheHighWatermarkDoesNotGoBackWhenTheNextReplicaTrails(t *testing.T) {
	b := threeNodes(t, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: inSyncLive},
		fakebroker.Replica{Node: 2, Member: "b2", Zone: "z2", Flags: fakebroker.ReplicaLive})
	b.TrailingHighWatermark("t", 0, 2, 3) // b2 has learned the commit only up to 3
	c := newClient(t, preferring("z2"), b.NodeAddr(0))
	consumer := c.Consumer("t", 0, 0)
	consumer.MaxWait = 0
	if recs, err := consumer.Poll(testContext(t)); err != nil || len(recs) != 5 || consumer.Lag() != 0 {
		t.Fatalf("first poll: %d records, lag %d, %v", len(recs), consumer.Lag(), err)
	}

	// b1 leaves the in-sync set, b2 (trailing) joins: the read moves to b2.
	b.Replicas("t", 0, 0, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: fakebroker.ReplicaLive},
		fakebroker.Replica{Node: 2, Member: "b2", Zone: "z2", Flags: inSyncLive})
	fetchAt(t, c, 5) // b1's NOT_PRIMARY, served by the primary
	res := fetchAt(t, c, 1)
	served := b.FetchesServed()
	if last := served[len(served)-1]; last.Node != 2 || last.HighWatermark != 3 {
		t.Fatalf("last fetch served %+v, want b2 (node 2) answering high watermark 3", last)
	}
	if res.HighWatermark != 5 || len(res.Records) != 2 {
		t.Fatalf("high watermark %d with %d records from the trailing replica, want 5 (seen before) and r1, r2",
			res.HighWatermark, len(res.Records))
	}
	consumer.SeekTo(1)
	if _, err := consumer.Poll(testContext(t)); err != nil || consumer.Lag() != 2 {
		t.Fatalf("consumer lag after reading r1, r2 from b2: %d (%v), want 2 (5 - 3)", consumer.Lag(), err)
	}
}

func TestABrokerWithoutMetadataV4GetsV3AndReadsGoToThePrimary(t *testing.T) {
	b := threeNodes(t, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: inSyncLive})
	b.WithoutV4()
	c := newClient(t, preferring("z2"), b.NodeAddr(0), b.NodeAddr(1))
	fetchAt(t, c, 0)
	fetchAt(t, c, 1)
	if s := servedBy(b); !slices.Equal(s, []string{"0 v3", "0 v3"}) {
		t.Fatalf("fetches served by %v, want the primary at v3", s)
	}
	if v4 := versionsSent(b, 4); len(v4) != 0 {
		t.Fatalf("sent %v to brokers without v4", v4)
	}
	if asked := metadataAsked(b); len(asked) != 1 || asked[0].Version != 3 {
		t.Fatalf("METADATA asked %+v, want one v3", asked)
	}
}

func TestAReplicaWithoutFetchV4IsNotAskedAndThePrimaryServesV3(t *testing.T) {
	b := threeNodes(t, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: inSyncLive})
	b.WithoutV4(0, 1) // an upgrade under way: the primary and the replica predate reads from replicas
	c := newClient(t, preferring("z2"), b.NodeAddr(2))
	fetchAt(t, c, 0)
	if s := servedBy(b); !slices.Equal(s, []string{"0 v3"}) {
		t.Fatalf("fetches served by %v, want the primary at v3", s)
	}
	if fetches := b.RequestsOf(fakebroker.APIFetch); len(fetches) != 1 {
		t.Fatalf("%d fetches sent, want one: none to a replica that cannot take it", len(fetches))
	}
}

func TestWithoutPreferZoneNothingSendsV4(t *testing.T) {
	b := threeNodes(t, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: inSyncLive})
	c := newClient(t, quickRoutes, b.NodeAddr(1))
	ctx := testContext(t)
	if _, err := c.Produce(ctx, "t", 0, [][]byte{[]byte("r5")}, booblik.AckWritten); err != nil {
		t.Fatal(err)
	}
	consumer := c.Consumer("t", 0, 0)
	consumer.MaxWait = 0
	if recs, err := consumer.Poll(ctx); err != nil || len(recs) != 6 {
		t.Fatalf("poll: %d records, %v", len(recs), err)
	}
	md, err := c.MetadataRoutes(ctx, "t")
	if err != nil || md.Topics["t"][0].RouteV2 != nil {
		t.Fatalf("metadata without PreferZone: %+v, %v; want no RouteV2", md, err)
	}
	if v4 := versionsSent(b, 4); len(v4) != 0 {
		t.Fatalf("sent %v without PreferZone", v4)
	}
	if s := servedBy(b); !slices.Equal(s, []string{"0 v3"}) {
		t.Fatalf("fetches served by %v, want the primary at v3", s)
	}
}

func TestListTopicsReplicasShowsEveryReplicaWithLagsUnknownAndListTopicsStaysV1(t *testing.T) {
	b := threeNodes(t, primaryInZ1(),
		fakebroker.Replica{Node: 1, Member: "b1", Zone: "z2", Flags: fakebroker.ReplicaLive, LagRecords: 4, LagMillis: 90})
	c := newClient(t, preferring("z2"), b.NodeAddr(0))
	ctx := testContext(t)
	plain, err := c.ListTopics(ctx, "")
	if err != nil || len(plain.Topics) != 1 || plain.Topics[0].RoutesV2 != nil {
		t.Fatalf("ListTopics: %+v, %v; want LIST v1, without RoutesV2", plain, err)
	}
	listing, err := c.ListTopicsReplicas(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	routes := listing.Topics[0].RoutesV2
	if len(routes) != 1 || routes[0].Primary != b.NodeAddr(0) || len(routes[0].Replicas) != 2 {
		t.Fatalf("RoutesV2 %+v", routes)
	}
	want := booblik.ReplicaState{Member: "b1", Address: b.NodeAddr(1), Zone: "z2", Flags: booblik.ReplicaLive,
		LagRecords: booblik.LagUnknown, LagMillis: booblik.LagUnknown}
	if got := routes[0].Replicas[1]; got != want {
		t.Fatalf("b1 listed as %+v, want %+v", got, want)
	}
	var lists []int16
	for _, r := range b.RequestsOf(fakebroker.APIList) {
		lists = append(lists, r.Version)
	}
	if !slices.Equal(lists, []int16{1, 2}) {
		t.Fatalf("LIST sent at versions %v, want 1 then 2", lists)
	}
}

func TestClientPreferringAZoneAgainstTheRealBrokerReadsFromItsRouteToItself(t *testing.T) {
	addr := startDefaultBroker(t)
	var mu sync.Mutex
	versions := map[int16]map[int16]bool{}
	c, err := booblik.NewClientRecording(testContext(t), []string{addr}, booblik.ClientConfig{PreferZone: "z1"}, func(api, version int16) {
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
	res, err := c.Produce(ctx, "default", 0, [][]byte{[]byte("zoned")}, booblik.AckWritten)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "default", Partition: 0, Offset: res.BaseOffset})
	if err != nil {
		t.Fatal(err)
	}
	if p := payloadsAt(t, got); !slices.Equal(p, []string{fmt.Sprintf("%d:zoned", res.BaseOffset)}) ||
		got.HighWatermark != res.LogEndOffset {
		t.Fatalf("fetched %v, high watermark %d (produce ended at %d)", p, got.HighWatermark, res.LogEndOffset)
	}
	md, err := c.MetadataRoutes(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	// One node: the route is the broker itself, epoch 0, one replica in sync and live, level.
	route := md.Topics["default"][0].RouteV2
	want := booblik.ReplicaState{Address: addr, Flags: booblik.ReplicaInSync | booblik.ReplicaLive}
	if route == nil || route.Epoch != 0 || route.Primary != addr || len(route.Replicas) != 1 || route.Replicas[0] != want {
		t.Fatalf("RouteV2 %+v, want the broker %s alone, in sync and live", route, addr)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, api := range []int16{fakebroker.APIFetch, fakebroker.APIMetadata} {
		if len(versions[api]) != 1 || !versions[api][4] {
			t.Errorf("API %d sent at versions %v, want only 4", api, versions[api])
		}
	}
}
