package fakebroker

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"time"
)

// The fake's side of security (the wire's AUTHENTICATE, TLS and error codes 18-22): TLS on the client
// port told apart from plaintext by the first byte, AUTHENTICATE with SCRAM-SHA-256 (scram.go) and
// TOKEN (token.go), and the gate that answers AUTHENTICATION_REQUIRED and CREDENTIALS_EXPIRED.

const (
	APIAuthenticate = 10

	CodeTLSRequired            = 18
	CodeAuthenticationRequired = 19
	CodeAuthenticationFailed   = 20
	CodeCredentialsExpired     = 21
	CodeNotAuthorized          = 22

	tlsRecordHandshake = 0x16 // a TLS ClientHello's first byte; a booblik frame's is 0x00
)

// Security is how the fake guards its port. The zero value is a broker with booblik.tls=off and
// booblik.auth=off.
type Security struct {
	TLS         *tls.Config // nil: TLS bytes get no TLS (the fake closes, as booblik.tls=off)
	TLSRequired bool        // plaintext gets TLS_REQUIRED and is closed (booblik.tls=required)
	// AuthRequired serves only API_VERSIONS and AUTHENTICATE before a connection authenticates
	// (or shows a client certificate): booblik.auth=required.
	AuthRequired bool
	// Now is the clock tokens expire by; nil is time.Now.
	Now func() time.Time
	// ForgeServerSignature makes the server-final carry a wrong signature: a broker that does not
	// know the user's ServerKey, which the client must refuse.
	ForgeServerSignature bool
}

// Secure sets how the fake guards its port: TLS for connections accepted from now on, the rest
// for every request from now on.
func (b *Broker) Secure(s Security) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.security = s
}

func (b *Broker) securityNow() (Security, time.Time) {
	b.mu.Lock()
	s := b.security
	b.mu.Unlock()
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	return s, now
}

// session is one connection's identity.
type session struct {
	principal   string // "" until AUTHENTICATE succeeds or a client certificate names one
	expiresAtMs int64  // -1: never
	scram       *scramExchange
}

// peekedConn is a net.Conn whose first bytes were read ahead into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// open looks at the connection's first byte and returns the connection to answer on and the
// reader to serve frames from (TLS or plaintext) with the session, or ok false when it is done.
func (b *Broker) open(nc net.Conn) (w net.Conn, r *bufio.Reader, sess *session, ok bool) {
	sec, _ := b.securityNow()
	sess = &session{expiresAtMs: -1}
	r = bufio.NewReader(nc)
	first, err := r.Peek(1)
	if err != nil {
		return nil, nil, nil, false
	}
	if first[0] == tlsRecordHandshake && sec.TLS != nil {
		tc := tls.Server(peekedConn{nc, r}, sec.TLS)
		if err := tc.Handshake(); err != nil {
			return nil, nil, nil, false // a refused client certificate ends here
		}
		if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
			sess.principal = certs[0].Subject.CommonName
		}
		return tc, bufio.NewReader(tc), sess, true
	}
	if sec.TLSRequired {
		// The first plaintext frame gets TLS_REQUIRED with its correlation id, then the close.
		var head [12]byte
		if _, err := io.ReadFull(r, head[:]); err == nil {
			_, _ = nc.Write(Answer(int32(binary.BigEndian.Uint32(head[8:])), CodeTLSRequired, nil))
		}
		return nil, nil, nil, false
	}
	return nc, r, sess, true
}

// gate answers a request the session may not make yet, or returns nil to serve it.
func (b *Broker) gate(sess *session, req Request) []byte {
	sec, now := b.securityNow()
	if req.APIKey == APIAPIVersions {
		return nil
	}
	if req.APIKey == APIAuthenticate {
		return b.authenticate(sess, req, sec, now)
	}
	code := int16(CodeNone)
	switch {
	case sec.AuthRequired && sess.principal == "":
		code = CodeAuthenticationRequired
	case sess.expiresAtMs >= 0 && now.UnixMilli() >= sess.expiresAtMs:
		code = CodeCredentialsExpired
	default:
		return nil
	}
	if req.APIKey == APIProduce && req.Ack == 0 {
		return []byte{} // refused, and unanswered: a PRODUCE with ack NONE never gets an answer
	}
	return Answer(req.CorrelationID, code, nil)
}

// authenticate answers AUTHENTICATE v1 => mechanism:string data:bytes.
func (b *Broker) authenticate(sess *session, req Request, sec Security, now time.Time) []byte {
	id := req.CorrelationID
	if req.Version != 1 {
		return Answer(id, CodeUnsupportedVersion, nil)
	}
	if req.DecodeErr != "" {
		return Answer(id, CodeCorruptRequest, nil)
	}
	switch req.Mechanism {
	case "SCRAM-SHA-256":
		return b.scramStep(sess, req, sec)
	case "TOKEN":
		sess.scram = nil
		principal, expiresAtMs, reason := b.verifyToken(string(req.AuthData), now)
		if reason != "" {
			return authFailed(id, reason)
		}
		sess.principal, sess.expiresAtMs = principal, expiresAtMs
		return authAnswer(id, true, nil, principal, expiresAtMs)
	}
	body := binary.BigEndian.AppendUint32(nil, ^uint32(0)) // index -1
	msg := "mechanism: " + req.Mechanism + ", expected SCRAM-SHA-256 or TOKEN"
	body = binary.BigEndian.AppendUint16(body, uint16(len(msg)))
	return Answer(id, CodeInvalidArgument, append(body, msg...))
}

// authAnswer is AUTHENTICATE response v1 => complete:int8 data:bytes principal:string expiresAtMs:int64.
func authAnswer(id int32, complete bool, data []byte, principal string, expiresAtMs int64) []byte {
	body := []byte{0}
	if complete {
		body[0] = 1
	}
	body = binary.BigEndian.AppendUint32(body, uint32(len(data)))
	body = append(body, data...)
	body = binary.BigEndian.AppendUint16(body, uint16(len(principal)))
	body = append(body, principal...)
	body = binary.BigEndian.AppendUint64(body, uint64(expiresAtMs))
	return Answer(id, CodeNone, body)
}

func authFailed(id int32, reason string) []byte {
	body := binary.BigEndian.AppendUint16(nil, uint16(len(reason)))
	return Answer(id, CodeAuthenticationFailed, append(body, reason...))
}
