package gittools

// Combined diffs (a merge's, a stash's W) against git's combine-diff.c:
// regressions shrunk from the differential suite.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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

// Parents with the same blob share one diff (combine-diff.c
// reuse_combine_diff): their lost lines are one list, marked for both,
// not a second list coalesced with the first. The output is git's in an
// evil merge of two identical sides and in an octopus whose first and
// third parents agree; and coalescing, a table of the product of the two
// lists' lengths, is not paid for a stash whose index is HEAD's: a file
// of 4,000 lines emptied in the worktree costs megabytes, not the 256 MB
// of a 4,000 x 4,000 table (bytes allocated, not time, are measured).
func TestRegressCombinedDiffSameParentBlobAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f.txt", "a\nb\nc\nd\n")
	f.write(t, "g.txt", "g\n")
	f.commitAll(t, "base")
	f.git(t, "checkout", "-q", "-b", "side")
	f.write(t, "f.txt", "a\nB\nc\nd\nb\n")
	f.write(t, "g.txt", "side\n")
	f.commitAll(t, "side")
	f.git(t, "checkout", "-q", "main")
	f.write(t, "f.txt", "a\nB\nc\nd\nb\n")
	f.write(t, "g.txt", "main\n")
	f.commitAll(t, "main")
	gittest.GitErr(f.dir, "merge", "-q", "--no-commit", "side")
	f.write(t, "f.txt", "a\nc\nx\nb\n")
	f.write(t, "g.txt", "both\n")
	f.commitAll(t, "merge")
	sameOutput(t, f.dir, "git_show", map[string]any{"commit": "HEAD"}, "show", "HEAD")
	sameOutput(t, f.dir, "git_show", map[string]any{"commit": "HEAD", "stat": true}, "show", "--stat", "HEAD")

	for _, c := range [][3]string{
		{"p\nq\np\n", "q\np\nq\n", "z\n"},
		{"a\nb\nc\nd\n", "b\nc\na\n", "x\n"},
		{"x\ny\nz\nx\ny\n", "y\nx\nz\ny\nx\n", "z\n"},
	} {
		f := newRepo(t)
		var parents []string
		for i, content := range c[:2] {
			f.write(t, "f.txt", content)
			f.commitAll(t, "parent")
			parents = append(parents, "-p", strings.TrimSpace(f.git(t, "rev-parse", "HEAD")))
			if i == 1 {
				f.write(t, "f.txt", c[0])
				f.write(t, "o.txt", "o\n")
				f.commitAll(t, "third parent, the first's blob")
				parents = append(parents, "-p", strings.TrimSpace(f.git(t, "rev-parse", "HEAD")))
			}
		}
		f.write(t, "f.txt", c[2])
		f.git(t, "add", "-A")
		tree := strings.TrimSpace(f.git(t, "write-tree"))
		m := strings.TrimSpace(f.git(t, append([]string{"commit-tree", tree, "-m", "octopus"}, parents...)...))
		f.git(t, "reset", "-q", "--hard", m)
		sameOutput(t, f.dir, "git_show", map[string]any{"commit": "HEAD"}, "show", "HEAD")
	}

	f = newRepo(t)
	var big strings.Builder
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	f.write(t, "big.txt", big.String())
	f.commitAll(t, "big")
	f.write(t, "big.txt", "")
	f.git(t, "stash", "-q")
	f = open(t, f.dir)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := f.call(t, "git_show", map[string]any{"commit": "stash@{0}"})
	runtime.ReadMemStats(&after)
	if want := f.git(t, "show", "stash@{0}"); got != want {
		t.Errorf("git_show stash@{0} differs from git's:\n%s", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("git_show of a stash emptying 4,000 lines allocated %d MB: the identical parents were coalesced", n>>20)
	}
}

// A combined diff is binary as the path's diff driver says when it says
// (show_patch_diff reads userdiff->binary: `diff` forces text, `-diff`
// binary, diff.<driver>.binary), by a NUL in any side otherwise: a stash
// W changing a file with a NUL, shown with `*.txt diff`, lists its lines
// (differential seed 760157: "Binary files differ").
func TestRegressCombinedDiffFollowsDiffAttributeAsGit(t *testing.T) {
	f := newRepo(t)
	far := "zero\x00\x01\xff\n1\n2\n3\n4\n5\n6\n7\n8\n"
	f.write(t, "c.txt", far+"beta\n")
	f.write(t, "t.txt", "plain\ntext\n")
	f.write(t, "d.dat", "data\nlines\n")
	f.commitAll(t, "base")
	f.write(t, "c.txt", far+"gamma\n")
	f.write(t, "t.txt", "plain\nchanged\n")
	f.write(t, "d.dat", "data\nchanged\n")
	f.git(t, "stash", "-q")
	for _, attrs := range []string{"", "*.txt diff\n", "* -diff\n*.txt diff\n", "*.txt -diff\n", "*.txt diff=bin\n*.dat diff=bin\n"} {
		f.write(t, ".gitattributes", attrs)
		for _, bin := range []string{"", "true", "false"} {
			if bin == "" {
				_, _ = gittest.GitErr(f.dir, "config", "--unset", "diff.bin.binary")
			} else {
				f.git(t, "config", "diff.bin.binary", bin)
			}
			sameOutput(t, f.dir, "git_show", map[string]any{"commit": "stash@{0}"}, "show", "stash@{0}")
		}
	}
}

// A combined diff prints each line as show_line_to_eol does: printf's
// "%.*s" stops at a NUL, a lost line (length unknown, strlen) at its
// first NUL before its CR is looked for, a result line with its CR
// after whatever was printed (differential seed 760157: a removed line
// "\x00\x01\x02\xff" is "--" alone in git's).
func TestRegressCombinedDiffLineEndsAtNULAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, ".gitattributes", "*.txt diff\n")
	f.write(t, "n.txt", "keep\nx\x00y\r\nlost\x00\r\ncr only\r\n\x00\x01\x02\xff")
	f.commitAll(t, "base")
	f.write(t, "n.txt", "keep\nnew\x00z\r\n\x00\r\ncr too\r\n")
	f.git(t, "stash", "-q")
	sameOutput(t, f.dir, "git_show", map[string]any{"commit": "stash@{0}"}, "show", "stash@{0}")
}
