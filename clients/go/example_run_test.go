package booblik_test

import (
	"os"
	"testing"
)

// The examples (and the README, which shows the same calls) must work against the broker `npm
// start` runs with no flags: topic "default", one partition. ExampleConsumer_Records never ends
// on its own, so it is only compiled.
func TestExamplesWorkAgainstTheDefaultTopics(t *testing.T) {
	b := startBroker(t, map[string]int{"default": 1})
	saved := exampleBroker
	exampleBroker = b.Addr()
	t.Cleanup(func() { exampleBroker = saved })
	quiet(t)

	examples := []struct {
		name    string
		run     func()
		records int // how many records the example writes
	}{
		{"Example", Example, 2},
		{"ExampleTopic_Send", ExampleTopic_Send, 1},
		{"ExampleConsumer_Poll", ExampleConsumer_Poll, 0},
		{"ExampleProducer", ExampleProducer, 1000},
	}
	written := 0
	for _, ex := range examples {
		ex.run() // an example that fails calls log.Fatal, which fails the whole test binary
		written += ex.records
		if got := len(b.Records("default", 0)); got != written {
			t.Fatalf("after %s: %d records in default/0, want %d", ex.name, got, written)
		}
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
