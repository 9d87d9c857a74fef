// The test kit: a fake broker per test, a Conn dialled to it, and contexts that bound every test.
package booblik_test

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

// testTimeout bounds a whole test's exchanges, so a client bug shows up as a failure, not a hang.
const testTimeout = 20 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func startBroker(t *testing.T, topics map[string]int) *fakebroker.Broker {
	t.Helper()
	return fakebroker.Start(t, topics)
}

func dial(t *testing.T, b *fakebroker.Broker) *booblik.Conn {
	t.Helper()
	c, err := booblik.Dial(testContext(t), b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// filled returns n bytes of one value, to make records of a known size.
func filled(n int, v byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = v
	}
	return b
}

func allByteValues() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// dialAddr is dial to an address (a node of a fake cluster, a real broker).
func dialAddr(t *testing.T, addr string) *booblik.Conn {
	t.Helper()
	c, err := booblik.Dial(testContext(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
