package gittools

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRegressSwitchOverFileAtGitlink: a file standing where the index
// has a gitlink is no local change to a switch (verify_uptodate takes a
// gitlink as up to date, whatever is at its path), and a switch to a
// commit without the gitlink removes its path with rmdir only: the file
// stays, untracked (differential seed 700052: git_checkout refused with
// "Your local changes ... sub").
func TestRegressSwitchOverFileAtGitlink(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "base")
	f.write(t, "b.txt", "b\n")
	f.commitAll(t, "more")
	f.git(t, "update-index", "--add", "--cacheinfo", "160000,00000000000000000000000067044793080255a1,sub")
	if err := os.Mkdir(filepath.Join(f.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", "add submodule")
	if err := os.Remove(filepath.Join(f.dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "sub"), []byte("iota\niota\n{\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	twin(t, f.dir, "", "git_checkout", map[string]any{"commit": "HEAD~1"}, "checkout", "-q", "--detach", "HEAD~1")
	twin(t, f.dir, "", "git_checkout", map[string]any{"commit": "HEAD~2"}, "checkout", "-q", "--detach", "HEAD~2")
}
