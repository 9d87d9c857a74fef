package fakebroker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a set of certificates made for one test: a CA, a server certificate it signed for
// 127.0.0.1 and localhost, a client certificate it signed (CN "alice"), and a client certificate
// signed by another CA, which the fake must refuse. The PEM files live in the test's temp dir.
type PKI struct {
	CAFile, OtherCAFile string
	ServerCert          tls.Certificate
	ClientCertFile      string // CN ClientCN, signed by the CA
	ClientKeyFile       string
	StrangerCertFile    string // CN "mallory", signed by the other CA
	StrangerKeyFile     string
	CAPool              *x509.CertPool
	ClientCN            string
}

type issuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	der  []byte
}

// NewPKI makes the certificates; they are valid from an hour ago for a day.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	dir := t.TempDir()
	ca := newIssuer(t, "booblik test CA", nil)
	other := newIssuer(t, "another CA", nil)
	p := &PKI{ClientCN: "alice", CAPool: x509.NewCertPool()}
	p.CAPool.AddCert(ca.cert)
	p.CAFile = writePEM(t, dir, "ca.pem", "CERTIFICATE", ca.der)
	p.OtherCAFile = writePEM(t, dir, "other-ca.pem", "CERTIFICATE", other.der)

	server := newIssuer(t, "booblik broker", ca, func(c *x509.Certificate) {
		c.DNSNames = []string{"localhost"}
		c.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	})
	p.ServerCert = tls.Certificate{Certificate: [][]byte{server.der}, PrivateKey: server.key}

	p.ClientCertFile, p.ClientKeyFile = clientFiles(t, dir, "client", newIssuer(t, p.ClientCN, ca, clientUse))
	p.StrangerCertFile, p.StrangerKeyFile = clientFiles(t, dir, "stranger", newIssuer(t, "mallory", other, clientUse))
	return p
}

// ServerTLS is the fake's TLS configuration; clientAuth true requires a client certificate the CA signed.
func (p *PKI) ServerTLS(clientAuth bool) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{p.ServerCert}, MinVersion: tls.VersionTLS12}
	if clientAuth {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = p.CAPool
	}
	return cfg
}

func clientUse(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth} }

func newIssuer(t testing.TB, cn string, parent *issuer, edit ...func(*x509.Certificate)) *issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		signer, signerKey = parent.cert, parent.key
	}
	for _, e := range edit {
		e(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &issuer{cert: cert, key: key, der: der}
}

func clientFiles(t testing.TB, dir, name string, c *issuer) (certFile, keyFile string) {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.key)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, dir, name+".pem", "CERTIFICATE", c.der), writePEM(t, dir, name+"-key.pem", "PRIVATE KEY", keyDER)
}

func writePEM(t testing.TB, dir, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
