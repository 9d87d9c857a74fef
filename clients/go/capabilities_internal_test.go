package booblik

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// dumpTable prints every row of the TypeScript API table: apiKey -> the capabilities of each
// version, lowest first.
const dumpTable = `
import(process.argv[1]).then(({ apiRows, capabilityNames }) => {
  const rows = {};
  for (const row of apiRows) {
    rows[row.apiKey] = row.versions.map((v) => capabilityNames.filter((name) => v.capabilities[name]));
  }
  console.log(JSON.stringify(rows));
});
`

func TestCapabilityTableIsTheTypeScriptOnes(t *testing.T) {
	protocol, err := filepath.Abs(filepath.Join("..", "..", "packages", "protocol", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(protocol); err != nil {
		t.Skipf("packages/protocol is not built beside this client: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	out, err := exec.Command(node, "-e", dumpTable, protocol).Output()
	if err != nil {
		t.Fatalf("dumping the API table: %v", err)
	}
	var table map[string][][]string
	if err := json.Unmarshal(out, &table); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	for key, first := range firstVersionWith {
		versions := table[strconv.Itoa(int(key.api))]
		var having []int16
		for i, caps := range versions {
			for _, c := range caps {
				if capability(c) == key.cap {
					having = append(having, int16(i+1))
				}
			}
		}
		if len(having) == 0 || having[0] != first {
			t.Errorf("apiKey %d %s: first version %d here, versions %v in TypeScript", key.api, key.cap, first, having)
			continue
		}
		// Kept by every later version: comparing the broker's highest version is enough.
		if want := len(versions) - int(first) + 1; len(having) != want {
			t.Errorf("apiKey %d %s: versions %v in TypeScript, not every one from %d", key.api, key.cap, having, first)
		}
	}
}

func TestABrokerSpeaksACapabilityFromItsFirstVersionOn(t *testing.T) {
	if speaks(map[int16]int16{int16(apiFetch): 2}, apiFetch, capFollowsRoutes) {
		t.Error("FETCH up to v2 (the original broker) follows routes")
	}
	if !speaks(map[int16]int16{int16(apiFetch): 3}, apiFetch, capFollowsRoutes) {
		t.Error("FETCH up to v3 does not follow routes")
	}
	if speaks(map[int16]int16{}, apiFetch, capFollowsRoutes) {
		t.Error("a broker without FETCH follows routes")
	}
}
