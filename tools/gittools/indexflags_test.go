package gittools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// Regressions shrunk from the differential suite once its repositories
// carried index entries with flags: added with intent to add (git add
// -N), assume-unchanged and skip-worktree.

// sameOutput runs a read-only tool and git on copies of base and compares
// what they print (a refusal's message against git's stderr).
func sameOutput(t *testing.T, base, tool string, args map[string]any, gitArgs ...string) {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, terr := open(t, copyTree(t, base)).set.Call(context.Background(), tool, raw)
	out, gerr := gittest.GitErr(copyTree(t, base), gitArgs...)
	if (terr != nil) != (gerr != nil) {
		t.Fatalf("%s %s: tool error %v, git error %v", tool, raw, terr, gerr)
	}
	if terr == nil {
		same(t, tool+" "+string(raw), res.Value.(string), out)
	}
}

// An intent-to-add entry records nothing staged: status shows it new in
// the worktree, diff shows it new against nothing, diff --cached and a
// commit leave it out (a commit of it alone has nothing to commit), and
// git add -u stages its content.
func TestRegressIntentToAddAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "base")
	f.write(t, "n.txt", "new\n")
	f.write(t, "e.txt", "")
	f.git(t, "add", "-N", "n.txt", "e.txt")
	sameOutput(t, f.dir, "git_status", map[string]any{"porcelain": true, "branch": true}, "status", "--porcelain", "-b")
	sameOutput(t, f.dir, "git_status", map[string]any{"porcelain": false, "branch": false}, "status")
	sameOutput(t, f.dir, "git_diff", map[string]any{}, "diff")
	sameOutput(t, f.dir, "git_diff", map[string]any{"stat": true}, "diff", "--stat")
	sameOutput(t, f.dir, "git_diff", map[string]any{"cached": true}, "diff", "--cached")
	sameOutput(t, f.dir, "git_diff", map[string]any{"from_ref": "HEAD"}, "diff", "HEAD")
	twin(t, f.dir, "", "git_commit", map[string]any{"type": "fix", "message": "nothing"}, "commit", "-q", "-m", "fix: nothing")
	twin(t, f.dir, "", "git_add", map[string]any{"update": true}, "add", "-u")
	f.write(t, "a.txt", "changed\n")
	f.git(t, "add", "a.txt")
	twin(t, f.dir, "", "git_commit", map[string]any{"type": "fix", "message": "a only"}, "commit", "-q", "-m", "fix: a only")
}

// Entries marked assume-unchanged or skip-worktree are taken as matching
// the worktree unlooked: status and diff show none of their changes, add
// stages none of them (naming a skip-worktree path is refused with git's
// sparse-checkout advice), restore and checkout from a commit do not reach
// a skip-worktree entry the commit has as it is.
func TestRegressFlaggedEntriesAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.write(t, "d/b.txt", "b\n")
	f.write(t, "c.txt", "c\n")
	f.commitAll(t, "base")
	f.write(t, "c.txt", "c2\n")
	f.commitAll(t, "c2")
	f.git(t, "update-index", "--assume-unchanged", "a.txt")
	f.git(t, "update-index", "--skip-worktree", "d/b.txt")
	f.write(t, "a.txt", "changed\n")
	f.write(t, "d/b.txt", "changed\n")
	sameOutput(t, f.dir, "git_status", map[string]any{"porcelain": true, "branch": false}, "status", "--porcelain")
	sameOutput(t, f.dir, "git_diff", map[string]any{}, "diff")
	sameOutput(t, f.dir, "git_diff", map[string]any{"from_ref": "HEAD~1"}, "diff", "HEAD~1")
	twin(t, f.dir, "", "git_add", map[string]any{"all": true}, "add", "-A")
	twin(t, f.dir, "", "git_add", map[string]any{"paths": []string{"a.txt"}}, "add", "--", "a.txt")
	twin(t, f.dir, "", "git_add", map[string]any{"paths": []string{"d/b.txt"}}, "add", "--", "d/b.txt")
	twin(t, f.dir, "", "git_restore", map[string]any{"paths": []string{"."}}, "restore", "--", ".")
	twin(t, f.dir, "", "git_restore", map[string]any{"paths": []string{"d/b.txt"}}, "restore", "--", "d/b.txt")
	twin(t, f.dir, "", "git_checkout", map[string]any{"commit": "HEAD~1", "paths": []string{"d"}}, "checkout", "-q", "HEAD~1", "--", "d")
	// The flags survive a tool's index write.
	g := open(t, copyTree(t, f.dir))
	g.call(t, "git_add", map[string]any{"paths": []string{"c.txt"}})
	if got := gittest.Git(t, g.dir, "ls-files", "-v"); got != "h a.txt\nH c.txt\nS d/b.txt\n" {
		t.Fatalf("ls-files -v after git_add:\n%s", got)
	}
}

// Stash with flagged entries: an intent-to-add entry stops push before
// anything is saved and stops apply; a skip-worktree entry the reset
// would change, whose file is not the entry's, stops push after the
// stash is saved; W holds a flagged entry as the index has it.
func TestRegressStashWithFlaggedEntriesAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.write(t, "c.txt", "c\n")
	f.commitAll(t, "base")
	f.write(t, "u.txt", "untracked\n")
	f.git(t, "stash", "push", "-q", "-u")
	// An intent-to-add entry (even with an empty file, which matches it).
	f.write(t, "n.txt", "")
	f.git(t, "add", "-N", "n.txt")
	f.write(t, "c.txt", "c2\n")
	twin(t, f.dir, "", "git_stash", map[string]any{"action": "push"}, "stash", "push", "-q")
	twin(t, f.dir, "", "git_stash", map[string]any{"action": "apply"}, "stash", "apply", "-q")
	// Staged new, then skip-worktree and changed.
	g := newRepo(t)
	g.write(t, "a.txt", "a\n")
	g.commitAll(t, "base")
	g.write(t, "d/s.txt", "staged\n")
	g.git(t, "add", "d/s.txt")
	g.git(t, "update-index", "--skip-worktree", "d/s.txt")
	g.write(t, "d/s.txt", "changed\n")
	twin(t, g.dir, "", "git_stash", map[string]any{"action": "push"}, "stash", "push", "-q")
	// Staged modification of a skip-worktree entry, the file changed
	// again: the stash's W has the index's version, and restore from HEAD
	// reaches the entry (HEAD's differs).
	h := newRepo(t)
	h.write(t, "a.txt", "a\n")
	h.write(t, "b.txt", "b\n")
	h.commitAll(t, "base")
	h.write(t, "b.txt", "b2\n")
	h.write(t, "a.txt", "a2\n")
	h.git(t, "add", "b.txt")
	h.git(t, "update-index", "--skip-worktree", "b.txt")
	h.write(t, "b.txt", "b3\n")
	twin(t, h.dir, "", "git_restore", map[string]any{"paths": []string{"*.txt"}, "staged": true, "worktree": true}, "restore", "--staged", "--worktree", "--", "*.txt")
	sameOutput(t, h.dir, "git_status", map[string]any{"porcelain": true, "branch": false}, "status", "--porcelain")
}

// Restoring an intent-to-add path from the index writes its empty content
// and keeps the entry's flag (checkout_entry leaves the entry as it is);
// stash push -u stopped by a skip-worktree entry has already cleaned the
// untracked files away (git's clean runs before its reset).
func TestRegressFlagsKeptOrCleanedAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "base")
	f.write(t, "docs/n.txt", "intended\n")
	f.git(t, "add", "-N", "docs/n.txt")
	twin(t, f.dir, "", "git_restore", map[string]any{"paths": []string{":/docs/n.txt"}}, "restore", "--", ":/docs/n.txt")

	g := newRepo(t)
	g.write(t, "a.txt", "a\n")
	g.commitAll(t, "base")
	g.git(t, "mv", "a.txt", "b.txt")
	g.git(t, "update-index", "--skip-worktree", "b.txt")
	g.write(t, "b.txt", "changed\n")
	g.write(t, "u/untracked.txt", "u\n")
	twin(t, g.dir, "", "git_stash", map[string]any{"action": "push", "include_untracked": true}, "stash", "push", "-q", "-u")
}

// A switch looks at an assume-unchanged file's stat data as git's
// verify_uptodate does: its refresh skips such an entry, so a file whose
// time changed (same content) is a local change the switch refuses to
// overwrite (differential seeds 1464, 1479, where the copies of the
// repository git ran in had new inodes: git compares those too, the
// tools do not yet).
func TestRegressSwitchLooksAtAssumeUnchangedStat(t *testing.T) {
	f := newRepo(t)
	f.git(t, "commit", "-q", "--allow-empty", "-m", "one")
	f.write(t, "build/f.txt", "x\n")
	f.commitAll(t, "two")
	f.git(t, "update-index", "--assume-unchanged", "build/f.txt")
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(f.dir, "build/f.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	twin(t, f.dir, "", "git_checkout", map[string]any{"commit": "HEAD^"}, "checkout", "-q", "--detach", "HEAD^")
}

// TestRegressSwitchComparesAssumeUnchangedInode: a copy of a repository
// (new inodes, differential seed 50055) holds an assume-unchanged file
// whose content and times are the index's; git's switch still takes it
// as changed (ce_match_stat_basic compares the inode and the ctime, and
// refresh skips the entry), and so does git_checkout.
func TestRegressSwitchComparesAssumeUnchangedInode(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f.txt", "a\n")
	f.commitAll(t, "one")
	f.write(t, "f.txt", "b\n")
	f.commitAll(t, "two")
	f.git(t, "update-index", "--assume-unchanged", "f.txt")
	twin(t, f.dir, "", "git_checkout", map[string]any{"commit": "HEAD^"}, "checkout", "-q", "--detach", "HEAD^")
	// In place (same inode and times) git switches, and so does the tool.
	if out := open(t, f.dir).call(t, "git_checkout", map[string]any{"commit": "HEAD^"}); out == "" {
		t.Error("no output from an in-place switch")
	}
}

// TestRegressFlaggedEntriesStatComparedAsGit: git's refresh skips
// skip-worktree and assume-unchanged entries, so a switch and stash
// push's reset (verify_uptodate) compare their stat data as recorded: in
// a copy (new inodes) a skip-worktree link the switch deletes stops it
// (differential seed 50115), and an assume-unchanged file staged anew,
// then changed, stops stash push's reset after the stash is saved (seed
// 50129).
func TestRegressFlaggedEntriesStatComparedAsGit(t *testing.T) {
	f := newRepo(t)
	f.git(t, "commit", "-q", "--allow-empty", "-m", "one")
	if err := os.MkdirAll(filepath.Join(f.dir, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(f.dir, "tools/l.log")); err != nil {
		t.Fatal(err)
	}
	f.commitAll(t, "two")
	f.git(t, "update-index", "--skip-worktree", "tools/l.log")
	twin(t, f.dir, "", "git_checkout", map[string]any{"commit": "HEAD^"}, "checkout", "-q", "--detach", "HEAD^")

	g := newRepo(t)
	g.git(t, "commit", "-q", "--allow-empty", "-m", "one")
	g.write(t, "deep/x.bin", "beta")
	g.git(t, "add", "deep/x.bin")
	g.git(t, "update-index", "--assume-unchanged", "deep/x.bin")
	g.write(t, "deep/x.bin", "eta")
	twin(t, g.dir, "", "git_stash", map[string]any{"action": "push"}, "stash", "push", "-q")
}

// TestRegressStatusComparesCtimeAndInodeAsGit: a file whose content
// changed while its size and mtime stayed (set back, as a copy or an
// archive keeps them) is compared by content when its ctime or inode is
// not the index's, as git's ce_match_stat_basic compares them; git_status
// took the stat data as unchanged once the index was newer than the file.
func TestRegressStatusComparesCtimeAndInodeAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f.txt", "aaaa\n")
	f.commitAll(t, "base")
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(f.dir, "f.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	f.git(t, "update-index", "--refresh")
	f.write(t, "f.txt", "bbbb\n")
	if err := os.Chtimes(filepath.Join(f.dir, "f.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	// git status writes the index anew: it is then newer than the file.
	f.git(t, "status", "--short")
	for _, dir := range []string{f.dir, copyTree(t, f.dir)} {
		sameOutput(t, dir, "git_status", map[string]any{"porcelain": true}, "status", "--porcelain", "-b")
	}
}

// TestRegressStashResetPassesSkipWorktreeGitlink: the reset --hard that
// ends stash push checks a skip-worktree entry it changes
// (verify_uptodate_1), but a gitlink is never out of date to it (the
// submodule may be out of sync with the index): a gitlink staged over a
// file, marked skip-worktree, with another file at its path, does not
// stop the push. The tool refused with "Entry 'data5.md' not uptodate"
// after saving the stash (differential seed 740017).
func TestRegressStashResetPassesSkipWorktreeGitlink(t *testing.T) {
	f := newRepo(t)
	f.write(t, "data5.md", "a\n")
	f.write(t, "other", "b\n")
	f.commitAll(t, "base")
	f.git(t, "update-index", "--cacheinfo", "160000,000000000000000000000000044f5802a13f126b,data5.md")
	f.git(t, "update-index", "--skip-worktree", "--", "data5.md")
	f.write(t, "data5.md", "return x;")
	twin(t, f.dir, "", "git_stash", map[string]any{"action": "push"}, "stash", "push", "-q")
	toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
	open(t, toolDir).call(t, "git_stash", map[string]any{"action": "push"})
	gittest.Git(t, gitDir, "stash", "push", "-q")
	read := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, "data5.md"))
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	same(t, "data5.md after the push", read(toolDir), read(gitDir))
}

// TestRegressStashApplyJudgesFlaggedEntryByStat: git's refresh before a
// stash apply skips skip-worktree and assume-unchanged entries, and the
// merge's checkout judges such an entry it changes by its stat data
// alone (verify_uptodate_1): in a copy of the repository (other inodes
// and ctimes) the file is a local change, whatever it holds, and the
// apply is refused. The tool compared the file's content and applied
// (differential seed 740097).
func TestRegressStashApplyJudgesFlaggedEntryByStat(t *testing.T) {
	for _, flag := range []string{"--skip-worktree", "--assume-unchanged"} {
		f := newRepo(t)
		f.write(t, "a.txt", "a\n")
		f.write(t, "d/.gitignore", "build/\n")
		f.commitAll(t, "base")
		f.write(t, "d/.gitignore", "build/\nunstaged line\n")
		f.git(t, "stash", "push", "-q")
		f.git(t, "update-index", flag, "--", "d/.gitignore")
		toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
		_, terr := open(t, toolDir).set.Call(context.Background(), "git_stash", []byte(`{"action":"pop"}`))
		gstdout, gout, ok := gitAt(t, gitDir, nil, "stash", "pop", "-q")
		if (terr != nil) == ok {
			t.Fatalf("%s: tool error %v, git ok %v: %s", flag, terr, ok, gout)
		}
		// git says that the stash is kept on its stdout.
		if te, isTool := terr.(*tools.Error); isTool && strings.TrimSpace(te.Message) != gitMessage(gout)+"\n"+strings.TrimSpace(gstdout) {
			t.Fatalf("%s: refusal differs from git:\n--- ours\n%s\n--- git\n%s", flag, te.Message, gout)
		}
		view := func(dir string) string {
			st, _ := gittest.GitErr(dir, "status", "--porcelain=2", "-uall")
			list, _ := gittest.GitErr(dir, "stash", "list")
			return st + list
		}
		same(t, "state after the pop", view(toolDir), view(gitDir))
	}
}

// TestRegressStashStoppedKeepsIndexedDirectoryAsGit: stash push -u
// stopped by a flagged entry after its clean keeps a directory that
// holds entries of the index even when its files are deleted (git clean
// -d removes untracked directories only, and no reset ran), while an
// untracked empty one goes (differential seed 760219: git_stash removed
// the emptied docs).
func TestRegressStashStoppedKeepsIndexedDirectoryAsGit(t *testing.T) {
	g := newRepo(t)
	g.write(t, "a.txt", "a\n")
	g.write(t, "docs/d.txt", "d\n")
	g.write(t, "docs/deep/e.txt", "e\n")
	g.commitAll(t, "base")
	g.git(t, "mv", "a.txt", "b.txt")
	g.git(t, "update-index", "--skip-worktree", "b.txt")
	g.write(t, "b.txt", "changed\n")
	mustRemove(t, filepath.Join(g.dir, "docs/d.txt"))
	mustRemove(t, filepath.Join(g.dir, "docs/deep/e.txt"))
	g.write(t, "u/untracked.txt", "u\n")
	if err := os.MkdirAll(filepath.Join(g.dir, "empty/below"), 0o755); err != nil {
		t.Fatal(err)
	}
	toolDir, gitDir := copyTree(t, g.dir), copyTree(t, g.dir)
	dates := []string{"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000"}
	_, terr := openEnv(t, toolDir, dates...).set.Call(context.Background(), "git_stash", []byte(`{"action":"push","include_untracked":true}`))
	_, _, ok := gitAt(t, gitDir, dates, "stash", "push", "-q", "-u")
	if ok || terr == nil {
		t.Fatalf("git stopped: %v, tool error %v", !ok, terr)
	}
	view := func(dir string) string {
		return gittest.Git(t, dir, "rev-parse", "refs/stash") + gittest.Git(t, dir, "ls-files", "-s") + snapshot(t, dir)
	}
	same(t, "after the stopped stash", view(toolDir), view(gitDir))
}
