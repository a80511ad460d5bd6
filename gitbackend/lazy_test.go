package gitbackend

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// skipWorktree lists the root's skip-worktree entries, as git sees them.
func skipWorktree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(gittest.Git(t, root, "ls-files", "-v"), "\n") {
		if strings.HasPrefix(line, "S ") {
			out = append(out, strings.TrimPrefix(line, "S "))
		}
	}
	return out
}

// lazyPair makes two roots on disk on one remote: a pushes tools/a.ts,
// then b pushes tools/b.ts, replaying on a's commit: b's root has a's file
// unwritten.
func lazyPair(t *testing.T, opts ...Option) (remote string, a, b *agent) {
	t.Helper()
	gittest.RequireGit(t)
	remote = gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
	a = newAgent(t, remote, false, opts...)
	b = newAgent(t, remote, false, opts...)
	a.write(t, "tools/a.ts", "export default 'a';\n")
	if res := b.write(t, "tools/b.ts", "export default 'b';\n"); !res.Replayed {
		t.Fatalf("b's persist was not replayed: %+v", res)
	}
	return remote, a, b
}

// TestReplayLeavesOtherAgentsFilesUnwritten: a replay brings another
// agent's new file into the root's commit and index but not onto its
// disk; git sees a clean skip-worktree entry (git status, git diff-files),
// and Materialize then writes the file as git's checkout would, its stat
// data in the index.
func TestReplayLeavesOtherAgentsFilesUnwritten(t *testing.T) {
	_, _, b := lazyPair(t)
	root := b.fs.Root()
	if got := skipWorktree(t, root); len(got) != 1 || got[0] != "tools/a.ts" {
		t.Fatalf("skip-worktree entries %v, want [tools/a.ts]", got)
	}
	if b.repo.Unwritten() != 1 {
		t.Fatalf("Unwritten() = %d, want 1", b.repo.Unwritten())
	}
	if _, err := os.Lstat(filepath.Join(root, "tools/a.ts")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("tools/a.ts on disk before it was read: %v", err)
	}
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status:\n%s", st)
	}
	gittest.Git(t, root, "fsck", "--strict")
	if err := b.repo.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "tools/a.ts"))
	if want := gittest.Git(t, root, "show", "HEAD:tools/a.ts"); err != nil || string(got) != want {
		t.Fatalf("tools/a.ts = %q (%v), want %q", got, err, want)
	}
	if s := skipWorktree(t, root); len(s) != 0 || b.repo.Unwritten() != 0 {
		t.Fatalf("after Materialize: skip-worktree %v, Unwritten %d", s, b.repo.Unwritten())
	}
	if d := gittest.Git(t, root, "diff-files", "--name-only"); d != "" {
		t.Fatalf("stat data not the file's: %s", d)
	}
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status after Materialize:\n%s", st)
	}
}

// TestDoWritesUnwrittenFiles: whatever runs inside Do (the git tools) sees
// the root whole.
func TestDoWritesUnwrittenFiles(t *testing.T) {
	_, _, b := lazyPair(t)
	err := b.repo.Do(context.Background(), func(*git.Repository) error {
		_, err := os.Stat(filepath.Join(b.fs.Root(), "tools/a.ts"))
		return err
	})
	if err != nil {
		t.Fatalf("tools/a.ts inside Do: %v", err)
	}
}

// TestMaterializeOnePath writes only the path asked for.
func TestMaterializeOnePath(t *testing.T) {
	_, a, b := lazyPair(t)
	a.write(t, "tools/c.ts", "export default 'c';\n")
	b.write(t, "tools/d.ts", "export default 'd';\n")
	if b.repo.Unwritten() != 2 {
		t.Fatalf("Unwritten() = %d, want 2", b.repo.Unwritten())
	}
	if err := b.repo.Materialize(context.Background(), "./tools/c.ts"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.fs.Root(), "tools/c.ts")); err != nil {
		t.Fatal(err)
	}
	if got := skipWorktree(t, b.fs.Root()); len(got) != 1 || got[0] != "tools/a.ts" {
		t.Fatalf("skip-worktree entries %v, want [tools/a.ts]", got)
	}
}

// TestMaterializeADirectory writes the unwritten files beneath a
// directory and no other ("." is the root; a path that merely starts as
// a directory's name is not beneath it).
func TestMaterializeADirectory(t *testing.T) {
	_, a, b := lazyPair(t)
	a.write(t, "tools/sub/c.ts", "export default 'c';\n")
	a.write(t, "tools/subway.ts", "export default 'w';\n")
	b.write(t, "tools/d.ts", "export default 'd';\n")
	if b.repo.Unwritten() != 3 {
		t.Fatalf("Unwritten() = %d, want 3", b.repo.Unwritten())
	}
	for _, step := range []struct {
		path string
		left []string
	}{
		{"tools/su", []string{"tools/a.ts", "tools/sub/c.ts", "tools/subway.ts"}},
		{"tools/sub", []string{"tools/a.ts", "tools/subway.ts"}},
		{"tools/", []string{}},
	} {
		if err := b.repo.Materialize(context.Background(), step.path); err != nil {
			t.Fatal(err)
		}
		if got := skipWorktree(t, b.fs.Root()); strings.Join(got, ",") != strings.Join(step.left, ",") || b.repo.Unwritten() != len(step.left) {
			t.Fatalf("after Materialize(%q): skip-worktree entries %v (Unwritten %d), want %v", step.path, got, b.repo.Unwritten(), step.left)
		}
	}
	a.write(t, "x/y.ts", "export default 'y';\n")
	b.write(t, "z.ts", "export default 'z';\n")
	if err := b.repo.Materialize(context.Background(), "."); err != nil || b.repo.Unwritten() != 0 {
		t.Fatalf("Materialize(.): %v, Unwritten %d", err, b.repo.Unwritten())
	}
	if st := gittest.Git(t, b.fs.Root(), "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status:\n%s", st)
	}
}

// TestNewProcessWritesFilesLeftUnwritten: a process that stopped without
// Close leaves skip-worktree entries; the next one on the root writes
// them at its first call that reads the root.
func TestNewProcessWritesFilesLeftUnwritten(t *testing.T) {
	remote, _, b := lazyPair(t)
	b.repo.flock = nil // the dead process's lock is gone with it
	c, err := Open(context.Background(), b.fs.Billy(), Config{Remote: remote, Branch: "main",
		Author: Identity{Name: "Agent", Email: "agent@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Unwritten() != lazyUnknown {
		t.Fatalf("Unwritten() = %d before the root was looked at", c.Unwritten())
	}
	if err := c.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.fs.Root(), "tools/a.ts")); err != nil {
		t.Fatal(err)
	}
	if s := skipWorktree(t, b.fs.Root()); len(s) != 0 {
		t.Fatalf("skip-worktree entries left: %v", s)
	}
}

// TestCloseLeavesUnwrittenFiles: Close writes nothing (a short-lived
// process's root may be thrown away); the root is a repository git finds
// nothing wrong with, and the next Repo on it writes the files at its
// first call that reads the root.
func TestCloseLeavesUnwrittenFiles(t *testing.T) {
	remote, _, b := lazyPair(t)
	if err := b.repo.Close(); err != nil {
		t.Fatal(err)
	}
	root := b.fs.Root()
	if _, err := os.Lstat(filepath.Join(root, "tools/a.ts")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Close wrote tools/a.ts: %v", err)
	}
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status:\n%s", st)
	}
	gittest.Git(t, root, "fsck", "--strict")
	c, err := Open(context.Background(), b.fs.Billy(), Config{Remote: remote, Branch: "main"}, WithLockFile(LockFilePath(root)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Do(context.Background(), func(*git.Repository) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tools/a.ts")); err != nil {
		t.Fatal(err)
	}
	if s := skipWorktree(t, root); len(s) != 0 {
		t.Fatalf("skip-worktree entries left: %v", s)
	}
}

// TestWriteOverUnwrittenFile: the agent writes the unwritten path itself
// (the same content): the entry describes its file again, not
// skip-worktree, so a later edit shows in git status.
func TestWriteOverUnwrittenFile(t *testing.T) {
	_, _, b := lazyPair(t)
	if res := b.write(t, "tools/a.ts", "export default 'a';\n"); !res.NoChange {
		t.Fatalf("same content committed again: %+v", res)
	}
	if s := skipWorktree(t, b.fs.Root()); len(s) != 0 || b.repo.Unwritten() != 0 {
		t.Fatalf("skip-worktree %v, Unwritten %d", s, b.repo.Unwritten())
	}
	if err := os.WriteFile(filepath.Join(b.fs.Root(), "tools/a.ts"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := gittest.Git(t, b.fs.Root(), "status", "--porcelain"); st != " M tools/a.ts\n" {
		t.Fatalf("git status %q, want the edit", st)
	}
}

// TestUnwrittenFileDeletedByLaterReplay: another agent deletes the file
// this root never wrote: the entry goes, nothing is left to write.
func TestUnwrittenFileDeletedByLaterReplay(t *testing.T) {
	_, a, b := lazyPair(t)
	if err := a.fs.Remove("tools/a.ts"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.repo.Persist(context.Background(), Change{Paths: []string{"tools/a.ts"}}); err != nil {
		t.Fatal(err)
	}
	b.write(t, "tools/e.ts", "export default 'e';\n")
	if b.repo.Unwritten() != 0 {
		t.Fatalf("Unwritten() = %d after the file was deleted", b.repo.Unwritten())
	}
	if st := gittest.Git(t, b.fs.Root(), "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status:\n%s", st)
	}
	if out := gittest.Git(t, b.fs.Root(), "ls-files", "tools/a.ts"); out != "" {
		t.Fatalf("tools/a.ts still in the index")
	}
}

// TestUnwrittenFileBehindALink: a link put where the unwritten file's
// directory goes is not followed when the file is written: nothing lands
// outside the root.
func TestUnwrittenFileBehindALink(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
	a := newAgent(t, remote, false)
	b := newAgent(t, remote, false)
	a.write(t, "tools/x/a.ts", "export default 'a';\n")
	b.write(t, "tools/b.ts", "export default 'b';\n")
	if b.repo.Unwritten() != 1 {
		t.Fatalf("Unwritten() = %d, want 1", b.repo.Unwritten())
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(b.fs.Root(), "tools/x")); err != nil {
		t.Fatal(err)
	}
	if err := b.repo.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the root: %v", ents)
	}
	// As git's checkout: the link in the way goes, the file is written
	// in a directory of the root.
	if info, err := os.Lstat(filepath.Join(b.fs.Root(), "tools/x")); err != nil || !info.IsDir() {
		t.Fatalf("tools/x: %v %v", info, err)
	}
	if st := gittest.Git(t, b.fs.Root(), "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status:\n%s", st)
	}
}

// TestSparseCheckoutEntriesLeftAlone: in a sparse checkout a
// skip-worktree entry with no file is the sparse checkout's: a new
// process does not write it.
func TestSparseCheckoutEntriesLeftAlone(t *testing.T) {
	remote, _, b := lazyPair(t)
	gittest.Git(t, b.fs.Root(), "config", "core.sparseCheckout", "true")
	b.repo.flock = nil
	c, err := Open(context.Background(), b.fs.Billy(), Config{Remote: remote, Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.fs.Root(), "tools/a.ts")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a sparse checkout's entry was written: %v", err)
	}
	if s := skipWorktree(t, b.fs.Root()); len(s) != 1 {
		t.Fatalf("skip-worktree entries %v", s)
	}
}

// TestMemoryRootWritesEveryFile: a root in memory has nothing to save by
// leaving files unwritten.
func TestMemoryRootWritesEveryFile(t *testing.T) {
	gittest.RequireGit(t)
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
	a := newAgent(t, remote, false)
	b := newAgent(t, remote, true)
	a.write(t, "tools/a.ts", "export default 'a';\n")
	b.write(t, "tools/b.ts", "export default 'b';\n")
	if b.repo.Unwritten() != 0 {
		t.Fatalf("Unwritten() = %d on a memory root", b.repo.Unwritten())
	}
	if _, err := b.fs.ReadFile("tools/a.ts"); err != nil {
		t.Fatal(err)
	}
}
