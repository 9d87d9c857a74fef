package booblik

import (
	"context"
	"errors"
	"fmt"
	"net"
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
	// Dial is how every connection to a broker is opened: TLS and credentials (see DialConfig).
	// Every connection authenticates, the ones dialed again after a loss too.
	Dial DialConfig
}

// NewClient connects to the first reachable of bootstrap (host:port each) and returns a Client.
func NewClient(ctx context.Context, bootstrap []string, cfg ClientConfig) (*Client, error) {
	if err := cfg.Dial.validate(); err != nil {
		return nil, err
	}
	return newClient(ctx, bootstrap, cfg, func(ctx context.Context, addr string) (*Conn, error) {
		return DialWith(ctx, addr, cfg.Dial)
	})
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
