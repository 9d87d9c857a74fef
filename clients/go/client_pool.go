package booblik

import (
	"context"
	"crypto/x509"
	"errors"
	"slices"
	"sync"
)

// pooledBroker is one broker's Conn and the versions it serves.
type pooledBroker struct {
	addr     string
	dial     func(context.Context, string) (*Conn, error)
	mu       sync.Mutex // one exchange at a time: a Conn is not safe for concurrent use
	conn     *Conn      // nil until dialed, and again after it broke
	versions map[int16]int16
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
	a.lost = !refusedForGood(last)
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
// during fn marks the attempt lost (the broker may be gone); a refusal does not, nor does a
// connection refused for good (refusedForGood).
func (b *pooledBroker) do(ctx context.Context, a *attempt, fn func(*Conn, map[int16]int16) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	a.at = b.addr
	if err := b.ensureLocked(ctx, b.dial); err != nil {
		a.lost = ctx.Err() == nil && !refusedForGood(err)
		return err
	}
	err := fn(b.conn, b.versions)
	if err != nil && b.conn.err != nil && !errors.Is(b.conn.err, ErrClosed) {
		a.lost = ctx.Err() == nil && !refusedForGood(err)
		b.conn = nil // broken: closed when it broke; the next call dials again
	}
	return err
}

// refusedForGood says whether a connection failed in a way no retry cures: the broker refused its
// TLS or its credentials, could not prove itself, or the configuration is wrong. Dialing again
// would repeat it, and for a password count towards the broker's limit of failed attempts.
func refusedForGood(err error) bool {
	var refused *BrokerError
	if errors.As(err, &refused) {
		switch refused.Code {
		case CodeTLSRequired, CodeAuthenticationRequired, CodeAuthenticationFailed, CodeNotAuthorized:
			return true
		}
	}
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.Is(err, ErrBrokerNotProven) || errors.Is(err, ErrNoTLSAnswer) || errors.Is(err, ErrInvalidArgument) ||
		errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid)
}
