package booblik

import (
	"errors"
	"testing"
)

// Bytes from the wire get a typed error, never a panic. The f.Add inputs run with every `go test`;
// `go test -fuzz=FuzzFetchAnswer` explores further.

func FuzzFetchAnswer(f *testing.F) {
	record := []byte{0, 0, 0, 9, 0xe3, 0x06, 0x92, 0x83, '1', '2', '3', '4', '5', '6', '7', '8', '9'}
	whole := append([]byte{0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 17}, record...)
	f.Add(whole, int32(100))
	f.Add(whole[:20], int32(8))                                                         // payloadBytes disagrees with the frame
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0}, int32(3))                // a cut inside a header
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0}, int32(8)) // size 0
	f.Add([]byte{}, int32(1))
	f.Fuzz(func(t *testing.T, body []byte, maxBytes int32) {
		res, err := decodeFetchResponse(body, 0, maxBytes)
		if err != nil && !errors.Is(err, ErrProtocol) && !errors.Is(err, ErrCorruptRecord) &&
			!errors.Is(err, ErrRecordExceedsMaxBytes) {
			t.Fatalf("untyped error %v", err)
		}
		if res == nil {
			return
		}
		if res.NextOffset != int64(len(res.Records)) {
			t.Fatalf("NextOffset %d after %d records", res.NextOffset, len(res.Records))
		}
		for i, r := range res.Records {
			if len(r.Payload) == 0 || r.Offset != int64(i) {
				t.Fatalf("record %d: offset %d, %d bytes", i, r.Offset, len(r.Payload))
			}
		}
	})
}

func FuzzMetadataAnswer(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 1, 'a', 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3})
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 1, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := decodeMetadataResponse(body); err != nil && !errors.Is(err, ErrProtocol) {
			t.Fatalf("untyped error %v", err)
		}
	})
}

func FuzzProduceAnswer(f *testing.F) {
	f.Add(make([]byte, 16))
	f.Add(make([]byte, 15))
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := decodeProduceResponse(body, 0); err != nil && !errors.Is(err, ErrProtocol) {
			t.Fatalf("untyped error %v", err)
		}
	})
}
