package booblik

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestAuthenticateRequestIsEncodedByteForByte(t *testing.T) {
	got := finishFrame(appendAuthenticateRequest(beginFrame(apiAuthenticate, authenticateVersion), "TOKEN", "ab"), 3)
	want := golden(t, `
		00000015          // frameLength 21
		000a 0001         // AUTHENTICATE v1
		00000003          // correlationId
		0005 544f4b454e   // mechanism "TOKEN"
		00000002 6162     // data "ab"
	`)
	if !bytes.Equal(got, want) {
		t.Fatalf("AUTHENTICATE\n got %x\nwant %x", got, want)
	}
}

func TestAuthenticateAnswerIsDecodedFromLiteralBytes(t *testing.T) {
	got, err := decodeAuthenticateResponse(golden(t, `
		01                 // complete
		00000002 763d      // data "v="
		0003 737663        // principal "svc"
		0000018bcfe56800   // expiresAtMs 1700000000000
	`))
	if err != nil {
		t.Fatal(err)
	}
	if *got != (authAnswer{complete: true, data: "v=", principal: "svc", expiresAtMs: 1_700_000_000_000}) {
		t.Fatalf("%+v", got)
	}
}

func TestAuthenticateAnswersThatBreakTheRulesAreProtocolErrorsNamingTheField(t *testing.T) {
	for want, body := range map[string]string{
		"complete: 2":                "02 00000000 0000 ffffffffffffffff",
		"data":                       "00 7fffffff 0000 ffffffffffffffff",
		"while complete is 0":        "00 00000000 0001 61 ffffffffffffffff",
		"expiresAtMs -2":             "01 00000000 0001 61 fffffffffffffffe",
		"bytes after the last field": "01 00000000 0001 61 ffffffffffffffff 00",
	} {
		if _, err := decodeAuthenticateResponse(golden(t, body)); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}

func TestAuthenticationFailedCarriesTheBrokersReason(t *testing.T) {
	err := refusal(CodeAuthenticationFailed, apiAuthenticate, "AUTHENTICATE TOKEN", golden(t, `0007 65787069726564`))
	var failed *AuthenticationFailedError
	if !errors.As(err, &failed) || failed.Reason != "expired" || !errors.Is(err, ErrAuthenticationFailed) {
		t.Fatalf("%v", err)
	}
	if err.Error() != "booblik: AUTHENTICATE TOKEN refused: AUTHENTICATION_FAILED: expired" {
		t.Fatalf("%q", err)
	}
	if (ErrorCode(23)).String() != "UNKNOWN(23)" {
		t.Fatalf("code 23 is %s", ErrorCode(23))
	}
}

func TestSecurityRefusalsAreNamedAndMatchTheirSentinels(t *testing.T) {
	for code, sentinel := range map[ErrorCode]error{
		CodeTLSRequired:            ErrTLSRequired,
		CodeAuthenticationRequired: ErrAuthenticationRequired,
		CodeAuthenticationFailed:   ErrAuthenticationFailed,
		CodeCredentialsExpired:     ErrCredentialsExpired,
		CodeNotAuthorized:          ErrNotAuthorized,
	} {
		err := refusal(code, apiMetadata, "METADATA t", nil)
		if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), code.String()) || code.Retriable() {
			t.Errorf("code %d: %v (retriable %v), want %s by name, not retriable", int16(code), err, code.Retriable(), code)
		}
	}
	if err := refusal(CodeTLSRequired, apiMetadata, "METADATA t", nil); !strings.Contains(err.Error(), "the broker requires TLS: connect with TLS") {
		t.Errorf("TLS_REQUIRED says %q", err)
	}
}
