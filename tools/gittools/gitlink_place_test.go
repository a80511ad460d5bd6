package gittools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestRegressGitlinkPlaceRemovedAsGit: when a restore, a switch or a
// stash takes a gitlink out of the index, git removes its place in the
// worktree with rmdir (remove_or_warn): an empty directory goes, with
// the empty directories above it, while a file, a symbolic link or a
// directory with files in it stays and is then untracked (differential
// seed 900262: a symbolic link the tools deleted).
func TestRegressGitlinkPlaceRemovedAsGit(t *testing.T) {
	for _, kind := range []string{"link", "file", "empty-dir", "full-dir"} {
		t.Run(kind, func(t *testing.T) {
			f := newRepo(t)
			f.write(t, "a.txt", "a\n")
			f.commitAll(t, "base")
			f.git(t, "branch", "plain")
			f.git(t, "update-index", "--add", "--cacheinfo", "160000,1234567890123456789012345678901234567890,d/sub")
			if err := os.MkdirAll(filepath.Join(f.dir, "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(f.dir, "d/sub")
			var err error
			switch kind {
			case "link":
				err = os.Symlink("nowhere", p)
			case "file":
				err = os.WriteFile(p, []byte("f\n"), 0o644)
			case "empty-dir":
				err = os.Mkdir(p, 0o755)
			case "full-dir":
				if err = os.Mkdir(p, 0o755); err == nil {
					err = os.WriteFile(filepath.Join(p, "x"), []byte("x\n"), 0o644)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			twin(t, f.dir, "", "git_restore", map[string]any{"paths": []string{"."}, "staged": true, "worktree": true}, "restore", "--staged", "--worktree", "--", ".")
			twin(t, f.dir, "", "git_stash", map[string]any{"action": "push"}, "stash", "push", "-q")
			twin(t, f.dir, "", "git_stash", map[string]any{"action": "push", "include_untracked": true}, "stash", "push", "-q", "-u")
			// Committed, then a switch to a branch without it.
			f.git(t, "commit", "-q", "-m", "gitlink")
			twin(t, f.dir, "", "git_checkout", map[string]any{"branch": "plain"}, "checkout", "-q", "plain")
		})
	}
}

// TestRegressStashApplyChecksOutGitlinkAsGit: a stash whose worktree
// tree holds a gitlink where HEAD has a file (a gitlink staged over it)
// is applied as git applies it: the gitlink is checked out as an empty
// directory for its submodule, the index keeps the file
// (unstage_changes_unless_new), so the file shows as deleted; the tools
// wrote a file there (differential seeds 900078, 900094, 900113, 900146,
// 900281).
func TestRegressStashApplyChecksOutGitlinkAsGit(t *testing.T) {
	for _, untracked := range []bool{false, true} {
		f := newRepo(t)
		f.write(t, "d/f.txt", "f\n")
		f.write(t, "other.txt", "o\n")
		f.commitAll(t, "base")
		f.git(t, "update-index", "--cacheinfo", "160000,1234567890123456789012345678901234567890,d/f.txt")
		mustRemove(t, filepath.Join(f.dir, "d/f.txt"))
		if err := os.Mkdir(filepath.Join(f.dir, "d/f.txt"), 0o755); err != nil {
			t.Fatal(err)
		}
		toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
		push := map[string]any{"action": "push", "include_untracked": untracked}
		gitPush := []string{"stash", "push", "-q"}
		if untracked {
			gitPush = append(gitPush, "-u")
		}
		for _, step := range []struct {
			args map[string]any
			git  []string
		}{{push, gitPush}, {map[string]any{"action": "pop"}, []string{"stash", "pop", "-q"}}} {
			raw, _ := json.Marshal(step.args)
			_, terr := openEnv(t, toolDir, "GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000").set.Call(context.Background(), "git_stash", raw)
			_, _, gok := gitAt(t, gitDir, []string{"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000"}, step.git...)
			if (terr != nil) != !gok {
				t.Fatalf("%s: tool error %v, git ok %v", raw, terr, gok)
			}
		}
		view := func(dir string) string {
			out, _ := gittest.GitErr(dir, "status", "--porcelain=2", "-uall")
			kind := "missing"
			if info, err := os.Lstat(filepath.Join(dir, "d/f.txt")); err == nil {
				kind = info.Mode().Type().String()
			}
			return out + "d/f.txt: " + kind + "\n"
		}
		same(t, "stash push then pop", view(toolDir), view(gitDir))
	}
}

// TestRegressStashApplyOverGitlinkPlaceAsGit: a stash applied where the
// index holds a gitlink finds it never out of date, whatever stands at
// its place (a symbolic link here), as git's verify_uptodate_1 does; the
// tools refused the apply as overwriting local changes (differential
// seed 900108).
func TestRegressStashApplyOverGitlinkPlaceAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.git(t, "add", "a.txt")
	f.git(t, "update-index", "--add", "--cacheinfo", "160000,1234567890123456789012345678901234567890,vendor/mod")
	if err := os.MkdirAll(filepath.Join(f.dir, "vendor/mod"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.git(t, "commit", "-q", "-m", "base")
	f.git(t, "update-index", "--cacheinfo", "160000,abcdefabcdefabcdefabcdefabcdefabcdefabcd,vendor/mod")
	f.write(t, "a.txt", "a2\n")
	f.git(t, "stash", "-q")
	if err := os.Remove(filepath.Join(f.dir, "vendor/mod")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(f.dir, "vendor/mod")); err != nil {
		t.Fatal(err)
	}
	twin(t, f.dir, "", "git_stash", map[string]any{"action": "apply"}, "stash", "apply", "-q")
	twin(t, f.dir, "", "git_stash", map[string]any{"action": "pop"}, "stash", "pop", "-q")
}
