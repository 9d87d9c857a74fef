package booblik_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

// threeRecords stores three 100-byte records (108 bytes each as stored) and returns them.
func threeRecords(b *fakebroker.Broker, topic string) [][]byte {
	records := [][]byte{filled(100, 'a'), filled(100, 'b'), filled(100, 'c')}
	b.Append(topic, 0, records...)
	return records
}

func TestFetchReturnsRecordsInOrderFromTheOffset(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	records := [][]byte{{0x00}, []byte("two"), allByteValues(), []byte("four")}
	b.Append("t", 0, records...)
	c := dial(t, b)
	res, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t", Offset: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.HighWatermark != 4 || res.NextOffset != 4 || len(res.Records) != 3 {
		t.Fatalf("%d records, hw %d, next %d", len(res.Records), res.HighWatermark, res.NextOffset)
	}
	for i, r := range res.Records {
		if r.Offset != int64(i+1) || !bytes.Equal(r.Payload, records[i+1]) {
			t.Fatalf("record %d: offset %d, %x; want offset %d, %x", i+1, r.Offset, r.Payload, i+1, records[i+1])
		}
	}
}

func TestFetchAtTheHighWatermarkIsEmptyNotAnError(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Append("t", 0, []byte("a"), []byte("b"))
	c := dial(t, b)
	res, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t", Offset: 2})
	if err != nil || res.HighWatermark != 2 || len(res.Records) != 0 || res.NextOffset != 2 {
		t.Fatalf("at the high watermark: %+v, %v", res, err)
	}
}

func TestFetchPastTheEndIsOffsetOutOfRange(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	_, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t", Offset: 1000})
	if !errors.Is(err, booblik.ErrOffsetOutOfRange) {
		t.Fatalf("past the end: %v", err)
	}
}

func TestFetchSendsEveryVersion2Field(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 2})
	b.Append("t", 1, []byte("ready")) // so the wait ends at once
	c := dial(t, b)
	ctx := testContext(t)
	if _, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "t", Partition: 1, Offset: 0, MaxBytes: 1234,
		MaxWait: 1500 * time.Millisecond, MinBytes: 7}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(ctx, booblik.FetchRequest{Topic: "t", Partition: 1}); err != nil {
		t.Fatal(err)
	}
	reqs := b.RequestsOf(fakebroker.APIFetch)
	want := []fakebroker.Request{
		{APIKey: 2, Version: 2, Topic: "t", Partition: 1, MaxBytes: 1234, MaxWaitMillis: 1500, MinBytes: 7},
		{APIKey: 2, Version: 2, Topic: "t", Partition: 1, MaxBytes: booblik.DefaultFetchMaxBytes},
	}
	for i, w := range want {
		got := reqs[i]
		got.CorrelationID = 0
		if got.DecodeErr != "" || got.Version != w.Version || got.Topic != w.Topic || got.Partition != w.Partition ||
			got.Offset != w.Offset || got.MaxBytes != w.MaxBytes || got.MaxWaitMillis != w.MaxWaitMillis ||
			got.MinBytes != w.MinBytes {
			t.Errorf("fetch %d decoded as %+v, want %+v", i, got, w)
		}
	}
}

func TestTruncatedTailIsDroppedAndFetchedAgainFromItsStart(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	records := threeRecords(b, "t")
	c := dial(t, b)
	cons := c.Consumer("t", 0, 0)
	cons.MaxBytes = 150 // one whole record and 42 bytes of the next
	var got []booblik.Record
	for len(got) < 3 {
		batch, err := cons.Poll(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) != 1 {
			t.Fatalf("poll returned %d records, want exactly the 1 whole one", len(batch))
		}
		got = append(got, batch...)
	}
	for i := range records {
		if got[i].Offset != int64(i) || !bytes.Equal(got[i].Payload, records[i]) {
			t.Fatalf("record %d out of order or damaged (offset %d)", i, got[i].Offset)
		}
	}
	for i, r := range b.RequestsOf(fakebroker.APIFetch) {
		if r.Offset != int64(i) {
			t.Fatalf("fetch %d asked for offset %d: the cut record was not fetched again from its start", i, r.Offset)
		}
	}
}

func TestCutInsideARecordHeaderIsDroppedToo(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	threeRecords(b, "t")
	c := dial(t, b)
	for cut := int32(1); cut < 8; cut++ {
		res, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t", MaxBytes: 108 + cut})
		if err != nil || len(res.Records) != 1 || res.NextOffset != 1 {
			t.Fatalf("cut %d bytes into the second header: %+v, %v", cut, res, err)
		}
	}
}

// The partial record at the tail would fail a checksum if anyone checked it; nobody may.
func TestTruncationIsNotTakenForCorruption(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	threeRecords(b, "t")
	c := dial(t, b)
	for maxBytes := int32(108 + 8); maxBytes < 2*108; maxBytes++ {
		res, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t", MaxBytes: maxBytes})
		if err != nil || len(res.Records) != 1 {
			t.Fatalf("maxBytes %d (cut inside a payload): %v", maxBytes, err)
		}
	}
}

func TestRecordLargerThanMaxBytesIsReportedWithBothNumbers(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Append("t", 0, []byte("small"), filled(500, 'x'))
	c := dial(t, b)
	cons := c.Consumer("t", 0, 0)
	cons.MaxBytes = 100
	if batch, err := cons.Poll(testContext(t)); err != nil || len(batch) != 1 {
		t.Fatalf("first poll: %d records, %v", len(batch), err)
	}
	_, err := cons.Poll(testContext(t))
	var ex *booblik.RecordExceedsMaxBytesError
	if !errors.Is(err, booblik.ErrRecordExceedsMaxBytes) || !errors.As(err, &ex) {
		t.Fatalf("500-byte record with maxBytes 100: %v", err)
	}
	if ex.Size != 500 || ex.MaxBytes != 100 || ex.Offset != 1 {
		t.Fatalf("%+v, want size 500, maxBytes 100, offset 1", *ex)
	}
	if !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "100") {
		t.Fatalf("message %q lacks the numbers", err)
	}
	if cons.Position() != 1 {
		t.Fatalf("position %d after the error, want 1", cons.Position())
	}
}

func TestRecordExceedsMaxBytesEvenWhenItsSizeDidNotArrive(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Append("t", 0, []byte("hello"))
	c := dial(t, b)
	_, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t", MaxBytes: 3})
	var ex *booblik.RecordExceedsMaxBytesError
	if !errors.As(err, &ex) || ex.Size != -1 || ex.MaxBytes != 3 {
		t.Fatalf("maxBytes 3: %v", err)
	}
}

func TestCorruptRecordIsRejectedNeverReturned(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Append("t", 0, []byte("good"), []byte("rotten"), []byte("after"))
	b.CorruptRecord("t", 0, 1)
	c := dial(t, b)
	res, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t"})
	var ce *booblik.CorruptRecordError
	if !errors.Is(err, booblik.ErrCorruptRecord) || !errors.As(err, &ce) || ce.Offset != 1 {
		t.Fatalf("corrupt record: %v", err)
	}
	if len(res.Records) != 1 || string(res.Records[0].Payload) != "good" || res.NextOffset != 1 {
		t.Fatalf("records before the corrupt one: %q", res.Records)
	}
}

// fetchAnswer answers every fetch with a body built from the request.
func fetchAnswer(b *fakebroker.Broker, body func(fakebroker.Request) []byte) {
	b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
		if r.APIKey != fakebroker.APIFetch {
			return fakebroker.Action{}, false
		}
		return fakebroker.Action{Raw: fakebroker.Answer(r.CorrelationID, 0, body(r))}, true
	})
}

func TestRecordSizeOfZeroIsCorruptNotAnEndlessLoop(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	fetchAnswer(b, func(fakebroker.Request) []byte {
		return fakebroker.FetchBody(5, make([]byte, 8)) // size 0, crc 0
	})
	c := dial(t, b)
	if _, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t"}); !errors.Is(err, booblik.ErrCorruptRecord) {
		t.Fatalf("size 0: %v", err)
	}
}

func TestPayloadBytesThatDisagreeWithTheFrameAreAProtocolError(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	for _, delta := range []int{-1, 1} {
		fetchAnswer(b, func(fakebroker.Request) []byte {
			body := fakebroker.FetchBody(1, fakebroker.StoredRecords([]byte("abc")))
			n := int(binary.BigEndian.Uint32(body[8:])) + delta
			binary.BigEndian.PutUint32(body[8:], uint32(n))
			return body
		})
		c := dial(t, b)
		_, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t"})
		if !errors.Is(err, booblik.ErrProtocol) || !strings.Contains(err.Error(), "payloadBytes") {
			t.Fatalf("payloadBytes off by %d: %v", delta, err)
		}
	}
}

func TestFetchAnswerCutShortInsideItsHeaderIsAProtocolError(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	c := dial(t, b)
	for cut := 0; cut < 12; cut++ {
		fetchAnswer(b, func(fakebroker.Request) []byte { return fakebroker.FetchBody(1, nil)[:cut] })
		if _, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t"}); !errors.Is(err, booblik.ErrProtocol) {
			t.Fatalf("fetch body of %d bytes: %v", cut, err)
		}
	}
}

func TestRecordsMayBeAppendedToWithoutDamagingTheNext(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	b.Append("t", 0, []byte("one"), []byte("two"))
	c := dial(t, b)
	res, err := c.Fetch(testContext(t), booblik.FetchRequest{Topic: "t"})
	if err != nil {
		t.Fatal(err)
	}
	_ = append(res.Records[0].Payload, "XXXXXXXX"...)
	if string(res.Records[1].Payload) != "two" {
		t.Fatalf("appending to one record overwrote the next: %q", res.Records[1])
	}
}
