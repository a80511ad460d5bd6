package gittools

import (
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
