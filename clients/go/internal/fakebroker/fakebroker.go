// Package fakebroker is an in-process booblik broker for tests. It decodes every request with its
// own code, not the client's, so an encoding mistake in the client fails a test instead of being
// read back by the same mistake. It keeps records in memory, answers like the protocol says, and
// can be told to misbehave: hold requests, split answers into pieces, or answer with raw bytes.
// It keeps a spec store too, for APPLY and LIST (topics.go), and answers LIST_FRAGMENTS as a broker
// without a store: every partition one local segment.
package fakebroker

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"sort"
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

	Node int // cluster mode: which of the fake's listeners the request came in on (0 otherwise)

	DryRun        bool     // APPLY
	Changes       []Change // APPLY
	Selector      string   // LIST
	WatchRevision int64    // LIST; MaxWaitMillis too

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
	closing   chan struct{}

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

func (b *Broker) accept(ln net.Listener, node int) {
	defer b.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		select {
		case <-b.closing:
			b.mu.Unlock()
			nc.Close()
			return
		default:
		}
		b.conns[nc] = node
		b.wg.Add(1)
		b.mu.Unlock()
		go b.serve(nc, node)
	}
}

func (b *Broker) serve(nc net.Conn, node int) {
	defer b.wg.Done()
	defer func() {
		b.mu.Lock()
		delete(b.conns, nc)
		b.mu.Unlock()
		nc.Close()
	}()
	r := bufio.NewReader(nc)
	for {
		var lengthBytes [4]byte
		if _, err := io.ReadFull(r, lengthBytes[:]); err != nil {
			return
		}
		n := int32(binary.BigEndian.Uint32(lengthBytes[:]))
		if n < 1 || n > frameBytesMax {
			return // protocol: close without answering, the framing is lost
		}
		frame := make([]byte, n)
		if _, err := io.ReadFull(r, frame); err != nil {
			return
		}
		// Held requests are read (the client's write completes) but not looked at until release.
		b.mu.Lock()
		gate := b.hold
		b.mu.Unlock()
		if gate != nil {
			<-gate
		}
		if n < 8 {
			if !b.write(nc, Answer(0, CodeCorruptRequest, nil)) {
				return
			}
			continue
		}
		req := decodeRequest(frame)
		req.Node = node
		b.mu.Lock()
		b.requests = append(b.requests, req)
		b.notify()
		intercept := b.intercept
		b.mu.Unlock()
		if intercept != nil {
			if act, ok := intercept(req); ok {
				if act.Raw != nil && !b.write(nc, act.Raw) {
					return
				}
				if act.Close {
					return
				}
				continue
			}
		}
		if answer := b.handle(req); answer != nil && !b.write(nc, answer) {
			return
		}
	}
}

func (b *Broker) write(nc net.Conn, p []byte) bool {
	b.mu.Lock()
	chunk := b.chunk
	b.mu.Unlock()
	if chunk <= 0 {
		chunk = len(p)
	}
	for len(p) > 0 {
		n := min(chunk, len(p))
		if _, err := nc.Write(p[:n]); err != nil {
			return false
		}
		p = p[n:]
	}
	return true
}

// handle answers a decoded request; nil means no answer (PRODUCE with ack NONE).
func (b *Broker) handle(req Request) []byte {
	id := req.CorrelationID
	silent := req.APIKey == APIProduce && req.Ack == 0
	refuse := func(code int16) []byte {
		if silent {
			return nil
		}
		return Answer(id, code, nil)
	}
	if !b.supports(req) {
		return refuse(CodeUnsupportedVersion)
	}
	if req.DecodeErr != "" {
		return refuse(CodeCorruptRequest)
	}
	if answer, refused := b.notPrimary(req); refused {
		if silent {
			return nil
		}
		return answer
	}
	switch req.APIKey {
	case APIAPIVersions:
		return apiVersionsAnswer(id, b.speaksV4(req.Node))
	case APIProduce:
		b.mu.Lock()
		p := b.partition(req.Topic, req.Partition)
		if p == nil {
			b.mu.Unlock()
			return refuse(CodeUnknownTopicOrPartition)
		}
		if req.ExpectedOffset >= 0 && req.ExpectedOffset != int64(len(p.starts)) {
			end := int64(len(p.starts))
			b.mu.Unlock()
			if silent {
				return nil
			}
			return Answer(id, CodeOffsetMismatch, binary.BigEndian.AppendUint64(nil, uint64(end)))
		}
		base := b.appendLocked(p, req.Records)
		end := int64(len(p.starts))
		b.mu.Unlock()
		if silent {
			return nil
		}
		body := binary.BigEndian.AppendUint64(nil, uint64(base))
		body = binary.BigEndian.AppendUint64(body, uint64(end))
		return Answer(id, CodeNone, body)
	case APIFetch:
		return b.fetch(req)
	case APIApply:
		return b.apply(req)
	case APIList:
		return b.list(req)
	case APIListFragments:
		return b.listFragments(req)
	default:
		return b.metadata(req)
	}
}

// listFragments answers as a broker without a store: each partition is one local segment.
func (b *Broker) listFragments(req Request) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	parts, ok := b.logs[req.Topic]
	if !ok || int(req.Partition) >= len(parts) {
		return Answer(req.CorrelationID, CodeUnknownTopicOrPartition, nil)
	}
	ids := []int{int(req.Partition)}
	if req.Partition == -1 {
		ids = ids[:0]
		for i := range parts {
			ids = append(ids, i)
		}
	}
	body := binary.BigEndian.AppendUint32(nil, uint32(len(ids)))
	for _, id := range ids {
		end := uint64(len(parts[id].starts))
		body = binary.BigEndian.AppendUint32(body, uint32(id))
		body = binary.BigEndian.AppendUint64(body, 0)   // logStartOffset
		body = binary.BigEndian.AppendUint64(body, end) // highWatermark
		body = binary.BigEndian.AppendUint32(body, 1)   // one fragment
		body = binary.BigEndian.AppendUint64(body, 0)
		body = binary.BigEndian.AppendUint64(body, end)
		body = binary.BigEndian.AppendUint64(body, uint64(len(parts[id].data)))
		body = append(body, 1)                                 // local
		body = binary.BigEndian.AppendUint64(body, ^uint64(0)) // -1: not persisted
	}
	return Answer(req.CorrelationID, CodeNone, body)
}

func (b *Broker) partition(topic string, partition int32) *partitionLog {
	parts := b.logs[topic]
	if partition < 0 || int(partition) >= len(parts) {
		return nil
	}
	return parts[partition]
}

func (b *Broker) fetch(req Request) []byte {
	id := req.CorrelationID
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.partition(req.Topic, req.Partition)
	if p == nil {
		return Answer(id, CodeUnknownTopicOrPartition, nil)
	}
	// end is what this node may serve: the log's end, or a trailing replica's high watermark.
	end := func() int64 {
		n := int64(len(p.starts))
		if limit := b.fetchLimitLocked(req); limit >= 0 && limit < n {
			return limit
		}
		return n
	}
	available := func() int {
		if req.Offset < 0 || req.Offset >= end() {
			return 0
		}
		last := len(p.data)
		if e := end(); e < int64(len(p.starts)) {
			last = p.starts[e]
		}
		return last - p.starts[req.Offset]
	}
	if req.MaxWaitMillis > 0 {
		wait := min(time.Duration(req.MaxWaitMillis)*time.Millisecond, fetchWaitMax)
		timer := time.NewTimer(wait)
		defer timer.Stop()
		need := max(int(req.MinBytes), 1)
		b.waiting++
		b.notify()
		for available() < need {
			ch := b.changed
			b.mu.Unlock()
			expired := false
			select {
			case <-ch:
			case <-timer.C:
				expired = true
			case <-b.closing:
				expired = true
			}
			b.mu.Lock()
			if expired {
				break
			}
		}
		b.waiting--
		b.notify()
	}
	hw := end()
	if req.Offset < 0 || req.Offset > int64(len(p.starts)) {
		return Answer(id, CodeOffsetOutOfRange, nil)
	}
	b.servedLocked(req, hw)
	var payload []byte
	if req.Offset < hw {
		payload = p.data[p.starts[req.Offset]:]
		if hw < int64(len(p.starts)) {
			payload = p.data[p.starts[req.Offset]:p.starts[hw]]
		}
		if len(payload) > int(req.MaxBytes) {
			payload = payload[:req.MaxBytes] // cut on a byte boundary, as the protocol allows
		}
	}
	return Answer(id, CodeNone, FetchBody(hw, payload))
}

func (b *Broker) metadata(req Request) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	names := req.Topics
	if len(names) == 0 {
		for name := range b.logs {
			names = append(names, name)
		}
	}
	set := map[string]bool{}
	for _, n := range names {
		if _, ok := b.logs[n]; !ok {
			return Answer(req.CorrelationID, CodeUnknownTopicOrPartition, nil)
		}
		set[n] = true
	}
	names = names[:0:0]
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	var body []byte
	if req.Version >= 2 {
		body = binary.BigEndian.AppendUint64(body, uint64(b.revision))
	}
	body = binary.BigEndian.AppendUint32(body, uint32(len(names)))
	for _, n := range names {
		body = binary.BigEndian.AppendUint16(body, uint16(len(n)))
		body = append(body, n...)
		parts := b.logs[n]
		body = binary.BigEndian.AppendUint32(body, uint32(len(parts)))
		for i, p := range parts {
			body = binary.BigEndian.AppendUint32(body, uint32(i))
			body = binary.BigEndian.AppendUint64(body, 0)
			body = binary.BigEndian.AppendUint64(body, uint64(len(p.starts)))
			switch {
			case req.Version >= 4:
				body = b.appendRouteV2Locked(body, n, int32(i), req.Node, true)
			case req.Version >= 2:
				body = appendRoute(body, b.primaryLocked(n, int32(i), req.Node))
			}
		}
	}
	return Answer(req.CorrelationID, CodeNone, body)
}

// Answer builds an answer frame.
func Answer(correlationID int32, code int16, body []byte) []byte {
	f := binary.BigEndian.AppendUint32(nil, uint32(6+len(body)))
	f = binary.BigEndian.AppendUint32(f, uint32(correlationID))
	f = binary.BigEndian.AppendUint16(f, uint16(code))
	return append(f, body...)
}

// FetchBody builds a FETCH answer body around record bytes as stored.
func FetchBody(highWatermark int64, payload []byte) []byte {
	body := binary.BigEndian.AppendUint64(nil, uint64(highWatermark))
	body = binary.BigEndian.AppendUint32(body, uint32(len(payload)))
	return append(body, payload...)
}

// StoredRecords lays records out as the broker stores and sends them: size, crc32c, payload.
func StoredRecords(records ...[]byte) []byte {
	var out []byte
	for _, r := range records {
		out = binary.BigEndian.AppendUint32(out, uint32(len(r)))
		out = binary.BigEndian.AppendUint32(out, crc32.Checksum(r, castagnoli))
		out = append(out, r...)
	}
	return out
}

// reader decodes a request payload; the first shortfall sets err and later reads return zeros.
type reader struct {
	b   []byte
	err error
}

var errShort = errors.New("request ends early")

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errShort
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) i8() int8 {
	if p := r.take(1); p != nil {
		return int8(p[0])
	}
	return 0
}

func (r *reader) i16() int16 {
	if p := r.take(2); p != nil {
		return int16(binary.BigEndian.Uint16(p))
	}
	return 0
}

func (r *reader) i32() int32 {
	if p := r.take(4); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (r *reader) i64() int64 {
	if p := r.take(8); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

func (r *reader) str() string { return string(r.take(int(uint16(r.i16())))) }

func decodeRequest(frame []byte) Request {
	r := &reader{b: frame}
	req := Request{APIKey: r.i16(), Version: r.i16(), CorrelationID: r.i32()}
	fail := func(why string) Request {
		req.DecodeErr = why
		return req
	}
	switch req.APIKey {
	case APIProduce:
		req.Topic = r.str()
		req.Partition = r.i32()
		req.Ack = r.i8()
		req.ExpectedOffset = -1
		if req.Version >= 2 {
			req.ExpectedOffset = r.i64()
		}
		count := r.i32()
		if r.err != nil {
			return fail("produce header: " + r.err.Error())
		}
		if !validTopic(req.Topic) {
			return fail("topic name")
		}
		if req.Partition < 0 {
			return fail("partition < 0")
		}
		if req.Ack < 0 || req.Ack > 2 {
			return fail("ackPolicy")
		}
		if count <= 0 || int64(count)*4 > int64(len(r.b)) {
			return fail("recordCount")
		}
		for i := int32(0); i < count; i++ {
			size := r.i32()
			if r.err == nil && size <= 0 {
				return fail("record size <= 0")
			}
			rec := r.take(int(size))
			if r.err != nil {
				return fail("record runs past the frame")
			}
			req.Records = append(req.Records, append([]byte(nil), rec...))
		}
	case APIFetch:
		req.Topic = r.str()
		req.Partition = r.i32()
		req.Offset = r.i64()
		req.MaxBytes = r.i32()
		if req.Version >= 2 {
			req.MaxWaitMillis = r.i32()
			req.MinBytes = r.i32()
		}
		switch {
		case r.err != nil:
			return fail("fetch: " + r.err.Error())
		case !validTopic(req.Topic):
			return fail("topic name")
		case req.Partition < 0, req.Offset < 0, req.MaxBytes <= 0, req.MaxWaitMillis < 0, req.MinBytes < 0:
			return fail("negative field")
		case req.MinBytes > req.MaxBytes:
			return fail("minBytes > maxBytes")
		}
	case APIMetadata:
		count := r.i32()
		if r.err != nil || count < 0 {
			return fail("topicCount")
		}
		for i := int32(0); i < count; i++ {
			t := r.str()
			if r.err != nil || !validTopic(t) {
				return fail("topic name")
			}
			req.Topics = append(req.Topics, t)
		}
		req.MinRevision = -1
		if req.Version >= 3 {
			req.MinRevision = r.i64()
			if flags := r.i8(); r.err != nil || flags != 0 {
				return fail("minRevision or flags")
			}
		}
	case APIApply, APIList:
		if why := decodeTopicsRequest(r, &req); why != "" {
			return fail(why)
		}
	case APIListFragments:
		req.Topic = r.str()
		req.Partition = r.i32()
		switch {
		case r.err != nil:
			return fail("list fragments: " + r.err.Error())
		case !validTopic(req.Topic):
			return fail("topic name")
		case req.Partition < -1:
			return fail("partition < -1")
		}
	}
	return req
}

func validTopic(name string) bool {
	runes := []rune(name)
	if len(runes) == 0 || len(runes) > 249 {
		return false
	}
	for _, c := range runes {
		ok := c == '.' || c == '_' || c == '-' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c > 127
		if !ok {
			return false
		}
	}
	return true
}
