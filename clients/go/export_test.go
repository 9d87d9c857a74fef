package booblik

import (
	"context"
	"encoding/binary"
	"net"
	"time"
)

// Test-only exports for the external test package.
var ReadVectors = readVectors

// NewClientRecording is NewClient whose connections report the API key and version of every
// request frame they write (each request is one Write of one whole frame).
func NewClientRecording(ctx context.Context, bootstrap []string, cfg ClientConfig, sent func(apiKey, version int16)) (*Client, error) {
	return newClient(ctx, bootstrap, cfg, func(ctx context.Context, addr string) (*Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return newConn(recordingConn{nc, sent}, addr), nil
	})
}

type recordingConn struct {
	net.Conn
	sent func(apiKey, version int16)
}

func (r recordingConn) Write(p []byte) (int, error) {
	if len(p) >= 8 {
		r.sent(int16(binary.BigEndian.Uint16(p[4:])), int16(binary.BigEndian.Uint16(p[6:])))
	}
	return r.Conn.Write(p)
}

// SetTopicClock makes t read the time from now (a test's clock) instead of time.Now.
func SetTopicClock(t *Topic, now func() time.Time) {
	t.mu.Lock()
	t.now = now
	t.mu.Unlock()
}

// SetConnClock makes c read the time from now (a test's clock) to tell when its token expires.
func SetConnClock(c *Conn, now func() time.Time) { c.now = now }
