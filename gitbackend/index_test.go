package gitbackend

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/internal/gitformat"
	"github.com/tgp-go/tgp/vfs"
)

// TestDecodeIndexMatchesGoGit: indexes the git CLI writes (version 2, 3
// with intent-to-add, 4, the cache-tree and resolve-undo extensions, a
// conflict, a name longer than 0xfff bytes) decode as go-git decodes
// them, extensions aside (version 4 too, with its compressed names).
func TestDecodeIndexMatchesGoGit(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	files := map[string]string{"a.txt": "a\n", "b/c.txt": "c\n", "b.txt": "b\n", "exec.sh": "#!/bin/sh\n"}
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Git(t, dir, "add", ".")
	// A name longer than the 12 bits of an entry's length (no file: the
	// OS refuses such a path).
	long := strings.Repeat(strings.Repeat("d", 200)+"/", 21) + "x"
	blob := strings.TrimSpace(gittest.Git(t, dir, "hash-object", "-w", "a.txt"))
	gittest.Git(t, dir, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+long)
	gittest.Git(t, dir, "commit", "-q", "-m", "one") // writes the cache tree
	check := func(name, ext string) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), ext) {
			t.Fatalf("%s: the index has no %q", name, ext)
		}
		want := &index.Index{}
		if err := index.NewDecoder(strings.NewReader(string(data))).Decode(want); err != nil {
			t.Fatal(err)
		}
		want.Cache, want.ResolveUndo, want.EndOfIndexEntry = nil, nil, nil
		got, _, ok := gitformat.DecodeIndex(data)
		if !ok {
			t.Fatalf("%s: not decoded", name)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decoded\n%+v\nwant\n%+v", name, got, want)
		}
		long := false
		for _, e := range got.Entries {
			long = long || len(e.Name) > 0xfff
		}
		if !long {
			t.Fatalf("%s: no entry with a long name", name)
		}
		// Through the cache, as the git tools read it.
		dot := osfs.New(filepath.Join(dir, ".git"))
		var c indexCache
		s := &fakeIndexStore{t: t}
		v, err := c.view(dot, s)
		if err != nil {
			t.Fatal(err)
		}
		v.ModTime = want.ModTime
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("%s: view differs", name)
		}
	}
	check("v2 with cache tree", "TREE")
	gittest.Git(t, dir, "rm", "-q", "--cached", "b.txt")
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("n\n"), 0o644)
	gittest.Git(t, dir, "add", "-N", "new.txt")
	check("v3 intent-to-add", "new.txt")
	gittest.Git(t, dir, "update-index", "--skip-worktree", "a.txt")
	check("v3 skip-worktree", "a.txt")
	gittest.Git(t, dir, "update-index", "--no-skip-worktree", "a.txt")
	gittest.Git(t, dir, "reset", "-q")
	// A conflict, then resolved: stages 1-3, then resolve-undo.
	gittest.Git(t, dir, "checkout", "-q", "-b", "side")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("side\n"), 0o644)
	gittest.Git(t, dir, "commit", "-q", "-am", "side")
	gittest.Git(t, dir, "checkout", "-q", "main")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("main\n"), 0o644)
	gittest.Git(t, dir, "commit", "-q", "-am", "main")
	_, _ = gittest.GitErr(dir, "merge", "-q", "side")
	check("conflict", "a.txt")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("both\n"), 0o644)
	gittest.Git(t, dir, "add", "a.txt")
	check("resolve-undo", "REUC")
	gittest.Git(t, dir, "update-index", "--index-version", "4")
	check("v4", "DIRC")
}

// fakeIndexStore is go-git's reader, for the cache's fallback.
type fakeIndexStore struct{ t *testing.T }

func (f *fakeIndexStore) Index() (*index.Index, error) {
	f.t.Fatal("the fast decoder fell back to go-git")
	return nil, nil
}
func (f *fakeIndexStore) SetIndex(*index.Index) error { return nil }

// TestWarmIndexSeesOtherWriters: the git tools' storage keeps the index
// decoded, hands out copies (a caller's change is not kept unless it is
// written), and reads the file again when something else rewrote it.
func TestWarmIndexSeesOtherWriters(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	gittest.Git(t, dir, "add", "a.txt")
	r, err := Open(context.Background(), diskRoot(t, dir), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	names := func() []string {
		var out []string
		_ = r.Do(context.Background(), func(g *git.Repository) error {
			idx, err := g.Storer.Index()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range idx.Entries {
				out = append(out, e.Name)
			}
			idx.Entries = nil // a caller's change to its copy
			return nil
		})
		return out
	}
	if got := names(); !reflect.DeepEqual(got, []string{"a.txt"}) {
		t.Fatalf("index %v", got)
	}
	if got := names(); !reflect.DeepEqual(got, []string{"a.txt"}) {
		t.Fatalf("a caller's copy changed the cache: %v", got)
	}
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644)
	gittest.Git(t, dir, "add", "b.txt")
	if got := names(); !reflect.DeepEqual(got, []string{"a.txt", "b.txt"}) {
		t.Fatalf("after git add: %v", got)
	}
	// Our own write is kept, and read back as written.
	_ = r.Do(context.Background(), func(g *git.Repository) error {
		idx, _ := g.Storer.Index()
		idx.Remove("a.txt")
		if err := g.Storer.SetIndex(idx); err != nil {
			t.Fatal(err)
		}
		idx.Entries = nil
		return nil
	})
	if got := names(); !reflect.DeepEqual(got, []string{"b.txt"}) {
		t.Fatalf("after our write: %v", got)
	}
	if out := gittest.Git(t, dir, "ls-files"); strings.TrimSpace(out) != "b.txt" {
		t.Fatalf("git ls-files after our write: %q", out)
	}
}

// TestFlatTreeInIndexOrder: a flattened tree lists paths as the index
// orders them ("a.txt" before "a/x"), gitlinks and links included.
func TestFlatTreeInIndexOrder(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	for _, p := range []string{"a/x", "a.txt", "a-b", "b/c/d", "z"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644)
	}
	os.Symlink("z", filepath.Join(dir, "link"))
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",sub")
	gittest.Git(t, dir, "commit", "-q", "-m", "one")
	r, err := Open(context.Background(), diskRoot(t, dir), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_ = r.Do(context.Background(), func(g *git.Repository) error {
		head, _ := g.Head()
		c, _ := object.GetCommit(g.Storer, head.Hash())
		list, err := FlatTree(g.Storer, c.TreeHash)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range list {
			got = append(got, e.Path+" "+e.Mode.String())
		}
		idx, _ := g.Storer.Index()
		var want []string
		for _, e := range idx.Entries {
			want = append(want, e.Name+" "+e.Mode.String())
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("flat tree\n%v\nindex\n%v", got, want)
		}
		again, _ := FlatTree(g.Storer, c.TreeHash)
		if &again[0] != &list[0] {
			t.Fatal("the flattened tree was not cached")
		}
		if l, _ := FlatTree(g.Storer, plumbing.ZeroHash); l != nil {
			t.Fatal("the empty tree lists entries")
		}
		return nil
	})
}

// TestStageFilesLikeGitAdd: StageFiles leaves the index git add leaves
// (new files packed, a file replaced by a directory, a deleted file, a
// conflict resolved, a directory replaced by a file) and a store git
// reads.
func TestStageFilesLikeGitAdd(t *testing.T) {
	gittest.RequireGit(t)
	setup := func(dir string) {
		gittest.Git(t, "", "init", "-q", "-b", "main", dir)
		write := func(p, c string) {
			full := filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("c.txt", "base\n")
		write("gone.txt", "gone\n")
		write("was-file", "file\n")
		write("was-dir/x", "x\n")
		gittest.Git(t, dir, "add", ".")
		gittest.Git(t, dir, "commit", "-q", "-m", "base")
		gittest.Git(t, dir, "checkout", "-q", "-b", "side")
		write("c.txt", "side\n")
		gittest.Git(t, dir, "commit", "-q", "-am", "side")
		gittest.Git(t, dir, "checkout", "-q", "main")
		write("c.txt", "main\n")
		gittest.Git(t, dir, "commit", "-q", "-am", "main")
		_, _ = gittest.GitErr(dir, "merge", "-q", "side") // conflict on c.txt
		write("c.txt", "resolved\n")
		os.Remove(filepath.Join(dir, "gone.txt"))
		os.Remove(filepath.Join(dir, "was-file"))
		write("was-file/inside", "in\n")
		os.RemoveAll(filepath.Join(dir, "was-dir"))
		write("was-dir", "now a file\n")
		for i := 0; i < 12; i++ {
			write(fmt.Sprintf("new/f%02d.txt", i), fmt.Sprint(i%5, "\n")) // some equal contents
		}
	}
	paths := []string{"c.txt", "gone.txt", "was-file", "was-file/inside", "was-dir", "was-dir/x"}
	for i := 0; i < 12; i++ {
		paths = append(paths, fmt.Sprintf("new/f%02d.txt", i))
	}
	want := t.TempDir()
	setup(want)
	gittest.Git(t, want, append([]string{"add", "-A", "--"}, paths...)...)
	got := t.TempDir()
	setup(got)
	r, err := Open(context.Background(), diskRoot(t, got), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Do(context.Background(), func(g *git.Repository) error {
		return StageFiles(context.Background(), g.Storer, r.Worktree(), paths, nil)
	}); err != nil {
		t.Fatal(err)
	}
	if g, w := gittest.Git(t, got, "ls-files", "-s"), gittest.Git(t, want, "ls-files", "-s"); g != w {
		t.Fatalf("index\n%s\ngit add leaves\n%s", g, w)
	}
	if out := gittest.Git(t, got, "status", "--porcelain"); out != gittest.Git(t, want, "status", "--porcelain") {
		t.Fatalf("status after StageFiles:\n%s", out)
	}
	packs, _ := filepath.Glob(filepath.Join(got, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs %v, want the new blobs in one", packs)
	}
	gittest.Git(t, got, "fsck", "--no-dangling")
}

// TestDiffIndexMatchesFlatMerge: DiffIndex (index directories hashed,
// only differing subtrees read) finds what comparing the whole flattened
// tree with the index finds, on generated changes: files added, removed,
// changed, made executable, replaced by directories and back, conflicts.
func TestDiffIndexMatchesFlatMerge(t *testing.T) {
	gittest.RequireGit(t)
	for seed := int64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewSource(seed))
		dir := t.TempDir()
		gittest.Git(t, "", "init", "-q", "-b", "main", dir)
		names := []string{"a", "a.b", "a-c", "b", "z"}
		var paths []string
		write := func(p, c string) {
			full := filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 60; i++ {
			p := names[rng.Intn(len(names))]
			for d := rng.Intn(3); d > 0; d-- {
				p += "/" + names[rng.Intn(len(names))]
			}
			p += fmt.Sprint(i)
			paths = append(paths, p)
			write(p, fmt.Sprint(rng.Intn(4), "\n"))
		}
		gittest.Git(t, dir, "add", ".")
		gittest.Git(t, dir, "commit", "-q", "-m", "base")
		if seed%2 == 0 {
			// A conflict in one directory.
			gittest.Git(t, dir, "checkout", "-q", "-b", "side")
			write("a/conflict", "side\n")
			gittest.Git(t, dir, "add", "a/conflict")
			gittest.Git(t, dir, "commit", "-q", "-m", "side")
			gittest.Git(t, dir, "checkout", "-q", "main")
			write("a/conflict", "main\n")
			gittest.Git(t, dir, "add", "a/conflict")
			gittest.Git(t, dir, "commit", "-q", "-m", "main")
			_, _ = gittest.GitErr(dir, "merge", "-q", "side")
		}
		for i := 0; i < 12; i++ {
			p := paths[rng.Intn(len(paths))]
			switch rng.Intn(5) {
			case 0:
				_, _ = gittest.GitErr(dir, "rm", "-q", "--cached", p)
			case 1:
				write(p, "changed\n")
			case 2:
				os.Chmod(filepath.Join(dir, p), 0o755)
			case 3:
				if os.Remove(filepath.Join(dir, p)) == nil {
					write(p+"/inside", "in\n")
				}
			default:
				write(fmt.Sprintf("%s/new%d", filepath.Dir(p), i), "new\n")
			}
		}
		gittest.Git(t, dir, "add", "-A", "--", ".", ":!a/conflict")
		r, err := Open(context.Background(), diskRoot(t, dir), Config{})
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Do(context.Background(), func(g *git.Repository) error {
			head, _ := g.Head()
			c, _ := object.GetCommit(g.Storer, head.Hash())
			idx, _ := g.Storer.Index()
			gh, gd, err := DiffIndex(g.Storer, c.TreeHash, idx.Entries)
			if err != nil {
				t.Fatal(err)
			}
			wh, wd, err := diffFlat(g.Storer, c.TreeHash, idx.Entries)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gh, wh) {
				for i := range gh {
					if gh[i] != wh[i] {
						t.Errorf("seed %d: %s: %+v, want %+v", seed, idx.Entries[i].Name, gh[i], wh[i])
					}
				}
			}
			changed, conflicted := len(gd), false
			for i, e := range idx.Entries {
				if gh[i].Mode != e.Mode || gh[i].Hash != e.Hash {
					changed++
				}
				conflicted = conflicted || e.Stage != 0
			}
			if changed == 0 || conflicted != (seed%2 == 0) {
				t.Fatalf("seed %d: %d changes, conflicted %v: the generator made no case", seed, changed, conflicted)
			}
			sort.Slice(gd, func(i, j int) bool { return gd[i].Path < gd[j].Path })
			if !reflect.DeepEqual(gd, wd) {
				t.Errorf("seed %d: deleted %v, want %v", seed, gd, wd)
			}
			return nil
		})
		r.Close()
	}
}

// TestCloneIndexHoldsTheFilesStat: a boot's clone records in the index
// the stat data the checked-out files have in the root (taken while
// writing them, before they were moved into place), so neither git status
// nor git_status rehashes them; modes and links are git's.
func TestCloneIndexHoldsTheFilesStat(t *testing.T) {
	gittest.RequireGit(t)
	work := filepath.Join(t.TempDir(), "seed")
	gittest.Git(t, "", "init", "-q", "-b", "main", work)
	for p, c := range map[string]string{"top.txt": "t\n", "a/b/c.txt": "c\n", "a/run.sh": "#!/bin/sh\n", "z/deep/er/f": "f\n"} {
		full := filepath.Join(work, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(c), 0o644)
	}
	os.Chmod(filepath.Join(work, "a/run.sh"), 0o755)
	os.Symlink("a/b/c.txt", filepath.Join(work, "link"))
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("2", 40)+",sub")
	gittest.Git(t, work, "commit", "-q", "-m", "seed")
	remote := gittest.BareRemote(t)
	gittest.Git(t, work, "push", "-q", remote, "main")

	root := filepath.Join(t.TempDir(), "root")
	os.MkdirAll(root, 0o755)
	r, err := Open(context.Background(), diskRoot(t, root), Config{Remote: remote})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	idx, _, ok := gitformat.DecodeIndex(data)
	if !ok {
		t.Fatal("index not decoded")
	}
	for _, e := range idx.Entries {
		info, err := os.Lstat(filepath.Join(root, e.Name))
		if err != nil {
			t.Fatal(err)
		}
		if e.Mode == filemode.Submodule {
			if !info.IsDir() {
				t.Fatalf("%s: gitlink not a directory", e.Name)
			}
			continue
		}
		if !info.ModTime().Equal(e.ModifiedAt) || int64(e.Size) != info.Size() || uint64(e.Inode) != inodeOf(info)&0xffffffff {
			t.Fatalf("%s: index stat %v %d %d, file %v %d %d", e.Name, e.ModifiedAt, e.Size, e.Inode, info.ModTime(), info.Size(), inodeOf(info))
		}
		want := os.FileMode(0o644)
		switch e.Mode {
		case filemode.Executable:
			want = 0o755
		case filemode.Symlink:
			if info.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("%s: not a link", e.Name)
			}
			continue
		}
		if info.Mode().Perm() != want {
			t.Fatalf("%s: mode %v, want %v", e.Name, info.Mode().Perm(), want)
		}
	}
	if len(idx.Entries) != 6 {
		t.Fatalf("%d entries", len(idx.Entries))
	}
	if out := gittest.Git(t, root, "status", "--porcelain"); out != "" {
		t.Fatalf("git status after the clone:\n%s", out)
	}
	if out := gittest.Git(t, root, "diff-files", "--name-only"); out != "" {
		t.Fatalf("git diff-files (stat data) after the clone:\n%s", out)
	}
}

// TestCloneNeverWritesThroughALink: a tree holding a link and a path
// beneath it ("link" -> a directory outside, "link/x") is checked out
// without writing outside the root (the fast checkout gives up, the
// general one decides).
func TestCloneNeverWritesThroughALink(t *testing.T) {
	gittest.RequireGit(t)
	outside := t.TempDir()
	work := filepath.Join(t.TempDir(), "seed")
	gittest.Git(t, "", "init", "-q", "-b", "main", work)
	// A tree git's own index cannot make: git mktree.
	blob := strings.TrimSpace(gitIn(t, work, outside, "hash-object", "-w", "--stdin"))
	sub := strings.TrimSpace(gitIn(t, work, "100644 blob "+blob+"\tx\n", "mktree"))
	tree := strings.TrimSpace(gitIn(t, work, "120000 blob "+blob+"\tlink\n040000 tree "+sub+"\tlink\n", "mktree"))
	commit := strings.TrimSpace(gittest.Git(t, work, "commit-tree", "-m", "seed", tree))
	gittest.Git(t, work, "update-ref", "refs/heads/main", commit)
	remote := gittest.BareRemote(t)
	gittest.Git(t, work, "push", "-q", remote, "main")
	root := filepath.Join(t.TempDir(), "root")
	os.MkdirAll(root, 0o755)
	r, err := Open(context.Background(), diskRoot(t, root), Config{Remote: remote})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := r.Hydrate(context.Background()) // refused or done: either way, nothing outside
	t.Logf("hydrate: %+v %v", res, err)
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the clone wrote outside the root: %v", ents)
	}
}

// gitIn runs git with stdin.
func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Env(t.TempDir()), strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}

// TestIndexViewIsNeverChangedUnderItsReader: the index a git tool reads in
// place is not the one a persist then changes (it gets a copy), and the
// kept comparison with a tree goes with a changed index.
func TestIndexViewIsNeverChangedUnderItsReader(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	gittest.Git(t, dir, "add", "a.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "one")
	r, err := Open(context.Background(), diskRoot(t, dir), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_ = r.Do(context.Background(), func(g *git.Repository) error {
		head, _ := g.Head()
		c, _ := object.GetCommit(g.Storer, head.Hash())
		view, shared, err := IndexView(g.Storer)
		if err != nil || !shared {
			t.Fatalf("view: shared %v, %v", shared, err)
		}
		h1, _, _ := DiffIndex(g.Storer, c.TreeHash, view.Entries)
		if h1[0].Hash != view.Entries[0].Hash {
			t.Fatal("a.txt differs from HEAD")
		}
		// The persist path takes the cached index to change it.
		owned, err := r.idx.load(r.dot, r.store)
		if err != nil {
			t.Fatal(err)
		}
		if owned == view {
			t.Fatal("the persist was handed the index a tool reads in place")
		}
		owned.Entries[0].Hash = plumbing.NewHash(strings.Repeat("ab", 20))
		if err := r.idx.save(r.dot, r.store, owned); err != nil {
			t.Fatal(err)
		}
		if view.Entries[0].Hash == owned.Entries[0].Hash {
			t.Fatal("the view changed")
		}
		again, _, _ := IndexView(g.Storer)
		h2, _, _ := DiffIndex(g.Storer, c.TreeHash, again.Entries)
		if again.Entries[0].Hash != owned.Entries[0].Hash || h2[0].Hash == again.Entries[0].Hash {
			t.Fatalf("after the persist: index %s, HEAD side %s", again.Entries[0].Hash, h2[0].Hash)
		}
		return nil
	})
}

// TestPackObjectsMatchGoGit: every object of packs git wrote with deep
// delta chains (repack --depth=50, and an aggressive one) reads the same
// through the warm pack reader as through go-git.
func TestPackObjectsMatchGoGit(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	body := strings.Repeat("line of a file that changes a little\n", 200)
	for c := 0; c < 30; c++ {
		for f := 0; f < 5; f++ {
			p := filepath.Join(dir, fmt.Sprintf("d%d/f%d.txt", f%2, f))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(fmt.Sprintf("%s%d %d\n", body, c, f)), 0o644)
		}
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", fmt.Sprint("c", c))
	}
	for _, repack := range [][]string{{"repack", "-adq", "--depth=50", "--window=50"}, {"gc", "-q", "--aggressive"}} {
		gittest.Git(t, dir, repack...)
		r, err := Open(context.Background(), diskRoot(t, dir), Config{})
		if err != nil {
			t.Fatal(err)
		}
		n, deltas := 0, 0
		_ = r.Do(context.Background(), func(g *git.Repository) error {
			ws := g.Storer.(*warmStorage)
			iter, err := ws.Storage.IterEncodedObjects(plumbing.AnyObject)
			if err != nil {
				t.Fatal(err)
			}
			return iter.ForEach(func(want plumbing.EncodedObject) error {
				got, ok := r.packObject(plumbing.AnyObject, want.Hash())
				if !ok {
					t.Fatalf("%s not read from the packs", want.Hash())
				}
				wb, _ := objectBytes(toMemory(t, want))
				gb := got.(*sharedObject).Bytes()
				if got.Type() != want.Type() || !bytes.Equal(gb, wb) || got.Hash() != want.Hash() {
					t.Fatalf("%s read as %s %d bytes, go-git %s %d", want.Hash(), got.Type(), len(gb), want.Type(), len(wb))
				}
				n++
				return nil
			})
		})
		out := gittest.Git(t, dir, "verify-pack", "-v", mustGlob(t, filepath.Join(dir, ".git/objects/pack/*.idx")))
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 6 && len(f[0]) == 40 {
				deltas++
			}
		}
		r.Close()
		if n < 150 || deltas == 0 {
			t.Fatalf("%v: %d objects, %d deltas: nothing tested", repack, n, deltas)
		}
	}
}

func toMemory(t *testing.T, o plumbing.EncodedObject) *plumbing.MemoryObject {
	t.Helper()
	rd, err := o.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	m := &plumbing.MemoryObject{}
	m.SetType(o.Type())
	b, _ := io.ReadAll(rd)
	m.SetSize(int64(len(b)))
	m.Write(b)
	return m
}

func mustGlob(t *testing.T, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(pattern)
	if len(m) != 1 {
		t.Fatalf("%s: %v", pattern, m)
	}
	return m[0]
}

// diskRoot is dir as the kernel sees a root on disk (the jail's billy
// view), so that the paths taken for roots on disk are the ones tested.
func diskRoot(t *testing.T, dir string) billy.Filesystem {
	t.Helper()
	f, err := vfs.NewOS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return f.Billy()
}

// TestIndexKeepsAssumeUnchanged: the assume-valid bit, which go-git's
// index.Entry cannot hold, survives an index written by StageFiles (git
// keeps it on entries git add leaves alone), and AssumeUnchangedIn names the
// entries that carry it.
func TestIndexKeepsAssumeUnchanged(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	for _, p := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "one")
	gittest.Git(t, dir, "update-index", "--assume-unchanged", "a.txt")
	gittest.Git(t, dir, "update-index", "--skip-worktree", "b.txt")
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), diskRoot(t, dir), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Do(context.Background(), func(g *git.Repository) error {
		return StageFiles(context.Background(), g.Storer, r.Worktree(), []string{"new.txt"}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := gittest.Git(t, dir, "ls-files", "-v"), "h a.txt\nS b.txt\nH c.txt\nH new.txt\n"; got != want {
		t.Fatalf("ls-files -v after staging:\n%swant\n%s", got, want)
	}
	if v := AssumeUnchangedIn(r.gitStorage()); !v["a.txt"] || v["b.txt"] || v["c.txt"] {
		t.Fatal("AssumeUnchanged does not name exactly a.txt")
	}
	gittest.Git(t, dir, "fsck", "--no-dangling")
}
