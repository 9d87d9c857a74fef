package booblik_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The examples (and the README, which shows the same calls) must work against the broker `npm
// start` runs with no flags: topic "default", one partition. ExampleConsumer_Records never ends
// on its own, so it is only compiled.
var examples = []struct {
	name string
	run  func()
}{
	{"Example", Example},
	{"ExampleTopic_Send", ExampleTopic_Send},
	{"ExampleConsumer_Poll", ExampleConsumer_Poll},
	{"ExampleProducer", ExampleProducer},
	{"ExampleConn_ApplyTopics", ExampleConn_ApplyTopics},
	{"ExampleConn_WatchTopics", ExampleConn_WatchTopics},
	{"ExampleConn_ListFragments", ExampleConn_ListFragments},
	{"ExampleClient", ExampleClient},
}

// runExamples runs every example against addr; one that fails calls log.Fatal, which fails the
// whole test binary with the example's error.
func runExamples(t *testing.T, addr string) {
	t.Helper()
	saved := exampleBroker
	exampleBroker = addr
	t.Cleanup(func() { exampleBroker = saved })
	quiet(t)
	for _, ex := range examples {
		ex.run()
	}
}

func TestExamplesWorkAgainstTheDefaultTopics(t *testing.T) {
	b := startBroker(t, map[string]int{"default": 1})
	runExamples(t, b.Addr())
	// Example writes 2 records, ExampleTopic_Send 1, ExampleProducer 1000, ExampleClient 1.
	if got := len(b.Records("default", 0)); got != 1004 {
		t.Fatalf("%d records in default/0, want 1004", got)
	}
}

func TestExamplesWorkAgainstTheBrokerNpmStartRuns(t *testing.T) {
	runExamples(t, startDefaultBroker(t))
}

var listening = regexp.MustCompile(`booblik listening on (\S+?):(\d+)\b`)

// startDefaultBroker runs the real broker as `npm start` does with no flags (its default topics),
// but on a free port, with HTTP off and a data directory of its own; it stops with the test.
func startDefaultBroker(t *testing.T) string {
	t.Helper()
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	entry := filepath.Join(root, "packages", "broker", "dist", "main.js")
	node, err := exec.LookPath("node")
	if _, statErr := os.Stat(entry); err != nil || statErr != nil {
		t.Skip("the broker is not built (npx tsc -b at the repository root), or node is missing")
	}
	cmd := exec.Command(node, entry)
	cmd.Dir = root
	for _, kv := range os.Environ() { // only our BOOBLIK_ variables: a stray BOOBLIK_TOPICS changes the defaults
		if !strings.HasPrefix(kv, "BOOBLIK_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "BOOBLIK_PORT=0", "BOOBLIK_HTTP_PORT=-1", "BOOBLIK_DATA_DIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	drained := make(chan struct{})
	go func() { // drains the log for the broker's whole life, so it never blocks on a full pipe
		defer close(drained)
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if m := listening.FindStringSubmatch(lines.Text()); m != nil {
				select {
				case addr <- m[1] + ":" + m[2]:
				default:
				}
			}
		}
		close(addr)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-drained:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-drained
		}
		_ = cmd.Wait()
	})
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatal("the broker exited before it listened")
		}
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("the broker did not start within 30 s")
		return ""
	}
}

// quiet sends what the examples print to /dev/null for the rest of the test.
func quiet(t *testing.T) {
	t.Helper()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = devNull
	t.Cleanup(func() {
		os.Stdout = stdout
		devNull.Close()
	})
}
