package gittools

// Combined diffs (a merge's, a stash's W) against git's combine-diff.c:
// regressions shrunk from the differential suite.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

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

// An unmerged path whose file was replaced by a directory is diffed
// combined against an empty result, every line removed (combine-diff.c
// reads a directory's place as the null blob); a missing file shows the
// header only (differential seed 1183).
func TestRegressCombinedDiffDirectoryInPlaceAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "b.txt", "base\n")
	f.commitAll(t, "base")
	f.git(t, "checkout", "-q", "-b", "side")
	f.write(t, "both/added.txt", "\nzeta\nx\n")
	f.commitAll(t, "side")
	f.git(t, "checkout", "-q", "main")
	f.write(t, "both/added.txt", "\n\tindented\nzeta\n")
	f.commitAll(t, "here")
	gittest.GitErr(f.dir, "merge", "-q", "side")
	if err := os.Remove(filepath.Join(f.dir, "both/added.txt")); err != nil {
		t.Fatal(err)
	}
	sameOutput(t, f.dir, "git_diff", map[string]any{}, "diff")
	f.write(t, "both/added.txt/notes.txt", "n\n")
	sameOutput(t, f.dir, "git_diff", map[string]any{}, "diff")
}
