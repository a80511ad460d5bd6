package gittools

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// Mutating tools against git in twin copies of a repository (the tool in
// one, the git CLI in the other), comparing status, reflogs, refs and the
// working directory: regressions shrunk from the differential suite.

// twin runs the tool in one copy of a repository and git in another and
// compares what the git CLI then sees of both.
func twin(t *testing.T, base, wd, tool string, args map[string]any, gitArgs ...string) {
	t.Helper()
	toolDir, gitDir := copyTree(t, base), copyTree(t, base)
	if wd != "" {
		args["working_dir"] = wd
	}
	raw, _ := json.Marshal(args)
	// Both sides commit at one pinned time: a commit made a second apart
	// (a loaded machine) has another hash.
	dates := []string{"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000"}
	_, terr := openEnv(t, toolDir, dates...).set.Call(context.Background(), tool, raw)
	cmd := exec.Command("git", gitArgs...)
	cmd.Dir, cmd.Env = filepath.Join(gitDir, wd), append(gittest.Env(t.TempDir()), dates...)
	gerr := cmd.Run()
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

// scripted builds a repository with a bash script under git's pinned
// environment.
func scripted(t *testing.T, script string) string {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "repo")
	cmd := exec.Command("bash", "-ec", "mkdir -p "+dir+" && cd "+dir+" && git init -q -b main . && "+script)
	cmd.Env = gittest.Env(t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return dir
}

// worktreeView lists every worktree file with its mode and content hash,
// beside what git reports of index and stashes.
func worktreeView(t *testing.T, dir string) string {
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() == ".git" {
			return filepath.SkipDir
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			fmt.Fprintf(&b, "%s %o %x\n", rel, info.Mode().Perm()&0o111, sha1.Sum(data))
		}
		return nil
	})
	for _, a := range [][]string{{"status", "--porcelain=2", "-uall"}, {"ls-files", "-s"}, {"stash", "list"}} {
		out, _ := gittest.GitErr(dir, a...)
		b.WriteString(out)
	}
	return b.String()
}

// git stash apply as git 2.39 does it, from the differential suite's
// shrunk reproductions: a file deleted in the worktree takes the stash's
// version (seed 6); a modified one refuses the apply (seed 44); untracked
// files come back after the merge, refused or not (seed 115), with their
// mode (seed 30) and with the attributes the merge restored (seed 460).
func TestRegressStashApplyAsGit(t *testing.T) {
	for name, script := range map[string]string{
		"deleted in worktree":       `echo a > f && git add f && git commit -qm x && echo b >> f && git stash push -q && rm f`,
		"modified in worktree":      `echo a > f && git add f && git commit -qm x && echo b >> f && git stash push -q && echo c >> f`,
		"untracked after a refusal": `echo a > f && git add f && git commit -qm x && echo b >> f && mkdir u && echo u > u/x && git stash push -q -u && echo c >> f`,
		"untracked mode":            `echo a > f && git add f && git commit -qm x && mkdir src && echo l > src/run && chmod 755 src/run && git stash push -q -u`,
		"attributes first":          `echo a > f && git add f && git commit -qm x && printf '*.txt text eol=crlf\n' > .gitattributes && git add .gitattributes && printf 'one\ntwo\n' > u.txt && git stash push -q -u`,
		"untracked in the way":      `echo a > f && git add f && git commit -qm x && echo b >> f && echo u > u && git stash push -q -u && echo other > u`,
	} {
		t.Run(name, func(t *testing.T) {
			base := scripted(t, script)
			for _, pop := range []bool{false, true} {
				toolDir, gitDir := copyTree(t, base), copyTree(t, base)
				action, gitAction := "apply", "apply"
				if pop {
					action, gitAction = "pop", "pop"
				}
				raw, _ := json.Marshal(map[string]any{"action": action, "index": 0})
				_, terr := open(t, toolDir).set.Call(context.Background(), "git_stash", raw)
				_, gerr := gittest.GitErr(gitDir, "stash", gitAction, "-q")
				if (terr != nil) != (gerr != nil) {
					t.Fatalf("%s: tool error %v, git error %v", action, terr, gerr)
				}
				same(t, action, worktreeView(t, toolDir), worktreeView(t, gitDir))
			}
		})
	}
}

// A stash's untracked files come back whatever their names (go-git's tree
// iterator stopped at a name its path check refuses, and pop then
// dropped the stash without them); stash push -u spares the directory it
// runs in, as git clean does.
func TestRegressStashUntrackedAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "docs/a.log", "")
	f.commitAll(t, "base")
	f.write(t, "né/tab\there/readme.txt", "hi\n")
	f.git(t, "stash", "push", "-q", "-u")
	twin(t, f.dir, "docs", "git_stash", map[string]any{"action": "pop", "index": 0}, "stash", "pop", "-q", "stash@{0}")

	g := newRepo(t)
	g.write(t, "a.txt", "a\n")
	g.commitAll(t, "base")
	g.write(t, "w/untracked.txt", "u\n")
	h := open(t, copyTree(t, g.dir))
	h.call(t, "git_stash", map[string]any{"action": "push", "include_untracked": true, "working_dir": "w"})
	gittest.GitErr(filepath.Join(g.dir, "w"), "stash", "push", "-q", "-u")
	for _, dir := range []string{g.dir, h.dir} {
		if info, err := os.Stat(filepath.Join(dir, "w")); err != nil || !info.IsDir() {
			t.Fatalf("%s: the directory stash push ran in is gone", dir)
		}
	}
}
