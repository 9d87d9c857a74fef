// Package fakebroker is an in-process booblik broker for tests. It decodes every request with its
// own code, not the client's, so an encoding mistake in the client fails a test instead of being
// read back by the same mistake. It keeps records in memory, answers like the protocol says, and
// can be told to misbehave: hold requests, split answers into pieces, or answer with raw bytes.
// It keeps a spec store too, for APPLY and LIST (topics.go), and answers LIST_FRAGMENTS as a broker
// without a store: every partition one local segment. Its connections are served in serve.go, its
// requests decoded in decode.go and its answers built in answers.go. Secure gives it TLS and
// AUTHENTICATE (security.go, scram.go, token.go); NewPKI makes certificates for it (pki.go).
package fakebroker

import (
	"encoding/binary"
	"hash/crc32"
	"net"
	"sync"
	"testing"
	"time"
)

// Wire constants, written out here rather than shared with the client on purpose.
const (
	APIProduce       = 1
	APIFetch         = 2
	APIMetadata      = 3
	APIApply         = 4
	APIList          = 5
	APIAPIVersions   = 6
	APIListFragments = 7

	CodeNone                    = 0
	CodeUnknownTopicOrPartition = 1
	CodeOffsetOutOfRange        = 2
	CodeRecordTooLarge          = 3
	CodeUnsupportedVersion      = 4
	CodeCorruptRequest          = 5
	CodeRevisionMismatch        = 7
	CodeOffsetMismatch          = 8
	CodeNotPrimary              = 9
	CodeNoPrimary               = 10
	CodeInvalidArgument         = 11
	CodeOutcomeUnknown          = 16

	frameBytesMax = 8 << 20
	fetchWaitMax  = 60 * time.Second
	waitForMax    = 10 * time.Second // how long WaitUntil waits before failing the test
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Request is one decoded request, as the fake understood it.
type Request struct {
	APIKey        int16
	Version       int16
	CorrelationID int32

	Topic     string // PRODUCE, FETCH, LIST_FRAGMENTS
	Partition int32  // PRODUCE, FETCH, LIST_FRAGMENTS (-1: every partition)

	Ack            int8     // PRODUCE
	ExpectedOffset int64    // PRODUCE v2; -1 in v1
	Records        [][]byte // PRODUCE

	Offset        int64 // FETCH
	MaxBytes      int32 // FETCH
	MaxWaitMillis int32 // FETCH v2
	MinBytes      int32 // FETCH v2

	Topics      []string // METADATA
	MinRevision int64    // METADATA v3; -1 before v3

	Conn int // which accepted connection it came on, from 1

	Node int // cluster mode: which of the fake's listeners the request came in on (0 otherwise)

	DryRun        bool     // APPLY
	Changes       []Change // APPLY
	Selector      string   // LIST
	WatchRevision int64    // LIST; MaxWaitMillis too

	Mechanism string // AUTHENTICATE
	AuthData  []byte // AUTHENTICATE
	// Principal is who the connection had authenticated as when the request came ("" for nobody).
	Principal string

	DecodeErr string // why the fake answered CORRUPT_REQUEST; empty when the request decoded
}

// Action replaces the fake's own answer to one request.
type Action struct {
	Raw   []byte // written instead of the answer; nil writes nothing
	Close bool   // close the connection after writing Raw
}

// Broker is the fake. Its zero value is not usable; call Start.
type Broker struct {
	t  testing.TB
	ln net.Listener

	mu        sync.Mutex
	logs      map[string][]*partitionLog
	requests  []Request
	waiting   int // fetches and LISTs holding right now
	specs     map[string]Spec
	revision  int64
	changed   chan struct{} // closed and replaced on every change: a broadcast
	intercept func(Request) (Action, bool)
	chunk     int
	hold      chan struct{}    // while non-nil, connections wait for it to close before reading
	conns     map[net.Conn]int // to the node it was accepted on
	accepted  int              // connections accepted so far
	closing   chan struct{}

	security Security
	users    map[string]scramUser
	keys     map[string][]byte // token key id -> HS256 secret

	cluster       *clusterState // nil: a single broker, as before (cluster.go)
	nodes         []net.Listener
	noPrimaryNext int
	wg            sync.WaitGroup
}

type partitionLog struct {
	data   []byte // records in FETCH layout: size, crc32c, payload
	starts []int  // byte position of each record
}

// Start listens on a random local port with the given topics (name → partition count) and stops
// when the test ends.
func Start(t testing.TB, topics map[string]int) *Broker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakebroker: listen: %v", err)
	}
	b := &Broker{
		t:       t,
		ln:      ln,
		logs:    make(map[string][]*partitionLog),
		changed: make(chan struct{}),
		conns:   make(map[net.Conn]int),
		closing: make(chan struct{}),
	}
	b.specs = make(map[string]Spec)
	for name, n := range topics {
		for i := 0; i < n; i++ {
			b.logs[name] = append(b.logs[name], &partitionLog{})
		}
		b.revision = 1 // the startup topics are the store's first revision, like booblik.topics
		b.specs[name] = storedSpec(Spec{Name: name, Partitions: int32(n), RetentionBytes: -2, RetentionMillis: -2}, 1)
	}
	b.nodes = []net.Listener{ln}
	b.wg.Add(1)
	go b.accept(ln, 0)
	t.Cleanup(b.stop)
	return b
}

// Addr is host:port to dial.
func (b *Broker) Addr() string { return b.ln.Addr().String() }

func (b *Broker) stop() {
	close(b.closing)
	for _, ln := range b.nodes {
		ln.Close()
	}
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	if b.hold != nil {
		close(b.hold)
		b.hold = nil
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// notify wakes everything waiting for a change. Called with mu held.
func (b *Broker) notify() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// WaitUntil blocks until cond holds, re-checking on every change to the fake (a request, an
// append, a fetch starting to wait). After 10 s it marks the test failed and returns false; it
// does not stop the goroutine, so it may be called from any goroutine.
func (b *Broker) WaitUntil(what string, cond func() bool) bool {
	b.t.Helper()
	limit := time.NewTimer(waitForMax)
	defer limit.Stop()
	for {
		b.mu.Lock()
		ch := b.changed
		b.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-limit.C:
			b.t.Errorf("fakebroker: still waiting for %s after %v", what, waitForMax)
			return false
		}
	}
}

// Requests returns every request received so far, in arrival order.
func (b *Broker) Requests() []Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Request(nil), b.requests...)
}

// RequestsOf returns the requests with one API key.
func (b *Broker) RequestsOf(api int16) []Request {
	var out []Request
	for _, r := range b.Requests() {
		if r.APIKey == api {
			out = append(out, r)
		}
	}
	return out
}

// Waiting is how many fetches and watching LISTs are being held right now.
func (b *Broker) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting
}

// Intercept replaces the answer to every request for which f returns true. nil restores normal
// answers.
func (b *Broker) Intercept(f func(Request) (Action, bool)) {
	b.mu.Lock()
	b.intercept = f
	b.mu.Unlock()
}

// SplitAnswers makes the fake write each answer n bytes at a time (0: whole).
func (b *Broker) SplitAnswers(n int) {
	b.mu.Lock()
	b.chunk = n
	b.mu.Unlock()
}

// Hold makes every connection leave the requests it receives unprocessed until release is called.
func (b *Broker) Hold() (release func()) {
	b.mu.Lock()
	gate := make(chan struct{})
	b.hold = gate
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			if b.hold == gate {
				close(gate)
				b.hold = nil
			}
			b.mu.Unlock()
		})
	}
}

// Append stores records as a producer would and returns the first one's offset.
func (b *Broker) Append(topic string, partition int, records ...[]byte) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.appendLocked(b.logs[topic][partition], records)
}

func (b *Broker) appendLocked(p *partitionLog, records [][]byte) int64 {
	base := int64(len(p.starts))
	for _, r := range records {
		p.starts = append(p.starts, len(p.data))
		p.data = append(p.data, StoredRecords(r)...)
	}
	b.notify()
	return base
}

// Records returns the payloads stored in a partition.
func (b *Broker) Records(topic string, partition int) [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.logs[topic][partition]
	out := make([][]byte, len(p.starts))
	for i, start := range p.starts {
		size := int(binary.BigEndian.Uint32(p.data[start:]))
		out[i] = append([]byte(nil), p.data[start+8:start+8+size]...)
	}
	return out
}

// CorruptRecord flips the last payload byte of a stored record and keeps its stored checksum.
func (b *Broker) CorruptRecord(topic string, partition int, offset int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.logs[topic][partition]
	start := p.starts[offset]
	size := int(binary.BigEndian.Uint32(p.data[start:]))
	p.data[start+8+size-1] ^= 0x01
}
