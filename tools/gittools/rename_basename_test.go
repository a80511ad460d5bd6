package gittools

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestRegressRenamesByBasenameFirst: after exact renames git pairs a
// source and a destination whose basenames are each unique and the same
// when they are similar enough (find_basename_matches: 75% at the default
// -M50%), before the similarity matrix, where another source would score
// higher. git_status, git_diff and git_show paired z/foo.txt with
// y/bar.txt (95%) instead of x/foo.txt (88%); a basename two sources
// share is left to the matrix.
func TestRegressRenamesByBasenameFirst(t *testing.T) {
	var lines []string
	for i := 0; i < 40; i++ {
		lines = append(lines, fmt.Sprintf("line %d of the shared body with some text", i))
	}
	body := strings.Join(lines, "\n") + "\n"
	dst := strings.Join(append(append([]string{}, lines[:36]...), "n1", "n2", "n3", "n4"), "\n") + "\nbar only\n"
	for _, c := range []struct {
		name string
		srcs map[string]string
	}{
		{"unique basename", map[string]string{"x/foo.txt": body, "y/bar.txt": body + "bar only\n"}},
		{"basename below 75%", map[string]string{"x/foo.txt": strings.Join(lines[:20], "\n") + "\n", "y/bar.txt": body + "bar only\n"}},
		{"basename of two sources", map[string]string{"x/foo.txt": body, "w/foo.txt": body + "w\n", "y/bar.txt": body + "bar only\n"}},
		{"basename of two destinations", map[string]string{"x/foo.txt": body, "y/bar.txt": body + "bar only\n", "v/foo.txt": ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newRepo(t)
			for p, data := range c.srcs {
				if data == "" {
					continue
				}
				f.write(t, p, data)
			}
			f.commitAll(t, "base")
			for p, data := range c.srcs {
				if data != "" {
					f.git(t, "rm", "-q", p)
				}
			}
			f.write(t, "z/foo.txt", dst)
			if _, ok := c.srcs["v/foo.txt"]; ok {
				f.write(t, "v/foo.txt", dst+"v\n")
			}
			f.git(t, "add", "-A")
			g := open(t, f.dir)
			same(t, "status", g.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
			same(t, "diff --cached --stat", g.call(t, "git_diff", map[string]any{"cached": true, "stat": true}), f.git(t, "diff", "--cached", "--stat"))
			f.git(t, "commit", "-q", "-m", "move")
			same(t, "show --stat", g.call(t, "git_show", map[string]any{"commit": "HEAD", "stat": true}), f.git(t, "show", "--stat", "HEAD"))
		})
	}
}

// TestRegressRenameHashesByDiffAttribute: rename detection hashes a file
// as its diff attribute says (diff_filespec_is_binary), not only by its
// content: a CRLF file that "*.txt diff=bin" with diff.bin.binary makes
// binary keeps its CRs in the chunk hashes, so it no longer pairs with a
// text copy of itself under another name, in git diff, git diff --cached,
// git show and git commit's summary alike (differential seed 740079: the
// tools paired them as a rename).
func TestRegressRenameHashesByDiffAttribute(t *testing.T) {
	f := newRepo(t)
	f.write(t, "util15.txt", "  two spaces\r\nkappa\r\n}\r\n")
	f.commitAll(t, "one")
	f.git(t, "mv", "util15.txt", "b.md")
	f.write(t, "b.md", "  two spaces\r\nkappa\r\nalpha\n}\r\n")
	f.write(t, ".gitattributes", "*.txt diff=bin\n")
	f.git(t, "config", "diff.bin.binary", "true")
	f.git(t, "add", "b.md")
	f.set = open(t, f.dir).set
	compareTool(t, f, "git_diff", map[string]any{"cached": true, "stat": true}, "", "diff", "--cached", "--stat")
	toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
	dates := []string{"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000"}
	res, err := openEnv(t, toolDir, dates...).set.Call(context.Background(), "git_commit", []byte(`{"type":"fix","message":"two"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, ok := gitAt(t, gitDir, dates, "commit", "-m", "fix: two")
	if !ok {
		t.Fatal(errOut)
	}
	same(t, "git_commit's summary", res.Value.(string)+"\n", out)
	f.git(t, "commit", "-q", "-m", "two")
	f.set = open(t, f.dir).set
	compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD~1", "to_ref": "HEAD", "stat": true}, "", "diff", "--stat", "HEAD~1", "HEAD")
	compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD~1..HEAD"}, "", "diff", "HEAD~1..HEAD")
	compareTool(t, f, "git_show", map[string]any{"commit": "HEAD", "stat": true}, "", "show", "--stat", "HEAD")
	// Without the attribute the two pair, as in git.
	f.git(t, "config", "diff.bin.binary", "false")
	compareTool(t, f, "git_show", map[string]any{"commit": "HEAD", "stat": true}, "", "show", "--stat", "HEAD")
}
