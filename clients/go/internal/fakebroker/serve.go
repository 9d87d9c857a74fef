package fakebroker

import (
	"encoding/binary"
	"io"
	"net"
)

func (b *Broker) accept(ln net.Listener, node int) {
	defer b.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		select {
		case <-b.closing:
			b.mu.Unlock()
			nc.Close()
			return
		default:
		}
		b.conns[nc] = node
		b.accepted++
		id := b.accepted
		b.wg.Add(1)
		b.mu.Unlock()
		go b.serve(nc, node, id)
	}
}

func (b *Broker) serve(nc net.Conn, node, connID int) {
	defer b.wg.Done()
	defer func() {
		b.mu.Lock()
		delete(b.conns, nc)
		b.mu.Unlock()
		nc.Close()
	}()
	w, r, sess, ok := b.open(nc)
	if !ok {
		return
	}
	for {
		var lengthBytes [4]byte
		if _, err := io.ReadFull(r, lengthBytes[:]); err != nil {
			return
		}
		n := int32(binary.BigEndian.Uint32(lengthBytes[:]))
		if n < 1 || n > frameBytesMax {
			return // protocol: close without answering, the framing is lost
		}
		frame := make([]byte, n)
		if _, err := io.ReadFull(r, frame); err != nil {
			return
		}
		// Held requests are read (the client's write completes) but not looked at until release.
		b.mu.Lock()
		gate := b.hold
		b.mu.Unlock()
		if gate != nil {
			<-gate
		}
		if n < 8 {
			if !b.write(w, Answer(0, CodeCorruptRequest, nil)) {
				return
			}
			continue
		}
		req := decodeRequest(frame)
		req.Node = node
		req.Principal = sess.principal
		req.Conn = connID
		b.mu.Lock()
		b.requests = append(b.requests, req)
		b.notify()
		intercept := b.intercept
		b.mu.Unlock()
		if answer := b.gate(sess, req); answer != nil { // empty: refused without an answer
			if !b.write(w, answer) {
				return
			}
			continue
		}
		if intercept != nil {
			if act, ok := intercept(req); ok {
				if act.Raw != nil && !b.write(w, act.Raw) {
					return
				}
				if act.Close {
					return
				}
				continue
			}
		}
		if answer := b.handle(req); answer != nil && !b.write(w, answer) {
			return
		}
	}
}

func (b *Broker) write(nc net.Conn, p []byte) bool {
	b.mu.Lock()
	chunk := b.chunk
	b.mu.Unlock()
	if chunk <= 0 {
		chunk = len(p)
	}
	for len(p) > 0 {
		n := min(chunk, len(p))
		if _, err := nc.Write(p[:n]); err != nil {
			return false
		}
		p = p[n:]
	}
	return true
}

// handle answers a decoded request; nil means no answer (PRODUCE with ack NONE).
func (b *Broker) handle(req Request) []byte {
	id := req.CorrelationID
	silent := req.APIKey == APIProduce && req.Ack == 0
	refuse := func(code int16) []byte {
		if silent {
			return nil
		}
		return Answer(id, code, nil)
	}
	if !b.supports(req) {
		return refuse(CodeUnsupportedVersion)
	}
	if req.DecodeErr != "" {
		return refuse(CodeCorruptRequest)
	}
	if answer, refused := b.notPrimary(req); refused {
		if silent {
			return nil
		}
		return answer
	}
	switch req.APIKey {
	case APIAPIVersions:
		return apiVersionsAnswer(id, b.speaksV4(req.Node))
	case APIProduce:
		b.mu.Lock()
		p := b.partition(req.Topic, req.Partition)
		if p == nil {
			b.mu.Unlock()
			return refuse(CodeUnknownTopicOrPartition)
		}
		if req.ExpectedOffset >= 0 && req.ExpectedOffset != int64(len(p.starts)) {
			end := int64(len(p.starts))
			b.mu.Unlock()
			if silent {
				return nil
			}
			return Answer(id, CodeOffsetMismatch, binary.BigEndian.AppendUint64(nil, uint64(end)))
		}
		base := b.appendLocked(p, req.Records)
		end := int64(len(p.starts))
		b.mu.Unlock()
		if silent {
			return nil
		}
		body := binary.BigEndian.AppendUint64(nil, uint64(base))
		body = binary.BigEndian.AppendUint64(body, uint64(end))
		return Answer(id, CodeNone, body)
	case APIFetch:
		return b.fetch(req)
	case APIApply:
		return b.apply(req)
	case APIList:
		return b.list(req)
	case APIListFragments:
		return b.listFragments(req)
	default:
		return b.metadata(req)
	}
}
