package gittools

// Regression tests shrunk from the randomized differential suite
// (test/integration): each repository state is the minimal one that made a
// tool differ from the git CLI.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// newRepo makes an empty repository with a tool set on it.
func newRepo(t *testing.T) *fixture {
	t.Helper()
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	return &fixture{dir: dir}
}

func (f *fixture) commitAll(t *testing.T, msg string) {
	t.Helper()
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", msg)
}

// A tracked name with a control character made status fail with go-git's
// "invalid path ... contains control character".
func TestRegressStatusControlCharacterName(t *testing.T) {
	f := newRepo(t)
	if err := os.MkdirAll(filepath.Join(f.dir, "ctl\x01x"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(t, "ctl\x01x/a", "x\n")
	f.write(t, "tab\there", "x\n")
	f.commitAll(t, "x")
	f.write(t, "ctl\x01x/a", "y\n")
	f.write(t, "tab\there", "y\n")
	f = open(t, f.dir)
	same(t, "status", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	same(t, "diff", f.call(t, "git_diff", map[string]any{}), f.git(t, "diff"))
}

// A gitlink (submodule) whose directory exists is unchanged; one whose
// directory is missing is deleted, in status and in diff.
func TestRegressGitlinkStatusAndDiff(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "a\n")
	f.git(t, "add", "a")
	f.git(t, "update-index", "--add", "--cacheinfo", "160000,0000000000000000000000000000000000003039,sub")
	f.git(t, "commit", "-q", "-m", "x")
	f = open(t, f.dir)
	same(t, "missing gitlink dir: status", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	same(t, "missing gitlink dir: diff", f.call(t, "git_diff", map[string]any{}), f.git(t, "diff"))
	if err := os.MkdirAll(filepath.Join(f.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(t, "sub/inside", "not the superproject's\n")
	same(t, "gitlink dir: status", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	f.git(t, "update-index", "--cacheinfo", "160000,00000000000000000000000000000000000003e7,sub")
	same(t, "staged gitlink: diff --cached", f.call(t, "git_diff", map[string]any{"cached": true}), f.git(t, "diff", "--cached"))
}

// Pathspecs: relative to working_dir (with ../), globs crossing '/'.
func TestRegressPathspecs(t *testing.T) {
	f := newRepo(t)
	f.write(t, "src/a/b.txt", "1\n")
	f.write(t, "lib/c.txt", "1\n")
	f.commitAll(t, "x")
	f.write(t, "src/a/b.txt", "2\n")
	f.write(t, "lib/c.txt", "2\n")
	f = open(t, f.dir)
	same(t, "glob", f.call(t, "git_diff", map[string]any{"paths": []string{"src/*"}}), f.git(t, "diff", "--", "src/*"))
	got := f.call(t, "git_diff", map[string]any{"paths": []string{"../lib/c.txt"}, "working_dir": "src"})
	want, err := gittest.GitErr(filepath.Join(f.dir, "src"), "diff", "--", "../lib/c.txt")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "relative to working_dir", got, want)
}

// sameState runs the tool on f and git on a copy, then compares what git
// sees in both: status, index, HEAD's tree and every file's mode and bytes.
func sameState(t *testing.T, f *fixture, tool string, args map[string]any, gitArgs ...string) {
	t.Helper()
	ref := copyRepo(t, f.dir)
	_, gitErr := gittest.GitErr(ref, gitArgs...)
	raw, _ := json.Marshal(args)
	_, toolErr := f.set.Call(context.Background(), tool, raw)
	if (gitErr == nil) != (toolErr == nil) {
		t.Fatalf("%s %s: tool error %v, git error %v", tool, raw, toolErr, gitErr)
	}
	for _, q := range [][]string{{"status", "--porcelain=v2", "--branch", "--untracked-files=all"}, {"ls-files", "-s"}, {"stash", "list"}} {
		same(t, strings.Join(q, " "), f.git(t, q...), gittest.Git(t, ref, q...))
	}
	same(t, "worktree", snapshot(t, f.dir), snapshot(t, ref))
}

// snapshot lists every worktree entry with its mode and content.
func snapshot(t *testing.T, dir string) string {
	var b strings.Builder
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, "%q -> %q\n", rel, target)
		case info.IsDir():
			fmt.Fprintf(&b, "%q/\n", rel)
		default:
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "%q %v %q\n", rel, info.Mode().Perm()&0o111 != 0, data)
		}
		return nil
	})
	return b.String()
}

// Status: a name with a space is quoted in the short format; a file
// removed from the index collapses into its untracked directory; files
// inside a directory that replaced a tracked file are not listed; a
// staged rename of a binary file pairs like git's similarity estimate; an
// added-then-deleted file is "AD"; -uno long format says so.
func TestRegressStatusShapes(t *testing.T) {
	f := newRepo(t)
	f.write(t, "sp ace/a.txt", "a\n")
	f.write(t, "lib/a6", "x\n")
	f.write(t, "file", "f\n")
	f.write(t, "bin/old.bin", strings.Repeat("binary line\n", 20)+"\x00\x01\x02")
	f.commitAll(t, "x")
	f.write(t, "sp ace/a.txt", "b\n")
	f.git(t, "rm", "-q", "--cached", "--", "lib/a6")
	if err := os.Remove(filepath.Join(f.dir, "file")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "file/inside.txt", "i\n")
	f.write(t, "bin/old.bin", strings.Repeat("binary line\n", 20)+"\x00\x01\x02more\n")
	f.git(t, "add", "bin/old.bin")
	f.git(t, "mv", "bin/old.bin", "bin/new.bin")
	f.write(t, "added.txt", "a\n")
	f.git(t, "add", "added.txt")
	if err := os.Remove(filepath.Join(f.dir, "added.txt")); err != nil {
		t.Fatal(err)
	}
	f = open(t, f.dir)
	same(t, "short", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	same(t, "long", f.call(t, "git_status", map[string]any{"porcelain": false}), f.git(t, "status"))
	same(t, "long -uno", f.call(t, "git_status", map[string]any{"porcelain": false, "untracked": false}), f.git(t, "status", "-uno"))
	got := f.call(t, "git_status", map[string]any{"porcelain": false, "working_dir": "sp ace"})
	want, err := gittest.GitErr(filepath.Join(f.dir, "sp ace"), "status")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "long in a subdirectory", got, want)
}

// Diff: a rename with a mode change prints the mode lines first; an empty
// new file has no ---/+++; --stat with -U also prints the patch; a pure
// binary rename is "Bin"; a rename of a non-ASCII name is quoted whole.
func TestRegressDiffShapes(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a/script.sh", strings.Repeat("echo line\n", 12))
	f.write(t, "img.bin", "\x00\x01binary")
	f.write(t, "caf\u00e9.txt", strings.Repeat("word\n", 10))
	f.commitAll(t, "x")
	for _, d := range []string{"b", "d"} {
		if err := os.MkdirAll(filepath.Join(f.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.git(t, "mv", "a/script.sh", "b/run.sh")
	if err := os.Chmod(filepath.Join(f.dir, "b/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.git(t, "mv", "img.bin", "moved.bin")
	f.git(t, "mv", "caf\u00e9.txt", "d/caf\u00e9.txt")
	f.write(t, "empty.txt", "")
	f.git(t, "add", "-A")
	f = open(t, f.dir)
	same(t, "patch", f.call(t, "git_diff", map[string]any{"cached": true}), f.git(t, "diff", "--cached"))
	same(t, "stat", f.call(t, "git_diff", map[string]any{"cached": true, "stat": true}), f.git(t, "diff", "--cached", "--stat"))
	same(t, "stat -U1", f.call(t, "git_diff", map[string]any{"cached": true, "stat": true, "unified": 1}), f.git(t, "diff", "--cached", "--stat", "-U1"))
}

// git_add of an ignored path: git stages the others and refuses with its
// message; a file replaced by a directory is staged as a deletion and the
// directory's files are added.
func TestRegressAddIgnoredAndFileToDir(t *testing.T) {
	f := newRepo(t)
	f.write(t, ".gitignore", "*.log\n")
	f.write(t, "x", "x\n")
	f.commitAll(t, "x")
	f.write(t, "a.log", "ignored\n")
	f.write(t, "b.txt", "b\n")
	f = open(t, f.dir)
	sameState(t, f, "git_add", map[string]any{"paths": []string{"a.log", "b.txt"}}, "add", "--", "a.log", "b.txt")
	if err := os.Remove(filepath.Join(f.dir, "x")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "x/d.txt", "d\n")
	sameState(t, f, "git_add", map[string]any{"all": true}, "add", "-A")
}

// git_restore brings back the exec bit, takes globs and directories.
func TestRegressRestoreModesGlobsDirs(t *testing.T) {
	f := newRepo(t)
	f.write(t, "run.sh", "echo\n")
	if err := os.Chmod(filepath.Join(f.dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(t, "src/a.ts", "a\n")
	f.write(t, "src/b.ts", "b\n")
	f.commitAll(t, "x")
	if err := os.Chmod(filepath.Join(f.dir, "run.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write(t, "src/a.ts", "changed\n")
	if err := os.Remove(filepath.Join(f.dir, "src/b.ts")); err != nil {
		t.Fatal(err)
	}
	f = open(t, f.dir)
	sameState(t, f, "git_restore", map[string]any{"paths": []string{"run.sh"}}, "restore", "--", "run.sh")
	sameState(t, f, "git_restore", map[string]any{"paths": []string{"src"}}, "restore", "--", "src")
	f.write(t, "src/a.ts", "again\n")
	sameState(t, f, "git_restore", map[string]any{"paths": []string{"*.ts"}}, "restore", "--", "*.ts")
}

// git_commit records author and committer from their own variables and
// cleans the message like git commit -m.
func TestRegressCommitIdentityAndCleanup(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "a\n")
	f.git(t, "add", "a")
	fsys := mustOS(t, f.dir)
	repo, err := gitbackend.Open(context.Background(), fsys.Billy(), gitbackend.Config{})
	if err != nil {
		t.Fatal(err)
	}
	set := tools.NewSet()
	env := []string{"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=C", "GIT_COMMITTER_EMAIL=c@x"}
	if err := set.Add(Tools(Deps{FS: fsys, Repo: func() *gitbackend.Repo { return repo }, Environ: env})...); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Call(context.Background(), "git_commit", json.RawMessage(`{"type":"feat","message":"trailing   \n\n\n\nbody\t \n"}`)); err != nil {
		t.Fatal(err)
	}
	same(t, "identity", f.git(t, "log", "-1", "--format=%an <%ae>|%cn <%ce>"), "A <a@x>|C <c@x>\n")
	same(t, "message", f.git(t, "log", "-1", "--format=%B"), "feat: trailing\n\nbody\n\n")
}

// git_branch -v shows upstream tracking and symbolic remote refs; a rename
// takes the branch's configuration along.
func TestRegressBranchListingAndRename(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "a\n")
	f.commitAll(t, "tab\tin subject")
	f.git(t, "update-ref", "refs/remotes/origin/main", "HEAD")
	f.git(t, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	f.git(t, "config", "remote.origin.url", "https://example.com/r.git")
	f.git(t, "config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
	f.git(t, "config", "branch.main.remote", "origin")
	f.git(t, "config", "branch.main.merge", "refs/heads/main")
	f.write(t, "a", "b\n")
	f.commitAll(t, "second\nline")
	f = open(t, f.dir)
	same(t, "branch -v -a", f.call(t, "git_branch", map[string]any{"list_all": true}), f.git(t, "branch", "-v", "-a"))
	f.git(t, "update-ref", "-d", "refs/remotes/origin/HEAD")
	f.git(t, "update-ref", "-d", "refs/remotes/origin/main")
	same(t, "branch -v, upstream gone", f.call(t, "git_branch", map[string]any{}), f.git(t, "branch", "-v"))
	same(t, "status, upstream gone", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	same(t, "long status, upstream gone", f.call(t, "git_status", map[string]any{"porcelain": false}), f.git(t, "status"))
	sameState(t, f, "git_branch", map[string]any{"rename": "main", "new_name": "trunk"}, "branch", "-m", "main", "trunk")
	same(t, "config", f.git(t, "config", "--get-regexp", `^branch\.`), "branch.trunk.remote origin\nbranch.trunk.merge refs/heads/main\n")
}

// git_checkout carries a local change to a file the switch does not touch
// and one whose staged content already is the target's.
func TestRegressCheckoutCarriesCompatibleChanges(t *testing.T) {
	f := newRepo(t)
	f.write(t, "keep.txt", "k\n")
	f.write(t, "moving.txt", "1\n")
	f.commitAll(t, "one")
	f.write(t, "moving.txt", "2\n")
	f.commitAll(t, "two")
	f.write(t, "keep.txt", "local edit\n")
	f.write(t, "moving.txt", "1\n")
	f.git(t, "add", "moving.txt")
	f = open(t, f.dir)
	sameState(t, f, "git_checkout", map[string]any{"commit": "HEAD~1"}, "checkout", "-q", "--detach", "HEAD~1")
}

// git_stash -u removes the untracked directories it emptied.
func TestRegressStashUntrackedDirectories(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "a\n")
	f.commitAll(t, "x")
	f.write(t, "new/deep/file.txt", "n\n")
	if err := os.MkdirAll(filepath.Join(f.dir, "empty/dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	f = open(t, f.dir)
	sameState(t, f, "git_stash", map[string]any{"action": "push", "include_untracked": true}, "stash", "push", "-q", "-u")
}

// git_show of a merge resolved by hand is git's dense combined diff: only
// the hunk where the result differs from both parents, lost lines marked
// per parent; a merge that only combines modes shows its mode line.
func TestRegressShowCombinedDiff(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f", "a\nb\nc\nd\ne\nf\ng\nh\n")
	f.write(t, "m", "x\n")
	f.commitAll(t, "base")
	f.git(t, "checkout", "-q", "-b", "t")
	f.write(t, "f", "a\nB\nc\nd\ne\nf\ng\nH\n")
	f.commitAll(t, "side")
	f.git(t, "checkout", "-q", "main")
	f.write(t, "f", "a\nbb\nc\nd\ne\nf\ng\nh\n")
	if err := os.Chmod(filepath.Join(f.dir, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.commitAll(t, "main")
	if _, err := gittest.GitErr(f.dir, "merge", "-q", "--no-edit", "t"); err == nil {
		t.Fatal("the merge should conflict")
	}
	f.write(t, "f", "a\nresolved\nc\nd\ne\nf\ng\nH\n")
	f.git(t, "add", "f")
	f.git(t, "commit", "-q", "--no-edit")
	f = open(t, f.dir)
	same(t, "show merge", f.call(t, "git_show", map[string]any{}), f.git(t, "show", "HEAD"))
	same(t, "show merge --name-only", f.call(t, "git_show", map[string]any{"name_only": true}), f.git(t, "show", "--name-only", "HEAD"))
	same(t, "show merge --stat", f.call(t, "git_show", map[string]any{"stat": true}), f.git(t, "show", "--stat", "HEAD"))
}

// git_stash: a staged new file deleted from the worktree, and a tracked
// file replaced by a directory, keep their index versions in W as git's
// diff-index leaves them.
func TestRegressStashWorktreeTree(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "theta\nkappa\n")
	f.write(t, "src/.gitignore", "build/\n")
	f.commitAll(t, "x")
	if err := os.MkdirAll(filepath.Join(f.dir, "n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.git(t, "mv", "a.txt", "n/u.md")
	if err := os.Remove(filepath.Join(f.dir, "n/u.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(f.dir, "src/.gitignore")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "src/.gitignore/notes.txt", "n\n")
	f = open(t, f.dir)
	ref := copyRepo(t, f.dir)
	gittest.Git(t, ref, "stash", "push", "-q")
	f.call(t, "git_stash", map[string]any{"action": "push"})
	same(t, "W tree", f.git(t, "rev-parse", "stash@{0}^{tree}"), gittest.Git(t, ref, "rev-parse", "stash@{0}^{tree}"))
	same(t, "I tree", f.git(t, "rev-parse", "stash@{0}^2^{tree}"), gittest.Git(t, ref, "rev-parse", "stash@{0}^2^{tree}"))
}

// git_checkout refused untracked files in the way only where the target
// adds a path. A path only HEAD has (dropped from the index by rm
// --cached) with an untracked file on it, or a directory of untracked
// files, is in the way too; every kind of refusal is listed, in git's
// order, with one "Aborting" (seeds 304, 647, 143).
func TestRegressCheckoutRefusesUntrackedInTheWayOfADeletion(t *testing.T) {
	f := newRepo(t)
	f.write(t, "base.txt", "b\n")
	f.commitAll(t, "one")
	f.write(t, "gone.md", "g\n")
	f.write(t, "docs/dir.txt", "d\n")
	f.write(t, "edited.txt", "1\n")
	f.commitAll(t, "two")
	f.write(t, "edited.txt", "2\n")
	f.commitAll(t, "three")
	f.git(t, "rm", "-q", "--cached", "--", "gone.md", "docs/dir.txt")
	if err := os.Remove(filepath.Join(f.dir, "docs/dir.txt")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "docs/dir.txt/inside.txt", "u\n")
	f.write(t, "edited.txt", "local\n")
	f = open(t, f.dir)
	ref := copyRepo(t, f.dir)
	gitOut, gitErr := gittest.GitErr(ref, "checkout", "-q", "--detach", "HEAD~2")
	if gitErr == nil {
		t.Fatal("git did not refuse")
	}
	terr := f.callErr(t, "git_checkout", map[string]any{"commit": "HEAD~2"})
	same(t, "refusal", terr.Message+"\n", gitOut)
	sameState(t, f, "git_checkout", map[string]any{"commit": "HEAD~2"}, "checkout", "-q", "--detach", "HEAD~2")
}

// Two staged renames of identical (empty) files were paired in map order,
// so git_status named a different source from one call to the next; git
// pairs in index order (seed 331).
func TestRegressStatusIdenticalRenameSourcesInIndexOrder(t *testing.T) {
	f := newRepo(t)
	f.write(t, "src/\u65e5\u672c/util6.bin", "")
	f.write(t, "\u65e5\u672c11.bin", "")
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "x")
	f.git(t, "mv", "--", "src/\u65e5\u672c/util6.bin", "readme4.ts")
	if err := os.MkdirAll(filepath.Join(f.dir, "lib/tab\there"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.git(t, "mv", "--", "\u65e5\u672c11.bin", "lib/tab\there/semi;colon16.md")
	f = open(t, f.dir)
	want := f.git(t, "status", "--porcelain=1", "-b")
	for i := 0; i < 20; i++ {
		same(t, "status", f.call(t, "git_status", map[string]any{"porcelain": true, "branch": true}), want)
	}
}

// A directory of tracked files that the target replaces with a file was
// refused as "would lose untracked files": its files go with the switch,
// and ignored files in the way are expendable, as in git (seed 170).
func TestRegressCheckoutDirectoryOfTrackedFilesBecomesFile(t *testing.T) {
	for _, ignored := range []bool{false, true} {
		f := newRepo(t)
		f.write(t, ".gitignore", "*.tmp\n")
		f.commitAll(t, "base")
		f.git(t, "checkout", "-q", "-b", "fix-1")
		f.write(t, "docs/main19.log", "file on the branch\n")
		f.commitAll(t, "on branch")
		f.git(t, "checkout", "-q", "main")
		f.write(t, "docs/main19.log/b.txt", "tracked in a directory\n")
		f.commitAll(t, "dir on main")
		if ignored {
			f.write(t, "docs/main19.log/scratch.tmp", "ignored\n")
		}
		f = open(t, f.dir)
		sameState(t, f, "git_checkout", map[string]any{"branch": "fix-1"}, "checkout", "-q", "fix-1")
	}
}

// git_stash -u kept in its worktree tree a file that was dropped from the
// index (rm --cached) and replaced by a directory of untracked files; git
// builds that tree from the index, so the file is not in it (seed 182).
func TestRegressStashFileDroppedFromIndexReplacedByDirectory(t *testing.T) {
	f := newRepo(t)
	f.write(t, "lib/x.y.z11", "delta\r\nfunc f() {\r\n")
	f.commitAll(t, "one")
	f.git(t, "rm", "-q", "--cached", "--", "lib/x.y.z11")
	if err := os.Remove(filepath.Join(f.dir, "lib/x.y.z11")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "lib/x.y.z11/c.txt", "untracked\n")
	f = open(t, f.dir)
	ref := copyRepo(t, f.dir)
	gittest.Git(t, ref, "stash", "push", "-q", "-u")
	f.call(t, "git_stash", map[string]any{"action": "push", "include_untracked": true})
	for _, rev := range []string{"stash@{0}^{tree}", "stash@{0}^2^{tree}", "stash@{0}^3^{tree}"} {
		same(t, rev, f.git(t, "rev-parse", rev), gittest.Git(t, ref, "rev-parse", rev))
	}
	same(t, "worktree", snapshot(t, f.dir), snapshot(t, ref))
}

// A tracked file replaced in the worktree by a directory of untracked
// files, which the target deletes: git refuses (the files would be lost),
// the tool deleted them (seed 19).
func TestRegressCheckoutDeletedFileNowDirectoryOfUntracked(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "one")
	f.write(t, "src/util1.json", "file\n")
	f.commitAll(t, "two")
	if err := os.Remove(filepath.Join(f.dir, "src/util1.json")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "src/util1.json/data.txt", "untracked\n")
	f = open(t, f.dir)
	ref := copyRepo(t, f.dir)
	gitOut, gitErr := gittest.GitErr(ref, "checkout", "-q", "--detach", "HEAD~1")
	if gitErr == nil {
		t.Fatal("git did not refuse")
	}
	same(t, "refusal", f.callErr(t, "git_checkout", map[string]any{"commit": "HEAD~1"}).Message+"\n", gitOut)
	sameState(t, f, "git_checkout", map[string]any{"commit": "HEAD~1"}, "checkout", "-q", "--detach", "HEAD~1")
}
