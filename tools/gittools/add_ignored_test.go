package gittools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestRegressAddReportsIgnoredWhateverExcludes: git add collects an
// ignored path an item names (exclude_matches_pathspec) before any
// exclusion is looked at, so an exclusion covering it, or the whole tree,
// does not spare the report (differential seed 700274: git add -A --
// ':(top,literal)build' ':(exclude)..' in d refused, the tool staged).
func TestRegressAddReportsIgnoredWhateverExcludes(t *testing.T) {
	base, _, _, _ := pathspecFixture(t)
	for _, c := range []struct {
		wd   string
		all  bool
		spec []string
	}{
		{"d", true, []string{":(top,literal)build", ":(exclude).."}},
		{"d", false, []string{":(top)build", ":(exclude)../build"}},
		{"", false, []string{"build", ":(exclude)build"}},
		{"", false, []string{"build", ":(exclude)bui*"}},
		{"", true, []string{"build", ":(exclude)."}},
		{"", false, []string{"build/out.txt", ":(exclude)build"}},
		{"", false, []string{"d/e/debug.log", ":(exclude)d"}},
		{"", false, []string{"d/e/debug.log", ":(exclude)*.log"}},
		{"", true, []string{"d", ":(exclude)d/e"}},
	} {
		gitDir, toolDir := copyTree(t, base), copyTree(t, base)
		gargs := []string{"add"}
		args := map[string]any{"paths": anySlice(c.spec)}
		if c.all {
			gargs, args["all"] = append(gargs, "-A"), true
		}
		if c.wd != "" {
			args["working_dir"] = c.wd
		}
		gargs = append(append(gargs, "--"), c.spec...)
		gout, gerr := gittest.GitErr(filepath.Join(gitDir, c.wd), gargs...)
		raw, _ := json.Marshal(args)
		_, terr := open(t, toolDir).set.Call(context.Background(), "git_add", raw)
		what := "git " + strings.Join(gargs, " ") + " in " + c.wd
		if (gerr == nil) != (terr == nil) {
			t.Errorf("%s: git error %v, tool error %v", what, gerr, terr)
			continue
		}
		if te, ok := terr.(*tools.Error); ok && strings.TrimSpace(te.Message) != gitMessage(gout) {
			t.Errorf("%s: message %q, git's %q", what, te.Message, gout)
		}
		gi, _ := gittest.GitErr(gitDir, "ls-files", "-s")
		ti, _ := gittest.GitErr(toolDir, "ls-files", "-s")
		same(t, what+": index", ti, gi)
	}
}
