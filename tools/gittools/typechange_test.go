package gittools

// Type changes (git's DIFF_STATUS_TYPE_CHANGED): a path whose kind
// changed between a file, a symbolic link and a gitlink, in the worktree,
// in the index and in history, against the git CLI. Shrunk from the
// differential suite's retype operations.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// typeChangeRepo commits a file, a link, a gitlink and a file that will
// become a gitlink, then changes each one's kind in the worktree.
func typeChangeRepo(t *testing.T) *fixture {
	t.Helper()
	f := newRepo(t)
	f.write(t, "f.txt", "a\nb\nc\n")
	f.write(t, "g.txt", "x\n")
	f.write(t, "later.txt", "becomes a gitlink\n")
	if err := os.Symlink("g.txt", filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	f.git(t, "add", "-A")
	f.git(t, "update-index", "--add", "--cacheinfo", "160000,1234567890123456789012345678901234567890,sub")
	f.git(t, "commit", "-q", "-m", "kinds")
	// The worktree: the file a link, the link a file, a file in the
	// gitlink's place (its directory was never made).
	mustRemove(t, filepath.Join(f.dir, "f.txt"))
	if err := os.Symlink("g.txt", filepath.Join(f.dir, "f.txt")); err != nil {
		t.Fatal(err)
	}
	mustRemove(t, filepath.Join(f.dir, "link"))
	f.write(t, "link", "now a file\n")
	f.write(t, "sub", "a file where the gitlink was\n")
	// The index: a gitlink where a file is, the file left in place.
	f.git(t, "update-index", "--cacheinfo", "160000,abcdefabcdefabcdefabcdefabcdefabcdefabcd,later.txt")
	return open(t, f.dir)
}

func mustRemove(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

// TestRegressTypeChangeAsGit: status prints T (` T`, `T `, long format
// "typechange:"), a patch prints the deletion then the creation, a stat
// counts old content against new, in every diff the tools make.
func TestRegressTypeChangeAsGit(t *testing.T) {
	f := typeChangeRepo(t)
	check := func() {
		t.Helper()
		compareTool(t, f, "git_status", map[string]any{"branch": false}, "", "status", "--porcelain=1")
		compareTool(t, f, "git_status", map[string]any{"porcelain": false}, "", "status")
		compareTool(t, f, "git_diff", map[string]any{}, "", "diff")
		compareTool(t, f, "git_diff", map[string]any{"stat": true}, "", "diff", "--stat")
		compareTool(t, f, "git_diff", map[string]any{"cached": true}, "", "diff", "--cached")
		compareTool(t, f, "git_diff", map[string]any{"cached": true, "stat": true}, "", "diff", "--cached", "--stat")
		compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD"}, "", "diff", "HEAD")
	}
	check()
	// Staged: the index holds the new kinds.
	f.git(t, "add", "f.txt", "link", "sub")
	check()
	// Committed: history shows them.
	f.git(t, "commit", "-q", "-m", "retyped")
	compareTool(t, f, "git_show", map[string]any{}, "", "show", "HEAD")
	compareTool(t, f, "git_show", map[string]any{"stat": true}, "", "show", "--stat", "HEAD")
	compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD^", "to_ref": "HEAD"}, "", "diff", "HEAD^", "HEAD")
	compareTool(t, f, "git_log", map[string]any{"format": "%s"}, "", "log", "--format=%s")
}

// TestRegressSubmoduleSymlinkStopsAsGit: a symbolic link in a gitlink's
// place stops status and a worktree patch as git 2.39.5's
// validate_submodule_path does; a stat, a name list and a cached diff go
// on, as in git.
func TestRegressSubmoduleSymlinkStopsAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f.txt", "x\n")
	f.git(t, "add", "-A")
	f.git(t, "update-index", "--add", "--cacheinfo", "160000,1234567890123456789012345678901234567890,sub")
	f.git(t, "commit", "-q", "-m", "gitlink")
	if err := os.Symlink("nowhere", filepath.Join(f.dir, "sub")); err != nil {
		t.Fatal(err)
	}
	f = open(t, f.dir)
	compareTool(t, f, "git_status", map[string]any{}, "", "status", "--porcelain=1", "-b")
	compareTool(t, f, "git_diff", map[string]any{}, "", "diff")
	compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD"}, "", "diff", "HEAD")
	compareTool(t, f, "git_diff", map[string]any{"paths": []string{"f.txt"}}, "", "diff", "--", "f.txt")
	compareTool(t, f, "git_diff", map[string]any{"stat": true}, "", "diff", "--stat")
	compareTool(t, f, "git_diff", map[string]any{"name_only": true}, "", "diff", "--name-only")
	compareTool(t, f, "git_diff", map[string]any{"cached": true}, "", "diff", "--cached")
	if te := f.callErr(t, "git_status", map[string]any{}); te.Message != "error: expected submodule path 'sub' not to be a symbolic link" {
		t.Errorf("status error %q", te.Message)
	}
}

// TestRegressCommitDirectoryBecomesFileAsGit: a directory of tracked
// files replaced by a file of its name (or by a link), staged, commits
// the tree git writes: the file in the directory's place, nothing of
// what was below it, whichever of the two changes the tree builder meets
// first (differential seed 100145; repeated, as the order is a map's).
func TestRegressCommitDirectoryBecomesFileAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "src/c3.log", "a\n")
	f.write(t, "src/deep/d.txt", "d\n")
	f.write(t, "lnk/x.txt", "x\n")
	f.write(t, "top", "t\n")
	f.commitAll(t, "base")
	if err := os.RemoveAll(filepath.Join(f.dir, "src")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "src", "now a file\n")
	if err := os.RemoveAll(filepath.Join(f.dir, "lnk")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(f.dir, "lnk")); err != nil {
		t.Fatal(err)
	}
	f.git(t, "add", "-A")
	want := strings.TrimSpace(f.git(t, "write-tree"))
	for i := 0; i < 8; i++ {
		g := open(t, copyTree(t, f.dir))
		g.call(t, "git_commit", map[string]any{"type": "fix", "message": "retype"})
		if got := strings.TrimSpace(g.git(t, "rev-parse", "HEAD^{tree}")); got != want {
			t.Fatalf("commit %d: tree %s, git writes %s:\n%s", i, got, want, g.git(t, "ls-tree", "-r", "HEAD"))
		}
	}
}

// TestRegressStashApplyBesideSubmoduleSymlinkAsGit: git stash apply ends
// with a git status whose end it ignores, so a symbolic link in a
// gitlink's place, which stops that status, leaves the apply standing
// (differential seed 100272).
func TestRegressStashApplyBesideSubmoduleSymlinkAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	if err := os.MkdirAll(filepath.Join(f.dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(f.dir, "build/link")); err != nil {
		t.Fatal(err)
	}
	f.commitAll(t, "base")
	f.write(t, "a.txt", "a2\n")
	f.git(t, "stash", "-q")
	f.git(t, "update-index", "--cacheinfo", "160000,000000000000000000000000492397f4d21ee57c,build/link")
	twin(t, f.dir, "", "git_stash", map[string]any{"action": "apply"}, "stash", "apply")
	twin(t, f.dir, "", "git_stash", map[string]any{"action": "pop"}, "stash", "pop")
}

// TestRegressStashPushOverFileAboveStagedDirectory: a link committed in
// a directory, then staged as a directory with a file in it, then the
// whole directory replaced by a file in the worktree: stash push's reset
// removes the staged file below what is now a file (git's unlink fails
// with ENOTDIR and goes on) and checks the link out again in place of
// the file. The tool stopped at the removal ("not a directory") after
// saving the stash (differential seed 740110).
func TestRegressStashPushOverFileAboveStagedDirectory(t *testing.T) {
	f := newRepo(t)
	if err := os.MkdirAll(filepath.Join(f.dir, "sp ace"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(f.dir, "sp ace", "readme12.md")); err != nil {
		t.Fatal(err)
	}
	f.commitAll(t, "link")
	mustRemove(t, filepath.Join(f.dir, "sp ace", "readme12.md"))
	f.write(t, "sp ace/readme12.md/inside.txt", "\n")
	f.git(t, "add", "-A", "--", "sp ace/readme12.md")
	if err := os.RemoveAll(filepath.Join(f.dir, "sp ace")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "sp ace", "return x;\n")
	twin(t, f.dir, "", "git_stash", map[string]any{"action": "push", "message": "saved work"}, "stash", "push", "-q", "-m", "saved work")
}
