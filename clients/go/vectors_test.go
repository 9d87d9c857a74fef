package booblik

import (
	"bufio"
	"encoding/hex"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readVectors parses a golden TSV file: '#' lines are comments, the last comment is the header,
// fields are tab-separated. Each row comes back keyed by header name.
func readVectors(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var header []string
	var rows []map[string]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			header = strings.Split(strings.TrimSpace(strings.TrimPrefix(line, "#")), "\t")
			continue
		}
		if line == "" {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != len(header) {
			t.Fatalf("%s: %d fields, header has %d: %q", path, len(fields), len(header), line)
		}
		row := make(map[string]string, len(fields))
		for i, h := range header {
			row[h] = fields[i]
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no vectors", path)
	}
	return rows
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("hex %q: %v", s, err)
	}
	return b
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("number %q: %v", s, err)
	}
	return n
}

func TestCRC32CMatchesEveryGoldenVector(t *testing.T) {
	for _, v := range readVectors(t, "testdata/crc32c.tsv") {
		want := uint32(mustUint(t, v["crc32c"]))
		if got := crc32c(mustHex(t, v["payloadHex"])); got != want {
			t.Errorf("%s: crc32c %d, want %d", v["name"], got, want)
		}
	}
}

// zlib's CRC-32 is also 32 bits and also in hash/crc32; using it by mistake makes every stored
// record look corrupt, or, worse, makes a client agree only with itself.
func TestChecksumIsCastagnoliNotIEEE(t *testing.T) {
	check := []byte("123456789")
	if got := crc32c(check); got != 0xE3069283 {
		t.Fatalf("check value %#x, want 0xE3069283 (CRC-32C)", got)
	}
	if crc32c(check) == crc32.ChecksumIEEE(check) {
		t.Fatal("crc32c equals the IEEE checksum")
	}
}

func TestPartitionerMatchesEveryGoldenVectorInEveryColumn(t *testing.T) {
	rows := readVectors(t, "testdata/partitioner-fnv1a.tsv")
	columns := 0
	for _, v := range rows {
		key := mustHex(t, v["keyHex"])
		if got, want := fnv1a(key), uint32(mustUint(t, v["hash"])); got != want {
			t.Errorf("%s: hash %d, want %d", v["name"], got, want)
		}
		for col, cell := range v {
			if !strings.HasPrefix(col, "p") {
				continue
			}
			columns++
			n, err := strconv.Atoi(col[1:])
			if err != nil {
				t.Fatalf("column %q", col)
			}
			if got, want := partitionIndex(key, n), int(mustUint(t, cell)); got != want {
				t.Errorf("%s: %s = %d, want %d", v["name"], col, got, want)
			}
		}
	}
	if want := len(rows) * 8; columns != want { // p1 p2 p3 p4 p7 p16 p64 p1000
		t.Fatalf("checked %d cells, want %d: a column went missing", columns, want)
	}
}

// The vectors include 0x80 and 0xff on purpose; this pins the reason in one line.
func TestPartitionerReadsBytesAsUnsigned(t *testing.T) {
	if got := fnv1a([]byte{0x80}); got != 2232128415 {
		t.Fatalf("fnv1a(0x80) = %d: the byte was read as signed", got)
	}
}
