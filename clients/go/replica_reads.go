package booblik

import (
	"context"
	"errors"
)

// Reads from replicas (ClientConfig.PreferZone; docs/protocol.md, "Clients that follow routes",
// "Reading from replicas"):
//
//  1. METADATA v4 where the broker speaks it keeps each partition's RouteV2; from a broker
//     without v4, v3, and reads from primaries only.
//  2. A FETCH goes to an IN_SYNC and LIVE replica in the preferred zone: the primary when it is
//     one of them, else the first listed; the primary when none is. It is FETCH v4 when that
//     broker speaks it, else v3 to the primary.
//  3. A replica that answers NOT_PRIMARY (it left the in-sync set, or holds less than the offset)
//     or cannot be reached is left: the fetch goes to the primary at once, and the partition's
//     RouteV2 is read again before a replica is picked again.
//  4. Per partition the highest high watermark any fetch answer showed is kept, and each result
//     reports the higher of it and the answer's: a replica's can trail the primary's, and a
//     reader never sees it go back.

// fetchPreferringZone is Fetch with PreferZone set.
func (c *Client) fetchPreferringZone(ctx context.Context, req FetchRequest) (*FetchResult, error) {
	key := partitionKey{req.Topic, req.Partition}
	var res *FetchResult
	err := c.retry(ctx, &key, func(a *attempt) error {
		if err := c.refreshReplicasIfStale(ctx, a, key); err != nil {
			return err
		}
		primary, err := c.primaryOf(ctx, a, apiFetch, key)
		if err != nil {
			return err
		}
		if replica := c.pickReplica(key, primary); replica != primary {
			var fellBack bool
			res, fellBack, err = c.fetchFromReplica(ctx, a, replica, req)
			var np *NotPrimaryError
			switch {
			case fellBack:
			case errors.As(err, &np) && np.Route.Primary != "":
				c.leaveReplica(key, np.Route.Primary)
				primary = np.Route.Primary
			case a.lost:
				c.leaveReplica(key, primary)
			default:
				return err // served, or a refusal the primary would give too
			}
			*a = attempt{avoid: a.avoid}
		}
		a.at = primary
		return c.broker(primary).do(ctx, a, func(conn *Conn, versions map[int16]int16) error {
			version := int16(fetchVersion)
			switch {
			case speaks(versions, apiFetch, capReplicaReadable):
				version = replicaReadVersion
			case speaks(versions, apiFetch, capFollowsRoutes):
				version = routedVersion
			}
			var err error
			res, err = conn.fetchAs(ctx, req, version)
			return err
		})
	})
	if res != nil {
		res.HighWatermark = c.keepHighWatermark(key, res.HighWatermark)
	}
	return res, err
}

// fetchFromReplica sends req to a replica as FETCH v4. fellBack: the replica does not speak v4,
// so nothing was sent and the primary is to be asked instead.
func (c *Client) fetchFromReplica(ctx context.Context, a *attempt, replica string, req FetchRequest) (res *FetchResult, fellBack bool, err error) {
	err = c.broker(replica).do(ctx, a, func(conn *Conn, versions map[int16]int16) error {
		if !speaks(versions, apiFetch, capReplicaReadable) {
			fellBack = true
			return nil
		}
		var err error
		res, err = conn.fetchAs(ctx, req, replicaReadVersion)
		return err
	})
	return res, fellBack, err
}

// pickReplica is where the partition's next fetch goes: an in-sync, live replica in the preferred
// zone (the primary when it is one), else the primary.
func (c *Client) pickReplica(key partitionKey, primary string) string {
	c.mu.Lock()
	route := c.replicaRoutes[key]
	c.mu.Unlock()
	if route == nil {
		return primary
	}
	first := ""
	for _, r := range route.Replicas {
		if r.Zone != c.cfg.PreferZone || !r.readable() {
			continue
		}
		if r.Address == primary {
			return primary
		}
		if first == "" {
			first = r.Address
		}
	}
	if first == "" {
		return primary
	}
	return first
}

// leaveReplica stops reading the partition from replicas until its RouteV2 is read again; primary
// is the one to read from meanwhile.
func (c *Client) leaveReplica(key partitionKey, primary string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.routes[key] = c.learnLocked(primary)
	delete(c.replicaRoutes, key)
	c.staleReplicas[key] = true
}

// refreshReplicasIfStale reads the partition's route again (METADATA) when a replica was left.
func (c *Client) refreshReplicasIfStale(ctx context.Context, a *attempt, key partitionKey) error {
	c.mu.Lock()
	stale := c.staleReplicas[key]
	c.mu.Unlock()
	if !stale {
		return nil
	}
	b, err := c.anyBroker(ctx, a)
	if err != nil {
		return err
	}
	_, err = c.readRoutes(ctx, b, a, []string{key.topic})
	return err
}

// keepReplicasLocked records what a METADATA answer said of a partition's replicas: its RouteV2
// (v4), or nothing (v3 and older: reads go to the primary). Called with mu held.
func (c *Client) keepReplicasLocked(key partitionKey, route *RouteV2) {
	delete(c.staleReplicas, key)
	if route == nil {
		delete(c.replicaRoutes, key)
		return
	}
	c.replicaRoutes[key] = route
	for _, r := range route.Replicas {
		c.learnLocked(r.Address)
	}
}

// keepHighWatermark records an answer's high watermark and returns the highest seen.
func (c *Client) keepHighWatermark(key partitionKey, hw int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	hw = max(hw, c.highWatermarks[key])
	c.highWatermarks[key] = hw
	return hw
}
