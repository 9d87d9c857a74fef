package booblik

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// What a client that follows routes needs from one Conn:
//
//	API_VERSIONS request v1  => (no fields)
//	API_VERSIONS response v1 => count:int32 [apiKey:int16 minVersion:int16 maxVersion:int16]*count
//	METADATA request v2      => as v1;  v3 => as v1, then minRevision:int64 flags:int8 (clients send 0)
//	METADATA response v2, v3 => revision:int64 topicCount:int32
//	                            [name partitionCount [partition logStartOffset highWatermark route:Route]*]*
//	PRODUCE v3, FETCH v3     => v2's bytes: "I follow routes" (a broker that is not the primary
//	                            answers NOT_PRIMARY with the route instead of proxying)

const apiVersionsVersion = 1

// versionsBeforeDiscovery is what a broker that refuses API_VERSIONS (it predates it) serves.
var versionsBeforeDiscovery = map[int16]int16{int16(apiProduce): 1, int16(apiFetch): 2, int16(apiMetadata): 1}

// Versions is what the broker serves, per API key its highest version, as API_VERSIONS said: asked
// once per Conn (by the first call that has versions to choose from, or by APIVersions) and kept.
func (c *Conn) Versions(ctx context.Context) (map[int16]int16, error) {
	if c.versions == nil {
		if _, err := c.APIVersions(ctx); err != nil {
			return nil, err
		}
	}
	return maps.Clone(c.versions), nil
}

// APIVersions asks, per API key, the highest version the broker serves (and keeps it for
// Versions). A broker that predates API_VERSIONS gets the v1 set: PRODUCE 1, FETCH 2, METADATA 1.
func (c *Conn) APIVersions(ctx context.Context) (map[int16]int16, error) {
	out, err := c.askVersions(ctx)
	if err != nil {
		return nil, err
	}
	c.versions = out
	return maps.Clone(out), nil
}

func (c *Conn) askVersions(ctx context.Context) (map[int16]int16, error) {
	body, err := c.exchange(ctx, apiAPIVersions, "API_VERSIONS", beginFrame(apiAPIVersions, apiVersionsVersion), true)
	if errors.Is(err, ErrUnsupportedVersion) {
		return maps.Clone(versionsBeforeDiscovery), nil
	}
	if err != nil {
		return nil, err
	}
	d := decoder{api: apiAPIVersions, b: body}
	n := d.count("count", 6)
	out := make(map[int16]int16, n)
	for i := 0; i < n && d.err == nil; i++ {
		key := d.int16(fmt.Sprintf("ranges[%d].apiKey", i))
		d.int16(fmt.Sprintf("ranges[%d].minVersion", i))
		out[key] = d.int16(fmt.Sprintf("ranges[%d].maxVersion", i))
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return out, nil
}

// RoutedPartition is a partition's offsets and its route, as METADATA v2/v3/v4 report them.
type RoutedPartition struct {
	PartitionInfo
	Route Route
	// RouteV2 is the route with every replica, its zone, whether it is in sync and live, and its
	// lag: from METADATA v4 (Conn.MetadataReplicas, a Client with PreferZone); nil otherwise.
	RouteV2 *RouteV2
}

// RoutedMetadata is a METADATA v2/v3/v4 answer: the spec store's revision and the partitions of each
// topic, sorted by id, with their routes.
type RoutedMetadata struct {
	Revision int64
	Topics   map[string][]RoutedPartition
}

// Partitions drops the routes: what Metadata returns.
func (m *RoutedMetadata) Partitions() map[string][]PartitionInfo {
	out := make(map[string][]PartitionInfo, len(m.Topics))
	for name, parts := range m.Topics {
		infos := make([]PartitionInfo, len(parts))
		for i, p := range parts {
			infos[i] = p.PartitionInfo
		}
		out[name] = infos
	}
	return out
}

// MetadataRoutes is METADATA v2: partitions with their routes. With minRevision >= 0 it is v3 (the
// broker must serve it): answered once the broker's copy of the topic specs has reached
// minRevision, the revision an APPLY returned.
func (c *Conn) MetadataRoutes(ctx context.Context, minRevision int64, topics ...string) (*RoutedMetadata, error) {
	version := int16(metadataRoutesVersion)
	if minRevision >= 0 {
		version = metadataRevisionVersion
	}
	return c.metadataRoutesAs(ctx, version, minRevision, topics)
}

// metadataRoutesAs sends METADATA v2 (minRevision ignored), v3 or v4 (minRevision >= 0).
func (c *Conn) metadataRoutesAs(ctx context.Context, version int16, minRevision int64, topics []string) (*RoutedMetadata, error) {
	for i, t := range topics {
		if err := validTopic(fmt.Sprintf("topics[%d]", i), t); err != nil {
			return nil, err
		}
	}
	body, err := c.exchange(ctx, apiMetadata, metadataRequestLabel(topics), metadataRoutesFrame(version, minRevision, topics), true)
	if err != nil {
		return nil, err
	}
	return decodeRoutedMetadata(body, version >= metadataReplicasVersion)
}

// metadataRoutesFrame is a METADATA v2 request, or a v3/v4 one with minRevision and flags 0.
func metadataRoutesFrame(version int16, minRevision int64, topics []string) []byte {
	frame := appendMetadataRequest(beginFrame(apiMetadata, version), topics)
	if version >= metadataRevisionVersion {
		frame = appendInt8(appendInt64(frame, minRevision), 0)
	}
	return frame
}

const (
	routedPartitionBytesMin   = metadataPartitionBytesMin + routeBytesMin
	replicasPartitionBytesMin = metadataPartitionBytesMin + routeV2BytesMin
)

// decodeRoutedMetadata reads a METADATA v2/v3 answer, or with withReplicas a v4 one (RouteV2).
func decodeRoutedMetadata(body []byte, withReplicas bool) (*RoutedMetadata, error) {
	d := decoder{api: apiMetadata, b: body}
	out := &RoutedMetadata{Revision: d.int64("revision")}
	n := d.count("topicCount", metadataTopicBytesMin)
	out.Topics = make(map[string][]RoutedPartition, n)
	partitionBytesMin := routedPartitionBytesMin
	if withReplicas {
		partitionBytesMin = replicasPartitionBytesMin
	}
	for i := 0; i < n && d.err == nil; i++ {
		name := d.string(fmt.Sprintf("topics[%d].name", i))
		count := d.count(fmt.Sprintf("topics[%d].partitionCount", i), partitionBytesMin)
		parts := make([]RoutedPartition, 0, count)
		for j := 0; j < count && d.err == nil; j++ {
			where := fmt.Sprintf("topics[%d].partitions[%d]", i, j)
			p := RoutedPartition{PartitionInfo: PartitionInfo{
				Partition:      d.int32(where + ".partition"),
				LogStartOffset: d.int64(where + ".logStartOffset"),
				HighWatermark:  d.int64(where + ".highWatermark"),
			}}
			if withReplicas {
				p.RouteV2 = readRouteV2(&d, where+".route")
				p.Route = p.RouteV2.Route()
			} else {
				p.Route = readRoute(&d, where+".route")
			}
			if d.err == nil && (p.Partition < 0 || p.LogStartOffset < 0 || p.HighWatermark < p.LogStartOffset) {
				d.fail("%s: partition %d, logStartOffset %d, highWatermark %d: expected partition >= 0 and 0 <= logStartOffset <= highWatermark",
					where, p.Partition, p.LogStartOffset, p.HighWatermark)
			}
			parts = append(parts, p)
		}
		slices.SortFunc(parts, func(a, b RoutedPartition) int { return cmp.Compare(a.Partition, b.Partition) })
		out.Topics[name] = parts
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return out, nil
}

func readRoute(d *decoder, where string) Route {
	r := Route{Primary: d.string(where + ".primary")}
	replicas := d.count(where+".replicaCount", 2)
	for k := 0; k < replicas && d.err == nil; k++ {
		r.Replicas = append(r.Replicas, d.string(fmt.Sprintf("%s.replicas[%d]", where, k)))
	}
	return r
}

// NotPrimaryError is a PRODUCE v3 or FETCH v3 refused because the broker is not the partition's
// primary; Route names the one that is now (an empty Primary: nobody at the moment). A Client
// follows it on its own. errors.Is(err, ErrNotPrimary) holds.
type NotPrimaryError struct {
	BrokerError
	Route Route
}

func (e *NotPrimaryError) Error() string {
	primary := e.Route.Primary
	if primary == "" {
		primary = "(none)"
	}
	return "booblik: " + e.Request + " refused: not the primary; the primary is " + primary
}

func (e *NotPrimaryError) Unwrap() error { return &e.BrokerError }
