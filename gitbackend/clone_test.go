package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

// bootRoot opens and hydrates a root on remote the way the kernel does
// (branch "" = not configured).
func bootRoot(t testing.TB, remote, branch string, memory bool, root string) (*vfs.FS, *Repo, *HydrateResult, error) {
	t.Helper()
	return bootRootDepth(t, remote, branch, memory, root, 0)
}

func bootRootDepth(t testing.TB, remote, branch string, memory bool, root string, depth int) (*vfs.FS, *Repo, *HydrateResult, error) {
	t.Helper()
	var f *vfs.FS
	var opts []Option
	if memory {
		f = vfs.NewMemory()
	} else {
		if root == "" {
			root = filepath.Join(t.TempDir(), "root")
		}
		var err error
		if f, err = vfs.NewOS(root); err != nil {
			t.Fatal(err)
		}
		opts = append(opts, WithLockFile(LockFilePath(f.Root())))
	}
	r, err := Open(context.Background(), f.Billy(), Config{Remote: remote, Branch: branch, Depth: depth,
		Author: Identity{Name: "Agent", Email: "agent@example.com"}}, opts...)
	if err != nil {
		return f, nil, nil, err
	}
	t.Cleanup(func() { _ = r.Close() })
	res, err := r.Hydrate(context.Background())
	return f, r, res, err
}

// workRepo makes a non-bare repository with the git CLI.
func workRepo(t testing.TB, branch string) string {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "work")
	gittest.Git(t, "", "init", "-q", "-b", branch, dir)
	return dir
}

// bareFrom pushes every branch of work into a new bare remote whose HEAD
// names head.
func bareFrom(t testing.TB, work, head string) string {
	t.Helper()
	bare := filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", head, bare)
	gittest.Git(t, bare, "config", "http.receivepack", "true")
	gittest.Git(t, work, "push", "-q", bare, "refs/heads/*:refs/heads/*")
	return bare
}

func writeFile(t testing.TB, dir, p, content string, mode os.FileMode) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(full, mode); err != nil {
		t.Fatal(err)
	}
}

// compareWithGitClone clones remote with the git CLI and compares, with
// ours: every worktree entry (type, mode, bytes or link target), `git
// ls-files -s` and `git status --porcelain=v2 --branch` (run in both
// roots by the git CLI). It returns the differences, one per line.
func compareWithGitClone(t testing.TB, remote, ours string) []string {
	t.Helper()
	return compareWithGitCloneDepth(t, remote, ours, 0)
}

// compareWithGitCloneDepth compares with `git clone --depth depth` (0:
// full), and then also the history's length and shallowness.
func compareWithGitCloneDepth(t testing.TB, remote, ours string, depth int) []string {
	t.Helper()
	theirs := filepath.Join(t.TempDir(), "git-clone")
	if depth > 0 {
		gittest.Git(t, "", "clone", "-q", "--depth", strconv.Itoa(depth), "file://"+remote, theirs)
	} else {
		gittest.Git(t, "", "clone", "-q", remote, theirs)
	}
	var diffs []string
	if depth > 0 {
		for _, args := range [][]string{{"rev-list", "--count", "HEAD"}, {"rev-parse", "--is-shallow-repository"}} {
			want, _ := gittest.GitErr(theirs, args...)
			got, _ := gittest.GitErr(ours, args...)
			if want != got {
				diffs = append(diffs, fmt.Sprintf("git %s: git clone %q, ours %q", strings.Join(args, " "), want, got))
			}
		}
	}
	a, b := snapshotTree(t, theirs), snapshotTree(t, ours)
	for _, p := range unionKeys(a, b) {
		if a[p] != b[p] {
			diffs = append(diffs, "worktree "+p+": git clone "+quoteOrMissing(a[p])+", ours "+quoteOrMissing(b[p]))
		}
	}
	for _, args := range [][]string{{"ls-files", "-s"}, {"status", "--porcelain=v2", "--branch"}, {"status", "--porcelain"}} {
		want, werr := gittest.GitErr(theirs, args...)
		got, gerr := gittest.GitErr(ours, args...)
		if want != got || (werr == nil) != (gerr == nil) {
			diffs = append(diffs, "git "+strings.Join(args, " ")+":\n--- git clone\n"+want+"--- ours\n"+got)
		}
	}
	return diffs
}

func quoteOrMissing(s string) string {
	if s == "" {
		return "(missing)"
	}
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return "[" + s + "]"
}

func unionKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// snapshotTree describes every entry under dir except .git.
func snapshotTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if rel == ".git" {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "symlink -> " + target
		case info.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			kind := "file"
			if info.Mode()&0o100 != 0 {
				kind = "exec"
			}
			out[rel] = kind + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBootGitlinkLikeGitClone: a submodule entry (mode 160000) is checked
// out as an empty directory, recorded in the index, and status is clean —
// what git clone does without --recurse-submodules.
func TestBootGitlinkLikeGitClone(t *testing.T) {
	work := workRepo(t, "main")
	writeFile(t, work, "a.txt", "a\n", 0o644)
	writeFile(t, work, "lib/x.go", "package x\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,vendor/sub")
	gittest.Git(t, work, "commit", "-q", "-m", "with a submodule")
	remote := bareFrom(t, work, "main")
	for _, memory := range []bool{false, true} {
		f, _, res, err := bootRoot(t, remote, "", memory, "")
		if err != nil {
			t.Fatalf("memory=%v: boot: %v", memory, err)
		}
		if res.Action != "cloned" || res.Branch != "main" {
			t.Fatalf("memory=%v: %+v", memory, res)
		}
		info, err := f.Lstat("vendor/sub")
		if err != nil || !info.IsDir() {
			t.Fatalf("memory=%v: vendor/sub: %v %v", memory, info, err)
		}
		if !memory {
			if d := compareWithGitClone(t, remote, f.Root()); len(d) > 0 {
				t.Fatalf("differs from git clone:\n%s", strings.Join(d, "\n"))
			}
		}
	}
}

// TestBootFollowsRemoteHEAD: with git.branch unset, a remote whose only
// branch is master checks out master (the "empty-remote" bug), and
// a remote whose HEAD names trunk among several branches checks out trunk.
func TestBootFollowsRemoteHEAD(t *testing.T) {
	work := workRepo(t, "master")
	writeFile(t, work, "README", "hello\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "init")
	masterOnly := bareFrom(t, work, "master")
	gittest.Git(t, work, "checkout", "-q", "-b", "trunk")
	writeFile(t, work, "t.txt", "t\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "trunk")
	trunkHead := bareFrom(t, work, "trunk")
	srv := gittest.NewHTTPServer(t, filepath.Dir(trunkHead), "")
	for _, tc := range []struct {
		name, remote, want, file string
	}{
		{"local master only", masterOnly, "master", "README"},
		{"local HEAD trunk", trunkHead, "trunk", "t.txt"},
		{"http HEAD trunk", srv.URL(filepath.Base(trunkHead)), "trunk", "t.txt"},
	} {
		for _, memory := range []bool{false, true} {
			f, r, res, err := bootRoot(t, tc.remote, "", memory, "")
			if err != nil {
				t.Fatalf("%s memory=%v: %v", tc.name, memory, err)
			}
			if res.Action != "cloned" || res.Branch != tc.want {
				t.Fatalf("%s memory=%v: %+v", tc.name, memory, res)
			}
			if _, err := f.ReadFile(tc.file); err != nil {
				t.Fatalf("%s memory=%v: %v", tc.name, memory, err)
			}
			// The first write goes onto the remote's branch, not a new one.
			if err := f.WriteFile("new.txt", []byte("n\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			pr, err := r.Persist(context.Background(), Change{Paths: []string{"new.txt"}, Message: "add"})
			if err != nil || pr.Branch != tc.want {
				t.Fatalf("%s memory=%v: persist %+v %v", tc.name, memory, pr, err)
			}
			if !memory && !strings.HasPrefix(tc.remote, "http") {
				if d := compareWithGitClone(t, tc.remote, f.Root()); len(d) > 0 {
					t.Fatalf("%s: differs from git clone:\n%s", tc.name, strings.Join(d, "\n"))
				}
			}
		}
	}
}

// TestBootConfiguredBranchMissing: a configured branch the remote lacks,
// while it has others, is refused with one line naming them, and nothing
// is checked out.
func TestBootConfiguredBranchMissing(t *testing.T) {
	work := workRepo(t, "master")
	writeFile(t, work, "README", "hello\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "init")
	gittest.Git(t, work, "branch", "dev")
	remote := bareFrom(t, work, "master")
	srv := gittest.NewHTTPServer(t, filepath.Dir(remote), "")
	for _, rem := range []string{remote, srv.URL(filepath.Base(remote))} {
		f, _, _, err := bootRoot(t, rem, "main", false, "")
		if !errors.Is(err, ErrBranchNotFound) || strings.Contains(err.Error(), "\n") ||
			!strings.Contains(err.Error(), `no branch "main" (it has: dev, master)`) {
			t.Fatalf("%s: %v", rem, err)
		}
		if _, err := f.Lstat("README"); err == nil {
			t.Fatalf("%s: a refused boot checked files out", rem)
		}
	}
	// A remote whose HEAD names a branch it lacks: with several branches
	// boot refuses (git clone would check out nothing and the first write
	// would start an unrelated history); with one, that one.
	dangling := bareFrom(t, work, "main")
	f, _, _, err := bootRoot(t, dangling, "", false, "")
	var bn *BranchNotFoundError
	if !errors.As(err, &bn) || bn.Branch != "" || !strings.Contains(err.Error(), "HEAD names no existing branch (it has: dev, master)") {
		t.Fatalf("dangling HEAD: %v", err)
	}
	if _, err := f.Lstat("README"); err == nil {
		t.Fatal("a refused boot checked files out")
	}
	gittest.Git(t, dangling, "branch", "-D", "dev")
	_, _, res, err := bootRoot(t, dangling, "", false, "")
	if err != nil || res.Branch != "master" || !strings.Contains(strings.Join(res.Notes, "\n"), "only branch master") {
		t.Fatalf("dangling HEAD, one branch: %+v %v", res, err)
	}
}

// TestBootEmptyRemote: a truly empty remote starts the branch its HEAD
// names (main by default), and the first write creates it there.
func TestBootEmptyRemote(t *testing.T) {
	remote := gittest.BareRemote(t)
	f, r, res, err := bootRoot(t, remote, "", false, "")
	if err != nil || res.Action != "empty-remote" || res.Branch != "main" {
		t.Fatalf("%+v %v", res, err)
	}
	_ = f.WriteFile("a.txt", []byte("a\n"), 0o644)
	if _, err := r.Persist(context.Background(), Change{Paths: []string{"a.txt"}, Message: "a"}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, remote, "for-each-ref", "--format=%(refname)"); got != "refs/heads/main\n" {
		t.Fatalf("%q", got)
	}
}

// hostileRemote makes a bare remote whose main branch holds a file at p
// (built with plumbing commands, which do not check names).
func hostileRemote(t testing.TB, p string) string {
	t.Helper()
	remote := gittest.SeedRemote(t, map[string]string{"ok.txt": "ok\n"})
	blob := strings.TrimSpace(gittest.GitStdin(t, remote, "x\n", "hash-object", "-w", "--stdin"))
	parts := strings.Split(p, "/")
	entry := "100644 blob " + blob + "\t" + parts[len(parts)-1] + "\n"
	for i := len(parts) - 2; i >= 0; i-- {
		tree := strings.TrimSpace(gittest.GitStdin(t, remote, entry, "mktree"))
		entry = "040000 tree " + tree + "\t" + parts[i] + "\n"
	}
	okBlob := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main:ok.txt"))
	root := strings.TrimSpace(gittest.GitStdin(t, remote, entry+"100644 blob "+okBlob+"\tok.txt\n", "mktree"))
	commit := strings.TrimSpace(gittest.Git(t, remote, "commit-tree", root, "-p", "main", "-m", "hostile"))
	gittest.Git(t, remote, "update-ref", "refs/heads/main", commit)
	return remote
}

// TestBootRefusesInvalidPaths: git refuses to check out a tree holding a
// path some filesystem reads as .git; so does boot, with git's message, and
// it leaves nothing behind (the next boot fails the same way, not with a
// half-made repository's error).
func TestBootRefusesInvalidPaths(t *testing.T) {
	for _, p := range []string{".GIT/config", "git~1/x", ".git\u200c/x", "a/.Git/hooks/post-checkout"} {
		remote := hostileRemote(t, p)
		// git on Linux checks HFS+ names only with core.protectHFS (on by
		// default on macOS): ask for it, as the kernel always does.
		if out, err := gittest.GitErr("", "-c", "core.protectHFS=true", "clone", "-q", remote, filepath.Join(t.TempDir(), "c")); err == nil ||
			!strings.Contains(out, "error: invalid path '"+p+"'") {
			t.Fatalf("oracle: git clone of %q: %v %s", p, err, out)
		}
		for _, memory := range []bool{false, true} {
			parent := t.TempDir()
			root := filepath.Join(parent, "root")
			f, _, _, err := bootRoot(t, remote, "", memory, root)
			var ip *InvalidPathError
			if !errors.As(err, &ip) || ip.Path != p || !strings.Contains(err.Error(), "error: invalid path '"+p+"'") {
				t.Fatalf("%q memory=%v: %v", p, memory, err)
			}
			if _, err := f.Lstat("ok.txt"); err == nil {
				t.Fatalf("%q memory=%v: a refused clone left ok.txt", p, memory)
			}
			if memory {
				continue
			}
			if left := listDir(t, parent); strings.Join(left, ",") != "root" {
				t.Fatalf("%q: left beside the root: %v", p, left)
			}
			if left := listDir(t, root); len(left) != 1 || left[0] != ".git" {
				t.Fatalf("%q: left in the root: %v", p, left)
			}
			// The next boot says the same thing.
			if _, _, _, err := bootRoot(t, remote, "", false, root); !errors.As(err, &ip) {
				t.Fatalf("%q: second boot: %v", p, err)
			}
		}
	}
}

func listDir(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestBootRepairsHalfMadeGitDir: the states an interrupted boot or write
// leaves (the old half-made clone, a stale lock, a missing HEAD, lost
// objects, a staging directory) are repaired or re-cloned, with a note.
func TestBootRepairsHalfMadeGitDir(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"})
	old := time.Now().Add(-time.Hour)
	cases := []struct {
		name   string
		break_ func(t *testing.T, root string)
		note   string
	}{
		{"init only (old half-made clone)", func(t *testing.T, root string) {
			_ = os.RemoveAll(filepath.Join(root, ".git"))
			gittest.Git(t, "", "init", "-q", "-b", "main", root)
			writeFile(t, root, "a.txt", "half\n", 0o644)
		}, ""},
		{"stale index.lock", func(t *testing.T, root string) {
			lock := filepath.Join(root, ".git", "index.lock")
			writeFile(t, root, ".git/index.lock", "", 0o644)
			_ = os.Chtimes(lock, old, old)
		}, "stale lock .git/index.lock"},
		{"missing HEAD", func(t *testing.T, root string) {
			_ = os.Remove(filepath.Join(root, ".git", "HEAD"))
		}, "repaired .git/HEAD"},
		{"garbled HEAD", func(t *testing.T, root string) {
			writeFile(t, root, ".git/HEAD", "\x00garbage", 0o644)
		}, "repaired .git/HEAD"},
		{"lost tree object", func(t *testing.T, root string) {
			tree := strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD^{tree}"))
			// The clone is one pack: unpack it loose, then drop the tree.
			packs, _ := filepath.Glob(filepath.Join(root, ".git", "objects", "pack", "*.pack"))
			for _, p := range packs {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				_ = os.Remove(p)
				_ = os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
				if out, err := gittest.GitStdinErr(root, string(data), "unpack-objects", "-q"); err != nil {
					t.Fatalf("unpack: %v %s", err, out)
				}
			}
			if err := os.Remove(filepath.Join(root, ".git", "objects", tree[:2], tree[2:])); err != nil {
				t.Fatal(err)
			}
		}, "re-cloned"},
		{"garbled config", func(t *testing.T, root string) {
			writeFile(t, root, ".git/config", "[core\n\x00]]]", 0o644)
		}, "re-cloned: the repository could not be opened"},
		{"lost objects", func(t *testing.T, root string) {
			_ = os.RemoveAll(filepath.Join(root, ".git", "objects"))
		}, "re-cloned"},
		{"staging dir of a dead boot", func(t *testing.T, root string) {
			_ = os.RemoveAll(filepath.Join(root, ".git"))
			_ = os.MkdirAll(stagingPrefix(root)+"123/.git", 0o755)
		}, "removed the half-made clone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			_, r, _, err := bootRoot(t, remote, "", false, root)
			if err != nil {
				t.Fatal(err)
			}
			_ = r.Close()
			tc.break_(t, root)
			f, _, res, err := bootRoot(t, remote, "", false, root)
			if err != nil {
				t.Fatalf("boot after %s: %v", tc.name, err)
			}
			if tc.note != "" && !strings.Contains(strings.Join(res.Notes, "\n"), tc.note) {
				t.Fatalf("notes %q lack %q", res.Notes, tc.note)
			}
			if d := compareWithGitClone(t, remote, f.Root()); len(d) > 0 {
				t.Fatalf("differs from git clone:\n%s", strings.Join(d, "\n"))
			}
			if m, _ := filepath.Glob(stagingPrefix(root) + "*"); len(m) > 0 {
				t.Fatalf("staging left: %v", m)
			}
		})
	}
}

// TestApplyTreeDiffGitlinksAndInvalidPaths: the checkout path the git tools
// use (and the fast-forward at a later boot) materialises gitlinks as
// directories and refuses a tree with an invalid path before touching
// anything.
func TestApplyTreeDiffGitlinksAndInvalidPaths(t *testing.T) {
	work := workRepo(t, "main")
	writeFile(t, work, "a.txt", "a\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "one")
	remote := bareFrom(t, work, "main")
	f, r, _, err := bootRoot(t, remote, "", false, "")
	if err != nil {
		t.Fatal(err)
	}
	// The remote gains a gitlink and an edit: a second boot fast-forwards.
	writeFile(t, work, "a.txt", "a2\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "update-index", "--add", "--cacheinfo", "160000,2222222222222222222222222222222222222222,sub")
	gittest.Git(t, work, "commit", "-q", "-m", "two")
	gittest.Git(t, work, "push", "-q", remote, "main")
	_ = r.Close()
	f, r, res, err := bootRoot(t, remote, "", false, f.Root())
	if err != nil || res.Action != "fetched" {
		t.Fatalf("%+v %v", res, err)
	}
	if d := compareWithGitClone(t, remote, f.Root()); len(d) > 0 {
		t.Fatalf("differs from git clone:\n%s", strings.Join(d, "\n"))
	}
	// Someone pushes a hostile path: the fast-forward is refused, nothing moves.
	blob := strings.TrimSpace(gittest.GitStdin(t, remote, "x\n", "hash-object", "-w", "--stdin"))
	sub := strings.TrimSpace(gittest.GitStdin(t, remote, "100644 blob "+blob+"\tconfig\n", "mktree"))
	base := strings.TrimSpace(gittest.Git(t, remote, "ls-tree", "main"))
	tree := strings.TrimSpace(gittest.GitStdin(t, remote, base+"\n040000 tree "+sub+"\t.GIT\n", "mktree"))
	commit := strings.TrimSpace(gittest.Git(t, remote, "commit-tree", tree, "-p", "main", "-m", "hostile"))
	gittest.Git(t, remote, "update-ref", "refs/heads/main", commit)
	headBefore := gittest.Git(t, f.Root(), "rev-parse", "HEAD")
	_ = r.Close()
	_, _, _, err = bootRoot(t, remote, "", false, f.Root())
	var ip *InvalidPathError
	if !errors.As(err, &ip) || ip.Path != ".GIT/config" {
		t.Fatalf("fast-forward onto an invalid path: %v", err)
	}
	if got := gittest.Git(t, f.Root(), "rev-parse", "HEAD"); got != headBefore {
		t.Fatalf("HEAD moved: %s -> %s", headBefore, got)
	}
	if st := gittest.Git(t, f.Root(), "status", "--porcelain"); st != "" {
		t.Fatalf("worktree changed:\n%s", st)
	}
	if _, err := os.Lstat(filepath.Join(f.Root(), ".GIT")); err == nil {
		t.Fatal(".GIT was written")
	}
}

// TestApplyRefusesInvalidPaths: ApplyTreeDiff, ApplyPaths and ApplyFiles
// (git_checkout, git_restore, git_stash) refuse a tree entry git refuses
// to check out, before writing anything.
func TestApplyRefusesInvalidPaths(t *testing.T) {
	f := vfs.NewMemory()
	dot, err := f.Billy().Chroot(".git")
	if err != nil {
		t.Fatal(err)
	}
	st := filesystem.NewStorage(dot, cache.NewObjectLRUDefault())
	if _, err := git.Init(st, f.Billy()); err != nil {
		t.Fatal(err)
	}
	blob, err := StoreBlob(st, []byte("x\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{".GIT/config", "git~1/x", ".git\u200c/x", "a/../b", "x/.gitmodules"} {
		files := map[string]TreeFile{"ok.txt": {Mode: filemode.Regular, Hash: blob}, bad: {Mode: filemode.Regular, Hash: blob}}
		isLink := strings.HasSuffix(bad, ".gitmodules")
		if isLink {
			files[bad] = TreeFile{Mode: filemode.Symlink, Hash: blob}
		}
		tree, err := WriteTree(st, plumbing.ZeroHash, files)
		if err != nil {
			t.Fatal(err)
		}
		checks := map[string]error{
			"ApplyTreeDiff": ApplyTreeDiff(context.Background(), st, f.Billy(), plumbing.ZeroHash, tree),
			"ApplyPaths":    ApplyPaths(st, f.Billy(), tree, []string{"ok.txt", bad}),
			"ApplyFiles":    ApplyFiles(st, f.Billy(), files),
		}
		for name, err := range checks {
			var ip *InvalidPathError
			if !errors.As(err, &ip) || ip.Path != bad || err.Error() != "error: invalid path '"+bad+"'" {
				t.Fatalf("%s %q: %v", name, bad, err)
			}
		}
		if _, err := f.Lstat("ok.txt"); err == nil {
			t.Fatalf("%q: ok.txt written by a refused checkout", bad)
		}
		idx, err := st.Index()
		if err != nil || len(idx.Entries) != 0 {
			t.Fatalf("%q: index changed: %v %v", bad, idx, err)
		}
	}
}

// TestBootFetchesBranchesTagsAndOriginHEAD: a boot gives the root what git
// clone gives: every remote branch as origin/<b>, origin/HEAD, lightweight
// and annotated tags (found by the generated clone suite in
// test/integration), over a local path, smart HTTP and git://.
func TestBootFetchesBranchesTagsAndOriginHEAD(t *testing.T) {
	work := workRepo(t, "main")
	writeFile(t, work, "a.txt", "a\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "one")
	gittest.Git(t, work, "tag", "v1")
	gittest.Git(t, work, "checkout", "-q", "-b", "topic")
	writeFile(t, work, "t.txt", "t\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "topic only")
	gittest.Git(t, work, "tag", "-a", "-m", "release", "v2")
	gittest.Git(t, work, "checkout", "-q", "main")
	bare := bareFrom(t, work, "main")
	gittest.Git(t, work, "push", "-q", bare, "refs/tags/*:refs/tags/*")
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	daemon := gittest.Daemon(t, filepath.Dir(bare))
	refs := func(dir string) string {
		return gittest.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname) %(*objectname)", "refs/remotes", "refs/tags")
	}
	want := refs(gittest.Clone(t, bare))
	for _, remote := range []string{bare, srv.URL(filepath.Base(bare)), daemon + "/" + filepath.Base(bare)} {
		f, _, _, err := bootRoot(t, remote, "", false, "")
		if err != nil {
			t.Fatalf("%s: %v", remote, err)
		}
		if got := refs(f.Root()); got != want {
			t.Fatalf("%s: refs after boot:\n%s\nwant (git clone):\n%s", remote, got, want)
		}
		gittest.Git(t, f.Root(), "fsck", "--strict")
		if out := gittest.Git(t, f.Root(), "log", "--format=%s", "v2"); out != "topic only\none\n" {
			t.Fatalf("%s: log v2: %q", remote, out)
		}
	}
}
