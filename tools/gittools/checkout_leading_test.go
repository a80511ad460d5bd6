package gittools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestRegressSwitchBeyondLinkOrFileAsGit: a path the switch deletes or
// writes that the index lacks, below a link or a file in the worktree, is
// checked as git's verify_absent does: check_leading_path finds the link
// or file, and check_ok_to_remove refuses it as an untracked file the
// switch would remove or overwrite (even one the index tracks), unless it
// is ignored or the switch deletes it (differential seed 760010: a
// directory replaced by a staged link, git refused with "untracked
// working tree files would be removed by checkout: big/c", git_checkout
// switched).
func TestRegressSwitchBeyondLinkOrFileAsGit(t *testing.T) {
	link := func(f *fixture, target, p string) {
		if err := os.Symlink(target, filepath.Join(f.dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		setup func(f *fixture) // on main, which has big/c/x.txt and big/c/y.txt; side has neither
		to    string
	}{
		{"staged-link-over-directory", func(f *fixture) {
			mustRemoveAll(t, filepath.Join(f.dir, "big/c"))
			link(f, "nowhere", "big/c")
			f.git(t, "add", "-A", "--", "big/c")
		}, "side"},
		{"untracked-link-over-directory", func(f *fixture) {
			f.git(t, "rm", "-q", "-r", "--cached", "big/c")
			mustRemoveAll(t, filepath.Join(f.dir, "big/c"))
			link(f, ".", "big/c")
		}, "side"},
		{"ignored-link-over-directory", func(f *fixture) {
			f.git(t, "rm", "-q", "-r", "--cached", "big/c")
			mustRemoveAll(t, filepath.Join(f.dir, "big/c"))
			link(f, "nowhere", "big/c")
			f.write(t, ".git/info/exclude", "/big/c\n")
		}, "side"},
		{"untracked-file-over-directory", func(f *fixture) {
			f.git(t, "rm", "-q", "-r", "--cached", "big")
			mustRemoveAll(t, filepath.Join(f.dir, "big"))
			f.write(t, "big", "a file\n")
		}, "side"},
		// The target writes below an untracked link.
		{"new-file-below-untracked-link", func(f *fixture) {
			f.git(t, "checkout", "-q", "side")
			link(f, "elsewhere", "big")
		}, "main"},
		// The switch deletes the link it writes below: no refusal.
		{"link-replaced-by-directory", func(f *fixture) {
			f.git(t, "checkout", "-q", "side")
			link(f, "elsewhere", "big")
			f.git(t, "add", "big")
			f.git(t, "commit", "-q", "-m", "big is a link")
		}, "main"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newRepo(t)
			f.write(t, "a.txt", "a\n")
			f.commitAll(t, "base")
			f.git(t, "branch", "side")
			f.write(t, "big/c/x.txt", "x\n")
			f.write(t, "big/c/y.txt", "y\n")
			f.commitAll(t, "big")
			c.setup(f)
			toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
			raw, _ := json.Marshal(map[string]any{"branch": c.to})
			_, terr := open(t, toolDir).set.Call(context.Background(), "git_checkout", raw)
			cmd := exec.Command("git", "checkout", "-q", c.to)
			cmd.Dir, cmd.Env = gitDir, gittest.Env(t.TempDir())
			var stderr strings.Builder
			cmd.Stderr = &stderr
			gerr := cmd.Run()
			if (terr != nil) != (gerr != nil) {
				t.Fatalf("tool error %v, git error %v: %s", terr, gerr, stderr.String())
			}
			var te *tools.Error
			if terr != nil && (!errors.As(terr, &te) || te.Message != strings.TrimSuffix(stderr.String(), "\n")) {
				t.Errorf("tool refused with\n%v\ngit with\n%s", terr, stderr.String())
			}
			view := func(dir string) string {
				out, _ := gittest.GitErr(dir, "status", "--porcelain=2", "-b", "-uall", "--ignored")
				return out + snapshot(t, dir)
			}
			same(t, "state", view(toolDir), view(gitDir))
		})
	}
}

func mustRemoveAll(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
}
