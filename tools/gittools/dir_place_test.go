package gittools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestRegressDirectoryAtFilePlaceAsGit: a directory, even an empty one,
// where a file's index entry is stays when the entry goes (git's unlink
// fails: "unable to unlink ... Is a directory"), on stash push, restore
// and a switch; and a stash applied later writes its file there, the
// empty directory being nothing to lose (verify_clean_subdirectory). The
// tools removed the empty directory, then refused the apply
// (differential seed 900234).
func TestRegressDirectoryAtFilePlaceAsGit(t *testing.T) {
	f := newRepo(t)
	if err := os.Symlink("nowhere", filepath.Join(f.dir, "main11")); err != nil {
		t.Fatal(err)
	}
	f.commitAll(t, "base")
	f.git(t, "mv", "main11", "util17")
	mustRemove(t, filepath.Join(f.dir, "util17"))
	if err := os.Mkdir(filepath.Join(f.dir, "util17"), 0o755); err != nil {
		t.Fatal(err)
	}
	kind := func(dir string) string {
		info, err := os.Lstat(filepath.Join(dir, "util17"))
		if err != nil {
			return "util17: missing\n"
		}
		return "util17: " + info.Mode().Type().String() + "\n"
	}
	for _, c := range []struct {
		steps []map[string]any
		git   [][]string
	}{
		{[]map[string]any{{"action": "push"}}, [][]string{{"stash", "push", "-q"}}},
		{[]map[string]any{{"action": "push"}, {"action": "pop"}}, [][]string{{"stash", "push", "-q"}, {"stash", "pop", "-q"}}},
	} {
		toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
		dates := []string{"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000"}
		for i, args := range c.steps {
			raw, _ := json.Marshal(args)
			_, terr := openEnv(t, toolDir, dates...).set.Call(context.Background(), "git_stash", raw)
			_, _, ok := gitAt(t, gitDir, dates, c.git[i]...)
			if (terr != nil) == ok {
				t.Fatalf("%s: tool error %v, git ok %v", raw, terr, ok)
			}
		}
		view := func(dir string) string {
			out, _ := gittest.GitErr(dir, "status", "--porcelain=2", "-uall")
			return out + kind(dir)
		}
		same(t, "git_stash", view(toolDir), view(gitDir))
	}
	twin(t, f.dir, "", "git_restore", map[string]any{"paths": []string{"."}, "staged": true, "worktree": true}, "restore", "--staged", "--worktree", "--", ".")
	toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
	open(t, toolDir).call(t, "git_restore", map[string]any{"paths": []string{"."}, "staged": true, "worktree": true})
	if _, err := gittest.GitErr(gitDir, "restore", "--staged", "--worktree", "--", "."); err != nil {
		t.Fatal(err)
	}
	same(t, "the directory after a restore", kind(toolDir), kind(gitDir))
}
