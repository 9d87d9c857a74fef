package booblik_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

func createOrders(t *testing.T, c *booblik.Conn) int64 {
	t.Helper()
	spec := booblik.NewTopicSpec("orders", 3)
	spec.Labels = map[string]string{"team": "payments"}
	spec.Revision = booblik.RevisionMustNotExist
	revision, err := c.ApplyTopics(testContext(t), []booblik.TopicChange{booblik.UpsertTopic(spec)})
	if err != nil {
		t.Fatal(err)
	}
	return revision
}

func names(t *testing.T, c *booblik.Conn, selector string) []string {
	t.Helper()
	listing, err := c.ListTopics(testContext(t), selector)
	if err != nil {
		t.Fatal(err)
	}
	return listing.Names()
}

func TestCreatedTopicIsListedByItsLabelWithTheNewRevision(t *testing.T) {
	b := startBroker(t, map[string]int{"default": 1})
	c := dial(t, b)
	if revision := createOrders(t, c); revision != 2 { // the startup topics are revision 1
		t.Fatalf("revision %d, want 2", revision)
	}
	listing, err := c.ListTopics(testContext(t), "team=payments")
	if err != nil || listing.Revision != 2 || len(listing.Topics) != 1 {
		t.Fatalf("%+v, %v", listing, err)
	}
	got := listing.Topics[0]
	if got.Spec.Name != "orders" || got.Spec.Partitions != 3 || got.Spec.Revision != 2 ||
		!reflect.DeepEqual(got.Spec.Labels, map[string]string{"team": "payments"}) || len(got.Routes) != 3 ||
		got.Routes[2].Primary != b.Addr() {
		t.Fatalf("%+v", got)
	}
	if n := names(t, c, "team!=payments"); !reflect.DeepEqual(n, []string{"default"}) {
		t.Fatalf("team!=payments: %v", n)
	}
	if n := names(t, c, ""); !reflect.DeepEqual(n, []string{"default", "orders"}) {
		t.Fatalf("every topic: %v", n)
	}
	if md, err := c.Metadata(testContext(t), "orders"); err != nil || len(md["orders"]) != 3 {
		t.Fatalf("METADATA of the new topic: %v, %v", md, err)
	}
	applies := b.RequestsOf(fakebroker.APIApply)
	if len(applies) != 1 || applies[0].DryRun || len(applies[0].Changes) != 1 {
		t.Fatalf("%+v", applies)
	}
	sent := applies[0].Changes[0].Spec
	if sent.RetentionBytes != -2 || sent.SegmentBytes != 0 || sent.Replication != 0 || sent.Revision != 0 {
		t.Fatalf("NewTopicSpec's defaults went out as %+v", sent)
	}
}

func TestStaleRevisionIsRefusedNamingTheTopicAndBothRevisions(t *testing.T) {
	c := dial(t, startBroker(t, map[string]int{"default": 1}))
	created := createOrders(t, c)
	grown := booblik.NewTopicSpec("orders", 4)
	grown.Revision = created
	if _, err := c.ApplyTopics(testContext(t), []booblik.TopicChange{booblik.UpsertTopic(grown)}); err != nil {
		t.Fatal(err)
	}
	grown.Partitions = 5 // still expecting the revision before the growth
	_, err := c.ApplyTopics(testContext(t), []booblik.TopicChange{booblik.UpsertTopic(grown)})
	var mismatch *booblik.RevisionMismatchError
	if !errors.As(err, &mismatch) || !errors.Is(err, booblik.ErrRevisionMismatch) || mismatch.Topic != "orders" ||
		mismatch.ExpectedRevision != created || mismatch.ActualRevision != created+1 {
		t.Fatalf("%v", err)
	}
	listing, err := c.ListTopics(testContext(t), "name=orders")
	if err != nil || listing.Topics[0].Spec.Partitions != 4 {
		t.Fatalf("the refused change applied: %+v, %v", listing, err)
	}
}

func TestOneBadChangeAppliesNothingAndTheConnStaysUsable(t *testing.T) {
	c := dial(t, startBroker(t, map[string]int{"default": 1}))
	fresh := booblik.NewTopicSpec("fresh", 1)
	fresh.Revision = booblik.RevisionMustNotExist
	_, err := c.ApplyTopics(testContext(t), []booblik.TopicChange{
		booblik.UpsertTopic(fresh), booblik.DeleteTopic("default", 7),
	})
	var mismatch *booblik.RevisionMismatchError
	if !errors.As(err, &mismatch) || mismatch.ChangeIndex != 1 || mismatch.Topic != "default" {
		t.Fatalf("%v", err)
	}
	if n := names(t, c, ""); !reflect.DeepEqual(n, []string{"default"}) {
		t.Fatalf("after a refused APPLY: %v", n)
	}
}

func TestBrokerRefusalOfAValueNamesTheField(t *testing.T) {
	c := dial(t, startBroker(t, map[string]int{"default": 1}))
	createOrders(t, c)
	_, err := c.ApplyTopics(testContext(t), []booblik.TopicChange{booblik.UpsertTopic(booblik.NewTopicSpec("orders", 2))})
	var invalid *booblik.InvalidArgumentRefusal
	if !errors.As(err, &invalid) || invalid.Index != 0 || !errors.Is(err, booblik.ErrArgumentRefused) {
		t.Fatalf("%v", err)
	}
}

func TestDryRunAndDelete(t *testing.T) {
	b := startBroker(t, map[string]int{"default": 1})
	c := dial(t, b)
	revision, err := c.ApplyTopicsDryRun(testContext(t), []booblik.TopicChange{booblik.UpsertTopic(booblik.NewTopicSpec("x", 1))})
	if err != nil || revision != 1 || !b.RequestsOf(fakebroker.APIApply)[0].DryRun {
		t.Fatalf("dry run: %d, %v", revision, err)
	}
	if n := names(t, c, ""); !reflect.DeepEqual(n, []string{"default"}) {
		t.Fatalf("a dry run changed something: %v", n)
	}
	if revision, err = c.ApplyTopics(testContext(t), []booblik.TopicChange{booblik.DeleteTopic("default", 1)}); err != nil || revision != 2 {
		t.Fatalf("delete: %d, %v", revision, err)
	}
	if n := names(t, c, ""); len(n) != 0 {
		t.Fatalf("after the delete: %v", n)
	}
	if _, err := c.Metadata(testContext(t), "default"); !errors.Is(err, booblik.ErrUnknownTopicOrPartition) {
		t.Fatalf("METADATA of a deleted topic: %v", err)
	}
}

func TestWatchCallsNowThenOnTheNextChangeAfterWaitsThatEndedEmpty(t *testing.T) {
	b := startBroker(t, map[string]int{"default": 1})
	watcher, applier := dial(t, b), dial(t, b)
	applied := make(chan error, 1)
	var seen []*booblik.TopicListing
	done := errors.New("seen the change")
	err := watcher.WatchTopics(testContext(t), "team=payments", 20*time.Millisecond, func(l *booblik.TopicListing) error {
		seen = append(seen, l)
		if len(seen) == 1 {
			go func() {
				// Three LISTs held and expired empty before the change: the watch must ask again.
				b.WaitUntil("a watch that asked three times", func() bool { return len(b.RequestsOf(fakebroker.APIList)) >= 4 })
				spec := booblik.NewTopicSpec("orders", 1)
				spec.Labels = map[string]string{"team": "payments"}
				_, err := applier.ApplyTopics(testContext(t), []booblik.TopicChange{booblik.UpsertTopic(spec)})
				applied <- err
			}()
			return nil
		}
		return done
	})
	if err != done {
		t.Fatalf("the watch ended with %v", err)
	}
	select {
	case err := <-applied:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testTimeout):
		t.Fatal("the APPLY never ran")
	}
	if len(seen) != 2 || seen[0].Revision != 1 || len(seen[0].Topics) != 0 || seen[1].Revision != 2 ||
		!reflect.DeepEqual(seen[1].Names(), []string{"orders"}) {
		t.Fatalf("%+v", seen)
	}
	for _, r := range b.RequestsOf(fakebroker.APIList)[1:] {
		if r.WatchRevision != 1 || r.MaxWaitMillis != 20 {
			t.Fatalf("watch LIST %+v", r)
		}
	}
}

func TestWatchStopsWhenItsFunctionFails(t *testing.T) {
	c := dial(t, startBroker(t, map[string]int{"default": 1}))
	stop := errors.New("enough")
	if err := c.WatchTopics(testContext(t), "", 0, func(*booblik.TopicListing) error { return stop }); err != stop {
		t.Fatalf("%v", err)
	}
	if n := names(t, c, ""); len(n) != 1 {
		t.Fatalf("the Conn after a watch: %v", n)
	}
}

func TestCancellingAHeldWatchReturnsPromptly(t *testing.T) {
	b := startBroker(t, map[string]int{"default": 1})
	c := dial(t, b)
	ctx, cancel := context.WithCancel(testContext(t))
	go func() {
		b.WaitUntil("a held LIST", func() bool { return b.Waiting() > 0 })
		cancel()
	}()
	started := time.Now()
	calls := 0
	err := c.WatchTopics(ctx, "", 3*time.Second, func(*booblik.TopicListing) error {
		if calls++; calls > 1 {
			return errors.New("called again though nothing changed")
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || time.Since(started) > 2*time.Second {
		t.Fatalf("%v after %v", err, time.Since(started))
	}
	// The held LIST's answer is owed, not lost: the Conn skips it and serves the next call.
	if n := names(t, c, ""); !reflect.DeepEqual(n, []string{"default"}) {
		t.Fatalf("the Conn after a cancelled watch: %v", n)
	}
}

func TestTopicsAgainstTheRealBroker(t *testing.T) {
	addr := startDefaultBroker(t)
	ctx := testContext(t)
	c, err := booblik.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	spec := booblik.NewTopicSpec("go-crud", 2)
	spec.Labels = map[string]string{"suite": "go"}
	spec.Revision = booblik.RevisionMustNotExist
	created, err := c.ApplyTopics(ctx, []booblik.TopicChange{booblik.UpsertTopic(spec)})
	if err != nil {
		t.Fatal(err)
	}
	listing, err := c.ListTopics(ctx, "suite=go")
	if err != nil || listing.Revision != created || !reflect.DeepEqual(listing.Names(), []string{"go-crud"}) ||
		listing.Topics[0].Spec.Revision != created || len(listing.Topics[0].Routes) != 2 || listing.Topics[0].Routes[0].Primary != addr {
		t.Fatalf("%+v, %v", listing, err)
	}
	var mismatch *booblik.RevisionMismatchError
	if _, err := c.ApplyTopics(ctx, []booblik.TopicChange{booblik.UpsertTopic(spec)}); !errors.As(err, &mismatch) ||
		mismatch.Topic != "go-crud" || mismatch.ExpectedRevision != 0 || mismatch.ActualRevision != created {
		t.Fatalf("a second create: %v", err)
	}
	shrink := booblik.NewTopicSpec("go-crud", 1)
	var invalid *booblik.InvalidArgumentRefusal
	if _, err := c.ApplyTopics(ctx, []booblik.TopicChange{booblik.UpsertTopic(shrink)}); !errors.As(err, &invalid) ||
		invalid.Index != 0 || !strings.Contains(invalid.Detail, "partitions") {
		t.Fatalf("a shrink: %v", err)
	}
	if _, err := c.ListTopics(ctx, "a in (x"); !errors.As(err, &invalid) || invalid.Index != -1 {
		t.Fatalf("a selector that does not parse: %v", err)
	}

	// A watch on a Conn of its own, woken by the delete.
	watcher, err := booblik.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watcher.Close() })
	seen := make(chan *booblik.TopicListing, 2)
	done := errors.New("seen the delete")
	watched := make(chan error, 1)
	go func() {
		watched <- watcher.WatchTopics(ctx, "suite=go", 5*time.Second, func(l *booblik.TopicListing) error {
			seen <- l
			if len(l.Topics) == 0 {
				return done
			}
			return nil
		})
	}()
	if first := <-seen; !reflect.DeepEqual(first.Names(), []string{"go-crud"}) {
		t.Fatalf("the watch's first listing: %+v", first)
	}
	deleted, err := c.ApplyTopics(ctx, []booblik.TopicChange{booblik.DeleteTopic("go-crud", created)})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-seen:
		if l.Revision != deleted || len(l.Topics) != 0 {
			t.Fatalf("after the delete: %+v", l)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the watch was not woken by the delete")
	}
	if err := <-watched; err != done {
		t.Fatalf("the watch ended with %v", err)
	}
}

func TestProduceAtLandsTheBatchOnlyWhereThePartitionEnds(t *testing.T) {
	b := startBroker(t, map[string]int{"default": 1})
	c := dial(t, b)
	if res, err := c.ProduceAt(testContext(t), "default", 0, 0, [][]byte{[]byte("a")}, booblik.AckWritten); err != nil || res.BaseOffset != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	_, err := c.ProduceAt(testContext(t), "default", 0, 0, [][]byte{[]byte("b"), []byte("c")}, booblik.AckWritten)
	var mismatch *booblik.OffsetMismatchError
	if !errors.As(err, &mismatch) || !errors.Is(err, booblik.ErrOffsetMismatch) || mismatch.ExpectedOffset != 0 || mismatch.LogEndOffset != 1 {
		t.Fatalf("%v", err)
	}
	if got := b.Records("default", 0); len(got) != 1 {
		t.Fatalf("a refused batch was written: %q", got)
	}
	if v := b.RequestsOf(fakebroker.APIProduce); v[0].Version != 2 || v[1].ExpectedOffset != 0 {
		t.Fatalf("%+v", v)
	}
	if _, err := c.ProduceAt(testContext(t), "default", 0, -1, [][]byte{[]byte("x")}, booblik.AckWritten); !errors.Is(err, booblik.ErrInvalidArgument) {
		t.Fatalf("a negative expected offset: %v", err)
	}
}

func TestProduceAtFencesAWriterOnTheRealBroker(t *testing.T) {
	addr := startDefaultBroker(t)
	ctx := testContext(t)
	c, err := booblik.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	md, err := c.Metadata(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	end := md["default"][0].HighWatermark
	if _, err := c.ProduceAt(ctx, "default", 0, end, [][]byte{[]byte("mine")}, booblik.AckWritten); err != nil {
		t.Fatal(err)
	}
	_, err = c.ProduceAt(ctx, "default", 0, end, [][]byte{[]byte("stale")}, booblik.AckWritten)
	var mismatch *booblik.OffsetMismatchError
	if !errors.As(err, &mismatch) || mismatch.LogEndOffset != end+1 {
		t.Fatalf("%v", err)
	}
}

func TestARefusedApplyOfManyChangesIsNamedInOneShortLine(t *testing.T) {
	c := dial(t, startBroker(t, map[string]int{"default": 1}))
	changes := []booblik.TopicChange{booblik.DeleteTopic("default", 9)}
	for i := 0; i < 1000; i++ {
		changes = append(changes, booblik.DeleteTopic(fmt.Sprintf("t%d", i), booblik.RevisionAny))
	}
	_, err := c.ApplyTopics(testContext(t), changes)
	if !errors.Is(err, booblik.ErrRevisionMismatch) || !strings.Contains(err.Error(), "APPLY -default, -t0, -t1, and 998 more refused") ||
		len(err.Error()) > 200 {
		t.Fatalf("%v", err)
	}
}
