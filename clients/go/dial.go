package booblik

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// DialConfig says how a connection is opened: TLS, and the credentials it authenticates with
// before Dial returns. The zero value is plaintext without authentication, as Dial.
type DialConfig struct {
	// TLS, when set, speaks TLS to the broker. &tls.Config{} is TLS with the system's CAs, the
	// server name taken from the address's host; NewTLSConfig builds one from PEM files. nil:
	// plaintext.
	TLS *tls.Config

	// User and Password authenticate with SCRAM-SHA-256: the password never crosses the wire, and
	// the broker must prove it knows the user's keys (a broker that cannot is an error).
	User     string
	Password string

	// Token authenticates with TOKEN (a JWT the broker checks). TokenFunc instead is asked for one
	// on every dial, and again when the broker answers CREDENTIALS_EXPIRED: the connection then
	// authenticates again and sends the request once more; it is asked a few seconds before the
	// token expires too. With a fixed Token the CREDENTIALS_EXPIRED reaches the caller. A Client
	// may call TokenFunc from several goroutines at once. At most one of User, Token and TokenFunc.
	Token     string
	TokenFunc func(ctx context.Context) (string, error)
}

// DialWith opens a connection to the broker at addr (host:port) as cfg says, and authenticates
// it when cfg has credentials. ctx bounds the dial, the TLS handshake and the authentication.
func DialWith(ctx context.Context, addr string, cfg DialConfig) (*Conn, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("booblik: dial %s: %w", addr, err)
	}
	if cfg.TLS != nil {
		if nc, err = handshake(ctx, nc, addr, cfg.TLS); err != nil {
			return nil, err
		}
	}
	c := newConn(nc, addr)
	c.tls = cfg.TLS != nil
	c.auth = cfg.authenticator()
	if c.auth != nil {
		if err := c.authenticate(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (cfg DialConfig) validate() error {
	set := 0
	for _, given := range []bool{cfg.User != "" || cfg.Password != "", cfg.Token != "", cfg.TokenFunc != nil} {
		if given {
			set++
		}
	}
	if set > 1 {
		return &InvalidArgumentError{Field: "DialConfig", Got: "more than one of User/Password, Token and TokenFunc",
			Want: "at most one way to authenticate"}
	}
	if cfg.Password != "" && cfg.User == "" {
		return &InvalidArgumentError{Field: "DialConfig.User", Got: `""`, Want: "a user name with the password"}
	}
	if cfg.User != "" && cfg.Password == "" {
		return &InvalidArgumentError{Field: "DialConfig.Password", Got: `""`, Want: "the user's password"}
	}
	return nil
}

// handshake runs the TLS client handshake on nc, bounded by ctx. The server name defaults to the
// address's host, as for HTTPS.
func handshake(ctx context.Context, nc net.Conn, addr string, cfg *tls.Config) (net.Conn, error) {
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			nc.Close()
			return nil, &InvalidArgumentError{Field: "addr", Got: fmt.Sprintf("%q", addr), Want: "host:port"}
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("booblik: TLS handshake with %s: %w", addr, ctx.Err())
		}
		if notTLS(err) {
			return nil, &NoTLSAnswerError{Addr: addr, Err: err}
		}
		return nil, fmt.Errorf("booblik: TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// notTLS says whether a handshake failed because the other end does not speak TLS: it closed on
// the ClientHello (a booblik broker with booblik.tls=off reads 0x16... as a frame length over
// its limit and closes) or answered bytes that are no TLS record. Certificate failures are not this.
func notTLS(err error) bool {
	var header tls.RecordHeaderError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.As(err, &header)
}

// ErrNoTLSAnswer matches every NoTLSAnswerError.
var ErrNoTLSAnswer = errors.New("booblik: the broker did not answer TLS")

// NoTLSAnswerError is a TLS handshake the broker did not take part in: it speaks plaintext only.
type NoTLSAnswerError struct {
	Addr string
	Err  error // what the handshake saw
}

func (e *NoTLSAnswerError) Error() string {
	return "booblik: " + e.Addr + ": the broker did not answer TLS: is booblik.tls on? (" + e.Err.Error() + ")"
}

func (e *NoTLSAnswerError) Is(target error) bool { return target == ErrNoTLSAnswer }
func (e *NoTLSAnswerError) Unwrap() error        { return e.Err }
