package gittools

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRegressDiffCachedAgainstCommitAsGit: git diff --cached <commit>
// compares the index with that commit (a tree too), renames, type
// changes and unmerged paths as against HEAD; a range or a second
// revision is git's usage.
func TestRegressDiffCachedAgainstCommitAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "one\ntwo\nthree\n")
	f.write(t, "b.txt", "b\n")
	f.commitAll(t, "first")
	f.write(t, "a.txt", "one\n2\nthree\n")
	f.write(t, "c.txt", "c\n")
	f.commitAll(t, "second")
	f.git(t, "mv", "b.txt", "moved.txt")
	mustRemove(t, filepath.Join(f.dir, "c.txt"))
	if err := os.Symlink("a.txt", filepath.Join(f.dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "a.txt", "one\n2\n3\n")
	f.git(t, "add", "-A")
	f.write(t, "a.txt", "unstaged\n")
	f.git(t, "config", "diff.mnemonicPrefix", "true")
	f = open(t, f.dir)
	for _, from := range []string{"HEAD", "HEAD~1", "HEAD~1^{tree}", "main~1", "nonexistent"} {
		compareTool(t, f, "git_diff", map[string]any{"cached": true, "from_ref": from}, "", "diff", "--cached", from)
		compareTool(t, f, "git_diff", map[string]any{"cached": true, "from_ref": from, "stat": true}, "", "diff", "--stat", "--cached", from)
		compareTool(t, f, "git_diff", map[string]any{"cached": true, "from_ref": from, "name_only": true, "paths": []string{"a.txt"}}, "", "diff", "--name-only", "--cached", from, "--", "a.txt")
	}
	for _, args := range []map[string]any{
		{"cached": true, "from_ref": "HEAD~1..HEAD"},
		{"cached": true, "from_ref": "HEAD~1...HEAD"},
		{"cached": true, "from_ref": "HEAD~1", "to_ref": "HEAD"},
	} {
		git := []string{"diff", "--cached", args["from_ref"].(string)}
		if to, ok := args["to_ref"].(string); ok {
			git = append(git, to)
		}
		compareTool(t, f, "git_diff", args, "", git...)
	}
}
