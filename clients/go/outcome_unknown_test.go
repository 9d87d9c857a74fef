package booblik_test

import (
	"errors"
	"regexp"
	"sync/atomic"
	"testing"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

// answerProduce makes every PRODUCE get code, with no body.
func answerProduce(code int16) func(fakebroker.Request) (fakebroker.Action, bool) {
	return func(r fakebroker.Request) (fakebroker.Action, bool) {
		if r.APIKey != fakebroker.APIProduce {
			return fakebroker.Action{}, false
		}
		return fakebroker.Action{Raw: fakebroker.Answer(r.CorrelationID, code, nil)}, true
	}
}

// cutOnProduce closes the connection on every PRODUCE without answering it.
func cutOnProduce(r fakebroker.Request) (fakebroker.Action, bool) {
	return fakebroker.Action{Close: true}, r.APIKey == fakebroker.APIProduce
}

var unknownMessage = regexp.MustCompile(`^booblik: PRODUCE t/0: outcome unknown: .*the records may or may not have been stored`)

// checkUnknown fails unless err says the outcome is unknown, and never that it was refused.
func checkUnknown(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, booblik.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want one matching ErrOutcomeUnknown", err)
	}
	if !unknownMessage.MatchString(err.Error()) || regexp.MustCompile(`refused`).MatchString(err.Error()) {
		t.Fatalf("message %q: want it to say the records may or may not have been stored, not refused", err)
	}
}

func produceCount(b *fakebroker.Broker) int { return len(b.RequestsOf(fakebroker.APIProduce)) }

func TestOutcomeUnknownFromTheBrokerIsUnknownAndTheConnStaysUsable(t *testing.T) {
	b := fakebroker.Start(t, map[string]int{"t": 1})
	b.Intercept(answerProduce(fakebroker.CodeOutcomeUnknown))
	conn := dial(t, b)
	ctx := testContext(t)
	_, err := conn.Produce(ctx, "t", 0, [][]byte{[]byte("x")}, booblik.AckWritten)
	checkUnknown(t, err)
	var be *booblik.BrokerError
	if !errors.As(err, &be) || be.Code != booblik.CodeOutcomeUnknown || be.Retriable() {
		t.Fatalf("errors.As BrokerError: %+v", be)
	}
	if _, err := conn.Metadata(ctx, "t"); err != nil {
		t.Fatalf("the Conn after OUTCOME_UNKNOWN: %v", err)
	}
}

func TestClientSendsAnOutcomeUnknownProduceOnce(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 1}, 2)
	b.Intercept(answerProduce(fakebroker.CodeOutcomeUnknown))
	c := newClient(t, quickRoutes, b.NodeAddr(0), b.NodeAddr(1))
	_, err := c.Produce(testContext(t), "t", 0, [][]byte{[]byte("x")}, booblik.AckWritten)
	checkUnknown(t, err)
	if n := produceCount(b); n != 1 {
		t.Fatalf("%d PRODUCE requests, want 1 (never sent again)", n)
	}
}

func TestProducerOverAClientFailsAnOutcomeUnknownBatchOnce(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 1}, 2)
	b.Intercept(answerProduce(fakebroker.CodeOutcomeUnknown))
	p, err := booblik.NewClientProducer(newClient(t, quickRoutes, b.NodeAddr(0)), booblik.ProducerConfig{Linger: booblik.NoLinger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	_, err = p.Send("t", 0, []byte("x")).Await(testContext(t))
	checkUnknown(t, err)
	if n := produceCount(b); n != 1 {
		t.Fatalf("%d PRODUCE requests, want 1", n)
	}
}

func TestAProduceLostInFlightIsUnknownAndAMetadataIsNot(t *testing.T) {
	b := fakebroker.Start(t, map[string]int{"t": 1})
	b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) { return fakebroker.Action{Close: true}, true })
	ctx := testContext(t)
	_, err := dial(t, b).Produce(ctx, "t", 0, [][]byte{[]byte("x")}, booblik.AckWritten)
	checkUnknown(t, err)
	if _, err := dial(t, b).Metadata(ctx, "t"); err == nil || errors.Is(err, booblik.ErrOutcomeUnknown) {
		t.Fatalf("METADATA on a cut connection: %v, want an error that is not ErrOutcomeUnknown", err)
	}
}

func TestClientGivesUpAfterASendLostInFlightWithUnknownNotTheLastRefusal(t *testing.T) {
	b := fakebroker.StartCluster(t, map[string]int{"t": 1}, 1)
	var sends atomic.Int32
	b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
		if r.APIKey != fakebroker.APIProduce {
			return fakebroker.Action{}, false
		}
		if sends.Add(1) == 1 {
			return cutOnProduce(r) // the first send may have been stored: its answer never comes
		}
		return fakebroker.Action{Raw: fakebroker.Answer(r.CorrelationID, fakebroker.CodeNoPrimary, nil)}, true
	})
	cfg := quickRoutes
	cfg.RouteAttemptsMax = 3
	c := newClient(t, cfg, b.NodeAddr(0))
	_, err := c.Produce(testContext(t), "t", 0, [][]byte{[]byte("x")}, booblik.AckWritten)
	checkUnknown(t, err)
	if !errors.Is(err, booblik.ErrNoPrimary) {
		t.Fatalf("err = %v, want the last refusal (NO_PRIMARY) kept inside", err)
	}
	if n := sends.Load(); n != 3 {
		t.Fatalf("%d sends, want 3", n)
	}
}
