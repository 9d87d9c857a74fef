package booblik_test

import (
	"bufio"
	"errors"
	"os/exec"
	"strings"
	"testing"

	booblik "github.com/youndie/booblik/clients/go"
)

// httpServerJS is a real HTTP server, the one the broker's own HTTP port runs on (Node's): it
// answers bytes that are not HTTP with "HTTP/1.1 400" at once, as a client that dialled that port
// by mistake sees. (Go's net/http would wait for a newline that a booblik frame need not hold.)
const httpServerJS = `
const server = require('node:http').createServer((req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`

// startHTTPServer starts it on a free port and returns its 127.0.0.1:port; it stops with the test.
func startHTTPServer(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node (the HTTP server the broker's HTTP port runs on) is not installed")
	}
	cmd := exec.Command(node, "-e", httpServerJS)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the server exits when its stdin ends
		_ = cmd.Wait()
	})
	port, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the HTTP server did not start: %v", err)
	}
	return "127.0.0.1:" + strings.TrimSpace(port)
}

func TestHTTPPortIsNamedNotReadAsAFrameLength(t *testing.T) {
	addr := startHTTPServer(t)
	c, err := booblik.Dial(testContext(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Metadata(testContext(t))
	want := "booblik: " + addr + " speaks HTTP; the booblik port is set by booblik.port"
	var he *booblik.HTTPAnswerError
	if err == nil || err.Error() != want || !errors.As(err, &he) || !errors.Is(err, booblik.ErrProtocol) {
		t.Fatalf("metadata from an HTTP port: %v; want %q", err, want)
	}
	if _, err := c.Metadata(testContext(t)); !errors.Is(err, booblik.ErrConnBroken) {
		t.Fatalf("after an HTTP answer: %v, want ErrConnBroken", err)
	}
}
