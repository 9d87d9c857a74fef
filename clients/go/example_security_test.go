package booblik_test

import (
	"context"
	"fmt"
	"log"
	"os"

	booblik "github.com/youndie/booblik/clients/go"
)

// ExampleDialWith needs a broker with TLS and users (booblik.tls, booblik.auth), so go test only
// compiles it; the tests in tls_test.go and auth_test.go run the same calls against the fake.
func ExampleDialWith() {
	ctx := context.Background()
	tlsConfig, err := booblik.NewTLSConfig(booblik.TLSFiles{CAFile: "/etc/booblik/ca.pem"})
	if err != nil {
		log.Fatal(err)
	}
	conn, err := booblik.DialWith(ctx, "localhost:9092", booblik.DialConfig{
		TLS:      tlsConfig,
		User:     "orders",
		Password: os.Getenv("BOOBLIK_PASSWORD"), // never in the code, never in a log line
	})
	if err != nil {
		log.Fatal(err) // a wrong password: booblik.ErrAuthenticationFailed, with the broker's reason
	}
	defer conn.Close()
	fmt.Println("authenticated as", conn.Principal())
}
