package booblik_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

// never is a linger no test outlives: a batch that goes out anyway went out for another reason.
const never = time.Hour

func newProducer(t *testing.T, b *fakebroker.Broker, cfg booblik.ProducerConfig) *booblik.Producer {
	t.Helper()
	c, err := booblik.Dial(testContext(t), b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	p, err := booblik.NewProducer(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func config(maxBatch int, linger time.Duration, ack booblik.AckPolicy) booblik.ProducerConfig {
	cfg := booblik.DefaultProducerConfig()
	cfg.MaxBatchSize, cfg.Linger, cfg.Ack = maxBatch, linger, ack
	return cfg
}

func awaitAll(t *testing.T, ds []*booblik.Delivery) []int64 {
	t.Helper()
	offsets := make([]int64, len(ds))
	for i, d := range ds {
		off, err := d.Await(testContext(t))
		if err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
		offsets[i] = off
	}
	return offsets
}

func TestDefaultProducerConfig(t *testing.T) {
	cfg := booblik.DefaultProducerConfig()
	if cfg.MaxBatchSize != 100 || cfg.Linger != 5*time.Millisecond || cfg.Ack != booblik.AckWritten ||
		cfg.RequestTimeout != 30*time.Second {
		t.Fatalf("%+v", cfg)
	}
}

func TestProducerLosesNothingAcrossLingerWindows(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	p := newProducer(t, b, config(1000, time.Millisecond, booblik.AckWritten))
	var want [][]byte
	var offsets []int64
	for wave := 0; wave < 5; wave++ {
		var ds []*booblik.Delivery
		for i := 0; i < 20; i++ {
			r := []byte(fmt.Sprintf("wave %d record %d", wave, i))
			want = append(want, r)
			ds = append(ds, p.Send("t", 0, r))
		}
		// Each wave is sent by its linger running out, not by a full batch or a flush.
		offsets = append(offsets, awaitAll(t, ds)...)
	}
	got := b.Records("t", 0)
	if len(got) != len(want) {
		t.Fatalf("%d records stored, %d sent", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) || offsets[i] != int64(i) {
			t.Fatalf("record %d: stored %q at offset %d, want %q", i, got[i], offsets[i], want[i])
		}
	}
}

func TestFullBatchIsSentAtOnceWithoutWaitingForLinger(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	p := newProducer(t, b, config(3, never, booblik.AckWritten))
	ds := []*booblik.Delivery{p.Send("t", 0, []byte("a")), p.Send("t", 0, []byte("b")), p.Send("t", 0, []byte("c"))}
	if got := awaitAll(t, ds); got[0] != 0 || got[2] != 2 {
		t.Fatalf("offsets %v", got)
	}
	reqs := b.RequestsOf(fakebroker.APIProduce)
	if len(reqs) != 1 || len(reqs[0].Records) != 3 {
		t.Fatalf("%d requests; want one of 3 records", len(reqs))
	}
	// A fourth record starts a new batch that waits for its linger (or a flush).
	d := p.Send("t", 0, []byte("d"))
	select {
	case <-d.Done():
		t.Fatal("a batch of one was sent although it is neither full nor due")
	default:
	}
	if err := p.Flush(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if off, err := d.Await(testContext(t)); off != 3 || err != nil {
		t.Fatalf("flushed record: %d, %v", off, err)
	}
}

func TestBatchesKeepPartitionsSeparate(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 2, "u": 1})
	p := newProducer(t, b, config(1000, never, booblik.AckWritten))
	var ds []*booblik.Delivery
	for i := 0; i < 6; i++ {
		ds = append(ds, p.Send("t", int32(i%2), []byte{byte('0' + i)}))
	}
	ds = append(ds, p.Send("u", 0, []byte("other topic")))
	if err := p.Flush(testContext(t)); err != nil {
		t.Fatal(err)
	}
	offsets := awaitAll(t, ds)
	if fmt.Sprint(offsets) != "[0 0 1 1 2 2 0]" {
		t.Fatalf("offsets %v", offsets)
	}
	reqs := b.RequestsOf(fakebroker.APIProduce)
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want one per partition", len(reqs))
	}
	if fmt.Sprintf("%q", b.Records("t", 0)) != `["0" "2" "4"]` || fmt.Sprintf("%q", b.Records("t", 1)) != `["1" "3" "5"]` {
		t.Fatalf("partition 0 %q, partition 1 %q", b.Records("t", 0), b.Records("t", 1))
	}
}

func TestCloseFlushesWhatIsQueued(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	p := newProducer(t, b, config(1000, never, booblik.AckForced))
	d1, d2 := p.Send("t", 0, []byte("a")), p.Send("t", 0, []byte("b"))
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d2.Done():
	default:
		t.Fatal("Close returned before the last record was answered")
	}
	if off, err := d1.Await(testContext(t)); off != 0 || err != nil {
		t.Fatalf("first record: %d, %v", off, err)
	}
	if len(b.Records("t", 0)) != 2 || b.RequestsOf(fakebroker.APIProduce)[0].Ack != 2 {
		t.Fatalf("stored %q", b.Records("t", 0))
	}
}

func TestAckNoneDeliveryHasAnUnknownOffset(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	p := newProducer(t, b, config(1000, booblik.NoLinger, booblik.AckNone))
	off, err := p.Send("t", 0, []byte("a")).Await(testContext(t))
	if off != -1 || err != nil {
		t.Fatalf("AckNone delivery: %d, %v", off, err)
	}
	b.WaitUntil("the record to arrive", func() bool { return len(b.Records("t", 0)) == 1 })
}

func TestSendRacingCloseNeverPanicsAndNeverLosesSilently(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 4})
	p := newProducer(t, b, config(7, booblik.NoLinger, booblik.AckWritten))
	const senders, each = 8, 200
	var wg sync.WaitGroup
	results := make([][]*booblik.Delivery, senders)
	started := make(chan struct{}, senders)
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				results[s] = append(results[s], p.Send("t", int32(s%4), []byte{byte(s), byte(i)}))
				if i == 0 {
					started <- struct{}{}
				}
			}
		}()
	}
	for s := 0; s < senders; s++ {
		<-started // Close lands while every sender is mid-stream
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	delivered, refused := 0, 0
	for _, ds := range results {
		for _, d := range ds {
			_, err := d.Await(testContext(t))
			switch {
			case err == nil:
				delivered++
			case errors.Is(err, booblik.ErrProducerClosed):
				refused++
			default:
				t.Fatalf("delivery failed with %v", err)
			}
		}
	}
	stored := 0
	for part := 0; part < 4; part++ {
		stored += len(b.Records("t", part))
	}
	if delivered+refused != senders*each || stored != delivered {
		t.Fatalf("%d delivered, %d refused, %d stored, of %d sent", delivered, refused, stored, senders*each)
	}
}

func TestSendAfterCloseFailsWithErrProducerClosed(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	p := newProducer(t, b, booblik.DefaultProducerConfig())
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send("t", 0, []byte("late")).Await(testContext(t)); !errors.Is(err, booblik.ErrProducerClosed) {
		t.Fatalf("send after close: %v", err)
	}
	if err := p.Flush(testContext(t)); !errors.Is(err, booblik.ErrProducerClosed) {
		t.Fatalf("flush after close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestRefusedBatchFailsEveryRecordInItAndFlushSaysSo(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	p := newProducer(t, b, config(1000, never, booblik.AckWritten))
	d1, d2 := p.Send("missing", 0, []byte("a")), p.Send("missing", 0, []byte("b"))
	ok := p.Send("t", 0, []byte("fine"))
	if err := p.Flush(testContext(t)); !errors.Is(err, booblik.ErrUnknownTopicOrPartition) {
		t.Fatalf("flush: %v", err)
	}
	for _, d := range []*booblik.Delivery{d1, d2} {
		if off, err := d.Await(testContext(t)); off != -1 || !errors.Is(err, booblik.ErrUnknownTopicOrPartition) {
			t.Fatalf("refused record: %d, %v", off, err)
		}
	}
	if _, err := ok.Await(testContext(t)); err != nil {
		t.Fatalf("a batch for another partition suffered: %v", err)
	}
	if err := p.Flush(testContext(t)); err != nil {
		t.Fatalf("a later flush repeats an old error: %v", err)
	}
}

func TestSendRefusesWhatWouldPoisonABatch(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	p := newProducer(t, b, config(1000, never, booblik.AckWritten))
	for name, d := range map[string]*booblik.Delivery{
		"empty record":       p.Send("t", 0, nil),
		"bad topic":          p.Send("no spaces", 0, []byte("a")),
		"negative partition": p.Send("t", -1, []byte("a")),
		"record over 8 MiB":  p.Send("t", 0, make([]byte, 8<<20)),
	} {
		if _, err := d.Await(testContext(t)); !errors.Is(err, booblik.ErrInvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := p.Flush(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(b.RequestsOf(fakebroker.APIProduce)); n != 0 {
		t.Fatalf("%d requests sent for refused records", n)
	}
}

func TestBatchThatWouldOutgrowAFrameIsSplit(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	p := newProducer(t, b, config(1000, never, booblik.AckWritten))
	big := filled(3<<20, 'x')
	ds := []*booblik.Delivery{p.Send("t", 0, big), p.Send("t", 0, big), p.Send("t", 0, big)}
	if err := p.Flush(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if got := awaitAll(t, ds); fmt.Sprint(got) != "[0 1 2]" {
		t.Fatalf("offsets %v", got)
	}
	reqs := b.RequestsOf(fakebroker.APIProduce)
	if len(reqs) != 2 || len(reqs[0].Records) != 2 || len(reqs[1].Records) != 1 {
		t.Fatalf("%d requests; want 2 records, then 1", len(reqs))
	}
}

func TestProducerConfigIsValidatedAndSaysWhere(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	for field, cfg := range map[string]booblik.ProducerConfig{
		"ProducerConfig.MaxBatchSize":   {MaxBatchSize: -1},
		"ProducerConfig.Linger":         {Linger: -2 * time.Millisecond},
		"ProducerConfig.Ack":            {Ack: 9},
		"ProducerConfig.RequestTimeout": {RequestTimeout: -time.Second},
	} {
		_, err := booblik.NewProducer(c, cfg)
		var ie *booblik.InvalidArgumentError
		if !errors.As(err, &ie) || ie.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}

func TestProducerRequestTimeoutFailsTheBatchNotTheCaller(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	cfg := config(1000, booblik.NoLinger, booblik.AckWritten)
	cfg.RequestTimeout = 10 * time.Millisecond
	p := newProducer(t, b, cfg)
	release := b.Hold()
	_, err := p.Send("t", 0, []byte("a")).Await(testContext(t))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("held broker: %v, want context.DeadlineExceeded", err)
	}
	release()
	// The connection is still in step: the late answer is skipped, the next batch succeeds.
	if off, err := p.Send("t", 0, []byte("b")).Await(testContext(t)); err != nil || off != 1 {
		t.Fatalf("after a timeout: %d, %v", off, err)
	}
}
