package booblik

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SCRAM-SHA-256 (RFC 5802 with RFC 7677's hash), client side, without channel binding:
//
//	client-first  n,,n=<saslname>,r=<client nonce>
//	server-first  r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
//	client-final  c=biws,r=<combined nonce>,p=<base64 ClientProof>
//	server-final  v=<base64 ServerSignature>
//
// The client pays the iterations (it computes SaltedPassword) and checks ServerSignature: a broker
// that cannot produce it does not hold the user's keys, and the exchange fails.

const scramMechanism = "SCRAM-SHA-256"

// ErrBrokerNotProven matches a SCRAM exchange whose server-final does not prove the broker holds
// the user's keys: the broker is not the one the password was set up with.
var ErrBrokerNotProven = errors.New("booblik: the broker did not prove itself")

// scramClient is one exchange; its methods go in order: first, final, verify.
type scramClient struct {
	user, password, nonce string
	clientFirstBare       string
	serverSignature       []byte // what server-final must carry, known after final
}

func newSCRAMClient(user, password, nonce string) *scramClient {
	escaped := strings.NewReplacer("=", "=3D", ",", "=2C").Replace(user)
	return &scramClient{user: user, password: password, nonce: nonce, clientFirstBare: "n=" + escaped + ",r=" + nonce}
}

func (s *scramClient) first() string { return "n,," + s.clientFirstBare }

// final reads server-first and returns client-final.
func (s *scramClient) final(serverFirst string) (string, error) {
	fields := strings.Split(serverFirst, ",")
	if len(fields) < 3 {
		return "", scramProtocolError("server-first: %d attributes, expected r, s and i", len(fields))
	}
	nonce, okR := strings.CutPrefix(fields[0], "r=")
	salt64, okS := strings.CutPrefix(fields[1], "s=")
	iter, okI := strings.CutPrefix(fields[2], "i=")
	if !okR || !okS || !okI { // a leading m= (a mandatory extension) lands here too: refused
		return "", scramProtocolError("server-first: attributes %q, expected r=, s=, i=", attributeNames(fields))
	}
	if !strings.HasPrefix(nonce, s.nonce) || len(nonce) == len(s.nonce) {
		return "", scramProtocolError("server-first: its nonce does not extend the client's")
	}
	salt, err := base64.StdEncoding.DecodeString(salt64)
	if err != nil || len(salt) == 0 {
		return "", scramProtocolError("server-first: salt is not base64")
	}
	iterations, err := strconv.Atoi(iter)
	if err != nil || iterations < scramIterationsMin || iterations > scramIterationsMax {
		return "", scramProtocolError("server-first: iterations %q, expected %d..%d", iter, scramIterationsMin, scramIterationsMax)
	}
	salted := pbkdf2SHA256([]byte(s.password), salt, iterations)
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	withoutProof := "c=biws,r=" + nonce
	authMessage := s.clientFirstBare + "," + serverFirst + "," + withoutProof
	proof := hmacSHA256(storedKey[:], authMessage)
	for i := range proof {
		proof[i] ^= clientKey[i]
	}
	s.serverSignature = hmacSHA256(hmacSHA256(salted, "Server Key"), authMessage)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
}

// verify checks server-final against the signature the password gives.
func (s *scramClient) verify(serverFinal string) error {
	if reason, ok := strings.CutPrefix(serverFinal, "e="); ok {
		return scramProtocolError("server-final: an error (%q) in a successful answer", reason)
	}
	v, ok := strings.CutPrefix(serverFinal, "v=")
	if !ok {
		return scramProtocolError("server-final: expected v=")
	}
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i] // extensions follow; none is known
	}
	got, err := base64.StdEncoding.DecodeString(v)
	if err != nil || s.serverSignature == nil || !hmac.Equal(got, s.serverSignature) {
		return &brokerNotProvenError{user: s.user}
	}
	return nil
}

// brokerNotProvenError is a server-final whose signature the password does not give.
type brokerNotProvenError struct{ user string }

func (e *brokerNotProvenError) Error() string {
	return fmt.Sprintf("booblik: AUTHENTICATE %s (user %q): the broker did not prove itself: its server signature "+
		"does not match the password's (a broker without this user's keys, or something in between)", scramMechanism, e.user)
}

func (e *brokerNotProvenError) Is(target error) bool { return target == ErrBrokerNotProven }

func scramProtocolError(format string, args ...any) error {
	return &ProtocolError{API: apiAuthenticate.String() + " " + scramMechanism, Detail: fmt.Sprintf(format, args...)}
}

func attributeNames(fields []string) string {
	names := make([]string, 0, 3)
	for _, f := range fields[:min(3, len(fields))] {
		name, _, _ := strings.Cut(f, "=")
		names = append(names, name)
	}
	return strings.Join(names, ",")
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// pbkdf2SHA256 is PBKDF2-HMAC-SHA-256 (RFC 8018) with a 32-byte key: a single block, so
// U1 = HMAC(password, salt || 1), Ui = HMAC(password, Ui-1), and the key is their XOR.
func pbkdf2SHA256(password, salt []byte, iterations int) []byte {
	h := hmac.New(sha256.New, password)
	h.Write(salt)
	h.Write(binary.BigEndian.AppendUint32(nil, 1))
	u := h.Sum(nil)
	key := append([]byte(nil), u...)
	for i := 1; i < iterations; i++ {
		h.Reset()
		h.Write(u)
		u = h.Sum(u[:0])
		for j := range key {
			key[j] ^= u[j]
		}
	}
	return key
}
