package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/youndie/booblik/clients/go/internal/fakebroker"
)

// The contract's broker: topics conformance (3 partitions) and single (1).
func startBroker(t *testing.T) *fakebroker.Broker {
	return fakebroker.Start(t, map[string]int{"conformance": 3, "single": 1})
}

// runArgs runs the command as the harness would and returns its exit code and stdout.
func runArgs(t *testing.T, b *fakebroker.Broker, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	addr := ""
	if b != nil {
		addr = b.Addr()
	}
	code := run(args, addr, &stdout, &stderr)
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return code, stdout.String()
}

func expect(t *testing.T, b *fakebroker.Broker, args []string, wantCode int, wantOut string) {
	t.Helper()
	code, out := runArgs(t, b, args...)
	if code != wantCode || out != wantOut {
		t.Fatalf("%q: exit %d, stdout:\n%s\nwant exit %d, stdout:\n%s", args, code, out, wantCode, wantOut)
	}
}

func TestCapabilitiesNeedNoBroker(t *testing.T) {
	expect(t, nil, []string{"capabilities"}, 0, "roles=producer,consumer\nextras=topics\nname=go\n")
}

func TestMetadataPrintsOneLinePerPartition(t *testing.T) {
	b := startBroker(t)
	b.Append("conformance", 1, []byte("a"), []byte("b"))
	expect(t, b, []string{"metadata", "conformance"}, 0, "partition=0 0 0\npartition=1 0 2\npartition=2 0 0\n")
}

func TestProducePrintsOffsetsAndEveryByteArrives(t *testing.T) {
	b := startBroker(t)
	b.Append("single", 0, []byte("earlier"))
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	expect(t, b, []string{"produce", "single", "0", "written", hex.EncodeToString(all) + ",00"}, 0,
		"baseOffset=1\nlogEndOffset=3\n")
	got := b.Records("single", 0)
	if !bytes.Equal(got[1], all) || !bytes.Equal(got[2], []byte{0}) {
		t.Fatalf("stored %x", got[1:])
	}
	expect(t, b, []string{"produce", "single", "0", "forced", "aa"}, 0, "baseOffset=3\nlogEndOffset=4\n")
	if r := b.RequestsOf(fakebroker.APIProduce); r[0].Ack != 1 || r[1].Ack != 2 {
		t.Fatalf("acks sent %d, %d", r[0].Ack, r[1].Ack)
	}
}

func TestProduceOfAnEmptyRecordPrintsTheBrokersRefusal(t *testing.T) {
	b := startBroker(t)
	expect(t, b, []string{"produce", "single", "0", "written", ""}, 0, "error=CORRUPT_REQUEST\n")
	expect(t, b, []string{"produce", "single", "0", "written", "aa,,bb"}, 0, "error=CORRUPT_REQUEST\n")
	if n := len(b.Records("single", 0)); n != 0 {
		t.Fatalf("%d records stored from refused batches", n)
	}
	if r := b.RequestsOf(fakebroker.APIProduce)[0]; r.DecodeErr == "" {
		t.Fatalf("the empty record never reached the broker: %+v", r)
	}
}

func TestProduceNoneReturnsAtOnceAndPrintsNothing(t *testing.T) {
	b := startBroker(t)
	release := b.Hold() // nothing is answered, so returning proves nothing was waited for
	expect(t, b, []string{"produce", "single", "0", "none", "6869"}, 0, "")
	release()
	b.WaitUntil("the record to arrive", func() bool { return len(b.Records("single", 0)) == 1 })
}

func TestRefusalsArePrintedWithExitZero(t *testing.T) {
	b := startBroker(t)
	expect(t, b, []string{"metadata", "missing"}, 0, "error=UNKNOWN_TOPIC_OR_PARTITION\n")
	expect(t, b, []string{"produce", "missing", "0", "written", "aa"}, 0, "error=UNKNOWN_TOPIC_OR_PARTITION\n")
	expect(t, b, []string{"produce", "conformance", "3", "written", "aa"}, 0, "error=UNKNOWN_TOPIC_OR_PARTITION\n")
	expect(t, b, []string{"produce-keyed", "missing", "aa", "bb"}, 0, "error=UNKNOWN_TOPIC_OR_PARTITION\n")
	expect(t, b, []string{"fetch", "single", "0", "1000", "100"}, 0, "error=OFFSET_OUT_OF_RANGE\n")
}

func TestTopicsCreateListStaleAndDelete(t *testing.T) {
	b := startBroker(t) // the startup topics are revision 1
	expect(t, b, []string{"topics-apply", "t", "2", "team=p,env=x", "0"}, 0, "revision=2\n")
	expect(t, b, []string{"topics-list", "team=p"}, 0, "revision=2\ntopic=t 2 2 env=x,team=p\n")
	expect(t, b, []string{"topics-list", "name=single"}, 0, "revision=2\ntopic=single 1 1 -\n")
	expect(t, b, []string{"topics-apply", "t", "3", "-", "1"}, 0,
		"error=REVISION_MISMATCH\ntopic=t\nexpectedRevision=1\nactualRevision=2\n")
	expect(t, b, []string{"topics-delete", "t", "2"}, 0, "revision=3\n")
	expect(t, b, []string{"topics-list", "team=p"}, 0, "revision=3\n")
	expect(t, b, []string{"topics-apply", "t", "1", "nolabel", "0"}, 2, "")
}

func TestProduceKeyedPicksThePartitionOfEveryVector(t *testing.T) {
	b := startBroker(t)
	f, err := os.Open("../../testdata/partitioner-fnv1a.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var header []string
	offsets := map[string]int{}
	rows := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			header = strings.Split(strings.TrimSpace(strings.TrimPrefix(line, "#")), "\t")
			continue
		}
		fields := strings.Split(line, "\t")
		var keyHex, p3 string
		for i, h := range header {
			switch h {
			case "keyHex":
				keyHex = fields[i]
			case "p3":
				p3 = fields[i]
			}
		}
		payload := hex.EncodeToString([]byte(fmt.Sprintf("row %d", rows)))
		want := fmt.Sprintf("partition=%s\nbaseOffset=%d\n", p3, offsets[p3])
		expect(t, b, []string{"produce-keyed", "conformance", keyHex, payload}, 0, want)
		offsets[p3]++
		rows++
	}
	if rows == 0 {
		t.Fatal("no vectors read")
	}
	for p, n := range offsets {
		var part int
		fmt.Sscan(p, &part)
		if got := len(b.Records("conformance", part)); got != n {
			t.Fatalf("partition %s holds %d records, the command named it %d times", p, got, n)
		}
	}
}

func TestFetchPrintsWholeRecordsOnly(t *testing.T) {
	b := startBroker(t)
	b.Append("single", 0, bytes.Repeat([]byte{1}, 100), bytes.Repeat([]byte{2}, 100), bytes.Repeat([]byte{3}, 100))
	expect(t, b, []string{"fetch", "single", "0", "0", "150"}, 0,
		"highWatermark=3\nrecord="+strings.Repeat("01", 100)+"\n")
	expect(t, b, []string{"fetch", "single", "0", "3", "150"}, 0, "highWatermark=3\n")
}

func TestFetchPrintsAOneByteZeroRecord(t *testing.T) {
	b := startBroker(t)
	b.Append("single", 0, []byte{0}, []byte("ab"))
	expect(t, b, []string{"fetch", "single", "0", "0", "1000"}, 0, "highWatermark=2\nrecord=00\nrecord=6162\n")
}

func TestFetchOfARecordLargerThanMaxBytesPrintsItsSize(t *testing.T) {
	b := startBroker(t)
	b.Append("single", 0, bytes.Repeat([]byte{9}, 500))
	expect(t, b, []string{"fetch", "single", "0", "0", "100"}, 0, "highWatermark=1\nrecordExceedsMaxBytes=500\n")
}

func TestFetchOfACorruptRecordFailsAndPrintsNoRecord(t *testing.T) {
	b := startBroker(t)
	b.Append("single", 0, []byte("ok"), []byte("bad"))
	b.CorruptRecord("single", 0, 1)
	expect(t, b, []string{"fetch", "single", "0", "0", "1000"}, 1, "")
}

func TestCommandLineMistakesExitTwo(t *testing.T) {
	b := startBroker(t)
	for _, args := range [][]string{
		{},
		{"nonsense"},
		{"metadata"},
		{"produce", "single", "0", "sometimes", "aa"},
		{"produce", "single", "zero", "written", "aa"},
		{"produce", "single", "0", "written", "zz"},
		{"produce-keyed", "single", "k", "aa"},
		{"fetch", "single", "0", "0", "0"},
	} {
		expect(t, b, args, 2, "")
	}
	expect(t, nil, []string{"metadata", "single"}, 2, "") // no BOOBLIK_BROKER
}

func TestUnreachableBrokerExitsOne(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// Port 1 on loopback has no listener: the dial is refused at once.
	if code := run([]string{"metadata", "single"}, "127.0.0.1:1", &stdout, &stderr); code != 1 || stdout.Len() != 0 {
		t.Fatalf("unreachable broker: exit %d, stdout %q", code, stdout.String())
	}
}

// The harness runs conformance/clients/go, which builds this command; run it once end to end.
func TestConformanceScriptBuildsAndRunsTheCommand(t *testing.T) {
	script, err := filepath.Abs("../../../../conformance/clients/go")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("no conformance script beside this module: %v", err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	b := startBroker(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"capabilities"}, "roles=producer,consumer\nextras=topics\nname=go\n"},
		{[]string{"produce", "single", "0", "written", "6869"}, "baseOffset=0\nlogEndOffset=1\n"},
		{[]string{"fetch", "single", "0", "0", "100"}, "highWatermark=1\nrecord=6869\n"},
	} {
		cmd := exec.Command(script, tc.args...)
		cmd.Env = append(os.Environ(), "BOOBLIK_BROKER="+b.Addr(), "TMPDIR="+t.TempDir())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || string(out) != tc.want {
			t.Fatalf("%q: %v, stdout %q, stderr %s; want %q", tc.args, err, out, stderr.String(), tc.want)
		}
	}
}
