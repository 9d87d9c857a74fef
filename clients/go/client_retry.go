package booblik

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// attempt is what one send found out: where it went, and whether that connection was lost.
type attempt struct {
	avoid string // a broker that just failed: ask METADATA elsewhere first
	at    string
	lost  bool
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
