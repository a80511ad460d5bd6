package gittools

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// conflicted builds a repository whose merge stopped on every kind of
// conflict git records: both modified (UU), deleted by us (DU), deleted
// by them (UD), both added (AA), beside an ordinary unstaged change.
func conflicted(t *testing.T) string {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "repo")
	sh := `git init -q -b main . &&
printf 'a\nb\nc\n' > uu.txt && printf 'x\n' > du.txt && printf 'y\n' > ud.txt && echo k > keep.txt && mkdir d && echo z > d/z.txt &&
git add . && git commit -qm base && git checkout -qb side &&
printf 'a\nB-side\nc\n' > uu.txt && echo x2 >> du.txt && git rm -q ud.txt && echo side > aa.txt && git add -A && git commit -qm side &&
git checkout -q main && printf 'a\nB-main\nc\n' > uu.txt && git rm -q du.txt && echo y2 >> ud.txt && echo main > aa.txt && echo k2 >> keep.txt &&
git add -A && git commit -qm main && { git merge side >/dev/null 2>&1; true; } && echo mod >> ud.txt && echo extra >> keep.txt`
	cmd := exec.Command("bash", "-c", "mkdir -p "+dir+" && cd "+dir+" && "+sh)
	cmd.Env = gittest.Env(t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return dir
}

// TestConflictedMergeMatchesGit: on a merge stopped on conflicts, every
// git tool answers as git does: the read-only ones byte for byte, the
// mutating ones by refusing when git refuses and otherwise leaving index,
// worktree, refs and merge state as git leaves them.
func TestConflictedMergeMatchesGit(t *testing.T) {
	base := conflicted(t)
	reads := []struct {
		tool string
		args map[string]any
		git  []string
	}{
		{"git_status", map[string]any{"porcelain": true, "branch": true}, []string{"status", "--porcelain=1", "-b"}},
		{"git_status", map[string]any{"porcelain": false}, []string{"status"}},
		{"git_diff", map[string]any{}, []string{"diff"}},
		{"git_diff", map[string]any{"stat": true}, []string{"diff", "--stat"}},
		{"git_diff", map[string]any{"name_only": true}, []string{"diff", "--name-only"}},
		{"git_diff", map[string]any{"cached": true}, []string{"diff", "--cached"}},
		{"git_diff", map[string]any{"cached": true, "stat": true}, []string{"diff", "--cached", "--stat"}},
		{"git_diff", map[string]any{"from_ref": "HEAD"}, []string{"diff", "HEAD"}},
		{"git_diff", map[string]any{"paths": []any{"uu.txt", "ud.txt"}}, []string{"diff", "--", "uu.txt", "ud.txt"}},
	}
	for _, c := range reads {
		dir := copyTree(t, base)
		same(t, c.tool+" "+strings.Join(c.git, " "), open(t, dir).call(t, c.tool, c.args), gittest.Git(t, dir, c.git...))
	}
	muts := []struct {
		tool string
		args map[string]any
		git  []string
	}{
		{"git_add", map[string]any{"paths": []any{"uu.txt", "du.txt"}}, []string{"add", "--", "uu.txt", "du.txt"}},
		{"git_add", map[string]any{"all": true}, []string{"add", "-A"}},
		{"git_add", map[string]any{"update": true}, []string{"add", "-u"}},
		// Beside an unmerged path, staging others keeps its stages.
		{"git_add", map[string]any{"paths": []any{"keep.txt"}}, []string{"add", "--", "keep.txt"}},
		{"git_add", map[string]any{"paths": []any{"d"}}, []string{"add", "--", "d"}},
		{"git_add", map[string]any{"paths": []any{":!uu.txt"}}, []string{"add", "--", ":!uu.txt"}},
		{"git_commit", map[string]any{"type": "fix", "message": "m"}, []string{"commit", "-qm", "fix: m"}},
		{"git_stash", map[string]any{"action": "push"}, []string{"stash", "push", "-q"}},
		{"git_checkout", map[string]any{"branch": "side"}, []string{"checkout", "-q", "side"}},
		// git 2.39 refuses "checkout -q -b" on an unmerged index but, not
		// quiet, reports the error and switches; the tool is not quiet.
		{"git_checkout", map[string]any{"create_branch": "nb"}, []string{"checkout", "-b", "nb"}},
		{"git_checkout", map[string]any{"paths": []any{"uu.txt"}}, []string{"checkout", "--", "uu.txt"}},
		{"git_checkout", map[string]any{"paths": []any{"keep.txt"}}, []string{"checkout", "--", "keep.txt"}},
		{"git_checkout", map[string]any{"commit": "HEAD", "paths": []any{"uu.txt", "aa.txt"}}, []string{"checkout", "HEAD", "--", "uu.txt", "aa.txt"}},
		{"git_restore", map[string]any{"paths": []any{"uu.txt"}}, []string{"restore", "--", "uu.txt"}},
		{"git_restore", map[string]any{"paths": []any{"uu.txt", "aa.txt"}, "staged": true, "worktree": false}, []string{"restore", "--staged", "--", "uu.txt", "aa.txt"}},
		{"git_restore", map[string]any{"paths": []any{"uu.txt", "du.txt"}, "staged": true}, []string{"restore", "--staged", "--worktree", "--", "uu.txt", "du.txt"}},
		{"git_restore", map[string]any{"paths": []any{"."}, "staged": true, "worktree": true}, []string{"restore", "--staged", "--worktree", "--", "."}},
		// Only an exclude: every other path, the unmerged ones too.
		{"git_restore", map[string]any{"paths": []any{":!keep.txt"}, "staged": true, "worktree": true}, []string{"restore", "--staged", "--worktree", "--", ":!keep.txt"}},
		{"git_restore", map[string]any{"paths": []any{":(exclude)d"}, "staged": true, "worktree": true}, []string{"restore", "--staged", "--worktree", "--", ":(exclude)d"}},
		{"git_restore", map[string]any{"paths": []any{":!keep.txt"}, "staged": true, "worktree": false}, []string{"restore", "--staged", "--", ":!keep.txt"}},
		{"git_restore", map[string]any{"paths": []any{":!keep.txt"}}, []string{"restore", "--", ":!keep.txt"}},
	}
	state := func(dir string) string {
		var b strings.Builder
		for _, args := range [][]string{{"status", "--porcelain=2", "-b", "-uall"}, {"ls-files", "-s"}, {"rev-parse", "-q", "--verify", "MERGE_HEAD"}, {"log", "-1", "--format=%T %P %s"}} {
			out, _ := gittest.GitErr(dir, args...)
			b.WriteString("$ git " + strings.Join(args, " ") + "\n" + out)
		}
		return b.String()
	}
	for _, m := range muts {
		toolDir, gitDir := copyTree(t, base), copyTree(t, base)
		raw, _ := json.Marshal(m.args)
		_, terr := open(t, toolDir).set.Call(context.Background(), m.tool, raw)
		_, gerr := gittest.GitErr(gitDir, m.git...)
		name := m.tool + " " + string(raw)
		if (terr != nil) != (gerr != nil) {
			t.Errorf("%s: tool error %v, git error %v", name, terr, gerr)
			continue
		}
		same(t, name, state(toolDir), state(gitDir))
	}
}

// copyTree copies a repository with cp -a (modes and timestamps kept).
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "r")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return dst
}
