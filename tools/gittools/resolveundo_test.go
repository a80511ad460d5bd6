package gittools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// resolveUndoRepo is a merge stopped on conflicts in f and g (both
// modified) and h (deleted by them), with k changed beside them; resolved
// also runs git add f and a commit of everything, so its index holds
// git's resolve-undo records.
func resolveUndoRepo(t *testing.T, resolved bool) string {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "repo")
	sh := `git init -q -b main . && printf 'a\n' > f && printf 'g\n' > g && printf 'h\n' > h && echo k > k && chmod +x g && git add . && git commit -qm base &&
git checkout -qb side && echo s > f && echo gs > g && git rm -q h && git commit -qam side &&
git checkout -q main && echo m > f && echo gm > g && echo h2 > h && git commit -qam main && { git merge side >/dev/null 2>&1; true; } && echo k2 >> k`
	if resolved {
		sh += ` && echo r > f && git add f && echo r > g && git add g && git rm -q h && git commit -qm merged`
	}
	cmd := exec.Command("bash", "-c", "mkdir -p "+dir+" && cd "+dir+" && "+sh)
	cmd.Env = gittest.Env(t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return dir
}

// undoOp is a tool call and the git command it stands for.
type undoOp struct {
	tool string
	args map[string]any
	git  []string
}

// runUndoOps runs ops through the tools in one copy of base and through
// git in another, then compares the index and its resolve-undo records.
func runUndoOps(t *testing.T, base string, ops []undoOp) {
	t.Helper()
	state := func(dir string) string {
		var b strings.Builder
		for _, args := range [][]string{{"ls-files", "--resolve-undo"}, {"ls-files", "-s"}} {
			out, _ := gittest.GitErr(dir, args...)
			b.WriteString("$ git " + strings.Join(args, " ") + "\n" + out)
		}
		return b.String()
	}
	toolDir, gitDir := copyTree(t, base), copyTree(t, base)
	var names []string
	for _, o := range ops {
		raw, _ := json.Marshal(o.args)
		names = append(names, o.tool+" "+string(raw))
		_, terr := open(t, toolDir).set.Call(context.Background(), o.tool, raw)
		_, gerr := gittest.GitErr(gitDir, o.git...)
		if (terr != nil) != (gerr != nil) {
			t.Errorf("%s: tool error %v, git error %v", strings.Join(names, "; "), terr, gerr)
			return
		}
	}
	same(t, strings.Join(names, "; "), state(toolDir), state(gitDir))
}

// TestRegressResolveUndoAsGit: the index's resolve-undo extension (what
// git checkout -m reads to make a conflict again) is kept as git keeps
// it: a resolution (git add, git rm, a path restored from a commit)
// records the stages it removed, later writes keep them (add, commit,
// restore, checkout of paths), and a switch or a stash, which rebuild the
// index from a tree, drop them.
func TestRegressResolveUndoAsGit(t *testing.T) {
	type op = undoOp
	run := func(base string, ops []op) { runUndoOps(t, base, ops) }
	add := func(ps ...string) op {
		return op{"git_add", map[string]any{"paths": ps}, append([]string{"add", "--"}, ps...)}
	}
	commit := op{"git_commit", map[string]any{"type": "fix", "message": "m"}, []string{"commit", "-qm", "fix: m"}}
	conflicted := resolveUndoRepo(t, false)
	for _, ops := range [][]op{
		{add("f")},
		{add("f", "g")},
		{add("k")},
		{add("f"), add("g")},
		{add("f"), add("g"), add("h"), commit},
		{{"git_add", map[string]any{"all": true}, []string{"add", "-A"}}},
		{{"git_add", map[string]any{"update": true}, []string{"add", "-u"}}, commit},
		{{"git_checkout", map[string]any{"commit": "HEAD", "paths": []string{"f", "h"}}, []string{"checkout", "HEAD", "--", "f", "h"}}},
		{{"git_restore", map[string]any{"paths": []string{"f"}, "staged": true, "worktree": true}, []string{"restore", "--staged", "--worktree", "--", "f"}}},
	} {
		run(conflicted, ops)
	}
	resolved := resolveUndoRepo(t, true)
	for _, ops := range [][]op{
		{add("k")},
		{add("k"), commit},
		{{"git_restore", map[string]any{"paths": []string{"k"}}, []string{"restore", "--", "k"}}},
		{{"git_checkout", map[string]any{"paths": []string{"k"}}, []string{"checkout", "--", "k"}}},
		{{"git_branch", map[string]any{"create": "zz"}, []string{"branch", "zz"}}},
		// Not quiet, as the tool: git 2.39 neither merges nor writes the
		// index for -b from HEAD ("-q -b" does, and drops the records).
		{{"git_checkout", map[string]any{"create_branch": "nb"}, []string{"checkout", "-b", "nb"}}},
		{{"git_checkout", map[string]any{"create_branch": "nb", "commit": "HEAD"}, []string{"checkout", "-b", "nb", "HEAD"}}},
		{{"git_checkout", map[string]any{"commit": "HEAD~1"}, []string{"checkout", "-q", "--detach", "HEAD~1"}}},
		{{"git_stash", map[string]any{"action": "push"}, []string{"stash", "push", "-q"}}},
		{{"git_stash", map[string]any{"action": "push"}, []string{"stash", "push", "-q"}}, {"git_stash", map[string]any{"action": "apply"}, []string{"stash", "apply", "-q"}}},
		{{"git_status", map[string]any{}, []string{"status"}}},
	} {
		run(resolved, ops)
	}
}

// TestRegressResolveUndoKeptByRefusalsAsGit: a switch or a stash that
// refuses writes no new index; the stat refresh before the refusal
// keeps the resolve-undo records, as git's refresh_index does
// (differential seeds 900186, 900162), and so does a stash with nothing
// to save.
func TestRegressResolveUndoKeptByRefusalsAsGit(t *testing.T) {
	resolved := resolveUndoRepo(t, true)
	refused := func(sh string) string {
		dir := copyTree(t, resolved)
		// g's stat data changed, not its content: the refresh writes.
		cmd := exec.Command("bash", "-c", sh+" && touch -d @1000000000 g")
		cmd.Dir, cmd.Env = dir, gittest.Env(t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return dir
	}
	for _, c := range []struct {
		sh  string
		ops []undoOp
	}{
		{"git branch other HEAD~1 && echo local > f", []undoOp{{"git_checkout", map[string]any{"branch": "other"}, []string{"checkout", "-q", "other"}}}},
		{"git branch other HEAD~1 && echo local > f", []undoOp{{"git_checkout", map[string]any{"commit": "other"}, []string{"checkout", "-q", "--detach", "other"}}}},
		{"echo n > n && git add -N n", []undoOp{{"git_stash", map[string]any{"action": "push", "include_untracked": true}, []string{"stash", "push", "-q", "-u"}}}},
		{"git checkout -q -- k", []undoOp{{"git_stash", map[string]any{"action": "push"}, []string{"stash", "push", "-q"}}}},
	} {
		runUndoOps(t, refused(c.sh), c.ops)
	}
}

// TestRegressResolveUndoKeptByRefusedSwitch: a switch git refuses leaves
// the index, resolve-undo records included, as it was, even when the
// status the switch runs first refreshed stale stat data and wrote the
// index (differential seed 700279: the refresh's write dropped the
// records as if the switch had rebuilt the index).
func TestRegressResolveUndoKeptByRefusedSwitch(t *testing.T) {
	base := resolveUndoRepo(t, true)
	toolDir, gitDir := copyTree(t, base), copyTree(t, base)
	later := time.Now().Add(10 * time.Second)
	for _, dir := range []string{toolDir, gitDir} {
		// g leaves the index and becomes a file HEAD~1 would
		// overwrite; f's stat data goes stale.
		gittest.Git(t, dir, "rm", "-q", "--cached", "g")
		if err := os.WriteFile(filepath.Join(dir, "g"), []byte("local\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(dir, "f"), later, later); err != nil {
			t.Fatal(err)
		}
	}
	te := open(t, toolDir).callErr(t, "git_checkout", map[string]any{"commit": "HEAD~1"})
	if _, err := gittest.GitErr(gitDir, "checkout", "-q", "--detach", "HEAD~1"); err == nil {
		t.Fatal("git switched")
	}
	view := func(dir string) string {
		out, _ := gittest.GitErr(dir, "ls-files", "--resolve-undo")
		return out
	}
	same(t, "resolve-undo after a refused switch ("+te.Message+")", view(toolDir), view(gitDir))
}
