package gittools

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRegressStatCountsWithContextAsGit: a diffstat is counted from the
// diff with its own context, as builtin_diffstat does; only -U0 trims the
// common tail first (xdi_diff), which changes histogram's alignment of
// these two files (247+ with context, 248+/1- trimmed).
func TestRegressStatCountsWithContextAsGit(t *testing.T) {
	f := newRepo(t)
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("testdata", "statcontext", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	f.write(t, "f.txt", read("old.txt"))
	f.commitAll(t, "old")
	f.write(t, "f.txt", read("new.txt"))
	f.git(t, "config", "diff.algorithm", "histogram")
	f = open(t, f.dir)
	compareTool(t, f, "git_diff", map[string]any{"stat": true}, "", "diff", "--stat")
	compareTool(t, f, "git_diff", map[string]any{"stat": true, "unified": 0}, "", "diff", "--stat", "-U0")
	f.commitAll(t, "new")
	compareTool(t, f, "git_show", map[string]any{"stat": true}, "", "show", "--stat")
	compareTool(t, f, "git_diff", map[string]any{"stat": true, "from_ref": "HEAD^", "to_ref": "HEAD"}, "", "diff", "--stat", "HEAD^", "HEAD")
}
