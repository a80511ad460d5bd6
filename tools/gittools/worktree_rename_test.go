package gittools

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRegressWorktreeRenamesAsGit: rename detection on the worktree side
// as git's diff-files does it. A file deleted from the worktree pairs
// with one added with intent to add (" R a -> b"), and with an unmerged
// path's worktree file, whose "Unmerged" pair diff-files queues as an
// addition with no object id: the deletion then leaves status and diff,
// and the Unmerged record is named by it (differential seed 50162).
func TestRegressWorktreeRenamesAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "l1\nl2\nl3\nl4\n")
	f.commitAll(t, "one")
	mustRemove(t, filepath.Join(f.dir, "a.txt"))
	f.write(t, "b.txt", "l1\nl2\nl3\nl4\n")
	f.git(t, "add", "-N", "b.txt")
	f = open(t, f.dir)
	compareTool(t, f, "git_status", map[string]any{"branch": false}, "", "status", "--porcelain")
	compareTool(t, f, "git_status", map[string]any{"porcelain": false}, "", "status")

	// A modify/delete conflict (x) and a deleted file like it (y).
	g := newRepo(t)
	g.write(t, "x", "l1\nl2\nl3\nl4\nl5\nl6\n")
	g.write(t, "y", "l1\nl2\nl3\nl4\nl5\nl7\n")
	g.write(t, "both.txt", "base\n")
	g.commitAll(t, "one")
	g.git(t, "checkout", "-q", "-b", "side")
	g.git(t, "rm", "-q", "x")
	g.write(t, "both.txt", "side\n")
	g.commitAll(t, "side")
	g.git(t, "checkout", "-q", "main")
	g.write(t, "x", "l1\nl2\nl3\nl4\nl5\nl6\nl8\n")
	g.write(t, "both.txt", "main\n")
	g.commitAll(t, "main")
	if _, _, ok := gitAt(t, g.dir, nil, "merge", "-q", "side"); ok {
		t.Fatal("the merge did not stop")
	}
	mustRemove(t, filepath.Join(g.dir, "y"))
	if err := os.WriteFile(filepath.Join(g.dir, "gone.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	g = open(t, g.dir)
	compareTool(t, g, "git_status", map[string]any{}, "", "status", "--porcelain", "-b")
	compareTool(t, g, "git_status", map[string]any{"porcelain": false}, "", "status")
	compareTool(t, g, "git_diff", map[string]any{}, "", "diff")
	compareTool(t, g, "git_diff", map[string]any{"stat": true}, "", "diff", "--stat")
	compareTool(t, g, "git_diff", map[string]any{"name_only": true}, "", "diff", "--name-only")
	g.git(t, "config", "status.renames", "false")
	g.git(t, "config", "diff.renames", "false")
	compareTool(t, g, "git_status", map[string]any{}, "", "status", "--porcelain", "-b")
	compareTool(t, g, "git_diff", map[string]any{"stat": true}, "", "diff", "--stat")
}
