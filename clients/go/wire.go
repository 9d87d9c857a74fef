package booblik

import (
	"encoding/binary"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Request frame => frameLength apiKey apiVersion correlationId payload
// Answer frame  => frameLength correlationId errorCode body
// Everything is big-endian; a string is a u16 byte length and that many UTF-8 bytes.

type apiKey int16

const (
	apiProduce     apiKey = 1
	apiFetch       apiKey = 2
	apiMetadata    apiKey = 3
	apiApply       apiKey = 4
	apiList        apiKey = 5
	apiAPIVersions apiKey = 6
	// apiListFragments (7) is in fragments.go
	apiAuthenticate apiKey = 10
)

func (k apiKey) String() string {
	switch k {
	case apiProduce:
		return "PRODUCE"
	case apiFetch:
		return "FETCH"
	case apiMetadata:
		return "METADATA"
	case apiApply:
		return "APPLY"
	case apiList:
		return "LIST"
	case apiAPIVersions:
		return "API_VERSIONS"
	case apiListFragments:
		return "LIST_FRAGMENTS"
	case apiAuthenticate:
		return "AUTHENTICATE"
	}
	return fmt.Sprintf("API(%d)", int16(k))
}

// beginFrame returns a buffer holding a request header whose length and correlation id are filled
// in by finishFrame, once the payload is appended and the id is known.
func beginFrame(api apiKey, version int16) []byte {
	b := make([]byte, 4+requestHeaderBytes, 256)
	binary.BigEndian.PutUint16(b[4:], uint16(api))
	binary.BigEndian.PutUint16(b[6:], uint16(version))
	return b
}

func finishFrame(frame []byte, correlationID int32) []byte {
	binary.BigEndian.PutUint32(frame[0:], uint32(len(frame)-4))
	binary.BigEndian.PutUint32(frame[8:], uint32(correlationID))
	return frame
}

func appendInt8(b []byte, v int8) []byte   { return append(b, byte(v)) }
func appendInt16(b []byte, v int16) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }
func appendInt32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func appendInt64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

// appendString writes a u16-length string; callers validate the length first (topic names are
// far shorter than 65535 bytes).
func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// decoder reads an answer body. It never panics on short input: the first shortfall becomes a
// ProtocolError naming the field and the byte, and later reads return zero values.
type decoder struct {
	api apiKey
	b   []byte
	off int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = &ProtocolError{API: d.api.String(), Detail: fmt.Sprintf(format, args...)}
	}
}

func (d *decoder) take(n int, field string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b)-d.off < n {
		d.fail("%s: needs %d bytes at byte %d of the body, %d remain", field, n, d.off, len(d.b)-d.off)
		return nil
	}
	p := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return p
}

func (d *decoder) int8(field string) int8 {
	if p := d.take(1, field); p != nil {
		return int8(p[0])
	}
	return 0
}

func (d *decoder) int16(field string) int16 {
	if p := d.take(2, field); p != nil {
		return int16(binary.BigEndian.Uint16(p))
	}
	return 0
}

func (d *decoder) int32(field string) int32 {
	if p := d.take(4, field); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (d *decoder) int64(field string) int64 {
	if p := d.take(8, field); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

func (d *decoder) string(field string) string {
	n := int(uint16(d.int16(field + " length")))
	return string(d.take(n, field))
}

func (d *decoder) remaining() int { return len(d.b) - d.off }

// count reads an int32 element count and caps it by what the remaining bytes could hold, so a
// lying count can never make the client allocate more than the frame it already has.
func (d *decoder) count(field string, minElementBytes int) int {
	n := d.int32(field)
	if d.err != nil {
		return 0
	}
	if n < 0 {
		d.fail("%s: %d, expected >= 0", field, n)
		return 0
	}
	if most := d.remaining() / minElementBytes; int(n) > most {
		d.fail("%s: %d, but the %d bytes left hold at most %d", field, n, d.remaining(), most)
		return 0
	}
	return int(n)
}

// done fails on bytes after the last field: an answer of the wrong length means client and broker
// disagree about the layout, and guessing would hide it.
func (d *decoder) done() error {
	if d.err == nil && d.remaining() != 0 {
		d.fail("%d bytes after the last field", d.remaining())
	}
	return d.err
}

// validTopic checks a topic name against protocol section 2 before it goes on the wire.
func validTopic(field, name string) error {
	if name == "" {
		return &InvalidArgumentError{Field: field, Got: `""`, Want: "1..249 letters, digits, '.', '_' or '-'"}
	}
	if !utf8.ValidString(name) {
		return &InvalidArgumentError{Field: field, Got: fmt.Sprintf("%q", name), Want: "valid UTF-8"}
	}
	if n := utf8.RuneCountInString(name); n > topicNameRunesMax {
		return &InvalidArgumentError{Field: field, Got: fmt.Sprintf("%d characters", n),
			Want: fmt.Sprintf("at most %d", topicNameRunesMax)}
	}
	for i, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != '_' && r != '-' {
			return &InvalidArgumentError{Field: field, Got: fmt.Sprintf("%q at byte %d of %q", r, i, name),
				Want: "letters, digits, '.', '_' or '-'"}
		}
	}
	return nil
}

func validPartition(p int32) error {
	if p < 0 {
		return &InvalidArgumentError{Field: "partition", Got: fmt.Sprint(p), Want: ">= 0"}
	}
	return nil
}
