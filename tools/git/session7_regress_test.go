package git

import (
	"strings"
	"testing"
)

// Regressions shrunk from the differential suite in session 7.

// A combined diff (a merge, a stash's W) takes its context from
// diff.context as the two-way diff does (combine-diff.c make_hunks), not
// a fixed 3 lines.
func TestRegressCombinedDiffContextAsGit(t *testing.T) {
	f := newRepo(t)
	base := []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	f.write(t, "f.txt", strings.Join(base, "\n")+"\n")
	f.commitAll(t, "base")
	f.git(t, "checkout", "-q", "-b", "side")
	side := append([]string(nil), base...)
	side[2] = "THREE side"
	f.write(t, "f.txt", strings.Join(side, "\n")+"\n")
	f.commitAll(t, "side")
	f.git(t, "checkout", "-q", "main")
	mine := append([]string(nil), base...)
	mine[6] = "SEVEN main"
	f.write(t, "f.txt", strings.Join(mine, "\n")+"\n")
	f.commitAll(t, "main")
	f.git(t, "merge", "-q", "--no-commit", "side")
	res := append([]string(nil), base...)
	res[2], res[4], res[6] = "THREE side", "FIVE evil", "SEVEN main"
	f.write(t, "f.txt", strings.Join(res, "\n")+"\n")
	f.commitAll(t, "merge")
	for _, ctx := range []string{"0", "1", "2", "5"} {
		f.git(t, "config", "diff.context", ctx)
		sameOutput(t, f.dir, "git_show", map[string]any{"commit": "HEAD"}, "show", "HEAD")
	}
}
