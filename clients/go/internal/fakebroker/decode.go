package fakebroker

import (
	"encoding/binary"
	"errors"
)

// reader decodes a request payload; the first shortfall sets err and later reads return zeros.
type reader struct {
	b   []byte
	err error
}

var errShort = errors.New("request ends early")

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errShort
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) i8() int8 {
	if p := r.take(1); p != nil {
		return int8(p[0])
	}
	return 0
}

func (r *reader) i16() int16 {
	if p := r.take(2); p != nil {
		return int16(binary.BigEndian.Uint16(p))
	}
	return 0
}

func (r *reader) i32() int32 {
	if p := r.take(4); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (r *reader) i64() int64 {
	if p := r.take(8); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

func (r *reader) str() string { return string(r.take(int(uint16(r.i16())))) }

func decodeRequest(frame []byte) Request {
	r := &reader{b: frame}
	req := Request{APIKey: r.i16(), Version: r.i16(), CorrelationID: r.i32()}
	fail := func(why string) Request {
		req.DecodeErr = why
		return req
	}
	switch req.APIKey {
	case APIProduce:
		req.Topic = r.str()
		req.Partition = r.i32()
		req.Ack = r.i8()
		req.ExpectedOffset = -1
		if req.Version >= 2 {
			req.ExpectedOffset = r.i64()
		}
		count := r.i32()
		if r.err != nil {
			return fail("produce header: " + r.err.Error())
		}
		if !validTopic(req.Topic) {
			return fail("topic name")
		}
		if req.Partition < 0 {
			return fail("partition < 0")
		}
		if req.Ack < 0 || req.Ack > 2 {
			return fail("ackPolicy")
		}
		if count <= 0 || int64(count)*4 > int64(len(r.b)) {
			return fail("recordCount")
		}
		for i := int32(0); i < count; i++ {
			size := r.i32()
			if r.err == nil && size <= 0 {
				return fail("record size <= 0")
			}
			rec := r.take(int(size))
			if r.err != nil {
				return fail("record runs past the frame")
			}
			req.Records = append(req.Records, append([]byte(nil), rec...))
		}
	case APIFetch:
		req.Topic = r.str()
		req.Partition = r.i32()
		req.Offset = r.i64()
		req.MaxBytes = r.i32()
		if req.Version >= 2 {
			req.MaxWaitMillis = r.i32()
			req.MinBytes = r.i32()
		}
		switch {
		case r.err != nil:
			return fail("fetch: " + r.err.Error())
		case !validTopic(req.Topic):
			return fail("topic name")
		case req.Partition < 0, req.Offset < 0, req.MaxBytes <= 0, req.MaxWaitMillis < 0, req.MinBytes < 0:
			return fail("negative field")
		case req.MinBytes > req.MaxBytes:
			return fail("minBytes > maxBytes")
		}
	case APIMetadata:
		count := r.i32()
		if r.err != nil || count < 0 {
			return fail("topicCount")
		}
		for i := int32(0); i < count; i++ {
			t := r.str()
			if r.err != nil || !validTopic(t) {
				return fail("topic name")
			}
			req.Topics = append(req.Topics, t)
		}
		req.MinRevision = -1
		if req.Version >= 3 {
			req.MinRevision = r.i64()
			if flags := r.i8(); r.err != nil || flags != 0 {
				return fail("minRevision or flags")
			}
		}
	case APIApply, APIList:
		if why := decodeTopicsRequest(r, &req); why != "" {
			return fail(why)
		}
	case APIAuthenticate:
		req.Mechanism = r.str()
		n := r.i32()
		data := r.take(int(n))
		if r.err != nil || n < 0 {
			return fail("authenticate: " + errShort.Error())
		}
		req.AuthData = append([]byte(nil), data...)
	case APIListFragments:
		req.Topic = r.str()
		req.Partition = r.i32()
		switch {
		case r.err != nil:
			return fail("list fragments: " + r.err.Error())
		case !validTopic(req.Topic):
			return fail("topic name")
		case req.Partition < -1:
			return fail("partition < -1")
		}
	}
	return req
}

func validTopic(name string) bool {
	runes := []rune(name)
	if len(runes) == 0 || len(runes) > 249 {
		return false
	}
	for _, c := range runes {
		ok := c == '.' || c == '_' || c == '-' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c > 127
		if !ok {
			return false
		}
	}
	return true
}
