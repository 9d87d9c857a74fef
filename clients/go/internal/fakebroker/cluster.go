package fakebroker

import (
	"encoding/binary"
	"fmt"
	"net"
	"testing"
)

// Cluster mode: one fake with several listeners ("nodes"), each a broker of a fake cluster over one
// set of logs (as a cluster keeps one copy of each partition, whoever serves it). Every node
// answers API_VERSIONS (PRODUCE, FETCH and METADATA up to v3), METADATA v2/v3 with the routes the
// test set, and serves PRODUCE and FETCH v3 only for the partitions routed to it: the others get
// NOT_PRIMARY carrying the route, or NO_PRIMARY when the partition has no primary. v1 and v2 are
// served wherever they arrive, as a cluster broker proxies them.

type clusterState struct {
	routes map[string]int // "topic/partition" -> node; absent: node 0; -1: no primary
}

// StartCluster starts a fake of `nodes` brokers with the given topics, every partition routed to
// node 0.
func StartCluster(t testing.TB, topics map[string]int, nodes int) *Broker {
	t.Helper()
	b := Start(t, topics)
	b.mu.Lock()
	b.cluster = &clusterState{routes: map[string]int{}}
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
	top := int16(2)
	if cluster {
		top = 3
	}
	switch req.APIKey {
	case APIProduce, APIFetch:
		return req.Version >= 1 && req.Version <= top
	case APIMetadata:
		return req.Version == 1 || (cluster && req.Version <= 3 && req.Version >= 1)
	case APIApply, APIList, APIListFragments:
		return req.Version == 1
	case APIAPIVersions:
		return cluster && req.Version == 1
	}
	return false
}

// notPrimary is the refusal of a v3 PRODUCE or FETCH the node is not the primary of.
func (b *Broker) notPrimary(req Request) ([]byte, bool) {
	if req.Version != 3 || (req.APIKey != APIProduce && req.APIKey != APIFetch) {
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
	switch primary {
	case b.nodes[req.Node].Addr().String():
		return nil, false
	case "":
		return Answer(req.CorrelationID, CodeNoPrimary, nil), true
	}
	return Answer(req.CorrelationID, CodeNotPrimary, appendRoute(nil, primary)), true
}

func appendRoute(b []byte, primary string) []byte {
	b = appendStr(b, primary)
	return binary.BigEndian.AppendUint32(b, 0) // no replicas
}

func apiVersionsAnswer(id int32) []byte {
	ranges := [][3]int16{{APIProduce, 1, 3}, {APIFetch, 1, 3}, {APIMetadata, 1, 3}, {APIApply, 1, 1},
		{APIList, 1, 1}, {APIAPIVersions, 1, 1}}
	body := binary.BigEndian.AppendUint32(nil, uint32(len(ranges)))
	for _, r := range ranges {
		for _, v := range r {
			body = binary.BigEndian.AppendUint16(body, uint16(v))
		}
	}
	return Answer(id, CodeNone, body)
}
