package fakebroker

import (
	"encoding/binary"
	"fmt"
	"net"
	"testing"
)

// Cluster mode: one fake with several listeners ("nodes"), each a broker of a fake cluster over one
// set of logs (as a cluster keeps one copy of each partition, whoever serves it). Every node
// answers API_VERSIONS (PRODUCE up to v3, FETCH and METADATA up to v4, LIST up to v2), METADATA
// v2/v3 with the routes the test set, METADATA v4 and LIST v2 with RouteV2 (the replicas the test
// set, or the primary alone; LIST's lags -1), and
// serves PRODUCE and FETCH v3 only for the partitions routed to it: the others get NOT_PRIMARY
// carrying the route, or NO_PRIMARY when the partition has no primary. FETCH v4 is served by the
// primary and by a replica the test marked in sync and live (up to the high watermark the test
// gave it, if any); other nodes answer it NOT_PRIMARY. v1 and v2 are served wherever they arrive,
// as a cluster broker proxies them.

type clusterState struct {
	routes   map[string]int       // "topic/partition" -> node; absent: node 0; -1: no primary
	epochs   map[string]int32     // RouteV2 epoch; absent: 0
	replicas map[string][]Replica // RouteV2 replicas; absent: the primary alone, in sync and live
	trailing map[string]int64     // "topic/partition@node" -> the high watermark that replica serves
	noV4     map[int]bool         // nodes that answer as brokers without METADATA v4 and FETCH v4
	served   []ServedFetch
}

// Replica is one replica of a partition in the RouteV2 a fake cluster answers. Its address is its
// node's, even when it is not live (a real broker sends an empty one), so that a client is seen to
// read the LIVE flag itself.
type Replica struct {
	Node       int
	Member     string
	Zone       string
	Flags      int8 // 1 IN_SYNC, 2 LIVE
	LagRecords int64
	LagMillis  int64
}

// Replica flags, as the wire has them.
const (
	ReplicaInSync = 1
	ReplicaLive   = 2
)

// ServedFetch is a FETCH the fake answered with records (or none) rather than a refusal.
type ServedFetch struct {
	Node          int
	Version       int16
	Offset        int64
	HighWatermark int64
}

// StartCluster starts a fake of `nodes` brokers with the given topics, every partition routed to
// node 0.
func StartCluster(t testing.TB, topics map[string]int, nodes int) *Broker {
	t.Helper()
	b := Start(t, topics)
	b.mu.Lock()
	b.cluster = &clusterState{routes: map[string]int{}, epochs: map[string]int32{}, replicas: map[string][]Replica{},
		trailing: map[string]int64{}, noV4: map[int]bool{}}
	b.mu.Unlock()
	for i := 1; i < nodes; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("fakebroker: listen: %v", err)
		}
		b.mu.Lock()
		b.nodes = append(b.nodes, ln)
		b.wg.Add(1)
		b.mu.Unlock()
		go b.accept(ln, i)
	}
	return b
}

// NodeAddr is host:port of node i.
func (b *Broker) NodeAddr(i int) string { return b.nodes[i].Addr().String() }

// Route makes node the partition's primary on every node; -1 leaves it without one.
func (b *Broker) Route(topic string, partition int32, node int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cluster.routes[routeKey(topic, partition)] = node
}

// Replicas sets the partition's RouteV2 epoch and replicas (the primary among them, as the test
// lists them), on every node.
func (b *Broker) Replicas(topic string, partition int32, epoch int32, replicas ...Replica) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := routeKey(topic, partition)
	b.cluster.epochs[key] = epoch
	b.cluster.replicas[key] = append([]Replica(nil), replicas...)
}

// TrailingHighWatermark makes node, as a replica of the partition, serve FETCH v4 only up to hw
// and answer hw as the high watermark, as a replica does before it learns the newest commit.
func (b *Broker) TrailingHighWatermark(topic string, partition int32, node int, hw int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cluster.trailing[fmt.Sprintf("%s@%d", routeKey(topic, partition), node)] = hw
}

// WithoutV4 makes the nodes (every node when none is named) brokers that predate reads from
// replicas: API_VERSIONS says METADATA and FETCH up to v3, and v4 is refused UNSUPPORTED_VERSION.
func (b *Broker) WithoutV4(nodes ...int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(nodes) == 0 {
		for i := range b.nodes {
			nodes = append(nodes, i)
		}
	}
	for _, n := range nodes {
		b.cluster.noV4[n] = true
	}
}

// speaksV4 says whether the node serves METADATA v4 and FETCH v4.
func (b *Broker) speaksV4(node int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cluster != nil && !b.cluster.noV4[node]
}

// FetchesServed lists the fetches answered with records (or none), in order, with the node that
// answered each.
func (b *Broker) FetchesServed() []ServedFetch {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]ServedFetch(nil), b.cluster.served...)
}

// AnswerNoPrimary makes the next n PRODUCE and FETCH v3, on any node, answered NO_PRIMARY.
func (b *Broker) AnswerNoPrimary(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.noPrimaryNext = n
}

// StopNode closes node i: its listener and every connection accepted on it.
func (b *Broker) StopNode(i int) {
	b.nodes[i].Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for c, node := range b.conns {
		if node == i {
			c.Close()
		}
	}
}

func routeKey(topic string, partition int32) string { return fmt.Sprintf("%s/%d", topic, partition) }

// primaryLocked is the primary's address for a route ("" for none); outside cluster mode, the node
// asked. Called with mu held.
func (b *Broker) primaryLocked(topic string, partition int32, asked int) string {
	if b.cluster == nil {
		return b.nodes[asked].Addr().String()
	}
	node, ok := b.cluster.routes[routeKey(topic, partition)]
	if !ok {
		node = 0
	}
	if node < 0 {
		return ""
	}
	return b.nodes[node].Addr().String()
}

func (b *Broker) supports(req Request) bool {
	b.mu.Lock()
	cluster := b.cluster != nil
	b.mu.Unlock()
	v4 := b.speaksV4(req.Node)
	top := int16(2)
	if cluster {
		top = 3
	}
	switch req.APIKey {
	case APIProduce:
		return req.Version >= 1 && req.Version <= top
	case APIFetch:
		return req.Version >= 1 && (req.Version <= top || (v4 && req.Version == 4))
	case APIMetadata:
		return req.Version == 1 || (cluster && req.Version <= 3 && req.Version >= 1) || (v4 && req.Version == 4)
	case APIList:
		return req.Version == 1 || (v4 && req.Version == 2)
	case APIApply, APIListFragments, APIAuthenticate:
		return req.Version == 1
	case APIAPIVersions:
		return cluster && req.Version == 1
	}
	return false
}

// notPrimary is the refusal of a v3 PRODUCE or FETCH the node is not the primary of, or of a v4
// FETCH the node is neither the primary nor an in-sync, live replica of.
func (b *Broker) notPrimary(req Request) ([]byte, bool) {
	routed := req.Version == 3 || (req.Version == 4 && req.APIKey == APIFetch)
	if !routed || (req.APIKey != APIProduce && req.APIKey != APIFetch) {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.partition(req.Topic, req.Partition) == nil {
		return nil, false // UNKNOWN_TOPIC_OR_PARTITION, from whoever is asked
	}
	if b.noPrimaryNext > 0 {
		b.noPrimaryNext--
		return Answer(req.CorrelationID, CodeNoPrimary, nil), true
	}
	primary := b.primaryLocked(req.Topic, req.Partition, req.Node)
	if req.Version == 4 && b.readableReplicaLocked(req.Topic, req.Partition, req.Node) {
		return nil, false
	}
	switch primary {
	case b.nodes[req.Node].Addr().String():
		return nil, false
	case "":
		return Answer(req.CorrelationID, CodeNoPrimary, nil), true
	}
	return Answer(req.CorrelationID, CodeNotPrimary, appendRoute(nil, primary)), true
}

// readableReplicaLocked: node is an in-sync, live replica of the partition. Called with mu held.
func (b *Broker) readableReplicaLocked(topic string, partition int32, node int) bool {
	for _, r := range b.cluster.replicas[routeKey(topic, partition)] {
		if r.Node == node && r.Flags&(ReplicaInSync|ReplicaLive) == ReplicaInSync|ReplicaLive {
			return true
		}
	}
	return false
}

// fetchLimitLocked is the high watermark a FETCH at req.Node may serve up to: a trailing
// replica's, or -1 for the log's end. Called with mu held.
func (b *Broker) fetchLimitLocked(req Request) int64 {
	if b.cluster == nil || req.Version != 4 {
		return -1
	}
	if hw, ok := b.cluster.trailing[fmt.Sprintf("%s@%d", routeKey(req.Topic, req.Partition), req.Node)]; ok &&
		b.primaryLocked(req.Topic, req.Partition, req.Node) != b.nodes[req.Node].Addr().String() {
		return hw
	}
	return -1
}

// servedLocked records a FETCH answered at node. Called with mu held.
func (b *Broker) servedLocked(req Request, hw int64) {
	if b.cluster != nil {
		b.cluster.served = append(b.cluster.served, ServedFetch{Node: req.Node, Version: req.Version, Offset: req.Offset, HighWatermark: hw})
	}
}

// appendRouteV2Locked writes the partition's RouteV2, with the lags the test set or, without
// lagsKnown (LIST), -1. Called with mu held.
func (b *Broker) appendRouteV2Locked(body []byte, topic string, partition int32, asked int, lagsKnown bool) []byte {
	key := routeKey(topic, partition)
	primary := b.primaryLocked(topic, partition, asked)
	replicas := []Replica(nil)
	epoch := int32(0)
	if b.cluster != nil {
		replicas, epoch = b.cluster.replicas[key], b.cluster.epochs[key]
	}
	body = binary.BigEndian.AppendUint32(body, uint32(epoch))
	body = appendStr(body, primary)
	if replicas == nil { // the primary alone, as a single node answers
		body = binary.BigEndian.AppendUint32(body, 1)
		body = appendStr(appendStr(appendStr(body, ""), primary), "")
		body = append(body, ReplicaInSync|ReplicaLive)
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(body, 0), 0)
	}
	body = binary.BigEndian.AppendUint32(body, uint32(len(replicas)))
	for _, r := range replicas {
		body = appendStr(appendStr(appendStr(body, r.Member), b.nodes[r.Node].Addr().String()), r.Zone)
		body = append(body, byte(r.Flags))
		lagRecords, lagMillis := r.LagRecords, r.LagMillis
		if !lagsKnown {
			lagRecords, lagMillis = -1, -1
		}
		body = binary.BigEndian.AppendUint64(body, uint64(lagRecords))
		body = binary.BigEndian.AppendUint64(body, uint64(lagMillis))
	}
	return body
}

func appendRoute(b []byte, primary string) []byte {
	b = appendStr(b, primary)
	return binary.BigEndian.AppendUint32(b, 0) // no replicas
}

func apiVersionsAnswer(id int32, v4 bool) []byte {
	top := int16(3)
	if v4 {
		top = 4
	}
	ranges := [][3]int16{{APIProduce, 1, 3}, {APIFetch, 1, top}, {APIMetadata, 1, top}, {APIApply, 1, 1},
		{APIList, 1, top - 2}, {APIAPIVersions, 1, 1}}
	body := binary.BigEndian.AppendUint32(nil, uint32(len(ranges)))
	for _, r := range ranges {
		for _, v := range r {
			body = binary.BigEndian.AppendUint16(body, uint16(v))
		}
	}
	return Answer(id, CodeNone, body)
}
