package booblik_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

func TestConsumerAsksForFiveSecondWaitsByDefault(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Append("t", 0, []byte("a"))
	c := dial(t, b)
	cons := c.Consumer("t", 0, 0)
	if cons.MaxWait != 5*time.Second {
		t.Fatalf("MaxWait %v", cons.MaxWait)
	}
	if _, err := cons.Poll(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if r := b.RequestsOf(fakebroker.APIFetch)[0]; r.MaxWaitMillis != 5000 || r.Version != 2 {
		t.Fatalf("fetch sent %+v", r)
	}
}

func TestRecordsWaitsAtTheHighWatermarkInsteadOfEnding(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Append("t", 0, []byte("old"))
	c := dial(t, b)
	cons := c.Consumer("t", 0, 0)
	cons.MaxWait = 20 * time.Millisecond // several empty answers come and go before the record does

	go func() {
		// Written only once the consumer has been answered empty at least twice.
		b.WaitUntil("two empty waits", func() bool { return len(b.RequestsOf(fakebroker.APIFetch)) >= 3 })
		b.Append("t", 0, []byte("new"))
	}()
	var got []string
	for record, err := range cons.Records(testContext(t)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(record.Payload))
		if len(got) == 2 {
			break
		}
	}
	if got[0] != "old" || got[1] != "new" {
		t.Fatalf("records %q", got)
	}
	if cons.Position() != 2 || cons.Lag() != 0 {
		t.Fatalf("position %d, lag %d", cons.Position(), cons.Lag())
	}
}

func TestRecordsStopsOnCancelWithoutAnError(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	cons := c.Consumer("t", 0, 0)
	ctx, cancel := context.WithCancel(testContext(t))
	go func() {
		b.WaitUntil("the consumer to wait", func() bool { return b.Waiting() == 1 })
		cancel()
	}()
	for record, err := range cons.Records(ctx) {
		t.Fatalf("yielded (%q, %v) on an empty partition", record, err)
	}
	if cons.Position() != 0 {
		t.Fatalf("position %d", cons.Position())
	}
}

func TestRecordsEndsOnTheFirstError(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	cons := c.Consumer("t", 0, 1000) // past the end
	cons.MaxWait = time.Millisecond  // the broker waits before it checks the range
	errs := 0
	for _, err := range cons.Records(testContext(t)) {
		if !errors.Is(err, booblik.ErrOffsetOutOfRange) {
			t.Fatalf("yielded %v", err)
		}
		errs++
	}
	if errs != 1 {
		t.Fatalf("%d errors yielded, want 1 and the end", errs)
	}
}

func TestRecordsYieldsGoodRecordsBeforeACorruptOneThenItsError(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Append("t", 0, []byte("a"), []byte("b"), []byte("rotten"), []byte("d"))
	b.CorruptRecord("t", 0, 2)
	c := dial(t, b)
	cons := c.Consumer("t", 0, 0)
	var got []string
	var last error
	for record, err := range cons.Records(testContext(t)) {
		if err != nil {
			last = err
			continue
		}
		got = append(got, string(record.Payload))
	}
	var ce *booblik.CorruptRecordError
	if fmt.Sprint(got) != "[a b]" || !errors.As(last, &ce) || ce.Offset != 2 {
		t.Fatalf("records %q, then %v", got, last)
	}
	if cons.Position() != 2 {
		t.Fatalf("position %d, want 2 (at the corrupt record)", cons.Position())
	}
}

func TestBreakingOutOfRecordsLosesNothingAndRepeatsNothing(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	for i := 0; i < 5; i++ {
		b.Append("t", 0, []byte{byte('0' + i)})
	}
	c := dial(t, b)
	cons := c.Consumer("t", 0, 0)
	var got []byte
	for record, err := range cons.Records(testContext(t)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, record.Payload...)
		if len(got) == 2 {
			break // the fetch brought all five; three are not yet delivered
		}
	}
	if cons.Position() != 2 {
		t.Fatalf("position %d after two records, want 2", cons.Position())
	}
	rest, err := cons.Poll(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rest {
		got = append(got, r.Payload...)
	}
	if string(got) != "01234" {
		t.Fatalf("read %q, want 01234", got)
	}
}

func TestLagIsUnknownUntilTheFirstAnswer(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	threeRecords(b, "t")
	c := dial(t, b)
	cons := c.Consumer("t", 0, 0)
	if cons.Lag() != -1 {
		t.Fatalf("lag before any answer %d, want -1", cons.Lag())
	}
	cons.MaxBytes = 120 // one record per poll
	if _, err := cons.Poll(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if cons.Lag() != 2 || cons.Position() != 1 {
		t.Fatalf("lag %d, position %d, want 2 and 1", cons.Lag(), cons.Position())
	}
	cons.SeekTo(0)
	batch, err := cons.Poll(testContext(t))
	if err != nil || len(batch) != 1 || batch[0].Payload[0] != 'a' || cons.Position() != 1 {
		t.Fatalf("after SeekTo(0): %d records, %v, position %d", len(batch), err, cons.Position())
	}
}

func TestPollAtTheHighWatermarkReturnsNothingAfterTheWait(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	cons := c.Consumer("t", 0, 0)
	cons.MaxWait = time.Millisecond
	batch, err := cons.Poll(testContext(t))
	if err != nil || len(batch) != 0 || cons.Lag() != 0 {
		t.Fatalf("poll of an empty partition: %d records, %v, lag %d", len(batch), err, cons.Lag())
	}
}

func TestPollWithADeadlineShorterThanMaxWaitEndsEmptyNotFailed(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	cons := c.Consumer("t", 0, 0) // MaxWait 5 s
	ctx, cancel := context.WithTimeout(testContext(t), time.Second)
	defer cancel()
	batch, err := cons.Poll(ctx)
	if err != nil || len(batch) != 0 {
		t.Fatalf("idle poll with 1 s left: %d records, %v; want an empty answer before the deadline", len(batch), err)
	}
	if w := b.RequestsOf(fakebroker.APIFetch)[0].MaxWaitMillis; w <= 0 || w > 500 {
		t.Fatalf("asked the broker to wait %d ms with 1 s left, want at most half", w)
	}
}
