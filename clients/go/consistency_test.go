package booblik_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

// typescriptSource reads a file of the TypeScript packages beside this client, or skips.
func typescriptSource(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "packages", rel))
	if err != nil {
		t.Skipf("packages/%s is not beside this client: %v", rel, err)
	}
	return string(b)
}

func TestErrorTableIsTheTypeScriptClients(t *testing.T) {
	src := typescriptSource(t, "protocol/src/errors.ts")
	rows := regexp.MustCompile(`code:\s*(\d+),\s*name:\s*'(\w+)',\s*retriable:\s*(true|false)`).FindAllStringSubmatch(src, -1)
	if len(rows) < 7 {
		t.Fatalf("found %d rows in errors.ts", len(rows))
	}
	for _, row := range rows {
		n, _ := strconv.Atoi(row[1])
		code := booblik.ErrorCode(n)
		if code.String() != row[2] || code.Retriable() != (row[3] == "true") {
			t.Errorf("code %d: %s retriable=%v here, %s retriable=%s in TypeScript", n, code, code.Retriable(), row[2], row[3])
		}
	}
	next := len(rows)
	if code := booblik.ErrorCode(next); code.String() != "UNKNOWN("+strconv.Itoa(next)+")" {
		t.Errorf("code %d is %s here and unknown in TypeScript", next, code)
	}
}

func TestStorageErrorIsNamedMatchableAndRetriable(t *testing.T) {
	var err error = &booblik.BrokerError{Code: booblik.CodeStorageError, API: "PRODUCE", Request: "PRODUCE t/0"}
	var refused *booblik.BrokerError
	if !errors.Is(err, booblik.ErrStorageError) || !errors.As(err, &refused) || !refused.Retriable() ||
		!strings.Contains(err.Error(), "STORAGE_ERROR") || !strings.Contains(err.Error(), "nothing of the batch was stored") {
		t.Fatalf("%v", err)
	}
	if (&booblik.BrokerError{Code: booblik.CodeUnknownTopicOrPartition}).Retriable() {
		t.Fatal("UNKNOWN_TOPIC_OR_PARTITION is retriable")
	}
}

func TestProducerDefaultsAreTheTypeScriptClients(t *testing.T) {
	src := typescriptSource(t, "client/src/limits.ts")
	linger, _ := strconv.Atoi(regexp.MustCompile(`DEFAULT_LINGER_MS = (\d+)`).FindStringSubmatch(src)[1])
	batch, _ := strconv.Atoi(regexp.MustCompile(`DEFAULT_MAX_BATCH_RECORDS = (\d+)`).FindStringSubmatch(src)[1])
	if booblik.DefaultLinger != time.Duration(linger)*time.Millisecond || booblik.DefaultMaxBatchSize != batch {
		t.Fatalf("Go: linger %v, batch %d; TypeScript: %d ms, %d", booblik.DefaultLinger, booblik.DefaultMaxBatchSize, linger, batch)
	}
}

func TestZeroProducerConfigMeansTheDefaults(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	p, err := booblik.NewProducer(dial(t, b), booblik.ProducerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	deliveries := make([]*booblik.Delivery, booblik.DefaultMaxBatchSize+1)
	for i := range deliveries {
		deliveries[i] = p.Send("t", 0, []byte{byte(i)})
	}
	// Real offsets (AckWritten, not AckNone's -1), and without a Flush: the default linger ends.
	for i, d := range deliveries {
		if off, err := d.Await(testContext(t)); err != nil || off != int64(i) {
			t.Fatalf("record %d: offset %d, %v", i, off, err)
		}
	}
	// No request holds more than the default batch (a slow machine may cut one early, never late).
	reqs := b.RequestsOf(fakebroker.APIProduce)
	for i, r := range reqs {
		if len(r.Records) > booblik.DefaultMaxBatchSize || r.Ack != 1 {
			t.Fatalf("request %d of %d: %d records with ack %d; want at most %d, acked WRITTEN (1)",
				i, len(reqs), len(r.Records), r.Ack, booblik.DefaultMaxBatchSize)
		}
	}
}

func TestProducerRefusesAnEmptyRecordAndFailsNothingElse(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	p := newProducer(t, b, config(1000, never, booblik.AckWritten))
	a, empty, c := p.Send("t", 0, []byte("a")), p.Send("t", 0, []byte{}), p.Send("t", 0, []byte("c"))
	select {
	case <-empty.Done(): // refused at Send, before any batch
	default:
		t.Fatal("the empty record is not refused at Send")
	}
	if _, err := empty.Await(testContext(t)); !errors.Is(err, booblik.ErrInvalidArgument) {
		t.Fatalf("empty record: %v", err)
	}
	if err := p.Flush(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if offsets := awaitAll(t, []*booblik.Delivery{a, c}); offsets[0] != 0 || offsets[1] != 1 {
		t.Fatalf("offsets %v, want [0 1]", offsets)
	}
	if got := b.Records("t", 0); len(got) != 2 || string(got[0]) != "a" || string(got[1]) != "c" {
		t.Fatalf("stored %q", got)
	}
}

func TestTopicSendRefusesAnEmptyRecordBeforeSending(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	topic, err := dial(t, b).Topic(testContext(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topic.Send(testContext(t), nil, []byte{}, booblik.AckWritten); !errors.Is(err, booblik.ErrInvalidArgument) {
		t.Fatalf("empty record: %v", err)
	}
	if n := len(b.RequestsOf(fakebroker.APIProduce)); n != 0 {
		t.Fatalf("%d PRODUCE requests sent", n)
	}
}

func TestUnknownTopicErrorsNameTheTopic(t *testing.T) {
	b := startBroker(t, map[string]int{"default": 1})
	c := dial(t, b)
	ctx := testContext(t)
	one := [][]byte{[]byte("x")}
	for call, do := range map[string]func() error{
		"Metadata": func() error { _, err := c.Metadata(ctx, "no-such-topic"); return err },
		"Topic":    func() error { _, err := c.Topic(ctx, "no-such-topic"); return err },
		"Produce":  func() error { _, err := c.Produce(ctx, "no-such-topic", 0, one, booblik.AckWritten); return err },
		"Fetch":    func() error { _, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "no-such-topic"}); return err },
	} {
		err := do()
		if !errors.Is(err, booblik.ErrUnknownTopicOrPartition) || !strings.Contains(err.Error(), "no-such-topic") {
			t.Errorf("%s: %v; want UNKNOWN_TOPIC_OR_PARTITION naming no-such-topic", call, err)
		}
	}
}

func TestRecordsCarryTheirOffsets(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Append("t", 0, []byte("r0"), []byte("r1"), []byte("r2"), []byte("r3"))
	c := dial(t, b)
	check := func(how string, records []booblik.Record, first int64) {
		t.Helper()
		for i, r := range records {
			if want := first + int64(i); r.Offset != want || string(r.Payload) != "r"+strconv.FormatInt(want, 10) {
				t.Errorf("%s: record %d is (%d, %q), want offset %d", how, i, r.Offset, r.Payload, want)
			}
		}
	}
	res, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t", Offset: 1})
	if err != nil || len(res.Records) != 3 {
		t.Fatalf("fetch: %v, %d records", err, len(res.Records))
	}
	check("Fetch", res.Records, 1)
	polled, err := c.Consumer("t", 0, 2).Poll(testContext(t))
	if err != nil || len(polled) != 2 {
		t.Fatalf("poll: %v, %d records", err, len(polled))
	}
	check("Poll", polled, 2)
	var iterated []booblik.Record
	for record, err := range c.Consumer("t", 0, 1).Records(testContext(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if iterated = append(iterated, record); len(iterated) == 3 {
			break
		}
	}
	check("Records", iterated, 1)
}
