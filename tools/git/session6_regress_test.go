package git

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// Regressions shrunk from the differential suite once mutations ran in
// working directories and the compared state took in reflogs.

// twin runs the tool in one copy of a repository and git in another and
// compares what the git CLI then sees of both.
func twin(t *testing.T, base, wd, tool string, args map[string]any, gitArgs ...string) {
	t.Helper()
	toolDir, gitDir := copyTree(t, base), copyTree(t, base)
	if wd != "" {
		args["working_dir"] = wd
	}
	raw, _ := json.Marshal(args)
	_, terr := open(t, toolDir).set.Call(context.Background(), tool, raw)
	_, gerr := gittest.GitErr(filepath.Join(gitDir, wd), gitArgs...)
	if (terr != nil) != (gerr != nil) {
		t.Fatalf("%s %s: tool error %v, git error %v", tool, raw, terr, gerr)
	}
	view := func(dir string) string {
		var b strings.Builder
		for _, a := range [][]string{{"status", "--porcelain=2", "-b", "-uall"}, {"reflog", "show", "-n", "4", "--format=%gs", "HEAD"}, {"for-each-ref", "--format=%(refname)"}} {
			out, _ := gittest.GitErr(dir, a...)
			b.WriteString(strings.Join(a, " ") + "\n" + out)
		}
		_, err := os.Stat(filepath.Join(dir, "src"))
		b.WriteString("src exists: " + boolWord(err == nil) + "\n")
		return b.String()
	}
	same(t, tool+" "+string(raw), view(toolDir), view(gitDir))
}

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// A branch switch run in a directory the target lacks keeps the directory
// (git's startup cwd); stash push, whose reset runs in a child git, does
// not. Both log what git logs.
func TestRegressWorkingDirKeptOrRemoved(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "base")
	f.git(t, "branch", "other")
	f.write(t, "src/x.txt", "x\n")
	f.commitAll(t, "src")
	twin(t, f.dir, "src", "git_checkout", map[string]any{"branch": "other"}, "checkout", "-q", "other")
	f.write(t, "src/new.txt", "new\n")
	f.git(t, "add", "src/new.txt")
	f.git(t, "rm", "-q", "src/x.txt")
	twin(t, f.dir, "src", "git_stash", map[string]any{"action": "push"}, "stash", "push", "-q")
}

// Reflog entries: a commit's message as git condenses it, a branch
// renamed onto itself, and the rename of an unborn current branch.
func TestRegressReflogEntries(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "base")
	f.write(t, "a.txt", "b\n")
	f.git(t, "add", "a.txt")
	twin(t, f.dir, "", "git_commit", map[string]any{"type": "fix", "message": "tab\tin  subject\n\nbody"}, "commit", "-q", "-m", "fix: tab\tin  subject\n\nbody")
	twin(t, f.dir, "", "git_branch", map[string]any{"rename": "main", "new_name": "main"}, "branch", "-m", "main", "main")
	twin(t, f.dir, "", "git_branch", map[string]any{"rename": "main", "new_name": "topic"}, "branch", "-m", "main", "topic")
	twin(t, f.dir, "", "git_checkout", map[string]any{"create_branch": "nb", "commit": "HEAD"}, "checkout", "-q", "-b", "nb", "HEAD")
	empty := newRepo(t)
	twin(t, empty.dir, "", "git_branch", map[string]any{"rename": "main", "new_name": "other"}, "branch", "-m", "main", "other")
}
