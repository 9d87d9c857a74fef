package fakebroker

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// TOKEN: a JWT (RFC 7519) signed HS256, its header's kid naming the key, claims sub and exp.

// AddTokenKey lets the fake accept tokens signed with secret under key id kid.
func (b *Broker) AddTokenKey(kid string, secret []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.keys == nil {
		b.keys = map[string][]byte{}
	}
	b.keys[kid] = append([]byte(nil), secret...)
}

// MakeToken signs a JWT HS256 for sub, issued now and expiring at exp.
func MakeToken(kid string, secret []byte, sub string, now, exp time.Time) string {
	header, _ := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT", "kid": kid})
	claims, _ := json.Marshal(map[string]any{"sub": sub, "iat": now.Unix(), "exp": exp.Unix()})
	signed := b64url(header) + "." + b64url(claims)
	return signed + "." + b64url(hs256(secret, signed))
}

// verifyToken returns the token's principal and expiry, or why it is refused.
func (b *Broker) verifyToken(token string, now time.Time) (principal string, expiresAtMs int64, reason string) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", 0, "token: not a JWT"
	}
	var header struct{ Alg, Kid string }
	var claims struct {
		Sub string
		Exp *int64
	}
	if !decodePart(parts[0], &header) || !decodePart(parts[1], &claims) {
		return "", 0, "token: not a JWT"
	}
	b.mu.Lock()
	secret, ok := b.keys[header.Kid]
	b.mu.Unlock()
	signature, err := base64.RawURLEncoding.DecodeString(parts[2])
	if header.Alg != "HS256" || !ok || err != nil || !hmac.Equal(signature, hs256(secret, parts[0]+"."+parts[1])) {
		return "", 0, "token: bad signature or unknown key"
	}
	if claims.Sub == "" || claims.Exp == nil {
		return "", 0, "token: sub and exp are required"
	}
	if *claims.Exp*1000 <= now.UnixMilli() {
		return "", 0, "token: expired"
	}
	return claims.Sub, *claims.Exp * 1000, ""
}

func decodePart(part string, v any) bool {
	raw, err := base64.RawURLEncoding.DecodeString(part)
	return err == nil && json.Unmarshal(raw, v) == nil
}

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func hs256(secret []byte, signed string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(signed))
	return h.Sum(nil)
}
