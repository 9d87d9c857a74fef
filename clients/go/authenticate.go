package booblik

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// AUTHENTICATE request v1  => mechanism:string data:bytes
// AUTHENTICATE response v1 => complete:int8 data:bytes principal:string expiresAtMs:int64

const authenticateVersion = 1

// authenticator is the credentials a Conn authenticates with, kept to authenticate again.
type authenticator struct {
	user, password string
	token          string
	tokenFunc      func(ctx context.Context) (string, error)
}

func (cfg DialConfig) authenticator() *authenticator {
	if cfg.User == "" && cfg.Token == "" && cfg.TokenFunc == nil {
		return nil
	}
	return &authenticator{user: cfg.User, password: cfg.Password, token: cfg.Token, tokenFunc: cfg.TokenFunc}
}

// authAnswer is a decoded AUTHENTICATE response.
type authAnswer struct {
	complete    bool
	data        string
	principal   string
	expiresAtMs int64
}

// Principal is who the broker says this connection is (a SCRAM user or a token's subject), or ""
// when it did not authenticate.
func (c *Conn) Principal() string { return c.principal }

// authenticate runs the configured mechanism to its end on this connection.
func (c *Conn) authenticate(ctx context.Context) error {
	var done *authAnswer
	var err error
	if c.auth.user != "" {
		done, err = c.authenticateSCRAM(ctx)
	} else {
		done, err = c.authenticateToken(ctx)
	}
	if err != nil {
		return err
	}
	c.principal, c.expiresAtMs = done.principal, done.expiresAtMs
	return nil
}

func (c *Conn) authenticateSCRAM(ctx context.Context) (*authAnswer, error) {
	nonce := make([]byte, scramNonceBytes)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("booblik: SCRAM nonce: %w", err)
	}
	s := newSCRAMClient(c.auth.user, c.auth.password, base64.StdEncoding.EncodeToString(nonce))
	label := fmt.Sprintf("AUTHENTICATE %s (user %q)", scramMechanism, c.auth.user)
	first, err := c.authExchange(ctx, scramMechanism, label, s.first())
	if err != nil {
		return nil, err
	}
	if first.complete {
		return nil, c.broke(apiAuthenticate, scramProtocolError("complete after the client-first: the broker skipped the proof"))
	}
	final, err := s.final(first.data)
	if err != nil {
		return nil, c.broke(apiAuthenticate, err)
	}
	last, err := c.authExchange(ctx, scramMechanism, label, final)
	if err != nil {
		return nil, err
	}
	if !last.complete {
		return nil, c.broke(apiAuthenticate, scramProtocolError("not complete after the client-final"))
	}
	if err := s.verify(last.data); err != nil {
		return nil, c.breakWith(err)
	}
	return last, nil
}

func (c *Conn) authenticateToken(ctx context.Context) (*authAnswer, error) {
	token := c.auth.token
	if c.auth.tokenFunc != nil {
		var err error
		if token, err = c.auth.tokenFunc(ctx); err != nil {
			return nil, fmt.Errorf("booblik: DialConfig.TokenFunc: %w", err)
		}
	}
	if token == "" {
		return nil, &InvalidArgumentError{Field: "token", Got: `""`, Want: "a JWT"}
	}
	done, err := c.authExchange(ctx, "TOKEN", "AUTHENTICATE TOKEN", token)
	if err != nil {
		return nil, err
	}
	if !done.complete {
		return nil, c.broke(apiAuthenticate, &ProtocolError{API: "AUTHENTICATE TOKEN", Detail: "complete 0: a token is one message"})
	}
	return done, nil
}

// authExchange sends one AUTHENTICATE message. label names it in errors; data never appears in one.
func (c *Conn) authExchange(ctx context.Context, mechanism, label, data string) (*authAnswer, error) {
	frame := appendAuthenticateRequest(beginFrame(apiAuthenticate, authenticateVersion), mechanism, data)
	body, err := c.exchangeOnce(ctx, apiAuthenticate, label, frame, true)
	if err != nil {
		return nil, err
	}
	a, err := decodeAuthenticateResponse(body)
	if err != nil {
		return nil, c.broke(apiAuthenticate, err)
	}
	return a, nil
}

func appendAuthenticateRequest(b []byte, mechanism, data string) []byte {
	b = appendString(b, mechanism)
	b = appendInt32(b, int32(len(data)))
	return append(b, data...)
}

func decodeAuthenticateResponse(body []byte) (*authAnswer, error) {
	d := decoder{api: apiAuthenticate, b: body}
	a := &authAnswer{}
	switch complete := d.int8("complete"); {
	case d.err != nil:
	case complete == 0 || complete == 1:
		a.complete = complete == 1
	default:
		d.fail("complete: %d, expected 0 or 1", complete)
	}
	a.data = string(d.take(int(d.int32("data length")), "data"))
	a.principal = d.string("principal")
	a.expiresAtMs = d.int64("expiresAtMs")
	if err := d.done(); err != nil {
		return nil, err
	}
	if !a.complete && (a.principal != "" || a.expiresAtMs != -1) {
		return nil, &ProtocolError{API: apiAuthenticate.String(),
			Detail: fmt.Sprintf("principal %q, expiresAtMs %d while complete is 0, expected \"\" and -1", a.principal, a.expiresAtMs)}
	}
	if a.complete && a.expiresAtMs < -1 {
		return nil, &ProtocolError{API: apiAuthenticate.String(), Detail: fmt.Sprintf("expiresAtMs %d, expected >= -1", a.expiresAtMs)}
	}
	return a, nil
}

// refreshes says whether a refusal of a request is one a new token cures: CREDENTIALS_EXPIRED on a
// connection whose token comes from TokenFunc.
func (c *Conn) refreshes(api apiKey, err error) bool {
	return api != apiAuthenticate && c.auth != nil && c.auth.tokenFunc != nil && errors.Is(err, ErrCredentialsExpired)
}

// expiring says whether the token from TokenFunc is to be replaced before a request of api: it
// expires within tokenRefreshAhead by this client's clock.
func (c *Conn) expiring(api apiKey) bool {
	return api != apiAuthenticate && c.auth != nil && c.auth.tokenFunc != nil && c.expiresAtMs >= 0 &&
		c.now().Add(tokenRefreshAhead).UnixMilli() >= c.expiresAtMs
}
