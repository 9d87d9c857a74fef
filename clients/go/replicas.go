package booblik

import (
	"context"
	"fmt"
)

// Replicas, zones and reads from replicas (docs/protocol.md, "RouteV2, METADATA v4, LIST v2 and
// FETCH v4"):
//
//	RouteV2      => epoch:int32 primary:string replicaCount:int32 [replica:ReplicaState]*replicaCount
//	ReplicaState => member:string address:string zone:string flags:int8 lagRecords:int64 lagMillis:int64
//	METADATA request v4 => as v3      METADATA response v4 => as v2, with route:RouteV2
//	LIST request v2     => as v1      LIST response v2     => as v1, with route:RouteV2
//	FETCH request v4    => as v2      FETCH response v4    => as v1 (a live in-sync replica may answer)

// ReplicaFlags are a replica's state bits in a RouteV2.
type ReplicaFlags int8

const (
	// ReplicaInSync: in the partition's in-sync set, it holds everything committed.
	ReplicaInSync ReplicaFlags = 1
	// ReplicaLive: it holds its membership lease; its Address is dialable.
	ReplicaLive ReplicaFlags = 2
)

// LagUnknown is a ReplicaState's LagRecords or LagMillis when the answer does not know it (LIST
// always; METADATA when the partition's primary did not answer).
const LagUnknown int64 = -1

// ReplicaState is one replica of a partition, as a RouteV2 lists it.
type ReplicaState struct {
	Member  string // the member id ("" on a single broker)
	Address string // host:port; empty when it is not live
	Zone    string // empty when none was configured
	Flags   ReplicaFlags
	// LagRecords is how many records the primary holds that this replica has not acknowledged,
	// LagMillis how long since it last had everything the primary had: 0 for the primary and a
	// level replica, LagUnknown when the answer does not know.
	LagRecords int64
	LagMillis  int64
}

// InSync says whether the replica is in the partition's in-sync set.
func (r ReplicaState) InSync() bool { return r.Flags&ReplicaInSync != 0 }

// Live says whether the replica holds its membership lease.
func (r ReplicaState) Live() bool { return r.Flags&ReplicaLive != 0 }

// readable: a replica a FETCH v4 may go to (in sync, live, and dialable).
func (r ReplicaState) readable() bool { return r.InSync() && r.Live() && r.Address != "" }

// RouteV2 is a partition's route with its replicas: the primary's epoch (0 for a partition never
// failed over, and on one node), the primary's host:port (empty when it has none), and every
// replica, the primary among them, in placement order (the primary first).
type RouteV2 struct {
	Epoch    int32
	Primary  string
	Replicas []ReplicaState
}

// Route is the v1 view of the route: the primary and the addresses of the other replicas that
// have one.
func (r *RouteV2) Route() Route {
	out := Route{Primary: r.Primary}
	for _, s := range r.Replicas {
		if s.Address != "" && s.Address != r.Primary {
			out.Replicas = append(out.Replicas, s.Address)
		}
	}
	return out
}

const (
	replicaStateBytesMin = 2 + 2 + 2 + 1 + 8 + 8 // empty strings
	routeV2BytesMin      = 4 + 2 + 4             // epoch, an empty primary, no replicas
)

func readRouteV2(d *decoder, where string) *RouteV2 {
	r := &RouteV2{Epoch: d.int32(where + ".epoch")}
	if d.err == nil && r.Epoch < 0 {
		d.fail("%s.epoch: %d, expected >= 0", where, r.Epoch)
	}
	r.Primary = d.string(where + ".primary")
	n := d.count(where+".replicaCount", replicaStateBytesMin)
	if n > 0 {
		r.Replicas = make([]ReplicaState, 0, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		rw := fmt.Sprintf("%s.replicas[%d]", where, i)
		s := ReplicaState{
			Member:  d.string(rw + ".member"),
			Address: d.string(rw + ".address"),
			Zone:    d.string(rw + ".zone"),
			Flags:   ReplicaFlags(d.int8(rw + ".flags")),
		}
		s.LagRecords = readLag(d, rw+".lagRecords")
		s.LagMillis = readLag(d, rw+".lagMillis")
		r.Replicas = append(r.Replicas, s)
	}
	return r
}

func readLag(d *decoder, field string) int64 {
	lag := d.int64(field)
	if d.err == nil && lag < LagUnknown {
		d.fail("%s: %d, expected >= -1 (-1: not known)", field, lag)
	}
	return lag
}

// MetadataReplicas is METADATA v4 (the broker must serve it): MetadataRoutes at minRevision (>= 0;
// 0 answers at once) whose partitions also carry RouteV2, every replica with its zone, whether it
// is in sync and live, and its lag.
func (c *Conn) MetadataReplicas(ctx context.Context, minRevision int64, topics ...string) (*RoutedMetadata, error) {
	if minRevision < 0 {
		return nil, &InvalidArgumentError{Field: "minRevision", Got: fmt.Sprint(minRevision), Want: ">= 0"}
	}
	return c.metadataRoutesAs(ctx, metadataReplicasVersion, minRevision, topics)
}

// ListTopicsReplicas is ListTopics as LIST v2 (the broker must serve it): each ListedTopic also
// carries RoutesV2. LIST answers from the cluster's records, so every lag is LagUnknown.
func (c *Conn) ListTopicsReplicas(ctx context.Context, selector string) (*TopicListing, error) {
	return c.listAs(ctx, listReplicasVersion, selector, noWatch, 0)
}
