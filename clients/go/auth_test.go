package booblik_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

const (
	testUser     = "alice"
	testPassword = "correct horse battery staple"
	tokenKid     = "k1"
)

var tokenSecret = []byte("a secret of at least thirty-two bytes")

// authBroker is a fake with booblik.auth=required, one SCRAM user and one token key.
func authBroker(t *testing.T, sec fakebroker.Security) *fakebroker.Broker {
	t.Helper()
	b := startBroker(t, map[string]int{"t": 1})
	sec.AuthRequired = true
	b.Secure(sec)
	b.AddUser(testUser, testPassword)
	b.AddTokenKey(tokenKid, tokenSecret)
	return b
}

func dialWith(t *testing.T, addr string, cfg booblik.DialConfig) (*booblik.Conn, error) {
	t.Helper()
	c, err := booblik.DialWith(testContext(t), addr, cfg)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func TestSCRAMAuthenticatesBeforeDialReturns(t *testing.T) {
	b := authBroker(t, fakebroker.Security{})
	c, err := dialWith(t, b.Addr(), booblik.DialConfig{User: testUser, Password: testPassword})
	if err != nil {
		t.Fatal(err)
	}
	if c.Principal() != testUser {
		t.Fatalf("principal %q, want %q", c.Principal(), testUser)
	}
	if _, err := c.Metadata(testContext(t), "t"); err != nil {
		t.Fatalf("METADATA after SCRAM: %v", err)
	}
	if md := b.RequestsOf(fakebroker.APIMetadata); len(md) != 1 || md[0].Principal != testUser {
		t.Fatalf("METADATA served as %+v, want as %s", md, testUser)
	}
}

func TestWrongPasswordIsAuthenticationFailedWithTheBrokersReason(t *testing.T) {
	b := authBroker(t, fakebroker.Security{})
	const wrong = "Tr0ub4dor&3"
	_, err := dialWith(t, b.Addr(), booblik.DialConfig{User: testUser, Password: wrong})
	var failed *booblik.AuthenticationFailedError
	if !errors.Is(err, booblik.ErrAuthenticationFailed) || !errors.As(err, &failed) || failed.Reason == "" {
		t.Fatalf("wrong password: %v, want AUTHENTICATION_FAILED with a reason", err)
	}
	if !strings.Contains(err.Error(), "AUTHENTICATION_FAILED: "+failed.Reason) || strings.Contains(err.Error(), wrong) {
		t.Fatalf("error text %q: want the code and reason, never the password", err)
	}
	_, unknown := dialWith(t, b.Addr(), booblik.DialConfig{User: "nobody", Password: wrong})
	var unknownFailed *booblik.AuthenticationFailedError
	if !errors.As(unknown, &unknownFailed) || unknownFailed.Reason != failed.Reason {
		t.Fatalf("unknown user: %v, want the same refusal as a wrong password (%q)", unknown, failed.Reason)
	}
}

func TestBrokerThatCannotProveItselfIsRefused(t *testing.T) {
	b := authBroker(t, fakebroker.Security{ForgeServerSignature: true})
	_, err := dialWith(t, b.Addr(), booblik.DialConfig{User: testUser, Password: testPassword})
	if !errors.Is(err, booblik.ErrBrokerNotProven) {
		t.Fatalf("forged server signature: %v, want ErrBrokerNotProven", err)
	}
}

func TestAuthenticationRequiredIsShownByName(t *testing.T) {
	b := authBroker(t, fakebroker.Security{})
	c := dial(t, b)
	for i := 0; i < 2; i++ { // the connection stays open: the second call is answered the same
		_, err := c.Metadata(testContext(t), "t")
		if !errors.Is(err, booblik.ErrAuthenticationRequired) || !strings.Contains(err.Error(), "AUTHENTICATION_REQUIRED") {
			t.Fatalf("call %d without credentials: %v, want AUTHENTICATION_REQUIRED", i+1, err)
		}
	}
}

func TestTokenAuthenticatesAsItsSubject(t *testing.T) {
	b := authBroker(t, fakebroker.Security{})
	now := time.Now()
	token := fakebroker.MakeToken(tokenKid, tokenSecret, "svc-orders", now, now.Add(time.Hour))
	c, err := dialWith(t, b.Addr(), booblik.DialConfig{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if c.Principal() != "svc-orders" {
		t.Fatalf("principal %q", c.Principal())
	}
	forged := fakebroker.MakeToken(tokenKid, []byte("another secret entirely, also long"), "svc-orders", now, now.Add(time.Hour))
	_, err = dialWith(t, b.Addr(), booblik.DialConfig{Token: forged})
	if !errors.Is(err, booblik.ErrAuthenticationFailed) || strings.Contains(err.Error(), forged) {
		t.Fatalf("token signed with another key: %v, want AUTHENTICATION_FAILED without the token", err)
	}
}

// tokenClock is the fake's clock and the tokens' issuer in one, so a test moves time for both.
type tokenClock struct {
	mu     sync.Mutex
	now    time.Time
	issued int
}

func (k *tokenClock) Now() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.now
}

func (k *tokenClock) advance(d time.Duration) {
	k.mu.Lock()
	k.now = k.now.Add(d)
	k.mu.Unlock()
}

// token issues a token valid for a minute from the clock's now.
func (k *tokenClock) token(context.Context) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.issued++
	return fakebroker.MakeToken(tokenKid, tokenSecret, "svc", k.now, k.now.Add(time.Minute)), nil
}

func TestTokenFuncIsAskedAgainOnCredentialsExpiredAndTheRequestSentOnce(t *testing.T) {
	clock := &tokenClock{now: time.Unix(1_800_000_000, 0)}
	b := authBroker(t, fakebroker.Security{Now: clock.Now})
	c, err := dialWith(t, b.Addr(), booblik.DialConfig{TokenFunc: clock.token})
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(2 * time.Minute) // the first token has expired on the live connection
	if _, err := c.Produce(testContext(t), "t", 0, [][]byte{[]byte("after expiry")}, booblik.AckWritten); err != nil {
		t.Fatalf("PRODUCE after the token expired: %v, want it re-authenticated and sent once more", err)
	}
	if clock.issued != 2 {
		t.Fatalf("TokenFunc asked %d times, want 2 (dial, then CREDENTIALS_EXPIRED)", clock.issued)
	}
	var apis []int16
	for _, r := range b.Requests() {
		if r.Conn != 1 {
			t.Fatalf("request %+v on connection %d: re-authentication must stay on the same connection", r, r.Conn)
		}
		apis = append(apis, r.APIKey)
	}
	want := []int16{fakebroker.APIAuthenticate, fakebroker.APIProduce, fakebroker.APIAuthenticate, fakebroker.APIProduce}
	if len(apis) != len(want) || apis[0] != want[0] || apis[1] != want[1] || apis[2] != want[2] || apis[3] != want[3] {
		t.Fatalf("requests %v, want %v", apis, want)
	}
	if got := b.Records("t", 0); len(got) != 1 {
		t.Fatalf("%d records stored, want exactly 1", len(got))
	}
}

func TestExpiredTokenIsReplacedBeforeAnUnansweredProduceSoItsRecordIsNotLost(t *testing.T) {
	clock := &tokenClock{now: time.Unix(1_800_000_000, 0)}
	b := authBroker(t, fakebroker.Security{Now: clock.Now})
	c, err := dialWith(t, b.Addr(), booblik.DialConfig{TokenFunc: clock.token})
	if err != nil {
		t.Fatal(err)
	}
	booblik.SetConnClock(c, clock.Now)
	clock.advance(61 * time.Second) // expired: an AckNone PRODUCE is refused without an answer
	if _, err := c.Produce(testContext(t), "t", 0, [][]byte{[]byte("fire and forget")}, booblik.AckNone); err != nil {
		t.Fatal(err)
	}
	b.WaitUntil("the AckNone record stored", func() bool { return len(b.Records("t", 0)) == 1 })
	if clock.issued != 2 {
		t.Fatalf("TokenFunc asked %d times, want 2", clock.issued)
	}
}

func TestFixedTokenThatExpiresReachesTheCallerAsCredentialsExpired(t *testing.T) {
	clock := &tokenClock{now: time.Unix(1_800_000_000, 0)}
	b := authBroker(t, fakebroker.Security{Now: clock.Now})
	token, _ := clock.token(context.Background())
	c, err := dialWith(t, b.Addr(), booblik.DialConfig{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(2 * time.Minute)
	_, err = c.Metadata(testContext(t), "t")
	if !errors.Is(err, booblik.ErrCredentialsExpired) || !strings.Contains(err.Error(), "CREDENTIALS_EXPIRED") {
		t.Fatalf("expired fixed token: %v, want CREDENTIALS_EXPIRED", err)
	}
}

func TestClientAuthenticatesEveryConnectionItDialsAgain(t *testing.T) {
	b := authBroker(t, fakebroker.Security{})
	client, err := booblik.NewClient(testContext(t), []string{b.Addr()}, booblik.ClientConfig{
		RouteRetryDelay: time.Millisecond, Dial: booblik.DialConfig{User: testUser, Password: testPassword}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	var once sync.Once
	b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
		cut := false
		if r.APIKey == fakebroker.APIMetadata {
			once.Do(func() { cut = true })
		}
		return fakebroker.Action{Close: true}, cut // the first METADATA loses its connection
	})
	if _, err := client.Metadata(testContext(t), "t"); err != nil {
		t.Fatalf("METADATA over a connection dialed again: %v", err)
	}
	served := b.RequestsOf(fakebroker.APIMetadata)
	last := served[len(served)-1]
	if len(served) != 2 || last.Conn == served[0].Conn || last.Principal != testUser {
		t.Fatalf("METADATA requests %+v: want the second on a new connection, authenticated as %s", served, testUser)
	}
}

func TestDialConfigRefusesTwoWaysToAuthenticate(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1})
	for name, cfg := range map[string]booblik.DialConfig{
		"user and token":          {User: "u", Password: "p", Token: "x"},
		"token and token func":    {Token: "x", TokenFunc: func(context.Context) (string, error) { return "x", nil }},
		"a user with no password": {User: "u"},
	} {
		if _, err := booblik.DialWith(testContext(t), b.Addr(), cfg); !errors.Is(err, booblik.ErrInvalidArgument) || strings.Contains(err.Error(), `"p"`) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if n := len(b.Requests()); n != 0 {
		t.Fatalf("%d requests reached the broker", n)
	}
}

func TestClientDoesNotDialAgainAfterItsCredentialsAreRefused(t *testing.T) {
	b := authBroker(t, fakebroker.Security{})
	now := time.Now()
	good := fakebroker.MakeToken(tokenKid, tokenSecret, "svc", now, now.Add(time.Hour))
	var mu sync.Mutex
	tokens := 0
	tokenFunc := func(context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		tokens++
		if tokens == 1 {
			return good, nil
		}
		return "not-a-jwt", nil // the identity provider now hands out garbage
	}
	client, err := booblik.NewClient(testContext(t), []string{b.Addr()}, booblik.ClientConfig{
		RouteRetryDelay: time.Millisecond, Dial: booblik.DialConfig{TokenFunc: tokenFunc}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	b.Intercept(func(r fakebroker.Request) (fakebroker.Action, bool) {
		return fakebroker.Action{Close: true}, r.APIKey == fakebroker.APIMetadata
	})
	_, err = client.Metadata(testContext(t), "t")
	if !errors.Is(err, booblik.ErrAuthenticationFailed) {
		t.Fatalf("redial with a refused token: %v, want AUTHENTICATION_FAILED", err)
	}
	if n := len(b.RequestsOf(fakebroker.APIAuthenticate)); n != 2 {
		t.Fatalf("%d AUTHENTICATE requests, want 2: the first dial and one redial, no retries of a refusal", n)
	}
}
