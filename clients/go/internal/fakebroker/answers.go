package fakebroker

import (
	"encoding/binary"
	"hash/crc32"
	"sort"
	"time"
)

// listFragments answers as a broker without a store: each partition is one local segment.
func (b *Broker) listFragments(req Request) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	parts, ok := b.logs[req.Topic]
	if !ok || int(req.Partition) >= len(parts) {
		return Answer(req.CorrelationID, CodeUnknownTopicOrPartition, nil)
	}
	ids := []int{int(req.Partition)}
	if req.Partition == -1 {
		ids = ids[:0]
		for i := range parts {
			ids = append(ids, i)
		}
	}
	body := binary.BigEndian.AppendUint32(nil, uint32(len(ids)))
	for _, id := range ids {
		end := uint64(len(parts[id].starts))
		body = binary.BigEndian.AppendUint32(body, uint32(id))
		body = binary.BigEndian.AppendUint64(body, 0)   // logStartOffset
		body = binary.BigEndian.AppendUint64(body, end) // highWatermark
		body = binary.BigEndian.AppendUint32(body, 1)   // one fragment
		body = binary.BigEndian.AppendUint64(body, 0)
		body = binary.BigEndian.AppendUint64(body, end)
		body = binary.BigEndian.AppendUint64(body, uint64(len(parts[id].data)))
		body = append(body, 1)                                 // local
		body = binary.BigEndian.AppendUint64(body, ^uint64(0)) // -1: not persisted
	}
	return Answer(req.CorrelationID, CodeNone, body)
}

func (b *Broker) partition(topic string, partition int32) *partitionLog {
	parts := b.logs[topic]
	if partition < 0 || int(partition) >= len(parts) {
		return nil
	}
	return parts[partition]
}

func (b *Broker) fetch(req Request) []byte {
	id := req.CorrelationID
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.partition(req.Topic, req.Partition)
	if p == nil {
		return Answer(id, CodeUnknownTopicOrPartition, nil)
	}
	// end is what this node may serve: the log's end, or a trailing replica's high watermark.
	end := func() int64 {
		n := int64(len(p.starts))
		if limit := b.fetchLimitLocked(req); limit >= 0 && limit < n {
			return limit
		}
		return n
	}
	available := func() int {
		if req.Offset < 0 || req.Offset >= end() {
			return 0
		}
		last := len(p.data)
		if e := end(); e < int64(len(p.starts)) {
			last = p.starts[e]
		}
		return last - p.starts[req.Offset]
	}
	if req.MaxWaitMillis > 0 {
		wait := min(time.Duration(req.MaxWaitMillis)*time.Millisecond, fetchWaitMax)
		timer := time.NewTimer(wait)
		defer timer.Stop()
		need := max(int(req.MinBytes), 1)
		b.waiting++
		b.notify()
		for available() < need {
			ch := b.changed
			b.mu.Unlock()
			expired := false
			select {
			case <-ch:
			case <-timer.C:
				expired = true
			case <-b.closing:
				expired = true
			}
			b.mu.Lock()
			if expired {
				break
			}
		}
		b.waiting--
		b.notify()
	}
	hw := end()
	if req.Offset < 0 || req.Offset > int64(len(p.starts)) {
		return Answer(id, CodeOffsetOutOfRange, nil)
	}
	b.servedLocked(req, hw)
	var payload []byte
	if req.Offset < hw {
		payload = p.data[p.starts[req.Offset]:]
		if hw < int64(len(p.starts)) {
			payload = p.data[p.starts[req.Offset]:p.starts[hw]]
		}
		if len(payload) > int(req.MaxBytes) {
			payload = payload[:req.MaxBytes] // cut on a byte boundary, as the protocol allows
		}
	}
	return Answer(id, CodeNone, FetchBody(hw, payload))
}

func (b *Broker) metadata(req Request) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	names := req.Topics
	if len(names) == 0 {
		for name := range b.logs {
			names = append(names, name)
		}
	}
	set := map[string]bool{}
	for _, n := range names {
		if _, ok := b.logs[n]; !ok {
			return Answer(req.CorrelationID, CodeUnknownTopicOrPartition, nil)
		}
		set[n] = true
	}
	names = names[:0:0]
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	var body []byte
	if req.Version >= 2 {
		body = binary.BigEndian.AppendUint64(body, uint64(b.revision))
	}
	body = binary.BigEndian.AppendUint32(body, uint32(len(names)))
	for _, n := range names {
		body = binary.BigEndian.AppendUint16(body, uint16(len(n)))
		body = append(body, n...)
		parts := b.logs[n]
		body = binary.BigEndian.AppendUint32(body, uint32(len(parts)))
		for i, p := range parts {
			body = binary.BigEndian.AppendUint32(body, uint32(i))
			body = binary.BigEndian.AppendUint64(body, 0)
			body = binary.BigEndian.AppendUint64(body, uint64(len(p.starts)))
			switch {
			case req.Version >= 4:
				body = b.appendRouteV2Locked(body, n, int32(i), req.Node, true)
			case req.Version >= 2:
				body = appendRoute(body, b.primaryLocked(n, int32(i), req.Node))
			}
		}
	}
	return Answer(req.CorrelationID, CodeNone, body)
}

// Answer builds an answer frame.
func Answer(correlationID int32, code int16, body []byte) []byte {
	f := binary.BigEndian.AppendUint32(nil, uint32(6+len(body)))
	f = binary.BigEndian.AppendUint32(f, uint32(correlationID))
	f = binary.BigEndian.AppendUint16(f, uint16(code))
	return append(f, body...)
}

// FetchBody builds a FETCH answer body around record bytes as stored.
func FetchBody(highWatermark int64, payload []byte) []byte {
	body := binary.BigEndian.AppendUint64(nil, uint64(highWatermark))
	body = binary.BigEndian.AppendUint32(body, uint32(len(payload)))
	return append(body, payload...)
}

// StoredRecords lays records out as the broker stores and sends them: size, crc32c, payload.
func StoredRecords(records ...[]byte) []byte {
	var out []byte
	for _, r := range records {
		out = binary.BigEndian.AppendUint32(out, uint32(len(r)))
		out = binary.BigEndian.AppendUint32(out, crc32.Checksum(r, castagnoli))
		out = append(out, r...)
	}
	return out
}
