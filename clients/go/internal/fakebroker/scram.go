package fakebroker

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"strings"
)

// The server side of SCRAM-SHA-256 (RFC 5802, RFC 7677), written apart from the client's on
// purpose: the two meet only on the wire.

const scramIterations = 4096

// scramUser is what a broker keeps of a user: never the password.
type scramUser struct {
	salt                 []byte
	iterations           int
	storedKey, serverKey []byte
}

// scramExchange is a SCRAM exchange between its first and final messages.
type scramExchange struct {
	name, clientFirstBare, serverFirst, nonce string
	user                                      scramUser
	known                                     bool
}

// unknownUserSecret salts the server-first the fake makes up for a user it does not have.
var unknownUserSecret = randomBytes(32)

// AddUser adds (or replaces) a SCRAM user, keeping only salt, iterations, StoredKey and ServerKey.
func (b *Broker) AddUser(name, password string) {
	salt := randomBytes(16)
	salted := pbkdf2SHA256([]byte(password), salt, scramIterations)
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.users == nil {
		b.users = map[string]scramUser{}
	}
	b.users[name] = scramUser{salt: salt, iterations: scramIterations, storedKey: stored[:], serverKey: mac(salted, "Server Key")}
}

func (b *Broker) scramStep(sess *session, req Request, sec Security) []byte {
	id := req.CorrelationID
	msg := string(req.AuthData)
	if strings.HasPrefix(msg, "c=") {
		x := sess.scram
		sess.scram = nil // whatever happens, this exchange is over
		if x == nil {
			return authFailed(id, "SCRAM: a client-final with no client-first before it")
		}
		withoutProof, proof, ok := strings.Cut(msg, ",p=")
		if !ok || withoutProof != "c=biws,r="+x.nonce {
			return authFailed(id, "SCRAM: the client-final does not carry the combined nonce")
		}
		authMessage := x.clientFirstBare + "," + x.serverFirst + "," + withoutProof
		clientProof, err := base64.StdEncoding.DecodeString(proof)
		if err != nil || len(clientProof) != sha256.Size {
			return authFailed(id, "wrong user name or password")
		}
		signature := mac(x.user.storedKey, authMessage)
		for i := range clientProof {
			clientProof[i] ^= signature[i]
		}
		stored := sha256.Sum256(clientProof)
		if !hmac.Equal(stored[:], x.user.storedKey) || !x.known {
			return authFailed(id, "wrong user name or password")
		}
		serverSignature := mac(x.user.serverKey, authMessage)
		if sec.ForgeServerSignature {
			serverSignature[0] ^= 0xff
		}
		sess.principal, sess.expiresAtMs = x.name, -1
		final := "v=" + base64.StdEncoding.EncodeToString(serverSignature)
		return authAnswer(id, true, []byte(final), x.name, -1)
	}
	sess.scram = nil // a new client-first starts over
	bare, ok := strings.CutPrefix(msg, "n,,")
	if !ok {
		return authFailed(id, "SCRAM: expected a client-first starting n,, (no channel binding, no authzid)")
	}
	encodedName, clientNonce, ok := strings.Cut(strings.TrimPrefix(bare, "n="), ",r=")
	if !strings.HasPrefix(bare, "n=") || !ok || encodedName == "" || clientNonce == "" || strings.Contains(clientNonce, ",") {
		return authFailed(id, "SCRAM: malformed client-first")
	}
	name := strings.NewReplacer("=2C", ",", "=3D", "=").Replace(encodedName)
	b.mu.Lock()
	user, known := b.users[name]
	b.mu.Unlock()
	if !known { // a made-up salt: nothing tells the client the user does not exist
		user = scramUser{salt: mac(unknownUserSecret, name)[:16], iterations: scramIterations,
			storedKey: randomBytes(32), serverKey: randomBytes(32)}
	}
	nonce := clientNonce + base64.RawStdEncoding.EncodeToString(randomBytes(18))
	serverFirst := "r=" + nonce + ",s=" + base64.StdEncoding.EncodeToString(user.salt) + ",i=" + strconv.Itoa(user.iterations)
	sess.scram = &scramExchange{name: name, clientFirstBare: bare, serverFirst: serverFirst, nonce: nonce, user: user, known: known}
	return authAnswer(id, false, []byte(serverFirst), "", -1)
}

func mac(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// pbkdf2SHA256 is PBKDF2-HMAC-SHA-256 with a 32-byte output: one block.
func pbkdf2SHA256(password, salt []byte, iterations int) []byte {
	h := hmac.New(sha256.New, password)
	h.Write(salt)
	h.Write(binary.BigEndian.AppendUint32(nil, 1))
	u := h.Sum(nil)
	out := append([]byte(nil), u...)
	for i := 1; i < iterations; i++ {
		h.Reset()
		h.Write(u)
		u = h.Sum(u[:0])
		for j := range out {
			out[j] ^= u[j]
		}
	}
	return out
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return b
}
