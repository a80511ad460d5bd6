package kernel

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/tgp-go/tgp/tools"
)

var update = flag.Bool("update", false, "rewrite testdata/tools.golden.json")

// TestToolSchemasSnapshot keeps every tool's JSON definition in a golden
// file, so a schema change shows up in review. Regenerate with
// `go test ./kernel -run Snapshot -update`.
func TestToolSchemasSnapshot(t *testing.T) {
	// A disk root: every tool, the shell tools included.
	k, err := New(context.Background(), WithEnviron([]string{}), WithRoot(t.TempDir()), WithSetting("sql.driver", "sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Shutdown(context.Background())
	var defs []tools.Definition
	for _, tl := range k.Tools() {
		defs = append(defs, tl.Definition())
	}
	got, err := json.MarshalIndent(defs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("tool definitions changed; review and run `go test ./kernel -run Snapshot -update`\n%s", got)
	}
}
