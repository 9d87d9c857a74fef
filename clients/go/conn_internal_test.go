package booblik

import (
	"context"
	"errors"
	"net"
	"testing"
)

// A broker that takes requests and never answers must not make the client queue behind it forever.
func TestConnGivesUpAfterTooManyUnansweredRequests(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := newConn(client, "pipe")
	for i := int32(1); i <= owedAnswersMax; i++ {
		c.owed = append(c.owed, i)
	}
	_, err := c.Metadata(context.Background())
	if err == nil || errors.Is(err, ErrConnBroken) {
		t.Fatalf("first call: %v, want the cause", err)
	}
	if _, err := c.Metadata(context.Background()); !errors.Is(err, ErrConnBroken) {
		t.Fatalf("after giving up: %v, want ErrConnBroken", err)
	}
}
