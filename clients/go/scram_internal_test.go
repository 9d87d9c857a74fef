package booblik

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// RFC 7677 section 3: the client's messages are computed from the vector's inputs, not pinned.
const (
	rfc7677Nonce       = "rOprNGfwEbeRWgbNEkqO"
	rfc7677ServerFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	rfc7677ClientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	rfc7677ServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
)

func TestSCRAMComputesTheRFC7677ClientProofAndChecksItsServerSignature(t *testing.T) {
	s := newSCRAMClient("user", "pencil", rfc7677Nonce)
	if got, want := s.first(), "n,,n=user,r="+rfc7677Nonce; got != want {
		t.Fatalf("client-first %q, want %q", got, want)
	}
	final, err := s.final(rfc7677ServerFirst)
	if err != nil {
		t.Fatal(err)
	}
	if final != rfc7677ClientFinal {
		t.Fatalf("client-final\n got %q\nwant %q", final, rfc7677ClientFinal)
	}
	if err := s.verify(rfc7677ServerFinal); err != nil {
		t.Fatalf("the vector's server-final refused: %v", err)
	}
}

func TestSCRAMRefusesAServerSignatureThatDoesNotVerify(t *testing.T) {
	s := newSCRAMClient("user", "pencil", rfc7677Nonce)
	if _, err := s.final(rfc7677ServerFirst); err != nil {
		t.Fatal(err)
	}
	forged := "v=" + strings.Repeat("A", 43) + "="
	if err := s.verify(forged); !errors.Is(err, ErrBrokerNotProven) {
		t.Fatalf("forged server signature: %v, want ErrBrokerNotProven", err)
	}
	if err := s.verify("e=other-error"); !errors.Is(err, ErrProtocol) {
		t.Fatalf("an e= in a success: %v, want ErrProtocol", err)
	}
}

func TestSCRAMEscapesCommaAndEqualsInTheUserName(t *testing.T) {
	if got := newSCRAMClient("a,b=c", "p", "N").first(); got != "n,,n=a=2Cb=3Dc,r=N" {
		t.Fatalf("client-first %q", got)
	}
}

func TestSCRAMRefusesAServerFirstThatWeakensOrHijacksTheExchange(t *testing.T) {
	for name, serverFirst := range map[string]string{
		"a nonce that does not extend the client's": "r=someoneElse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
		"the client's nonce alone":                  "r=" + rfc7677Nonce + ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
		"fewer than 4096 iterations":                "r=" + rfc7677Nonce + "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095",
		"iterations past the client's limit":        "r=" + rfc7677Nonce + "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=999999999",
		"a mandatory extension":                     "m=ext,r=" + rfc7677Nonce + "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
		"a salt that is not base64":                 "r=" + rfc7677Nonce + "x,s=!!,i=4096",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := newSCRAMClient("user", "pencil", rfc7677Nonce).final(serverFirst)
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("%v, want ErrProtocol", err)
			}
			if strings.Contains(err.Error(), "pencil") {
				t.Fatalf("the password reached the error: %v", err)
			}
		})
	}
}

// The widely published PBKDF2-HMAC-SHA-256 vectors for "password" and "salt", 32 bytes.
func TestPBKDF2MatchesThePublishedVectors(t *testing.T) {
	for iterations, want := range map[int]string{
		1:    "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b",
		4096: "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a",
	} {
		if got := hex.EncodeToString(pbkdf2SHA256([]byte("password"), []byte("salt"), iterations)); got != want {
			t.Errorf("%d iterations: %s, want %s", iterations, got, want)
		}
	}
}
