package booblik_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

func TestProduceRoundTripDecodesToTheSameRecordsAndOffsets(t *testing.T) {
	b := startBroker(t, map[string]int{"orders": 2})
	b.Append("orders", 1, []byte("x"), []byte("y"), []byte("z"))
	c := dial(t, b)

	records := [][]byte{[]byte("first"), {0x00}, allByteValues()}
	res, err := c.Produce(testContext(t), "orders", 1, records, booblik.AckWritten)
	if err != nil {
		t.Fatal(err)
	}
	if *res != (booblik.ProduceResult{Partition: 1, BaseOffset: 3, LogEndOffset: 6}) {
		t.Fatalf("result %+v, want partition 1, base 3, log end 6", *res)
	}
	reqs := b.RequestsOf(fakebroker.APIProduce)
	if len(reqs) != 1 {
		t.Fatalf("%d produce requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.DecodeErr != "" || r.Version != 1 || r.Topic != "orders" || r.Partition != 1 || r.Ack != 1 {
		t.Fatalf("broker decoded %+v", r)
	}
	stored := b.Records("orders", 1)[3:]
	for i := range records {
		if !bytes.Equal(stored[i], records[i]) {
			t.Fatalf("record %d stored as %x, sent %x", i, stored[i], records[i])
		}
	}
}

func TestAckNoneReturnsWithoutWaitingForAnAnswer(t *testing.T) {
	b := startBroker(t, map[string]int{"logs": 1})
	c := dial(t, b)

	// Held, the broker cannot have answered anything: a Produce that returns read nothing.
	release := b.Hold()
	res, err := c.Produce(testContext(t), "logs", 0, [][]byte{[]byte("fire and forget")}, booblik.AckNone)
	if res != nil || err != nil {
		t.Fatalf("AckNone returned (%v, %v), want (nil, nil)", res, err)
	}
	release()
	b.WaitUntil("the record to be stored", func() bool { return len(b.Records("logs", 0)) == 1 })
	if r := b.RequestsOf(fakebroker.APIProduce)[0]; r.Ack != 0 {
		t.Fatalf("ackPolicy sent as %d, want 0", r.Ack)
	}
	// The next exchange reads its own answer, not one the broker never sent.
	md, err := c.Metadata(testContext(t), "logs")
	if err != nil || md["logs"][0].HighWatermark != 1 {
		t.Fatalf("metadata after AckNone: %v, %v", md, err)
	}
}

func TestRefusalKeepsTheConnectionUsable(t *testing.T) {
	b := startBroker(t, map[string]int{"orders": 2})
	c := dial(t, b)
	ctx := testContext(t)

	refusals := []struct {
		name      string
		topic     string
		partition int32
		records   [][]byte
		want      error
	}{
		{"unknown topic", "nope", 0, [][]byte{[]byte("a")}, booblik.ErrUnknownTopicOrPartition},
		{"unknown partition", "orders", 2, [][]byte{[]byte("a")}, booblik.ErrUnknownTopicOrPartition},
		{"zero-length record", "orders", 0, [][]byte{[]byte("a"), {}}, booblik.ErrCorruptRequest},
	}
	for _, r := range refusals {
		_, err := c.Produce(ctx, r.topic, r.partition, r.records, booblik.AckWritten)
		if !errors.Is(err, r.want) {
			t.Fatalf("%s: error %v, want %v", r.name, err, r.want)
		}
		var be *booblik.BrokerError
		if !errors.As(err, &be) || be.API != "PRODUCE" {
			t.Fatalf("%s: %v is not a PRODUCE BrokerError", r.name, err)
		}
		res, err := c.Produce(ctx, "orders", 0, [][]byte{[]byte("after " + r.name)}, booblik.AckWritten)
		if err != nil {
			t.Fatalf("after %s the connection failed: %v", r.name, err)
		}
		if res.BaseOffset != int64(len(b.Records("orders", 0))-1) {
			t.Fatalf("after %s: base offset %d", r.name, res.BaseOffset)
		}
	}
	if n := len(b.Records("orders", 0)); n != len(refusals) {
		t.Fatalf("%d records stored, want %d: a refused batch was partly written", n, len(refusals))
	}
}

func TestStrayAnswerAfterAckNoneIsCaughtByTheCorrelationID(t *testing.T) {
	b := startBroker(t, map[string]int{"logs": 1})
	b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
		if r.APIKey == fakebroker.APIProduce && r.Ack == 0 {
			// A broker that wrongly answers NONE: this frame will arrive where the next answer belongs.
			return fakebroker.Action{Raw: fakebroker.Answer(r.CorrelationID, 0, make([]byte, 16))}, true
		}
		return fakebroker.Action{}, false
	})
	c := dial(t, b)
	ctx := testContext(t)
	if _, err := c.Produce(ctx, "logs", 0, [][]byte{[]byte("a")}, booblik.AckNone); err != nil {
		t.Fatal(err)
	}
	_, err := c.Metadata(ctx)
	if !errors.Is(err, booblik.ErrProtocol) || !strings.Contains(err.Error(), "correlationId") {
		t.Fatalf("stray answer taken for the metadata answer: %v", err)
	}
	if _, err := c.Metadata(ctx); !errors.Is(err, booblik.ErrConnBroken) {
		t.Fatalf("after losing step: %v, want ErrConnBroken", err)
	}
}

func TestEveryRequestCarriesTheNextCorrelationID(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	ctx := testContext(t)
	c.Produce(ctx, "t", 0, [][]byte{[]byte("a")}, booblik.AckNone)
	c.Produce(ctx, "t", 0, [][]byte{[]byte("b")}, booblik.AckWritten)
	c.Metadata(ctx, "missing")
	c.Fetch(ctx, booblik.FetchRequest{Topic: "t", Offset: 0})
	reqs := b.Requests()
	if len(reqs) != 5 { // API_VERSIONS went out once, before the first METADATA
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		if reqs[i].CorrelationID != reqs[i-1].CorrelationID+1 {
			t.Fatalf("correlation ids %d then %d", reqs[i-1].CorrelationID, reqs[i].CorrelationID)
		}
	}
}

// metadataAnswer is a valid METADATA answer for topic "t" with one partition.
func metadataAnswer(id int32) []byte {
	body := binary.BigEndian.AppendUint32(nil, 1)
	body = binary.BigEndian.AppendUint16(body, 1)
	body = append(body, 't')
	body = binary.BigEndian.AppendUint32(body, 1)
	body = binary.BigEndian.AppendUint32(body, 0)
	body = binary.BigEndian.AppendUint64(body, 0)
	body = binary.BigEndian.AppendUint64(body, 7)
	return fakebroker.Answer(id, 0, body)
}

func TestAnswerCutShortByTheConnectionIsAnErrorNotAPanic(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	full := metadataAnswer(1)
	for cut := 0; cut < len(full); cut++ {
		b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
			a := metadataAnswer(r.CorrelationID)
			return fakebroker.Action{Raw: a[:cut], Close: true}, true
		})
		c := dial(t, b)
		_, err := c.Metadata(testContext(t), "t")
		if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			t.Fatalf("answer cut at byte %d: error %v, want an unexpected EOF", cut, err)
		}
		if _, err := c.Metadata(testContext(t), "t"); !errors.Is(err, booblik.ErrConnBroken) {
			t.Fatalf("cut at byte %d, then: %v, want ErrConnBroken", cut, err)
		}
	}
}

func TestAnswerBodyTooShortForItsFieldsIsAProtocolError(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	full := metadataAnswer(0)[4+6:] // the body alone
	for cut := 0; cut < len(full); cut++ {
		b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
			return fakebroker.Action{Raw: fakebroker.Answer(r.CorrelationID, 0, full[:cut])}, true
		})
		_, err := c.Metadata(testContext(t), "t")
		if !errors.Is(err, booblik.ErrProtocol) {
			t.Fatalf("body cut at byte %d: %v, want ErrProtocol", cut, err)
		}
	}
	// The frame itself was whole, so the stream is still in step.
	b.Intercept(nil)
	if _, err := c.Metadata(testContext(t), "t"); err != nil {
		t.Fatalf("after a bad body the connection failed: %v", err)
	}
}

func TestAnswerWithBytesAfterItsLastFieldIsAProtocolError(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
		body := make([]byte, 17) // baseOffset, logEndOffset and one byte too many
		return fakebroker.Action{Raw: fakebroker.Answer(r.CorrelationID, 0, body)}, true
	})
	c := dial(t, b)
	_, err := c.Produce(testContext(t), "t", 0, [][]byte{[]byte("a")}, booblik.AckWritten)
	if !errors.Is(err, booblik.ErrProtocol) {
		t.Fatalf("17-byte produce answer: %v, want ErrProtocol", err)
	}
}

func TestFrameLengthOutsideTheLimitsIsAProtocolError(t *testing.T) {
	for _, length := range []uint32{0, 5, 8<<20 + 1, 0xFFFFFFFF} {
		b := startBroker(t, map[string]int{"t": 1})
		b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
			raw := binary.BigEndian.AppendUint32(nil, length)
			raw = binary.BigEndian.AppendUint32(raw, uint32(r.CorrelationID))
			raw = append(raw, 0, 0)
			return fakebroker.Action{Raw: raw}, true
		})
		c := dial(t, b)
		_, err := c.Metadata(testContext(t))
		if !errors.Is(err, booblik.ErrProtocol) || !strings.Contains(err.Error(), "frameLength") {
			t.Fatalf("frameLength %d: %v, want a protocol error naming frameLength", int32(length), err)
		}
		if _, err := c.Metadata(testContext(t)); !errors.Is(err, booblik.ErrConnBroken) {
			t.Fatalf("frameLength %d, then: %v, want ErrConnBroken", int32(length), err)
		}
	}
}

func TestAnswersSplitAtEveryByteAreReassembled(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.SplitAnswers(1)
	c := dial(t, b)
	ctx := testContext(t)
	if _, err := c.Produce(ctx, "t", 0, [][]byte{[]byte("one"), []byte("two")}, booblik.AckWritten); err != nil {
		t.Fatal(err)
	}
	md, err := c.Metadata(ctx)
	if err != nil || md["t"][0].HighWatermark != 2 {
		t.Fatalf("metadata: %v, %v", md, err)
	}
	res, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "t"})
	if err != nil || len(res.Records) != 2 || string(res.Records[1].Payload) != "two" {
		t.Fatalf("fetch: %+v, %v", res, err)
	}
}

func TestCancelWhileWaitingForAnAnswerKeepsTheConnectionInStep(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	ctx, cancel := context.WithCancel(testContext(t))
	go func() {
		b.WaitUntil("the fetch to wait", func() bool { return b.Waiting() == 1 })
		cancel()
	}()
	_, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "t", MaxWait: 50 * time.Second})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fetch: %v, want context.Canceled", err)
	}
	// The abandoned fetch is still answered (a record wakes it); the next call must skip that answer.
	b.Append("t", 0, []byte("wakes the abandoned fetch"))
	md, err := c.Metadata(testContext(t), "t")
	if err != nil {
		t.Fatalf("after a cancelled wait: %v", err)
	}
	if md["t"][0].HighWatermark != 1 {
		t.Fatalf("metadata %+v", md)
	}
}

func TestContextDeadlineBoundsTheExchange(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	release := b.Hold()
	ctx, cancel := context.WithTimeout(testContext(t), 20*time.Millisecond)
	defer cancel()
	_, err := c.Metadata(ctx, "t")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("held broker past the deadline: %v, want context.DeadlineExceeded", err)
	}
	release()
	if _, err := c.Metadata(testContext(t), "t"); err != nil {
		t.Fatalf("after a deadline: %v", err)
	}
}

func TestCancelledContextSendsNothing(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Produce(ctx, "t", 0, [][]byte{[]byte("a")}, booblik.AckNone); !errors.Is(err, context.Canceled) {
		t.Fatalf("produce on a cancelled context: %v", err)
	}
	if _, err := c.Metadata(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(b.RequestsOf(fakebroker.APIProduce)); n != 0 {
		t.Fatalf("%d produce requests reached the broker", n)
	}
}

func TestUnknownErrorCodeShowsAsUNKNOWN(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
		return fakebroker.Action{Raw: fakebroker.Answer(r.CorrelationID, 42, nil)}, true
	})
	c := dial(t, b)
	_, err := c.Metadata(testContext(t))
	var be *booblik.BrokerError
	if !errors.As(err, &be) || be.Code != 42 || be.Name() != "UNKNOWN(42)" || !strings.Contains(err.Error(), "UNKNOWN(42)") {
		t.Fatalf("code 42: %v", err)
	}
	b.Intercept(nil)
	if _, err := c.Metadata(testContext(t)); err != nil {
		t.Fatalf("after an unknown code: %v", err)
	}
}

func TestBrokerErrorsMatchTheirOwnSentinelOnly(t *testing.T) {
	sentinels := map[booblik.ErrorCode]error{
		booblik.CodeUnknownTopicOrPartition: booblik.ErrUnknownTopicOrPartition,
		booblik.CodeOffsetOutOfRange:        booblik.ErrOffsetOutOfRange,
		booblik.CodeRecordTooLarge:          booblik.ErrRecordTooLarge,
		booblik.CodeUnsupportedVersion:      booblik.ErrUnsupportedVersion,
		booblik.CodeCorruptRequest:          booblik.ErrCorruptRequest,
	}
	names := map[booblik.ErrorCode]string{
		1: "UNKNOWN_TOPIC_OR_PARTITION", 2: "OFFSET_OUT_OF_RANGE", 3: "RECORD_TOO_LARGE",
		4: "UNSUPPORTED_VERSION", 5: "CORRUPT_REQUEST",
	}
	for code, sentinel := range sentinels {
		err := error(&booblik.BrokerError{Code: code, API: "FETCH"})
		if got := err.(*booblik.BrokerError).Name(); got != names[code] {
			t.Errorf("code %d named %s, want %s", code, got, names[code])
		}
		for other, s := range sentinels {
			if errors.Is(err, s) != (other == code) {
				t.Errorf("code %d: errors.Is(%v) = %v", code, s, !(other == code))
			}
		}
		if errors.Is(err, booblik.ErrProtocol) || errors.Is(sentinel, booblik.ErrConnBroken) {
			t.Errorf("code %d matches a non-broker error", code)
		}
	}
}

func TestInvalidArgumentsAreRefusedBeforeSendingAndSayWhere(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	ctx := testContext(t)
	one := [][]byte{[]byte("a")}
	cases := []struct {
		name  string
		call  func() error
		field string
	}{
		{"empty topic", func() error { _, err := c.Produce(ctx, "", 0, one, booblik.AckWritten); return err }, "topic"},
		{"space in topic", func() error { _, err := c.Produce(ctx, "a b", 0, one, booblik.AckWritten); return err }, "topic"},
		{"250-character topic", func() error {
			_, err := c.Produce(ctx, strings.Repeat("a", 250), 0, one, booblik.AckWritten)
			return err
		}, "topic"},
		{"negative partition", func() error { _, err := c.Produce(ctx, "t", -1, one, booblik.AckWritten); return err }, "partition"},
		{"unknown ack", func() error { _, err := c.Produce(ctx, "t", 0, one, booblik.AckPolicy(3)); return err }, "ack"},
		{"no records", func() error { _, err := c.Produce(ctx, "t", 0, nil, booblik.AckWritten); return err }, "records"},
		{"request over 8 MiB", func() error {
			_, err := c.Produce(ctx, "t", 0, [][]byte{make([]byte, 8<<20)}, booblik.AckWritten)
			return err
		}, "records"},
		{"metadata topic", func() error { _, err := c.Metadata(ctx, "ok", "not/ok"); return err }, "topics[1]"},
		{"fetch offset", func() error { _, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "t", Offset: -1}); return err }, "Offset"},
		{"fetch maxBytes", func() error { _, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "t", MaxBytes: -5}); return err }, "MaxBytes"},
		{"fetch maxBytes over a frame", func() error {
			_, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "t", MaxBytes: 8 << 20})
			return err
		}, "MaxBytes"},
		{"fetch maxWait", func() error { _, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "t", MaxWait: -1}); return err }, "MaxWait"},
		{"fetch minBytes", func() error {
			_, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "t", MaxBytes: 10, MinBytes: 11})
			return err
		}, "MinBytes"},
	}
	for _, tc := range cases {
		err := tc.call()
		var ie *booblik.InvalidArgumentError
		if !errors.Is(err, booblik.ErrInvalidArgument) || !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%s: %v, want an invalid argument naming %q", tc.name, err, tc.field)
		}
	}
	if n := len(b.Requests()); n != 0 {
		t.Fatalf("%d invalid requests reached the broker", n)
	}
	if _, err := c.Metadata(ctx); err != nil {
		t.Fatalf("after refusing arguments the connection failed: %v", err)
	}
}

func TestTopicNamesInAnyScriptAreValid(t *testing.T) {
	b := startBroker(t, map[string]int{"заказы.v1_ü-2": 1})
	c := dial(t, b)
	md, err := c.Metadata(testContext(t), "заказы.v1_ü-2")
	if err != nil || len(md["заказы.v1_ü-2"]) != 1 {
		t.Fatalf("unicode topic: %v, %v", md, err)
	}
}

func TestClosedConnRefusesCalls(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Metadata(testContext(t)); !errors.Is(err, booblik.ErrClosed) {
		t.Fatalf("metadata on a closed conn: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}
