package booblik

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Topics at runtime (docs/protocol.md, "Additions after v1"):
//
//	TopicSpec => name:string partitions:int32 labelCount:int32 [key:string value:string]*labelCount
//	             retentionBytes:int64 retentionMillis:int64 segmentBytes:int32 flags:int32
//	             replication:int16 storeUrl:string revision:int64
//	APPLY request v1  => dryRun:int8 changeCount:int32 [change]*changeCount
//	  change => op:int8 (1 upsert => spec:TopicSpec | 2 delete => name:string expectedRevision:int64)
//	APPLY response v1 => revision:int64
//	LIST request v1   => selector:string watchRevision:int64 maxWaitMillis:int32
//	LIST response v1  => revision:int64 topicCount:int32
//	  [spec:TopicSpec routeCount:int32 [route:Route]*routeCount]*topicCount
//	Route => primary:string replicaCount:int32 [replica:string]*replicaCount

const (
	applyVersion = 1
	listVersion  = 1

	applyOpUpsert = 1
	applyOpDelete = 2

	// topicPartitionsMax and applyChangesMax are the broker's limits, checked here so the error
	// names the field before anything is sent.
	topicPartitionsMax = 10_000
	applyChangesMax    = 10_000
	stringBytesMax     = 1<<16 - 1

	// noWatch is the watchRevision of a LIST that is answered at once.
	noWatch = -1
)

// Expected revisions of an APPLY change, besides an exact N (the topic must be at N).
const (
	RevisionMustNotExist int64 = 0
	RevisionAny          int64 = -1
)

// APPLY sentinels for "the broker's configured value". The spec keeps them (LIST shows them) and the
// broker resolves them whenever it opens the partitions, so a changed setting reaches the topic.
const (
	RetentionDefault    int64 = -2
	RetentionUnlimited  int64 = -1
	SegmentBytesDefault int32 = 0
	ReplicationDefault  int16 = 0
)

// FlagReadOnly makes PRODUCE to the topic fail with ErrTopicReadOnly; FETCH still serves it.
const FlagReadOnly int32 = 1

// DefaultWatchWait is how long each held LIST of WatchTopics waits before asking again: one cheap
// request per wait while nothing changes, and a dead connection noticed within that.
const DefaultWatchWait = 20 * time.Second

// TopicSpec is one topic's spec. Start from NewTopicSpec: its zero value would ask for a retention
// of 0 bytes and 0 ms and a revision of 0 (must not exist).
type TopicSpec struct {
	Name            string
	Partitions      int32             // 1..10000; an existing topic's may grow, never shrink
	Labels          map[string]string // for selectors: team=payments
	RetentionBytes  int64             // RetentionUnlimited, or RetentionDefault in an APPLY
	RetentionMillis int64             // RetentionUnlimited, or RetentionDefault in an APPLY
	SegmentBytes    int32             // SegmentBytesDefault in an APPLY
	Flags           int32             // FlagReadOnly
	Replication     int16             // copies of each partition; a single broker keeps 1
	StoreURL        string            // where the cluster keeps fragments; empty on a single broker
	// Revision is, in an APPLY, the revision the change expects (RevisionMustNotExist, RevisionAny
	// or N); in a listing, the spec store's revision of the spec's last change.
	Revision int64
}

// NewTopicSpec is a spec with every other field at the broker's defaults, expecting any revision.
func NewTopicSpec(name string, partitions int32) TopicSpec {
	return TopicSpec{
		Name: name, Partitions: partitions, RetentionBytes: RetentionDefault, RetentionMillis: RetentionDefault,
		SegmentBytes: SegmentBytesDefault, Replication: ReplicationDefault, Revision: RevisionAny,
	}
}

// ReadOnly says whether the spec has FlagReadOnly.
func (s TopicSpec) ReadOnly() bool { return s.Flags&FlagReadOnly != 0 }

// TopicChange is one change of an APPLY: build it with UpsertTopic or DeleteTopic.
type TopicChange struct {
	Upsert           *TopicSpec // create the topic or replace its spec; Upsert.Revision is expected
	Delete           string     // or delete this topic
	ExpectedRevision int64      // of a Delete
}

// UpsertTopic creates the topic or replaces its spec, if the topic is at spec.Revision.
func UpsertTopic(spec TopicSpec) TopicChange { return TopicChange{Upsert: &spec} }

// DeleteTopic deletes the topic, if it is at expectedRevision (RevisionAny: whatever it is, and a
// topic that does not exist is no change).
func DeleteTopic(name string, expectedRevision int64) TopicChange {
	return TopicChange{Delete: name, ExpectedRevision: expectedRevision}
}

// Route says who serves a partition: the primary's host:port (empty when it has none) and the
// replicas'.
type Route struct {
	Primary  string
	Replicas []string
}

// ListedTopic is one topic of a listing: its spec and one route per partition, by id.
type ListedTopic struct {
	Spec   TopicSpec
	Routes []Route
	// RoutesV2 are the same routes with every replica (LIST v2, ListTopicsReplicas; lags are
	// LagUnknown there); nil from LIST v1.
	RoutesV2 []RouteV2
}

// TopicListing is what LIST answers: the spec store's revision and the matching topics, by name.
type TopicListing struct {
	Revision int64
	Topics   []ListedTopic
}

// Names lists the topics' names, in the listing's order.
func (l *TopicListing) Names() []string {
	names := make([]string, len(l.Topics))
	for i, t := range l.Topics {
		names[i] = t.Spec.Name
	}
	return names
}

// ApplyTopics creates, changes and deletes topics: every change or none. It returns the spec
// store's new revision, which every upserted spec now carries. A stale expected revision fails
// with a *RevisionMismatchError (errors.Is ErrRevisionMismatch) naming the topic and both
// revisions; a value the broker does not allow with an *InvalidArgumentRefusal naming the field.
func (c *Conn) ApplyTopics(ctx context.Context, changes []TopicChange) (int64, error) {
	return c.apply(ctx, changes, false)
}

// ApplyTopicsDryRun checks the changes as ApplyTopics would, on the broker, and changes nothing;
// it returns the current revision.
func (c *Conn) ApplyTopicsDryRun(ctx context.Context, changes []TopicChange) (int64, error) {
	return c.apply(ctx, changes, true)
}

func (c *Conn) apply(ctx context.Context, changes []TopicChange, dryRun bool) (int64, error) {
	frame, err := appendApplyRequest(beginFrame(apiApply, applyVersion), changes, dryRun)
	if err != nil {
		return 0, err
	}
	body, err := c.exchange(ctx, apiApply, applyRequestLabel(changes), frame, true)
	if err != nil {
		return 0, err
	}
	d := decoder{api: apiApply, b: body}
	revision := d.int64("revision")
	if d.err == nil && revision < 0 {
		d.fail("revision: %d, expected >= 0", revision)
	}
	return revision, d.done()
}

// ListTopics returns the topics a label selector matches, in Gazette's grammar: k=v, k!=v, k, !k,
// k in (a,b), k notin (a,b), a comma for "and", and name=... for the topic's name; "" matches
// every topic. A selector that does not parse fails with an *InvalidArgumentRefusal.
func (c *Conn) ListTopics(ctx context.Context, selector string) (*TopicListing, error) {
	return c.listAs(ctx, listVersion, selector, noWatch, 0)
}

// WatchTopics follows the topics a selector matches: it calls fn with the listing now, then again
// each time the spec store changes, until ctx ends (it then returns ctx's error) or fn returns an
// error (returned as is). Each held LIST waits up to maxWait (0: DefaultWatchWait; at most 60 s)
// before asking again, so a quiet watch is one request per wait. It holds the Conn the whole time:
// give a watch a Conn of its own.
func (c *Conn) WatchTopics(ctx context.Context, selector string, maxWait time.Duration, fn func(*TopicListing) error) error {
	if maxWait < 0 {
		return &InvalidArgumentError{Field: "maxWait", Got: maxWait.String(), Want: ">= 0"}
	}
	if maxWait == 0 {
		maxWait = DefaultWatchWait
	}
	listing, err := c.list(ctx, selector, noWatch, 0)
	for err == nil {
		if err = fn(listing); err != nil {
			return err
		}
		revision := listing.Revision
		for err == nil && listing.Revision <= revision { // a wait that ended: nothing changed
			listing, err = c.list(ctx, selector, revision, maxWait)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (c *Conn) list(ctx context.Context, selector string, watchRevision int64, maxWait time.Duration) (*TopicListing, error) {
	return c.listAs(ctx, listVersion, selector, watchRevision, maxWait)
}

// listAs sends LIST v1, or v2 (routes with replicas).
func (c *Conn) listAs(ctx context.Context, version int16, selector string, watchRevision int64, maxWait time.Duration) (*TopicListing, error) {
	if len(selector) > stringBytesMax {
		return nil, &InvalidArgumentError{Field: "selector", Got: fmt.Sprintf("%d bytes", len(selector)),
			Want: fmt.Sprintf("at most %d", stringBytesMax)}
	}
	frame := listFrame(version, selector, watchRevision, maxWait)
	label := "LIST (every topic)"
	if selector != "" {
		label = "LIST " + selector
	}
	body, err := c.exchange(ctx, apiList, label, frame, true)
	if err != nil {
		return nil, err
	}
	return decodeListResponse(body, version >= listReplicasVersion)
}

func listFrame(version int16, selector string, watchRevision int64, maxWait time.Duration) []byte {
	frame := appendString(beginFrame(apiList, version), selector)
	frame = appendInt64(frame, watchRevision)
	return appendInt32(frame, waitMillis(maxWait))
}

// labelChangesMax is how many changes an APPLY's label in errors names before it counts the rest:
// one line, however many changes.
const labelChangesMax = 3

// applyRequestLabel names an APPLY in errors: "APPLY orders, -old" (a delete is -name).
func applyRequestLabel(changes []TopicChange) string {
	if len(changes) == 0 {
		return "APPLY (no changes)"
	}
	var names []string
	for _, ch := range changes[:min(len(changes), labelChangesMax)] {
		if ch.Upsert != nil {
			names = append(names, ch.Upsert.Name)
		} else {
			names = append(names, "-"+ch.Delete)
		}
	}
	if len(changes) > labelChangesMax {
		names = append(names, fmt.Sprintf("and %d more", len(changes)-labelChangesMax))
	}
	return "APPLY " + strings.Join(names, ", ")
}

func appendApplyRequest(b []byte, changes []TopicChange, dryRun bool) ([]byte, error) {
	if len(changes) > applyChangesMax {
		return nil, &InvalidArgumentError{Field: "changes", Got: fmt.Sprintf("%d of them", len(changes)),
			Want: fmt.Sprintf("at most %d", applyChangesMax)}
	}
	flag := int8(0)
	if dryRun {
		flag = 1
	}
	b = appendInt8(b, flag)
	b = appendInt32(b, int32(len(changes)))
	for i, ch := range changes {
		where := fmt.Sprintf("changes[%d]", i)
		switch {
		case ch.Upsert != nil && ch.Delete != "":
			return nil, &InvalidArgumentError{Field: where, Got: "both Upsert and Delete", Want: "one of them"}
		case ch.Upsert != nil:
			if err := checkSpec(where+".Upsert", ch.Upsert); err != nil {
				return nil, err
			}
			b = appendTopicSpec(appendInt8(b, applyOpUpsert), ch.Upsert)
		case ch.Delete != "":
			if err := validTopic(where+".Delete", ch.Delete); err != nil {
				return nil, err
			}
			if err := checkRevision(where+".ExpectedRevision", ch.ExpectedRevision); err != nil {
				return nil, err
			}
			b = appendString(appendInt8(b, applyOpDelete), ch.Delete)
			b = appendInt64(b, ch.ExpectedRevision)
		default:
			return nil, &InvalidArgumentError{Field: where, Got: "neither Upsert nor Delete", Want: "one of them"}
		}
	}
	return b, nil
}

// checkSpec refuses what cannot go on the wire or is out of range on its face; the broker checks
// the rest (label grammar, reserved keys, growth) and names the field it refuses.
func checkSpec(where string, s *TopicSpec) error {
	if err := validTopic(where+".Name", s.Name); err != nil {
		return err
	}
	bad := func(field string, got any, want string) error {
		return &InvalidArgumentError{Field: where + "." + field, Got: fmt.Sprint(got), Want: want}
	}
	switch {
	case s.Partitions < 1 || s.Partitions > topicPartitionsMax:
		return bad("Partitions", s.Partitions, fmt.Sprintf("1..%d", topicPartitionsMax))
	case s.RetentionBytes < RetentionDefault:
		return bad("RetentionBytes", s.RetentionBytes, ">= -2 (-1 unlimited, -2 the broker's default)")
	case s.RetentionMillis < RetentionDefault:
		return bad("RetentionMillis", s.RetentionMillis, ">= -2 (-1 unlimited, -2 the broker's default)")
	case s.SegmentBytes < 0:
		return bad("SegmentBytes", s.SegmentBytes, ">= 0 (0 the broker's default)")
	case s.Replication < 0:
		return bad("Replication", s.Replication, ">= 0 (0 the default, 1)")
	case len(s.StoreURL) > stringBytesMax:
		return bad("StoreURL", fmt.Sprintf("%d bytes", len(s.StoreURL)), fmt.Sprintf("at most %d", stringBytesMax))
	}
	for k, v := range s.Labels {
		if len(k) == 0 || len(k) > stringBytesMax || len(v) > stringBytesMax {
			return bad(fmt.Sprintf("Labels[%q]", k), fmt.Sprintf("key of %d bytes, value of %d", len(k), len(v)),
				"a key of 1..63 characters and a value of at most 253")
		}
	}
	return checkRevision(where+".Revision", s.Revision)
}

func checkRevision(field string, revision int64) error {
	if revision < RevisionAny {
		return &InvalidArgumentError{Field: field, Got: fmt.Sprint(revision),
			Want: "-1 (any), 0 (must not exist) or the current revision"}
	}
	return nil
}

func appendTopicSpec(b []byte, s *TopicSpec) []byte {
	b = appendString(b, s.Name)
	b = appendInt32(b, s.Partitions)
	b = appendInt32(b, int32(len(s.Labels)))
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys) // labels travel sorted by key
	for _, k := range keys {
		b = appendString(appendString(b, k), s.Labels[k])
	}
	b = appendInt64(b, s.RetentionBytes)
	b = appendInt64(b, s.RetentionMillis)
	b = appendInt32(b, s.SegmentBytes)
	b = appendInt32(b, s.Flags)
	b = appendInt16(b, s.Replication)
	b = appendString(b, s.StoreURL)
	return appendInt64(b, s.Revision)
}

const (
	specBytesMin        = 2 + 4 + 4 + 8 + 8 + 4 + 4 + 2 + 2 + 8 // empty strings, no labels
	listedTopicBytesMin = specBytesMin + 4
	labelBytesMin       = 2 + 2
	routeBytesMin       = 2 + 4
)

func readTopicSpec(d *decoder, where string) TopicSpec {
	s := TopicSpec{Name: d.string(where + ".name"), Partitions: d.int32(where + ".partitions")}
	n := d.count(where+".labelCount", labelBytesMin)
	if n > 0 {
		s.Labels = make(map[string]string, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		k := d.string(fmt.Sprintf("%s.labels[%d].key", where, i))
		if _, twice := s.Labels[k]; twice && d.err == nil {
			d.fail("%s.labels[%d].key: %q twice", where, i, k)
		}
		s.Labels[k] = d.string(fmt.Sprintf("%s.labels[%d].value", where, i))
	}
	s.RetentionBytes = d.int64(where + ".retentionBytes")
	s.RetentionMillis = d.int64(where + ".retentionMillis")
	s.SegmentBytes = d.int32(where + ".segmentBytes")
	s.Flags = d.int32(where + ".flags")
	s.Replication = d.int16(where + ".replication")
	s.StoreURL = d.string(where + ".storeUrl")
	s.Revision = d.int64(where + ".revision")
	return s
}

// decodeListResponse reads a LIST v1 answer, or with withReplicas a v2 one (RouteV2).
func decodeListResponse(body []byte, withReplicas bool) (*TopicListing, error) {
	d := decoder{api: apiList, b: body}
	out := &TopicListing{Revision: d.int64("revision")}
	n := d.count("topicCount", listedTopicBytesMin)
	out.Topics = make([]ListedTopic, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		where := fmt.Sprintf("topics[%d]", i)
		t := ListedTopic{Spec: readTopicSpec(&d, where+".spec")}
		routeBytes := routeBytesMin
		if withReplicas {
			routeBytes = routeV2BytesMin
		}
		routes := d.count(where+".routeCount", routeBytes)
		t.Routes = make([]Route, 0, routes)
		if withReplicas {
			t.RoutesV2 = make([]RouteV2, 0, routes)
		}
		for j := 0; j < routes && d.err == nil; j++ {
			rw := fmt.Sprintf("%s.routes[%d]", where, j)
			if withReplicas {
				r := readRouteV2(&d, rw)
				t.RoutesV2 = append(t.RoutesV2, *r)
				t.Routes = append(t.Routes, r.Route())
				continue
			}
			t.Routes = append(t.Routes, readRoute(&d, rw))
		}
		out.Topics = append(out.Topics, t)
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return out, nil
}
