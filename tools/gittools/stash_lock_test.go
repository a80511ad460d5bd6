package gittools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestRegressStashListSurvivesStaleLogLock: a writer killed between
// writing the stash list's new log and renaming it over the old one
// leaves logs/refs/stash.lock behind. git stash drop and pop then refuse
// to touch the list (pop has applied the stash by then and keeps it):
// the list, refs/stash and the worktree stay as git leaves them, and once
// the lock is removed the drop goes through. Before the stash list went
// through internal/reflog it was rewritten in place, with no lock.
func TestRegressStashListSurvivesStaleLogLock(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "base")
	for _, body := range []string{"b\n", "c\n"} {
		f.write(t, "a.txt", body)
		f.git(t, "stash", "push", "-q")
	}
	lock := func(dir string) string { return filepath.Join(dir, ".git", "logs", "refs", "stash.lock") }
	if err := os.WriteFile(lock(f.dir), []byte("0000 partial line of a killed writer"), 0o644); err != nil {
		t.Fatal(err)
	}
	view := func(dir string) string {
		list, _ := gittest.GitErr(dir, "stash", "list", "--format=%gd %H")
		status, _ := gittest.GitErr(dir, "status", "--porcelain")
		ref, _ := gittest.GitErr(dir, "rev-parse", "refs/stash")
		_, err := os.Stat(lock(dir))
		return "list:\n" + list + "status:\n" + status + "refs/stash: " + ref + "lock kept: " + boolWord(err == nil) + "\n"
	}
	for _, c := range []struct {
		action string
		git    []string
	}{
		{"drop", []string{"stash", "drop", "-q"}},
		{"pop", []string{"stash", "pop", "-q"}},
	} {
		toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
		te := open(t, toolDir).callErr(t, "git_stash", map[string]any{"action": c.action})
		if _, err := gittest.GitErr(gitDir, c.git...); err == nil {
			t.Fatalf("git stash %s over a stale lock succeeded", c.action)
		}
		same(t, "stash "+c.action+" over a stale lock ("+te.Message+")", view(toolDir), view(gitDir))
		for _, dir := range []string{toolDir, gitDir} {
			if err := os.Remove(lock(dir)); err != nil {
				t.Fatal(err)
			}
		}
		open(t, toolDir).call(t, "git_stash", map[string]any{"action": "drop"})
		gittest.Git(t, gitDir, "stash", "drop", "-q")
		same(t, "stash drop once the lock is gone", view(toolDir), view(gitDir))
	}
}
