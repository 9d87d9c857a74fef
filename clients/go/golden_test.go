package booblik

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// A round trip passes when encoder and decoder share a bug; these pin messages as literal bytes,
// written out by hand from the protocol's tables.

// golden reads hex digits, ignoring spaces and "//" comments.
func golden(t *testing.T, spaced string) []byte {
	t.Helper()
	var digits strings.Builder
	for _, line := range strings.Split(spaced, "\n") {
		line, _, _ = strings.Cut(line, "//")
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProduceRequestIsEncodedByteForByte(t *testing.T) {
	got := finishFrame(appendProduceRequest(beginFrame(apiProduce, produceVersion),
		"t", 2, AckWritten, [][]byte{[]byte("ab"), {}}), 7)
	want := golden(t, `
		0000001e         // frameLength 30
		0001 0001        // PRODUCE v1
		00000007         // correlationId
		0001 74          // topic "t"
		00000002         // partition
		01               // ackPolicy WRITTEN
		00000002         // recordCount
		00000002 6162    // "ab"
		00000000         // an empty record
	`)
	if !bytes.Equal(got, want) {
		t.Fatalf("PRODUCE\n got %x\nwant %x", got, want)
	}
	if n := produceRequestBytes("t", [][]byte{[]byte("ab"), {}}); n != len(want)-4 {
		t.Fatalf("produceRequestBytes %d, frame is %d", n, len(want)-4)
	}
}

func TestFetchRequestIsVersion2ByteForByte(t *testing.T) {
	got := finishFrame(appendFetchRequest(beginFrame(apiFetch, fetchVersion), FetchRequest{
		Topic: "orders", Partition: 0, Offset: 5, MaxBytes: 1024, MaxWait: 250 * time.Millisecond, MinBytes: 1,
	}), 1)
	want := golden(t, `
		00000028           // frameLength 40
		0002 0002          // FETCH v2
		00000001           // correlationId
		0006 6f7264657273  // topic "orders"
		00000000           // partition
		0000000000000005   // fetchOffset
		00000400           // maxBytes 1024
		000000fa           // maxWaitMillis 250
		00000001           // minBytes
	`)
	if !bytes.Equal(got, want) {
		t.Fatalf("FETCH\n got %x\nwant %x", got, want)
	}
}

func TestMetadataRequestIsEncodedByteForByte(t *testing.T) {
	got := finishFrame(appendMetadataRequest(beginFrame(apiMetadata, metadataVersion), []string{"a", "bc"}), 3)
	want := golden(t, `
		00000013     // frameLength 19
		0003 0001    // METADATA v1
		00000003     // correlationId
		00000002     // topicCount
		0001 61      // "a"
		0002 6263    // "bc"
	`)
	if !bytes.Equal(got, want) {
		t.Fatalf("METADATA\n got %x\nwant %x", got, want)
	}
}

func TestProduceAnswerIsDecodedFromLiteralBytes(t *testing.T) {
	res, err := decodeProduceResponse(golden(t, "000000000000002a 000000000000002d"), 4)
	if err != nil || *res != (ProduceResult{Partition: 4, BaseOffset: 42, LogEndOffset: 45}) {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestFetchAnswerIsDecodedFromLiteralBytes(t *testing.T) {
	body := golden(t, `
		0000000000000009           // highWatermark 9
		00000011                   // payloadBytes 17
		00000009 e3069283          // size 9, crc32c of "123456789"
		313233343536373839         // "123456789"
	`)
	res, err := decodeFetchResponse(body, 8, 100)
	if err != nil {
		t.Fatal(err)
	}
	if res.HighWatermark != 9 || res.NextOffset != 9 || len(res.Records) != 1 || string(res.Records[0].Payload) != "123456789" ||
		res.Records[0].Offset != 8 {
		t.Fatalf("%+v", res)
	}
}

func TestMetadataAnswerIsDecodedFromLiteralBytes(t *testing.T) {
	body := golden(t, `
		00000001                                             // topicCount
		0001 61 00000002                                     // "a", 2 partitions, sent out of order:
		00000001 0000000000000001 0000000000000004           // partition 1: logStart 1, hw 4
		00000000 0000000000000000 0000000000000003           // partition 0: logStart 0, hw 3
	`)
	md, err := decodeMetadataResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	want := []PartitionInfo{{0, 0, 3}, {1, 1, 4}}
	if got := md["a"]; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("%+v, want %+v", got, want)
	}
}

func TestLyingCountsAreRefusedBeforeAllocating(t *testing.T) {
	for name, body := range map[string]string{
		"topicCount":     "7fffffff",
		"partitionCount": "00000001 0001 61 7fffffff",
		"negative count": "ffffffff",
	} {
		_, err := decodeMetadataResponse(golden(t, body))
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want ErrProtocol", name, err)
		}
	}
}

func TestWaitIsSentInWholeMillisecondsCappedWhereTheBrokerCaps(t *testing.T) {
	for wait, want := range map[time.Duration]int32{
		0:                       0,
		time.Microsecond:        1, // still a wait
		1500 * time.Microsecond: 2,
		5 * time.Second:         5000,
		time.Hour:               60000,
	} {
		if got := waitMillis(wait); got != want {
			t.Errorf("waitMillis(%v) = %d, want %d", wait, got, want)
		}
	}
}
