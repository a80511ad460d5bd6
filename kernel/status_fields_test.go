package kernel

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools/gittools"
)

// TestGitStatusStructuredFields: git_status keeps git's text and gives
// the same entries as structured fields (MCP structuredContent): the
// branch, its upstream, and each path with its two status letters.
func TestGitStatusStructuredFields(t *testing.T) {
	k := bootKernel(t, gittest.BareRemote(t), false)
	call(t, k, "write_file", map[string]string{"path": "tools/a.ts", "content": "/** A. */\nexport default () => 1;\n"})
	if err := k.FS().WriteFile("tools/a.ts", []byte("/** A. */\nexport default () => 2;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := k.FS().WriteFile("notes.txt", []byte("n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := k.Call(context.Background(), "git_status", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	f, ok := res.Extra.(gittools.StatusFields)
	if !ok {
		t.Fatalf("extra %T", res.Extra)
	}
	if res.Value.(string) != "## main...origin/main\n M tools/a.ts\n?? notes.txt\n" {
		t.Fatalf("text %q", res.Value)
	}
	want := []gittools.StatusEntry{{Path: "tools/a.ts", Index: " ", Worktree: "M"}, {Path: "notes.txt", Index: "?", Worktree: "?"}}
	if f.Branch != "main" || f.Upstream != "origin/main" || len(f.Entries) != 2 || f.Entries[0] != want[0] || f.Entries[1] != want[1] {
		t.Fatalf("fields %+v", f)
	}
}
