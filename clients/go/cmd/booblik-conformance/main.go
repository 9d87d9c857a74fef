// Command booblik-conformance is the Go client's side of the conformance contract: it carries out
// one verb against the broker at $BOOBLIK_BROKER and prints key=value lines on stdout.
//
//	booblik-conformance capabilities
//	booblik-conformance metadata <topic>
//	booblik-conformance produce <topic> <partition> <none|written|forced> <hex>[,<hex>...]
//	booblik-conformance produce-keyed <topic> <keyHex> <payloadHex>
//	booblik-conformance fetch <topic> <partition> <offset> <maxBytes>
//	booblik-conformance topics-apply <name> <partitions> <k=v[,k=v...]|-> <expectedRevision>
//	booblik-conformance topics-delete <name> <expectedRevision>
//	booblik-conformance topics-list <selector>
//
// Exit status 0 means the verb was carried out, a broker refusal included (printed as
// error=<CODE_NAME>); 1 means the client failed; 2 means the command line was wrong.
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
)

const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2

	// verbTimeout stays under the 20 s the harness gives each verb, so a hang is reported by us.
	verbTimeout = 15 * time.Second
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv("BOOBLIK_BROKER"), os.Stdout, os.Stderr))
}

// usageError is a command line the contract does not allow.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

type verb struct {
	args int
	do   func(ctx context.Context, conn *booblik.Conn, args []string, out io.Writer) error
}

var verbs = map[string]verb{
	"metadata":      {1, metadata},
	"produce":       {4, produce},
	"produce-keyed": {3, produceKeyed},
	"fetch":         {4, fetch},
	"topics-apply":  {4, topicsApply},
	"topics-delete": {2, topicsDelete},
	"topics-list":   {1, topicsList},
}

func run(args []string, broker string, stdout, stderr io.Writer) int {
	out := bufio.NewWriter(stdout)
	code := runVerb(args, broker, out, stderr)
	if err := out.Flush(); err != nil {
		fmt.Fprintf(stderr, "booblik-conformance: writing stdout: %v\n", err)
		return exitFailed
	}
	return code
}

func runVerb(args []string, broker string, out io.Writer, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: booblik-conformance <capabilities|metadata|produce|produce-keyed|fetch|topics-apply|topics-delete|topics-list> [args...]")
		return exitUsage
	}
	name, args := args[0], args[1:]
	if name == "capabilities" {
		fmt.Fprintln(out, "roles=producer,consumer") // the original contract's roles only
		fmt.Fprintln(out, "extras=topics")           // roles added since, under a key it ignores
		fmt.Fprintln(out, "name=go")
		return exitOK
	}
	v, ok := verbs[name]
	if !ok {
		fmt.Fprintf(stderr, "booblik-conformance: unknown verb %q\n", name)
		return exitUsage
	}
	if len(args) != v.args {
		fmt.Fprintf(stderr, "booblik-conformance: %s takes %d arguments, got %d\n", name, v.args, len(args))
		return exitUsage
	}
	if broker == "" {
		fmt.Fprintln(stderr, "booblik-conformance: BOOBLIK_BROKER is not set (host:port)")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), verbTimeout)
	defer cancel()
	conn, err := booblik.Dial(ctx, broker)
	if err != nil {
		fmt.Fprintf(stderr, "booblik-conformance: %v\n", err)
		return exitFailed
	}
	defer conn.Close()

	err = v.do(ctx, conn, args, out)
	var refused *booblik.BrokerError
	var usage *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &refused):
		fmt.Fprintf(out, "error=%s\n", refused.Name())
		var mismatch *booblik.RevisionMismatchError
		if errors.As(err, &mismatch) {
			fmt.Fprintf(out, "topic=%s\nexpectedRevision=%d\nactualRevision=%d\n",
				mismatch.Topic, mismatch.ExpectedRevision, mismatch.ActualRevision)
		}
		return exitOK
	case errors.As(err, &usage), errors.Is(err, booblik.ErrInvalidArgument):
		fmt.Fprintf(stderr, "booblik-conformance: %s: %v\n", name, err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "booblik-conformance: %s: %v\n", name, err)
		return exitFailed
	}
}

func metadata(ctx context.Context, conn *booblik.Conn, args []string, out io.Writer) error {
	md, err := conn.Metadata(ctx, args[0])
	if err != nil {
		return err
	}
	for _, p := range md[args[0]] {
		fmt.Fprintf(out, "partition=%d %d %d\n", p.Partition, p.LogStartOffset, p.HighWatermark)
	}
	return nil
}

func produce(ctx context.Context, conn *booblik.Conn, args []string, out io.Writer) error {
	partition, err := parseInt32("partition", args[1])
	if err != nil {
		return err
	}
	ack, err := parseAck(args[2])
	if err != nil {
		return err
	}
	// An empty element, the whole argument "" included, is one zero-length record: it is sent, and
	// the broker's refusal is what gets printed.
	var records [][]byte
	for i, h := range strings.Split(args[3], ",") {
		r, err := hex.DecodeString(h)
		if err != nil {
			return usagef("record %d: %v", i, err)
		}
		records = append(records, r)
	}
	res, err := conn.Produce(ctx, args[0], partition, records, ack)
	if err != nil || res == nil { // nil with AckNone: nothing to wait for, nothing to print
		return err
	}
	fmt.Fprintf(out, "baseOffset=%d\nlogEndOffset=%d\n", res.BaseOffset, res.LogEndOffset)
	return nil
}

func produceKeyed(ctx context.Context, conn *booblik.Conn, args []string, out io.Writer) error {
	key, err := hex.DecodeString(args[1])
	if err != nil {
		return usagef("keyHex: %v", err)
	}
	if key == nil {
		key = []byte{} // an empty key is hashed like any other; only a nil key means round-robin
	}
	payload, err := hex.DecodeString(args[2])
	if err != nil {
		return usagef("payloadHex: %v", err)
	}
	topic, err := conn.Topic(ctx, args[0])
	if err != nil {
		return err
	}
	partition := topic.PartitionFor(key)
	res, err := conn.Produce(ctx, args[0], partition, [][]byte{payload}, booblik.AckWritten)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "partition=%d\nbaseOffset=%d\n", partition, res.BaseOffset)
	return nil
}

func fetch(ctx context.Context, conn *booblik.Conn, args []string, out io.Writer) error {
	partition, err := parseInt32("partition", args[1])
	if err != nil {
		return err
	}
	offset, err := strconv.ParseInt(args[2], 10, 64)
	if err != nil {
		return usagef("offset: %v", err)
	}
	maxBytes, err := parseInt32("maxBytes", args[3])
	if err != nil {
		return err
	}
	if maxBytes == 0 {
		return usagef("maxBytes: 0, expected > 0") // Fetch would read 0 as "the default"
	}
	res, err := conn.Fetch(ctx, booblik.FetchRequest{Topic: args[0], Partition: partition, Offset: offset, MaxBytes: maxBytes})
	// A corrupt record is this client's failure to read, not a broker refusal: exit non-zero and
	// print no record, so nothing that failed its checksum is ever taken for data.
	var tooLarge *booblik.RecordExceedsMaxBytesError
	if err != nil && !errors.As(err, &tooLarge) {
		return err
	}
	fmt.Fprintf(out, "highWatermark=%d\n", res.HighWatermark)
	for _, r := range res.Records {
		fmt.Fprintf(out, "record=%x\n", r.Payload)
	}
	if tooLarge != nil {
		fmt.Fprintf(out, "recordExceedsMaxBytes=%d\n", tooLarge.Size)
	}
	return nil
}

func topicsApply(ctx context.Context, conn *booblik.Conn, args []string, out io.Writer) error {
	partitions, err := parseInt32("partitions", args[1])
	if err != nil {
		return err
	}
	spec := booblik.NewTopicSpec(args[0], partitions)
	if args[2] != "-" {
		spec.Labels = map[string]string{}
		for _, pair := range strings.Split(args[2], ",") {
			k, v, ok := strings.Cut(pair, "=")
			if !ok {
				return usagef("labels: %q, expected k=v", pair)
			}
			spec.Labels[k] = v
		}
	}
	if spec.Revision, err = strconv.ParseInt(args[3], 10, 64); err != nil {
		return usagef("expectedRevision: %v", err)
	}
	revision, err := conn.ApplyTopics(ctx, []booblik.TopicChange{booblik.UpsertTopic(spec)})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "revision=%d\n", revision)
	return nil
}

func topicsDelete(ctx context.Context, conn *booblik.Conn, args []string, out io.Writer) error {
	expected, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil {
		return usagef("expectedRevision: %v", err)
	}
	revision, err := conn.ApplyTopics(ctx, []booblik.TopicChange{booblik.DeleteTopic(args[0], expected)})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "revision=%d\n", revision)
	return nil
}

func topicsList(ctx context.Context, conn *booblik.Conn, args []string, out io.Writer) error {
	listing, err := conn.ListTopics(ctx, args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "revision=%d\n", listing.Revision)
	for _, t := range listing.Topics {
		labels := make([]string, 0, len(t.Spec.Labels))
		for k, v := range t.Spec.Labels {
			labels = append(labels, k+"="+v)
		}
		slices.Sort(labels)
		shown := strings.Join(labels, ",")
		if shown == "" {
			shown = "-"
		}
		fmt.Fprintf(out, "topic=%s %d %d %s\n", t.Spec.Name, t.Spec.Partitions, t.Spec.Revision, shown)
	}
	return nil
}

func parseInt32(field, s string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, usagef("%s: %v", field, err)
	}
	return int32(n), nil
}

func parseAck(s string) (booblik.AckPolicy, error) {
	switch s {
	case "none":
		return booblik.AckNone, nil
	case "written":
		return booblik.AckWritten, nil
	case "forced":
		return booblik.AckForced, nil
	}
	return 0, usagef("ack: %q, expected none, written or forced", s)
}
