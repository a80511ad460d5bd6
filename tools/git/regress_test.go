package git

// Regression tests shrunk from the randomized differential suite
// (test/integration): each repository state is the minimal one that made a
// tool differ from the git CLI.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// newRepo makes an empty repository with a tool set on it.
func newRepo(t *testing.T) *fixture {
	t.Helper()
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	return &fixture{dir: dir}
}

func (f *fixture) commitAll(t *testing.T, msg string) {
	t.Helper()
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", msg)
}

// A tracked name with a control character made status fail with go-git's
// "invalid path ... contains control character".
func TestRegressStatusControlCharacterName(t *testing.T) {
	f := newRepo(t)
	if err := os.MkdirAll(filepath.Join(f.dir, "ctl\x01x"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(t, "ctl\x01x/a", "x\n")
	f.write(t, "tab\there", "x\n")
	f.commitAll(t, "x")
	f.write(t, "ctl\x01x/a", "y\n")
	f.write(t, "tab\there", "y\n")
	f = open(t, f.dir)
	same(t, "status", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	same(t, "diff", f.call(t, "git_diff", map[string]any{}), f.git(t, "diff"))
}

// A gitlink (submodule) whose directory exists is unchanged; one whose
// directory is missing is deleted, in status and in diff.
func TestRegressGitlinkStatusAndDiff(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "a\n")
	f.git(t, "add", "a")
	f.git(t, "update-index", "--add", "--cacheinfo", "160000,0000000000000000000000000000000000003039,sub")
	f.git(t, "commit", "-q", "-m", "x")
	f = open(t, f.dir)
	same(t, "missing gitlink dir: status", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	same(t, "missing gitlink dir: diff", f.call(t, "git_diff", map[string]any{}), f.git(t, "diff"))
	if err := os.MkdirAll(filepath.Join(f.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(t, "sub/inside", "not the superproject's\n")
	same(t, "gitlink dir: status", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	f.git(t, "update-index", "--cacheinfo", "160000,00000000000000000000000000000000000003e7,sub")
	same(t, "staged gitlink: diff --cached", f.call(t, "git_diff", map[string]any{"cached": true}), f.git(t, "diff", "--cached"))
}

// Pathspecs: relative to working_dir (with ../), globs crossing '/'.
func TestRegressPathspecs(t *testing.T) {
	f := newRepo(t)
	f.write(t, "src/a/b.txt", "1\n")
	f.write(t, "lib/c.txt", "1\n")
	f.commitAll(t, "x")
	f.write(t, "src/a/b.txt", "2\n")
	f.write(t, "lib/c.txt", "2\n")
	f = open(t, f.dir)
	same(t, "glob", f.call(t, "git_diff", map[string]any{"paths": []string{"src/*"}}), f.git(t, "diff", "--", "src/*"))
	got := f.call(t, "git_diff", map[string]any{"paths": []string{"../lib/c.txt"}, "working_dir": "src"})
	want, err := gittest.GitErr(filepath.Join(f.dir, "src"), "diff", "--", "../lib/c.txt")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "relative to working_dir", got, want)
}
