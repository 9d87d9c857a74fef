package booblik

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// Conn is one TCP connection to a broker.
//
// A Conn is not safe for concurrent use: the broker answers in request order and the client matches
// each answer to its request by correlation id, so two goroutines sharing a Conn would read each
// other's answers. Use one Conn per goroutine, or a Producer, which owns its Conn.
//
// Every call takes a context whose deadline and cancellation apply to that exchange. A call
// abandoned while waiting for its answer leaves the connection usable: the client remembers the
// answer it is owed and skips it before reading the next one. A call abandoned halfway through
// writing a request or reading an answer leaves the stream out of step; the Conn is then closed and
// every later call returns an error matching ErrConnBroken.
type Conn struct {
	addr          string // as dialled, for errors that must say where
	nc            net.Conn
	rd            *bufio.Reader
	correlationID int32
	owed          []int32 // ids of requests whose answers are still to come, oldest first
	err           error   // sticky: set once the Conn can no longer be used
	// versions is what API_VERSIONS answered (apiKey -> highest version), asked once, before the
	// first call that has versions to choose from; nil until then.
	versions map[int16]int16

	tls       bool           // a write cut by a deadline breaks a TLS stream for good
	auth      *authenticator // nil: the connection does not authenticate
	principal string         // who AUTHENTICATE said this connection is
	// expiresAtMs is when the broker said the credentials expire (Unix ms), -1 for never.
	expiresAtMs int64
	now         func() time.Time // the clock a token's expiry is read by
}

// Dial opens a plaintext connection to the broker at addr (host:port). ctx bounds the dial only.
// DialWith adds TLS and authentication.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	return DialWith(ctx, addr, DialConfig{})
}

func newConn(nc net.Conn, addr string) *Conn {
	return &Conn{addr: addr, nc: nc, rd: bufio.NewReaderSize(nc, 64<<10), expiresAtMs: -1, now: time.Now}
}

// Close closes the connection. Calls after Close return ErrClosed.
func (c *Conn) Close() error {
	if errors.Is(c.err, ErrClosed) {
		return nil
	}
	alreadyBroken := c.err != nil
	c.err = ErrClosed
	if alreadyBroken {
		return nil // closed when it broke
	}
	return c.nc.Close()
}

// httpAnswerPrefix is how an HTTP server's answer starts ("HTTP/1.1 400 ..."). Read as a frame
// length it is 1213486160, which tells a user who dialled the HTTP port nothing.
const httpAnswerPrefix = "HTTP"

// aLongTimeAgo is a deadline in the past: setting it makes blocked reads and writes return now.
var aLongTimeAgo = time.Unix(1, 0)

// exchange sends one request frame (from beginFrame) and, when answered is true, returns the body
// of its answer. A refusal comes back as a *BrokerError naming the request ("PRODUCE orders/2")
// and leaves the connection usable. CREDENTIALS_EXPIRED on a connection with a TokenFunc gets a
// new token on the same connection and the request once more: refused, it did nothing. A token
// about to expire is replaced before the request, so a PRODUCE with AckNone (which is refused
// without an answer) is not lost to it.
func (c *Conn) exchange(ctx context.Context, api apiKey, request string, frame []byte, answered bool) ([]byte, error) {
	if c.expiring(api) {
		if err := c.authenticate(ctx); err != nil {
			return nil, err
		}
	}
	body, err := c.exchangeOnce(ctx, api, request, frame, answered)
	if !c.refreshes(api, err) {
		return body, err
	}
	if err := c.authenticate(ctx); err != nil {
		return nil, err
	}
	return c.exchangeOnce(ctx, api, request, frame, answered)
}

func (c *Conn) exchangeOnce(ctx context.Context, api apiKey, request string, frame []byte, answered bool) ([]byte, error) {
	if c.err != nil {
		return nil, c.err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("booblik: %s: %w", api, err)
	}
	if n := len(frame) - 4; n > frameBytesMax {
		return nil, &InvalidArgumentError{Field: api.String() + " request", Got: fmt.Sprintf("%d bytes", n),
			Want: fmt.Sprintf("<= %d (the broker drops a connection that sends a larger frame)", frameBytesMax)}
	}
	if len(c.owed) >= owedAnswersMax {
		return nil, c.broke(api, fmt.Errorf("%d abandoned requests still unanswered", len(c.owed)))
	}
	c.correlationID++ // wraps after 2^31 requests, which the broker neither knows nor minds
	id := c.correlationID
	finishFrame(frame, id)

	// The context reaches the socket through its deadline: a past deadline unblocks any I/O.
	deadline, _ := ctx.Deadline()
	if err := c.nc.SetDeadline(deadline); err != nil {
		return nil, c.broke(api, err)
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = c.nc.SetDeadline(aLongTimeAgo)
		close(fired)
	})
	defer func() {
		if !stop() {
			<-fired // let it finish, so it cannot move the next exchange's deadline
		}
	}()

	if n, err := c.nc.Write(frame); err != nil {
		if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) && !c.tls {
			return nil, interrupted(ctx, api) // nothing left: still in step
		}
		return nil, c.broke(api, fmt.Errorf("writing the request: %w", err))
	}
	if !answered {
		return nil, nil
	}

	c.owed = append(c.owed, id)
	for {
		head := c.owed[0]
		code, body, err := c.readAnswer(ctx, api, head)
		if err != nil {
			if changesSomething(api) && !errors.Is(err, ErrProtocol) {
				// Sent, answer lost (or no longer awaited): it may have taken effect.
				return nil, &OutcomeUnknownError{Request: request, Why: "no answer came: " + err.Error(), Err: err}
			}
			return nil, err
		}
		c.owed = c.owed[1:]
		if head != id {
			continue // the answer to an abandoned call: nobody is waiting for it
		}
		if code == CodeTLSRequired { // the broker closes the connection after it
			return nil, c.breakWith(refusal(code, api, request, body))
		}
		if code != CodeNone {
			return nil, refusal(code, api, request, body)
		}
		return body, nil
	}
}

// readAnswer reads one answer frame and checks it answers request id. Interrupted before the first
// byte arrives, it consumes nothing and the answer stays owed; any later failure breaks the Conn.
func (c *Conn) readAnswer(ctx context.Context, api apiKey, id int32) (ErrorCode, []byte, error) {
	if _, err := c.rd.Peek(1); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, nil, interrupted(ctx, api)
		}
		return 0, nil, c.broke(api, fmt.Errorf("waiting for the answer: %w", err))
	}
	var lengthBytes [4]byte
	if _, err := io.ReadFull(c.rd, lengthBytes[:]); err != nil {
		return 0, nil, c.broke(api, fmt.Errorf("reading the answer's length: %w", noEOF(err)))
	}
	if string(lengthBytes[:]) == httpAnswerPrefix {
		return 0, nil, c.broke(api, &HTTPAnswerError{Addr: c.addr})
	}
	// Capped before anything is allocated: a length from the wire is a claim, not a fact.
	n := int32(binary.BigEndian.Uint32(lengthBytes[:]))
	if n < responseHeaderBytes || n > frameBytesMax {
		return 0, nil, c.broke(api, &ProtocolError{API: api.String(),
			Detail: fmt.Sprintf("frameLength %d, expected %d..%d", n, responseHeaderBytes, frameBytesMax)})
	}
	frame := make([]byte, n)
	if got, err := io.ReadFull(c.rd, frame); err != nil {
		return 0, nil, c.broke(api, fmt.Errorf("reading the answer: %d of %d bytes: %w", got, n, noEOF(err)))
	}
	if got := int32(binary.BigEndian.Uint32(frame[0:])); got != id {
		return 0, nil, c.broke(api, &ProtocolError{API: api.String(),
			Detail: fmt.Sprintf("correlationId %d, expected %d", got, id)})
	}
	code := ErrorCode(int16(binary.BigEndian.Uint16(frame[4:])))
	return code, frame[responseHeaderBytes:], nil
}

// broke marks the Conn unusable, closes the socket and returns the cause for this call.
func (c *Conn) broke(api apiKey, cause error) error {
	var pe *ProtocolError
	var he *HTTPAnswerError
	if !errors.As(cause, &pe) && !errors.As(cause, &he) {
		cause = fmt.Errorf("booblik: %s: %w", api, cause)
	}
	c.err = &brokenError{cause: cause}
	_ = c.nc.Close()
	return cause
}

// breakWith is broke for a cause that already says what and where.
func (c *Conn) breakWith(cause error) error {
	c.err = &brokenError{cause: cause}
	_ = c.nc.Close()
	return cause
}

// interrupted is the error of an exchange its context ended. The socket deadline may fire a hair
// before the context notices its own, hence the fallback.
func interrupted(ctx context.Context, api apiKey) error {
	err := ctx.Err()
	if err == nil {
		err = context.DeadlineExceeded
	}
	return fmt.Errorf("booblik: %s: %w", api, err)
}

// noEOF turns a clean EOF in the middle of a frame into what it is: a frame cut short.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
