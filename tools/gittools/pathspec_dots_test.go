package gittools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestRegressPathspecDotComponentsAsGit: a pathspec item whose last
// component is "." or ".." keeps the slash before it when git normalizes
// it ("keep.txt/." is "keep.txt/", "d/z.txt/.." is "d/"), so it names a
// directory only: git add refuses "keep.txt/." (lstat of "keep.txt/"
// fails) and takes "d/.", and "keep.txt/.." is the whole tree. Every
// tool taking paths, from the top and from a subdirectory, as git.
func TestRegressPathspecDotComponentsAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "keep.txt", "k\n")
	f.write(t, "d/z.txt", "z\n")
	f.write(t, "d/e/y.txt", "y\n")
	f.commitAll(t, "base")
	f.write(t, "keep.txt", "k2\n")
	f.write(t, "d/z.txt", "z2\n")
	f.write(t, "d/e/y.txt", "y2\n")
	f.write(t, "d/new.txt", "n\n")
	gittest.Git(t, f.dir, "add", "d/e/y.txt")
	base := f.dir
	items := []string{"keep.txt/.", "keep.txt/..", "keep.txt/./", "d/.", "d/..", "d/z.txt/.", "d/z.txt/..", "nope/.", "nope/..", "./keep.txt/.", "d/e/.", "."}
	state := func(dir string) string {
		var b strings.Builder
		for _, args := range [][]string{{"status", "--porcelain=2", "-uall"}, {"ls-files", "-s"}} {
			out, _ := gittest.GitErr(dir, args...)
			b.WriteString("$ git " + strings.Join(args, " ") + "\n" + out)
		}
		return b.String()
	}
	for _, wd := range []string{"", "d"} {
		for _, p := range items {
			if wd != "" {
				p = "../" + p
			}
			muts := []struct {
				tool string
				args map[string]any
				git  []string
			}{
				{"git_add", map[string]any{"paths": []string{p}}, []string{"add", "--", p}},
				{"git_restore", map[string]any{"paths": []string{p}}, []string{"restore", "--", p}},
				{"git_restore", map[string]any{"paths": []string{p}, "staged": true, "worktree": false}, []string{"restore", "--staged", "--", p}},
				{"git_checkout", map[string]any{"paths": []string{p}}, []string{"checkout", "-q", "--", p}},
			}
			for _, m := range muts {
				if wd != "" {
					m.args["working_dir"] = wd
				}
				toolDir, gitDir := copyTree(t, base), copyTree(t, base)
				raw, _ := json.Marshal(m.args)
				_, terr := open(t, toolDir).set.Call(context.Background(), m.tool, raw)
				_, gerr := gittest.GitErr(filepath.Join(gitDir, wd), m.git...)
				name := m.tool + " " + string(raw)
				if (terr != nil) != (gerr != nil) {
					t.Errorf("%s: tool error %v, git error %v", name, terr, gerr)
					continue
				}
				same(t, name, state(toolDir), state(gitDir))
			}
			ro := open(t, copyTree(t, base))
			compareTool(t, ro, "git_diff", map[string]any{"paths": []string{p}, "working_dir": wd}, wd, "diff", "--", p)
			compareTool(t, ro, "git_diff", map[string]any{"paths": []string{p}, "cached": true, "working_dir": wd}, wd, "diff", "--cached", "--", p)
			compareTool(t, ro, "git_log", map[string]any{"path": p, "format": "%s", "working_dir": wd}, wd, "log", "--format=%s", "--", p)
		}
	}
}
