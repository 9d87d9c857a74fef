package booblik

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"
)

// Client is a client of a whole cluster that follows routes. It bootstraps from one or more
// addresses, keeps one Conn per broker (dialed when first needed), reads each partition's route
// from METADATA (v3 at the revision of the last APPLY, or v2, or v1 from an older broker) and sends
// PRODUCE and FETCH v3 to the route's primary. When a broker answers NOT_PRIMARY the route in its
// answer is used at once; NO_PRIMARY (or another retriable code) means a pause, then METADATA
// again; a lost connection to the primary means METADATA again from another known broker. At most
// RouteAttemptsMax sends per call, then the last error is returned.
//
// A PRODUCE refused NOT_PRIMARY, NO_PRIMARY or NOT_ENOUGH_REPLICAS was not written, so the resend
// is safe. One whose connection was lost after it was sent may have been written: the resend can
// store it twice (at least once, as for any resend after a lost answer; ProduceAt fences it), and
// giving up after such a loss returns an *OutcomeUnknownError. OUTCOME_UNKNOWN is never sent again.
//
// A Client is safe for concurrent use. Calls to one broker take turns on its Conn, so a long fetch
// holds back other calls to the same broker until it is answered.
type Client struct {
	cfg  ClientConfig
	dial func(ctx context.Context, addr string) (*Conn, error)

	mu          sync.Mutex
	known       []string                // every broker heard of, bootstrap first
	routes      map[partitionKey]string // the primary's address; "" while it has none
	minRevision int64                   // the highest revision an APPLY through this Client returned
	brokers     map[string]*pooledBroker
	closed      bool

	// With PreferZone (replica_reads.go): each partition's RouteV2 from METADATA v4 (none: reads
	// from the primary), the partitions whose RouteV2 must be read again before a replica is
	// picked, and the highest high watermark a fetch answer showed.
	replicaRoutes  map[partitionKey]*RouteV2
	staleReplicas  map[partitionKey]bool
	highWatermarks map[partitionKey]int64
}

// ClientConfig tunes how a Client follows routes; the zero value takes every default.
type ClientConfig struct {
	// RouteAttemptsMax is how many sends one call makes across route changes and failures before
	// its error is the caller's (default 8).
	RouteAttemptsMax int
	// RouteRetryDelay is the first pause after NO_PRIMARY or a lost connection (default 100 ms),
	// doubled per pause up to RouteRetryDelayMax (default 2 s).
	RouteRetryDelay    time.Duration
	RouteRetryDelayMax time.Duration
	// PreferZone, when set, reads from replicas: METADATA v4 gives each partition's replicas, and a
	// FETCH goes to an in-sync, live replica in this zone (the primary when it is one, else the
	// first listed; the primary when none is), as FETCH v4. A fetch result never shows a lower
	// high watermark than one seen before. Empty (the default): every read goes to the primary and
	// nothing of this is sent. See replica_reads.go.
	PreferZone string
}

// pooledBroker is one broker's Conn and the versions it serves.
type pooledBroker struct {
	addr     string
	dial     func(context.Context, string) (*Conn, error)
	mu       sync.Mutex // one exchange at a time: a Conn is not safe for concurrent use
	conn     *Conn      // nil until dialed, and again after it broke
	versions map[int16]int16
}

// attempt is what one send found out: where it went, and whether that connection was lost.
type attempt struct {
	avoid string // a broker that just failed: ask METADATA elsewhere first
	at    string
	lost  bool
}

// NewClient connects to the first reachable of bootstrap (host:port each) and returns a Client.
func NewClient(ctx context.Context, bootstrap []string, cfg ClientConfig) (*Client, error) {
	return newClient(ctx, bootstrap, cfg, Dial)
}

func newClient(ctx context.Context, bootstrap []string, cfg ClientConfig, dial func(context.Context, string) (*Conn, error)) (*Client, error) {
	if len(bootstrap) == 0 {
		return nil, &InvalidArgumentError{Field: "bootstrap", Got: "none", Want: "at least one host:port"}
	}
	cfg = cfg.withDefaults()
	if cfg.RouteAttemptsMax < 1 || cfg.RouteRetryDelay < 0 || cfg.RouteRetryDelayMax < cfg.RouteRetryDelay {
		return nil, &InvalidArgumentError{Field: "ClientConfig",
			Got:  fmt.Sprintf("RouteAttemptsMax %d, RouteRetryDelay %v, RouteRetryDelayMax %v", cfg.RouteAttemptsMax, cfg.RouteRetryDelay, cfg.RouteRetryDelayMax),
			Want: "RouteAttemptsMax >= 1 and 0 <= RouteRetryDelay <= RouteRetryDelayMax"}
	}
	c := &Client{cfg: cfg, dial: dial, routes: map[partitionKey]string{}, brokers: map[string]*pooledBroker{},
		replicaRoutes: map[partitionKey]*RouteV2{}, staleReplicas: map[partitionKey]bool{}, highWatermarks: map[partitionKey]int64{}}
	for _, addr := range bootstrap {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, &InvalidArgumentError{Field: "bootstrap", Got: fmt.Sprintf("%q", addr), Want: "host:port"}
		}
		c.learn(addr)
	}
	a := &attempt{}
	if _, err := c.anyBroker(ctx, a); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (cfg ClientConfig) withDefaults() ClientConfig {
	if cfg.RouteAttemptsMax == 0 {
		cfg.RouteAttemptsMax = DefaultRouteAttemptsMax
	}
	if cfg.RouteRetryDelay == 0 {
		cfg.RouteRetryDelay = DefaultRouteRetryDelay
	}
	if cfg.RouteRetryDelayMax == 0 {
		cfg.RouteRetryDelayMax = max(DefaultRouteRetryDelayMax, cfg.RouteRetryDelay)
	}
	return cfg
}

// Close closes every broker's Conn; calls after Close return ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	brokers := c.brokers
	c.brokers = map[string]*pooledBroker{}
	c.mu.Unlock()
	var first error
	for _, b := range brokers {
		b.mu.Lock()
		if b.conn != nil {
			if err := b.conn.Close(); err != nil && first == nil {
				first = err
			}
		}
		b.mu.Unlock()
	}
	return first
}

// Route is the primary this Client sends the partition's requests to, as last learned ("" while
// it has none); false when it is not known yet.
func (c *Client) Route(topic string, partition int32) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.routes[partitionKey{topic, partition}]
	return p, ok
}

// Produce appends records to the partition's primary (see Conn.Produce and the note on resends).
func (c *Client) Produce(ctx context.Context, topic string, partition int32, records [][]byte, ack AckPolicy) (*ProduceResult, error) {
	return c.produce(ctx, topic, partition, noExpectedOffset, records, ack)
}

// ProduceAt is Produce landing the batch only at expectedOffset (see Conn.ProduceAt).
func (c *Client) ProduceAt(ctx context.Context, topic string, partition int32, expectedOffset int64, records [][]byte, ack AckPolicy) (*ProduceResult, error) {
	if expectedOffset < 0 {
		return nil, &InvalidArgumentError{Field: "expectedOffset", Got: fmt.Sprint(expectedOffset), Want: ">= 0"}
	}
	res, err := c.produce(ctx, topic, partition, expectedOffset, records, ack)
	var mismatch *OffsetMismatchError
	if errors.As(err, &mismatch) {
		mismatch.ExpectedOffset = expectedOffset
	}
	return res, err
}

func (c *Client) produce(ctx context.Context, topic string, partition int32, expectedOffset int64, records [][]byte, ack AckPolicy) (*ProduceResult, error) {
	var res *ProduceResult
	err := c.onPrimary(ctx, apiProduce, topic, partition, func(conn *Conn, versions map[int16]int16) error {
		var err error
		res, err = conn.produceAs(ctx, topic, partition, expectedOffset, records, ack,
			speaks(versions, apiProduce, capFollowsRoutes))
		return err
	})
	return res, err
}

// Fetch reads from the partition's primary (see Conn.Fetch), or with PreferZone from a replica in
// that zone.
func (c *Client) Fetch(ctx context.Context, req FetchRequest) (*FetchResult, error) {
	if c.cfg.PreferZone != "" {
		return c.fetchPreferringZone(ctx, req)
	}
	var res *FetchResult
	err := c.onPrimary(ctx, apiFetch, req.Topic, req.Partition, func(conn *Conn, versions map[int16]int16) error {
		version := int16(fetchVersion)
		if speaks(versions, apiFetch, capFollowsRoutes) {
			version = routedVersion
		}
		var err error
		res, err = conn.fetchAs(ctx, req, version)
		return err
	})
	return res, err
}

// Consumer returns a Consumer of one partition whose fetches go to its primary (with PreferZone,
// to a replica in that zone, as Fetch does).
func (c *Client) Consumer(topic string, partition int32, offset int64) *Consumer {
	return newConsumer(c, topic, partition, offset)
}

// Metadata returns partitions and offsets, read through any broker; the routes are kept.
func (c *Client) Metadata(ctx context.Context, topics ...string) (map[string][]PartitionInfo, error) {
	md, err := c.MetadataRoutes(ctx, topics...)
	if err != nil {
		return nil, err
	}
	return md.Partitions(), nil
}

// MetadataRoutes returns partitions with their routes, read through any broker at least at the
// revision of the last APPLY made through this Client.
func (c *Client) MetadataRoutes(ctx context.Context, topics ...string) (*RoutedMetadata, error) {
	var md *RoutedMetadata
	err := c.retry(ctx, nil, func(a *attempt) error {
		b, err := c.anyBroker(ctx, a)
		if err != nil {
			return err
		}
		md, err = c.readRoutes(ctx, b, a, topics)
		return err
	})
	return md, err
}

// ApplyTopics is Conn.ApplyTopics through any broker. The revision it returns becomes the least
// the next METADATA asks for (v3), so a topic just created is usable through every broker at once.
func (c *Client) ApplyTopics(ctx context.Context, changes []TopicChange) (int64, error) {
	a := &attempt{}
	b, err := c.anyBroker(ctx, a)
	if err != nil {
		return 0, err
	}
	var revision int64
	err = b.do(ctx, a, func(conn *Conn, _ map[int16]int16) error {
		var err error
		revision, err = conn.ApplyTopics(ctx, changes)
		return err
	})
	if err == nil {
		c.mu.Lock()
		c.minRevision = max(c.minRevision, revision)
		c.mu.Unlock()
	}
	return revision, err
}

// ListTopics is Conn.ListTopics through any broker.
func (c *Client) ListTopics(ctx context.Context, selector string) (*TopicListing, error) {
	return c.listThroughAnyBroker(ctx, func(conn *Conn) (*TopicListing, error) { return conn.ListTopics(ctx, selector) })
}

// ListTopicsReplicas is Conn.ListTopicsReplicas (LIST v2: routes with every replica) through any
// broker; a broker without LIST v2 refuses it ErrUnsupportedVersion.
func (c *Client) ListTopicsReplicas(ctx context.Context, selector string) (*TopicListing, error) {
	return c.listThroughAnyBroker(ctx, func(conn *Conn) (*TopicListing, error) { return conn.ListTopicsReplicas(ctx, selector) })
}

func (c *Client) listThroughAnyBroker(ctx context.Context, list func(*Conn) (*TopicListing, error)) (*TopicListing, error) {
	a := &attempt{}
	b, err := c.anyBroker(ctx, a)
	if err != nil {
		return nil, err
	}
	var listing *TopicListing
	err = b.do(ctx, a, func(conn *Conn, _ map[int16]int16) error {
		var err error
		listing, err = list(conn)
		return err
	})
	return listing, err
}

// ListFragments is Conn.ListFragments on the partition's primary, which holds its segments; for
// AllPartitions, through any broker, which lists the partitions it serves.
func (c *Client) ListFragments(ctx context.Context, topic string, partition int32) ([]PartitionFragments, error) {
	if _, _, err := listFragmentsRequest(topic, partition); err != nil {
		return nil, err // refused before any route is read
	}
	var listed []PartitionFragments
	list := func(conn *Conn, _ map[int16]int16) error {
		var err error
		listed, err = conn.ListFragments(ctx, topic, partition)
		return err
	}
	var err error
	if partition != AllPartitions {
		err = c.onPrimary(ctx, apiListFragments, topic, partition, list)
	} else {
		a := &attempt{}
		var b *pooledBroker
		if b, err = c.anyBroker(ctx, a); err == nil {
			err = b.do(ctx, a, list)
		}
	}
	if err != nil {
		return nil, err
	}
	return listed, nil
}

// onPrimary runs send on the partition's primary's Conn, following routes as the type says.
func (c *Client) onPrimary(ctx context.Context, api apiKey, topic string, partition int32, send func(*Conn, map[int16]int16) error) error {
	key := partitionKey{topic, partition}
	return c.retry(ctx, &key, func(a *attempt) error {
		primary, err := c.primaryOf(ctx, a, api, key)
		if err != nil {
			return err
		}
		a.at = primary
		return c.broker(primary).do(ctx, a, send)
	})
}

// primaryOf is the partition's primary, read from METADATA when it is not known yet.
func (c *Client) primaryOf(ctx context.Context, a *attempt, api apiKey, key partitionKey) (string, error) {
	if c.isClosed() {
		return "", ErrClosed
	}
	c.mu.Lock()
	primary, known := c.routes[key]
	c.mu.Unlock()
	if !known {
		// Not known yet: METADATA names it. A partition the answer lacks is the answering
		// broker's to refuse (UNKNOWN_TOPIC_OR_PARTITION), so the request goes there.
		b, err := c.anyBroker(ctx, a)
		if err != nil {
			return "", err
		}
		if _, err := c.readRoutes(ctx, b, a, []string{key.topic}); err != nil {
			return "", err
		}
		c.mu.Lock()
		primary, known = c.routes[key]
		c.mu.Unlock()
		if !known {
			primary = b.addr
		}
	}
	if primary == "" {
		return "", &BrokerError{Code: CodeNoPrimary, API: api.String(), Request: fmt.Sprintf("%s %s/%d", api, key.topic, key.partition)}
	}
	return primary, nil
}

// retry runs step until it succeeds, fails in a way no retry fixes, or RouteAttemptsMax is spent.
// key, when given, is the partition whose route a refusal updates.
func (c *Client) retry(ctx context.Context, key *partitionKey, step func(*attempt) error) error {
	avoid := ""
	pauses := 0
	var lost *OutcomeUnknownError // an earlier send lost in flight: giving up then says "unknown"
	for n := 1; ; n++ {
		a := &attempt{avoid: avoid}
		err := step(a)
		if err == nil {
			return nil
		}
		var refused *BrokerError
		retriable := a.lost || (errors.As(err, &refused) && refused.Retriable() && !errors.Is(err, ErrOutcomeUnknown))
		if !retriable || n >= c.cfg.RouteAttemptsMax || ctx.Err() != nil || c.isClosed() {
			return unknownAfterLoss(err, lost)
		}
		if lost == nil {
			errors.As(err, &lost) // sent again all the same: at least once, as documented
		}
		avoid = ""
		if a.lost && a.at != "" {
			avoid = a.at
		}
		atOnce := false
		if key != nil {
			var np *NotPrimaryError
			c.mu.Lock()
			switch {
			case errors.As(err, &np):
				c.routes[*key] = c.learnLocked(np.Route.Primary)
				c.staleReplicas[*key] = true // its replicas may have changed too
				atOnce = np.Route.Primary != ""
			default:
				delete(c.routes, *key) // read again from METADATA after the pause
			}
			c.mu.Unlock()
		}
		if !atOnce || a.lost {
			if err := sleepCtx(ctx, c.pause(pauses)); err != nil {
				return err
			}
			pauses++
		}
	}
}

// unknownAfterLoss is the error to give up with: err, unless an earlier send was lost in flight
// (it may have been stored) and err does not already say the outcome is unknown.
func unknownAfterLoss(err error, lost *OutcomeUnknownError) error {
	if lost == nil || errors.Is(err, ErrOutcomeUnknown) {
		return err
	}
	last := "failed: " + err.Error()
	var refused *BrokerError
	if errors.As(err, &refused) {
		last = "was answered " + refused.Name()
	}
	return &OutcomeUnknownError{Request: lost.Request,
		Why: "an earlier send was lost before its answer, and the last one " + last, Err: err}
}

// pause is the wait before the next send: doubling from the first, capped, with jitter in its upper half.
func (c *Client) pause(pauses int) time.Duration {
	step := min(c.cfg.RouteRetryDelayMax, c.cfg.RouteRetryDelay<<min(pauses, 30))
	return step/2 + time.Duration(rand.Int64N(int64(step/2)+1))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *Client) learn(addr string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.learnLocked(addr)
}

func (c *Client) learnLocked(addr string) string {
	if addr != "" && !slices.Contains(c.known, addr) {
		c.known = append(c.known, addr)
	}
	return addr
}

// broker is the pooled entry for addr (not dialed yet, perhaps).
func (c *Client) broker(addr string) *pooledBroker {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.learnLocked(addr)
	b, ok := c.brokers[addr]
	if !ok {
		b = &pooledBroker{addr: addr, dial: c.dial}
		c.brokers[addr] = b
	}
	return b
}

// anyBroker returns a known broker that connects: connected ones first, a.avoid last.
func (c *Client) anyBroker(ctx context.Context, a *attempt) (*pooledBroker, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	candidates := slices.Clone(c.known)
	rank := func(addr string) int {
		switch {
		case addr == a.avoid:
			return 2
		case c.brokers[addr] != nil && c.brokers[addr].connected():
			return 0
		}
		return 1
	}
	slices.SortStableFunc(candidates, func(x, y string) int { return rank(x) - rank(y) })
	c.mu.Unlock()
	var last error
	for _, addr := range candidates {
		b := c.broker(addr)
		if err := b.ensure(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			last = err
			continue
		}
		a.at = addr
		return b, nil
	}
	a.lost = true
	return nil, last
}

// readRoutes asks b for METADATA (v4 with PreferZone, v3 at the Client's revision, v2, or v1) and
// keeps the routes.
func (c *Client) readRoutes(ctx context.Context, b *pooledBroker, a *attempt, topics []string) (*RoutedMetadata, error) {
	c.mu.Lock()
	minRevision := c.minRevision
	c.mu.Unlock()
	var md *RoutedMetadata
	err := b.do(ctx, a, func(conn *Conn, versions map[int16]int16) error {
		var err error
		switch {
		case speaks(versions, apiMetadata, capReplicaRoutes) && c.cfg.PreferZone != "":
			md, err = conn.MetadataReplicas(ctx, minRevision, topics...)
		case speaks(versions, apiMetadata, capAtRevision):
			md, err = conn.MetadataRoutes(ctx, minRevision, topics...)
		case speaks(versions, apiMetadata, capRoutes):
			md, err = conn.MetadataRoutes(ctx, -1, topics...)
		default: // a broker without routes serves every partition itself
			var plain map[string][]PartitionInfo
			plain, err = conn.Metadata(ctx, topics...)
			md = routedByOne(plain, b.addr)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, parts := range md.Topics {
		for _, p := range parts {
			key := partitionKey{name, p.Partition}
			c.routes[key] = c.learnLocked(p.Route.Primary)
			for _, r := range p.Route.Replicas {
				c.learnLocked(r)
			}
			c.keepReplicasLocked(key, p.RouteV2)
		}
	}
	return md, nil
}

func routedByOne(plain map[string][]PartitionInfo, addr string) *RoutedMetadata {
	md := &RoutedMetadata{Topics: make(map[string][]RoutedPartition, len(plain))}
	for name, parts := range plain {
		for _, p := range parts {
			md.Topics[name] = append(md.Topics[name], RoutedPartition{PartitionInfo: p, Route: Route{Primary: addr}})
		}
	}
	return md
}

func (b *pooledBroker) connected() bool {
	if !b.mu.TryLock() {
		return true // in use: connected, or about to be
	}
	defer b.mu.Unlock()
	return b.conn != nil && b.conn.err == nil
}

// ensure dials the broker and asks its versions, unless a usable Conn is pooled.
func (b *pooledBroker) ensure(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ensureLocked(ctx, b.dial)
}

func (b *pooledBroker) ensureLocked(ctx context.Context, dial func(context.Context, string) (*Conn, error)) error {
	if b.conn != nil && b.conn.err == nil {
		return nil
	}
	if b.conn != nil {
		b.conn.Close()
		b.conn = nil
	}
	conn, err := dial(ctx, b.addr)
	if err != nil {
		return err
	}
	versions, err := conn.APIVersions(ctx)
	if err != nil {
		conn.Close()
		return err
	}
	b.conn, b.versions = conn, versions
	return nil
}

// do runs fn on the broker's Conn, dialing it first if needed. A failed dial or a Conn that broke
// during fn marks the attempt lost (the broker may be gone); a refusal does not.
func (b *pooledBroker) do(ctx context.Context, a *attempt, fn func(*Conn, map[int16]int16) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	a.at = b.addr
	if err := b.ensureLocked(ctx, b.dial); err != nil {
		a.lost = ctx.Err() == nil
		return err
	}
	err := fn(b.conn, b.versions)
	if err != nil && b.conn.err != nil && !errors.Is(b.conn.err, ErrClosed) {
		a.lost = ctx.Err() == nil
		b.conn = nil // broken: closed when it broke; the next call dials again
	}
	return err
}
