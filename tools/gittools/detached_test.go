package gittools

import (
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestDetachedHeadNamedAsGit: long status and git_branch name a detached
// HEAD from the reflog as git does: at/from the ref or commit it was
// detached at (a tag by its name, a branch by its full ref), and with no
// checkout in the reflog "Not currently on any branch." / "(no branch)".
func TestDetachedHeadNamedAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "1\n")
	f.commitAll(t, "one")
	f.write(t, "a", "2\n")
	f.commitAll(t, "two")
	f.git(t, "tag", "v1")
	f.git(t, "tag", "-a", "-m", "annotated", "v2")
	check := func(step string) {
		t.Helper()
		g := open(t, f.dir)
		same(t, step+": status", g.call(t, "git_status", map[string]any{"porcelain": false}), f.git(t, "status"))
		same(t, step+": branch", g.call(t, "git_branch", map[string]any{}), f.git(t, "branch", "-v"))
	}
	for _, step := range [][]string{
		{"checkout", "-q", "--detach", "HEAD~1"},
		{"commit", "-q", "--allow-empty", "-m", "three"},
		{"checkout", "-q", "v1"},
		{"checkout", "-q", "v2"},
		{"checkout", "-q", "main"},
		{"checkout", "-q", "--detach", "main"},
		{"commit", "-q", "--allow-empty", "-m", "four"},
	} {
		f.git(t, step...)
		check(strings.Join(step, " "))
	}
	// No checkout in the reflog at all.
	f.git(t, "reflog", "expire", "--expire=all", "--all")
	check("reflog expired")
	gittest.Git(t, f.dir, "status")
}
