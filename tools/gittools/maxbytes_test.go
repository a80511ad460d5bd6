package gittools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestRegressMaxBytesAboveDefaultAsAsked: a git tool's output over the
// tool set's default cap (1 MiB) comes whole when max_bytes asks for more
// (the Set caps at the tool's own limit), and is cut at max_bytes or the
// configured default otherwise.
func TestRegressMaxBytesAboveDefaultAsAsked(t *testing.T) {
	f := newRepo(t)
	var old, nw strings.Builder
	for i := 0; i < 60000; i++ {
		fmt.Fprintf(&old, "line %d of the old file\n", i)
		fmt.Fprintf(&nw, "line %d of the new file\n", i)
	}
	f.write(t, "big.txt", old.String())
	f.commitAll(t, "old")
	f.write(t, "big.txt", nw.String())
	f = open(t, f.dir)
	want := f.git(t, "diff")
	if len(want) < 2<<20 {
		t.Fatalf("diff of %d bytes: not over the default cap", len(want))
	}
	call := func(args map[string]any) (string, bool) {
		raw, _ := json.Marshal(args)
		res, err := f.set.Call(context.Background(), "git_diff", raw)
		if err != nil {
			t.Fatal(err)
		}
		return res.Value.(string), res.Truncated
	}
	if got, cut := call(map[string]any{"max_bytes": 5000000}); cut || got != want {
		t.Errorf("max_bytes 5000000: %d bytes (truncated %v), git printed %d", len(got), cut, len(want))
	}
	if got, cut := call(map[string]any{"max_bytes": 3000000}); !cut || len(got) > 3000000 || !strings.HasPrefix(want, strings.TrimSuffix(got, "\n\n... [output truncated]")) {
		t.Errorf("max_bytes 3000000: %d bytes (truncated %v)", len(got), cut)
	}
	if got, cut := call(map[string]any{}); !cut || len(got) > 1<<20 {
		t.Errorf("default: %d bytes (truncated %v)", len(got), cut)
	}
}
