package fakebroker

import (
	"encoding/binary"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Spec is a topic spec as the fake decodes and stores it.
type Spec struct {
	Name            string
	Partitions      int32
	Labels          map[string]string
	RetentionBytes  int64
	RetentionMillis int64
	SegmentBytes    int32
	Flags           int32
	Replication     int16
	StoreURL        string
	Revision        int64
}

// Change is one APPLY change as the fake decoded it.
type Change struct {
	Delete bool
	Spec   Spec // of an upsert; of a delete only Name and Revision (the expected one)
}

// Revision is the fake's spec store revision.
func (b *Broker) Revision() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.revision
}

// storedSpec is a spec as the broker stores it: as applied, the default sentinels (-2, 0) kept.
func storedSpec(s Spec, revision int64) Spec {
	labels := make(map[string]string, len(s.Labels))
	for k, v := range s.Labels {
		labels[k] = v
	}
	s.Labels = labels
	s.Revision = revision
	return s
}

func decodeTopicsRequest(r *reader, req *Request) string {
	if req.APIKey == APIList {
		req.Selector = r.str()
		req.WatchRevision = r.i64()
		req.MaxWaitMillis = r.i32()
		if r.err != nil || req.WatchRevision < -1 || req.MaxWaitMillis < 0 {
			return "list fields"
		}
		return ""
	}
	dry := r.i8()
	count := r.i32()
	if r.err != nil || dry < 0 || dry > 1 || count < 0 || int64(count)*11 > int64(len(r.b)) {
		return "apply header"
	}
	req.DryRun = dry == 1
	for i := int32(0); i < count; i++ {
		switch r.i8() {
		case 1:
			req.Changes = append(req.Changes, Change{Spec: readSpec(r)})
		case 2:
			req.Changes = append(req.Changes, Change{Delete: true, Spec: Spec{Name: r.str(), Revision: r.i64()}})
		default:
			return "apply op"
		}
		if r.err != nil {
			return "apply change runs past the frame"
		}
	}
	if len(r.b) != 0 {
		return "bytes after the last change"
	}
	return ""
}

func readSpec(r *reader) Spec {
	s := Spec{Name: r.str(), Partitions: r.i32(), Labels: map[string]string{}}
	n := r.i32()
	if n < 0 || int64(n)*4 > int64(len(r.b)) {
		r.err = errShort
		return s
	}
	for i := int32(0); i < n; i++ {
		k := r.str()
		s.Labels[k] = r.str()
	}
	s.RetentionBytes = r.i64()
	s.RetentionMillis = r.i64()
	s.SegmentBytes = r.i32()
	s.Flags = r.i32()
	s.Replication = r.i16()
	s.StoreURL = r.str()
	s.Revision = r.i64()
	return s
}

func (b *Broker) apply(req Request) []byte {
	id := req.CorrelationID
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, ch := range req.Changes {
		current, exists := b.specs[ch.Spec.Name]
		actual := int64(0)
		if exists {
			actual = current.Revision
		}
		if ch.Spec.Revision != -1 && ch.Spec.Revision != actual {
			body := binary.BigEndian.AppendUint32(nil, uint32(i))
			body = appendStr(body, ch.Spec.Name)
			body = binary.BigEndian.AppendUint64(body, uint64(ch.Spec.Revision))
			return Answer(id, CodeRevisionMismatch, binary.BigEndian.AppendUint64(body, uint64(actual)))
		}
		if !ch.Delete && (ch.Spec.Partitions < 1 || (exists && ch.Spec.Partitions < current.Partitions)) {
			body := binary.BigEndian.AppendUint32(nil, uint32(i))
			return Answer(id, CodeInvalidArgument, appendStr(body, "changes["+strconv.Itoa(i)+"].partitions: may grow, never shrink"))
		}
	}
	// An APPLY that changes nothing (only deletes of missing topics) keeps the revision.
	changes := false
	for _, ch := range req.Changes {
		if _, exists := b.specs[ch.Spec.Name]; !ch.Delete || exists {
			changes = true
		}
	}
	if req.DryRun || !changes {
		return Answer(id, CodeNone, binary.BigEndian.AppendUint64(nil, uint64(b.revision)))
	}
	b.revision++
	for _, ch := range req.Changes {
		name := ch.Spec.Name
		if ch.Delete {
			delete(b.specs, name)
			delete(b.logs, name)
			continue
		}
		b.specs[name] = storedSpec(ch.Spec, b.revision)
		for len(b.logs[name]) < int(ch.Spec.Partitions) {
			b.logs[name] = append(b.logs[name], &partitionLog{})
		}
	}
	b.notify()
	return Answer(id, CodeNone, binary.BigEndian.AppendUint64(nil, uint64(b.revision)))
}

// list answers LIST with the selector forms k=v, k!=v, k and !k (INVALID_ARGUMENT for the rest).
func (b *Broker) list(req Request) []byte {
	id := req.CorrelationID
	match, ok := parseSelector(req.Selector)
	if !ok {
		body := binary.BigEndian.AppendUint32(nil, 0xffffffff)
		return Answer(id, CodeInvalidArgument, appendStr(body, "selector: the fake broker knows k=v, k!=v, k and !k"))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if req.WatchRevision >= 0 && b.revision <= req.WatchRevision {
		timer := time.NewTimer(min(time.Duration(req.MaxWaitMillis)*time.Millisecond, fetchWaitMax))
		defer timer.Stop()
		b.waiting++
		b.notify()
		expired := false
		for !expired && b.revision <= req.WatchRevision {
			ch := b.changed
			b.mu.Unlock()
			select {
			case <-ch:
			case <-timer.C:
				expired = true
			case <-b.closing:
				expired = true
			}
			b.mu.Lock()
		}
		b.waiting--
		b.notify()
		if b.revision <= req.WatchRevision {
			body := binary.BigEndian.AppendUint64(nil, uint64(req.WatchRevision))
			return Answer(id, CodeNone, binary.BigEndian.AppendUint32(body, 0))
		}
	}
	names := make([]string, 0, len(b.specs))
	for name, s := range b.specs {
		if match(name, s.Labels) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	body := binary.BigEndian.AppendUint64(nil, uint64(b.revision))
	body = binary.BigEndian.AppendUint32(body, uint32(len(names)))
	for _, name := range names {
		s := b.specs[name]
		body = appendSpec(body, s)
		body = binary.BigEndian.AppendUint32(body, uint32(s.Partitions))
		for i := int32(0); i < s.Partitions; i++ {
			if req.Version >= 2 {
				body = b.appendRouteV2Locked(body, name, i, req.Node, false)
				continue
			}
			body = binary.BigEndian.AppendUint32(appendStr(body, b.Addr()), 0)
		}
	}
	return Answer(id, CodeNone, body)
}

func appendStr(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint16(b, uint16(len(s))), s...)
}

func appendSpec(b []byte, s Spec) []byte {
	b = appendStr(b, s.Name)
	b = binary.BigEndian.AppendUint32(b, uint32(s.Partitions))
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = binary.BigEndian.AppendUint32(b, uint32(len(keys)))
	for _, k := range keys {
		b = appendStr(appendStr(b, k), s.Labels[k])
	}
	b = binary.BigEndian.AppendUint64(b, uint64(s.RetentionBytes))
	b = binary.BigEndian.AppendUint64(b, uint64(s.RetentionMillis))
	b = binary.BigEndian.AppendUint32(b, uint32(s.SegmentBytes))
	b = binary.BigEndian.AppendUint32(b, uint32(s.Flags))
	b = binary.BigEndian.AppendUint16(b, uint16(s.Replication))
	b = appendStr(b, s.StoreURL)
	return binary.BigEndian.AppendUint64(b, uint64(s.Revision))
}

func parseSelector(sel string) (func(name string, labels map[string]string) bool, bool) {
	type req struct{ key, op, value string }
	var reqs []req
	if strings.TrimSpace(sel) != "" {
		for _, part := range strings.Split(sel, ",") {
			part = strings.TrimSpace(part)
			var r req
			switch {
			case strings.Contains(part, "!="):
				k, v, _ := strings.Cut(part, "!=")
				r = req{strings.TrimSpace(k), "!=", strings.TrimSpace(v)}
			case strings.Contains(part, "="):
				k, v, _ := strings.Cut(part, "=")
				r = req{strings.TrimSpace(k), "=", strings.TrimSpace(v)}
			case strings.HasPrefix(part, "!"):
				r = req{strings.TrimSpace(part[1:]), "!", ""}
			default:
				r = req{part, "", ""}
			}
			if r.key == "" || strings.ContainsAny(r.key, " ()") || strings.ContainsAny(r.value, " ()") {
				return nil, false
			}
			reqs = append(reqs, r)
		}
	}
	return func(name string, labels map[string]string) bool {
		for _, r := range reqs {
			have, ok := labels[r.key]
			if r.key == "name" {
				have, ok = name, true
			}
			switch {
			case r.op == "=" && (!ok || have != r.value),
				r.op == "!=" && ok && have == r.value,
				r.op == "" && !ok,
				r.op == "!" && ok:
				return false
			}
		}
		return true
	}, true
}
