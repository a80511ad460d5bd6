package gittools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestRegressBranchCreateAsGit: git_branch create (and rename, and
// git_checkout -b) refuse where git refuses: a name a ref above or below
// it takes, packed or loose ("'refs/heads/feature/x' exists; cannot
// create 'refs/heads/feature'"; checkout -b after moving the worktree),
// "HEAD"; they accept "@", and an unborn start names the branch.
func TestRegressBranchCreateAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "one")
	f.write(t, "b.txt", "b\n")
	f.commitAll(t, "two")
	f.git(t, "branch", "feature/x")
	f.git(t, "branch", "other")
	for _, packed := range []bool{false, true} {
		if packed {
			f.git(t, "pack-refs", "--all")
		}
		for _, name := range []string{"feature", "feature/x/y", "HEAD", "@", "new", "main"} {
			twin(t, f.dir, "", "git_branch", map[string]any{"create": name}, "branch", name)
		}
		twin(t, f.dir, "", "git_branch", map[string]any{"rename": "other", "new_name": "feature"}, "branch", "-m", "other", "feature")
		twin(t, f.dir, "", "git_branch", map[string]any{"rename": "feature/x", "new_name": "feature"}, "branch", "-m", "feature/x", "feature")
		twin(t, f.dir, "", "git_checkout", map[string]any{"create_branch": "feature", "commit": "HEAD~1"}, "checkout", "-b", "feature", "HEAD~1")
	}
	// The renamed branch takes its log along, into the place its own
	// directory held.
	toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
	open(t, toolDir).call(t, "git_branch", map[string]any{"rename": "feature/x", "new_name": "feature"})
	f.git(t, "-C", gitDir, "branch", "-m", "feature/x", "feature")
	same(t, "renamed branch's log", gittest.Git(t, toolDir, "reflog", "show", "feature"), gittest.Git(t, gitDir, "reflog", "show", "feature"))
	u := newRepo(t)
	u.write(t, "f.txt", "f\n")
	u.git(t, "add", "f.txt")
	twin(t, u.dir, "", "git_branch", map[string]any{"create": "x"}, "branch", "x")
	twin(t, u.dir, "", "git_checkout", map[string]any{"create_branch": "x"}, "checkout", "-b", "x")
	if te := open(t, u.dir).callErr(t, "git_branch", map[string]any{"create": "x"}); te.Message != "fatal: not a valid object name: 'main'" {
		t.Errorf("unborn: %q", te.Message)
	}
}

// TestRegressCheckoutNewBranchWritesNothingAsGit: git checkout -b <new>
// from HEAD, not quiet, makes the branch and switches to it without
// merging (git 2.39): a clone never checked out stays so (its status
// lists every file as deleted), a local change stays, an unmerged index
// stays unmerged.
func TestRegressCheckoutNewBranchWritesNothingAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.write(t, "d/b.txt", "b\n")
	f.commitAll(t, "one")
	clone := t.TempDir() + "/clone"
	gittest.Git(t, f.dir, "clone", "-q", "--no-checkout", f.dir, clone)
	twin(t, clone, "", "git_checkout", map[string]any{"create_branch": "nb"}, "checkout", "-b", "nb")
	f.write(t, "a.txt", "changed\n")
	twin(t, f.dir, "", "git_checkout", map[string]any{"create_branch": "nb"}, "checkout", "-b", "nb")
	twin(t, f.dir, "", "git_checkout", map[string]any{"create_branch": "nb", "commit": "HEAD"}, "checkout", "-b", "nb", "HEAD")
}

// TestRegressBranchVerboseSubjectAsGit: git branch -v shows each tip's
// subject as ref-filter's %(contents:subject): line breaks of the first
// paragraph turned into spaces, the CR of a CRLF dropped, white space
// within and at the ends kept (differential seeds 900344, 900403:
// "trailing spaces   " trimmed by the tool).
func TestRegressBranchVerboseSubjectAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "base")
	tree := strings.TrimSpace(f.git(t, "rev-parse", "HEAD^{tree}"))
	for i, msg := range []string{"  lead  ", "a  \n  b  ", "trailing   ", "x\n\nbody", "cr\r\nline\r\n\r\nbody", "tab\tx\t", "a\n \nb"} {
		c := strings.TrimSpace(f.git(t, "commit-tree", "-m", msg, tree))
		f.git(t, "branch", fmt.Sprintf("b%d", i), c)
	}
	f = open(t, f.dir)
	compareTool(t, f, "git_branch", map[string]any{}, "", "branch", "-v")
	compareTool(t, f, "git_branch", map[string]any{"list_all": true}, "", "branch", "-v", "-a")
}
