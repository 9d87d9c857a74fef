package booblik

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// TLSFiles names the PEM files of a TLS connection to a broker.
type TLSFiles struct {
	// CAFile holds the CA certificates the broker's certificate must chain to; empty: the
	// system's CAs.
	CAFile string
	// CertFile and KeyFile are the client's certificate and key, for a broker with
	// booblik.tls.client.auth=required (the certificate's CN is then the principal); both or neither.
	CertFile, KeyFile string
	// ServerName is the name sent (SNI) and checked in the broker's certificate; empty: the
	// address's host.
	ServerName string
}

// NewTLSConfig builds a *tls.Config (TLS 1.2 or later) for DialConfig.TLS from files.
func NewTLSConfig(files TLSFiles) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: files.ServerName}
	if files.CAFile != "" {
		pem, err := os.ReadFile(files.CAFile)
		if err != nil {
			return nil, fmt.Errorf("booblik: TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &InvalidArgumentError{Field: "TLSFiles.CAFile", Got: fmt.Sprintf("%q with no PEM certificate", files.CAFile),
				Want: "one or more PEM CERTIFICATE blocks"}
		}
		cfg.RootCAs = pool
	}
	if (files.CertFile == "") != (files.KeyFile == "") {
		return nil, &InvalidArgumentError{Field: "TLSFiles", Got: "only one of CertFile and KeyFile",
			Want: "both (a client certificate and its key) or neither"}
	}
	if files.CertFile != "" {
		// The error names the files, never the key's bytes.
		cert, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("booblik: TLS client certificate %s with key %s: %w", files.CertFile, files.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
