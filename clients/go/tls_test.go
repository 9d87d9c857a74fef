package booblik_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

// tlsBroker is a fake that speaks TLS with the PKI's server certificate.
func tlsBroker(t *testing.T, pki *fakebroker.PKI, sec fakebroker.Security) *fakebroker.Broker {
	t.Helper()
	b := startBroker(t, map[string]int{"t": 1})
	if sec.TLS == nil {
		sec.TLS = pki.ServerTLS(false)
	}
	b.Secure(sec)
	return b
}

func tlsConfig(t *testing.T, files booblik.TLSFiles) *tls.Config {
	t.Helper()
	cfg, err := booblik.NewTLSConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestTLSWithTheCAFileConnectsAndServes(t *testing.T) {
	pki := fakebroker.NewPKI(t)
	b := tlsBroker(t, pki, fakebroker.Security{})
	c, err := dialWith(t, b.Addr(), booblik.DialConfig{TLS: tlsConfig(t, booblik.TLSFiles{CAFile: pki.CAFile})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Produce(testContext(t), "t", 0, [][]byte{[]byte("over TLS")}, booblik.AckWritten); err != nil {
		t.Fatal(err)
	}
	// The host of the address is the name checked when none is given: localhost is in the certificate.
	_, port, _ := net.SplitHostPort(b.Addr())
	if _, err := dialWith(t, "localhost:"+port, booblik.DialConfig{TLS: tlsConfig(t, booblik.TLSFiles{CAFile: pki.CAFile})}); err != nil {
		t.Fatalf("localhost: %v", err)
	}
}

func TestTLSRefusesABrokerSignedByAnotherCA(t *testing.T) {
	pki := fakebroker.NewPKI(t)
	b := tlsBroker(t, pki, fakebroker.Security{})
	_, err := dialWith(t, b.Addr(), booblik.DialConfig{TLS: tlsConfig(t, booblik.TLSFiles{CAFile: pki.OtherCAFile})})
	var unknownCA x509.UnknownAuthorityError
	if !errors.As(err, &unknownCA) || errors.Is(err, booblik.ErrNoTLSAnswer) {
		t.Fatalf("broker certificate from another CA: %v, want x509's unknown authority", err)
	}
}

func TestTLSRefusesANameTheCertificateDoesNotHave(t *testing.T) {
	pki := fakebroker.NewPKI(t)
	b := tlsBroker(t, pki, fakebroker.Security{})
	_, err := dialWith(t, b.Addr(), booblik.DialConfig{TLS: tlsConfig(t, booblik.TLSFiles{CAFile: pki.CAFile, ServerName: "broker.example.com"})})
	var mismatch x509.HostnameError
	if !errors.As(err, &mismatch) || !strings.Contains(err.Error(), "broker.example.com") {
		t.Fatalf("server name not in the certificate: %v, want x509's hostname error", err)
	}
}

func TestMutualTLSMakesTheCertificatesCNThePrincipal(t *testing.T) {
	pki := fakebroker.NewPKI(t)
	b := tlsBroker(t, pki, fakebroker.Security{TLS: pki.ServerTLS(true), AuthRequired: true})
	cfg := tlsConfig(t, booblik.TLSFiles{CAFile: pki.CAFile, CertFile: pki.ClientCertFile, KeyFile: pki.ClientKeyFile})
	c, err := dialWith(t, b.Addr(), booblik.DialConfig{TLS: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Metadata(testContext(t), "t"); err != nil {
		t.Fatalf("METADATA with a client certificate, auth required: %v", err)
	}
	if md := b.RequestsOf(fakebroker.APIMetadata); len(md) != 1 || md[0].Principal != pki.ClientCN {
		t.Fatalf("served %+v, want as %s", md, pki.ClientCN)
	}
}

func TestMutualTLSRefusesAClientCertificateFromAnotherCA(t *testing.T) {
	pki := fakebroker.NewPKI(t)
	b := tlsBroker(t, pki, fakebroker.Security{TLS: pki.ServerTLS(true)})
	cfg := tlsConfig(t, booblik.TLSFiles{CAFile: pki.CAFile, CertFile: pki.StrangerCertFile, KeyFile: pki.StrangerKeyFile})
	// In TLS 1.3 the broker checks the client's certificate after the client's handshake is done,
	// so the refusal may reach the first exchange rather than the dial.
	c, err := dialWith(t, b.Addr(), booblik.DialConfig{TLS: cfg})
	if err == nil {
		_, err = c.Metadata(testContext(t), "t")
	}
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("client certificate from another CA: %v, want the TLS alert", err)
	}
	if n := len(b.Requests()); n != 0 {
		t.Fatalf("%d requests served", n)
	}
}

func TestPlaintextBrokerAnswersTLSWithAClearMessage(t *testing.T) {
	b := startBroker(t, map[string]int{"t": 1}) // booblik.tls=off: TLS bytes read as a huge frame length
	pki := fakebroker.NewPKI(t)
	_, err := dialWith(t, b.Addr(), booblik.DialConfig{TLS: tlsConfig(t, booblik.TLSFiles{CAFile: pki.CAFile})})
	if !errors.Is(err, booblik.ErrNoTLSAnswer) || !strings.Contains(err.Error(), "the broker did not answer TLS: is booblik.tls on?") {
		t.Fatalf("TLS to a plaintext broker: %v", err)
	}
}

func TestTLSRequiredIsShownByNameAndEndsTheConnection(t *testing.T) {
	pki := fakebroker.NewPKI(t)
	b := tlsBroker(t, pki, fakebroker.Security{TLSRequired: true})
	c := dial(t, b)
	_, err := c.Metadata(testContext(t), "t")
	if !errors.Is(err, booblik.ErrTLSRequired) || !strings.Contains(err.Error(), "TLS_REQUIRED") ||
		!strings.Contains(err.Error(), "the broker requires TLS") {
		t.Fatalf("plaintext to booblik.tls=required: %v", err)
	}
	if _, err := c.Metadata(testContext(t), "t"); !errors.Is(err, booblik.ErrConnBroken) || !errors.Is(err, booblik.ErrTLSRequired) {
		t.Fatalf("after TLS_REQUIRED the broker has closed: %v, want ErrConnBroken naming TLS_REQUIRED", err)
	}
	_, err = dialWith(t, b.Addr(), booblik.DialConfig{User: testUser, Password: testPassword})
	if !errors.Is(err, booblik.ErrTLSRequired) {
		t.Fatalf("an authenticating plaintext dial: %v, want TLS_REQUIRED", err)
	}
}

func TestTLSThenSCRAMThroughTheClient(t *testing.T) {
	pki := fakebroker.NewPKI(t)
	b := tlsBroker(t, pki, fakebroker.Security{TLSRequired: true, AuthRequired: true})
	b.AddUser(testUser, testPassword)
	client, err := booblik.NewClient(testContext(t), []string{b.Addr()}, booblik.ClientConfig{Dial: booblik.DialConfig{
		TLS: tlsConfig(t, booblik.TLSFiles{CAFile: pki.CAFile}), User: testUser, Password: testPassword}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if _, err := client.Produce(testContext(t), "t", 0, [][]byte{[]byte("x")}, booblik.AckWritten); err != nil {
		t.Fatal(err)
	}
}

func TestNewTLSConfigRefusesFilesItCannotUse(t *testing.T) {
	pki := fakebroker.NewPKI(t)
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, files := range map[string]booblik.TLSFiles{
		"a CA file with no certificate": {CAFile: notPEM},
		"a certificate without its key": {CertFile: pki.ClientCertFile},
		"a key without its certificate": {KeyFile: pki.ClientKeyFile},
	} {
		if _, err := booblik.NewTLSConfig(files); !errors.Is(err, booblik.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	_, err := booblik.NewTLSConfig(booblik.TLSFiles{CertFile: pki.ClientKeyFile, KeyFile: pki.ClientCertFile})
	key, _ := os.ReadFile(pki.ClientKeyFile)
	if err == nil || strings.Contains(err.Error(), string(key[30:60])) {
		t.Fatalf("swapped certificate and key: %v, want an error naming the files, not their bytes", err)
	}
}
