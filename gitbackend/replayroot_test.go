package gitbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

// listHook derives meta.json, the files under tools/ and their content,
// as the kernel's registry does: kept in memory, updated from the paths a
// replay changed (from the merged tree: a TreeHook, unless worktreeOnly),
// rebuilt from the worktree when it has no state yet.
type listHook struct {
	fs           *vfs.FS
	worktreeOnly bool

	mu    sync.Mutex
	files map[string]string // nil: not built
	// fromTree and rebuilt count the two ways a replay derived it.
	fromTree, rebuilt int
}

func (h *listHook) marshal() []byte {
	b, _ := json.MarshalIndent(h.files, "", " ")
	return append(b, '\n')
}

// record is what the kernel does before a persist: the registry and
// meta.json follow the tool just written.
func (h *listHook) record(t testing.TB, p, content string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.files == nil {
		h.rebuild(t)
	}
	h.files[p] = content
	if err := h.fs.WriteFile(DerivedFile, h.marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (h *listHook) rebuild(t testing.TB) {
	h.files = map[string]string{}
	err := h.fs.Walk("tools", func(p string, info fs.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		b, err := h.fs.ReadFile(p)
		h.files[p] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
}

func (h *listHook) Regenerate(ctx context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rebuilt++
	h.rebuild(nil)
	return []string{DerivedFile}, h.fs.WriteFile(DerivedFile, h.marshal(), 0o644)
}

// worktreeHook is listHook as a hook that reads the worktree only.
type worktreeHook struct{ h *listHook }

func (w worktreeHook) Regenerate(ctx context.Context) ([]string, error) { return w.h.Regenerate(ctx) }

func (w worktreeHook) RegenerateChanged(ctx context.Context, changed []string) ([]string, error) {
	h := w.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.files == nil {
		h.rebuild(nil)
	}
	for _, p := range changed {
		if !strings.HasPrefix(p, "tools/") {
			continue
		}
		if b, err := h.fs.ReadFile(p); err == nil {
			h.files[p] = string(b)
		} else {
			delete(h.files, p)
		}
	}
	return []string{DerivedFile}, h.fs.WriteFile(DerivedFile, h.marshal(), 0o644)
}

func (h *listHook) DeriveFromTree(ctx context.Context, changed []string, tr TreeReader) (map[string][]byte, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.files == nil {
		return nil, false, nil
	}
	h.fromTree++
	for _, p := range changed {
		if !strings.HasPrefix(p, "tools/") {
			continue
		}
		b, ok, err := tr.ReadFile(p)
		if err != nil {
			return nil, false, err
		}
		if ok {
			h.files[p] = string(b)
		} else {
			delete(h.files, p)
		}
	}
	return map[string][]byte{DerivedFile: h.marshal()}, true, nil
}

// listing is meta.json as the hook would make it for a tree.
func listing(t *testing.T, dir, rev string) string {
	t.Helper()
	files := map[string]string{}
	for _, p := range strings.Fields(gittest.Git(t, dir, "ls-tree", "-r", "--name-only", rev, "--", "tools")) {
		files[p] = gittest.Git(t, dir, "show", rev+":"+p)
	}
	h := &listHook{files: files}
	return string(h.marshal())
}

// checkRootConsistent fails unless the root's worktree, index and HEAD
// agree (git status finds nothing; on a memory root every file of HEAD's
// tree has its content and nothing else is there), HEAD is where the
// remote-tracking ref is and both are on the remote's branch, and the
// hook's state is HEAD's meta.json.
//
// A root on disk may hold other agents' files unwritten (lazyFiles): each
// must then be a skip-worktree entry git finds nothing wrong with, absent
// from the disk; the check writes them (Materialize) and then finds the
// root whole. It returns how many there were.
func checkRootConsistent(t *testing.T, a *agent, h *listHook, remote string) (unwritten int) {
	t.Helper()
	// A replay the root has not taken yet (pending.go) is taken first.
	if err := a.repo.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	head, err := a.repo.head()
	if err != nil {
		t.Fatal(err)
	}
	if tr := a.repo.trackingTip("main"); tr != head {
		t.Fatalf("HEAD %s, origin/main %s", short(head), short(tr))
	}
	if _, err := gittest.GitErr(remote, "merge-base", "--is-ancestor", head.String(), "main"); err != nil {
		t.Fatalf("HEAD %s is not on the remote's main: %v", short(head), err)
	}
	if !a.fs.InMemory() {
		if st := gittest.Git(t, a.fs.Root(), "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Fatalf("root %s is not clean after the replays:\n%s", a.fs.Root(), st)
		}
		gittest.Git(t, a.fs.Root(), "fsck", "--strict")
		unwritten = checkUnwritten(t, a)
		if err := a.repo.Materialize(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := a.repo.Unwritten(); n != 0 {
			t.Fatalf("%d files still unwritten after Materialize", n)
		}
		if n := checkUnwritten(t, a); n != 0 {
			t.Fatalf("%d skip-worktree entries after Materialize", n)
		}
		// The stat data of what was written is the file's: git finds no
		// entry to look at again.
		if d := gittest.Git(t, a.fs.Root(), "diff-files", "--name-only"); d != "" {
			t.Fatalf("entries whose stat data is not their file's after Materialize:\n%s", d)
		}
		if st := gittest.Git(t, a.fs.Root(), "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Fatalf("root %s is not clean after Materialize:\n%s", a.fs.Root(), st)
		}
	}
	c, err := object.GetCommit(a.repo.store, head)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	inTree := map[string]bool{}
	err = tree.Files().ForEach(func(f *object.File) error {
		inTree[f.Name] = true
		want, err := f.Contents()
		if err != nil {
			return err
		}
		if got, err := a.fs.ReadFile(f.Name); err != nil || string(got) != want {
			return fmt.Errorf("%s in the worktree: %q (%v), HEAD has %q", f.Name, got, err, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := a.repo.store.Index()
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Entries) != len(inTree) {
		t.Fatalf("index has %d entries, HEAD's tree %d files", len(idx.Entries), len(inTree))
	}
	for _, e := range idx.Entries {
		f, err := tree.File(e.Name)
		if err != nil || f.Hash != e.Hash {
			t.Fatalf("index entry %s (%s) is not HEAD's (%v)", e.Name, short(e.Hash), err)
		}
	}
	if h != nil {
		h.mu.Lock()
		state := string(h.marshal())
		h.mu.Unlock()
		if meta, _ := a.fs.ReadFile(DerivedFile); string(meta) != state {
			t.Fatalf("hook state and meta.json in the root differ:\n%s\n%s", state, meta)
		}
	}
	return unwritten
}

// checkUnwritten checks the root's skip-worktree entries (git ls-files
// -v) against the files the Repo says it left unwritten: the same paths,
// none on disk. It returns how many.
func checkUnwritten(t *testing.T, a *agent) int {
	t.Helper()
	var skip []string
	for _, line := range strings.Split(gittest.Git(t, a.fs.Root(), "ls-files", "-v"), "\n") {
		if strings.HasPrefix(line, "S ") {
			skip = append(skip, strings.TrimPrefix(line, "S "))
		}
	}
	if n := a.repo.Unwritten(); n != len(skip) {
		t.Fatalf("%d skip-worktree entries, the repository left %d files unwritten: %v", len(skip), n, skip)
	}
	for _, p := range skip {
		if !a.repo.lazy.has(p) {
			t.Fatalf("%s is skip-worktree and not one the repository left unwritten", p)
		}
		if _, err := a.fs.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s is left unwritten and yet on disk (%v)", p, err)
		}
	}
	return len(skip)
}

// TestReplayedRootsStayConsistent: agents (roots on disk and in memory,
// with a hook deriving meta.json from the merged tree, or from the
// worktree) write at once on one remote; each replay is made in memory
// and the root brought to it after the remote's lock. No write is lost,
// each is its own commit, meta.json on the remote is the listing of its
// tree, and every root ends with worktree, index, HEAD, its tracking ref
// and its hook's state in agreement.
//
// Deferred: the same with each root taking the replay its persist pushed
// when next needed (Config.DeferReplays): the next persist folds it into
// its commit, the check takes the last.
func TestReplayedRootsStayConsistent(t *testing.T) {
	gittest.RequireGit(t)
	t.Run("at-once", func(t *testing.T) { replayedRootsStayConsistent(t, false) })
	t.Run("deferred", func(t *testing.T) { replayedRootsStayConsistent(t, true) })
}

func replayedRootsStayConsistent(t *testing.T, deferred bool) {
	remote := gittest.BareRemote(t)
	const agents, writes = 6, 4
	type writer struct {
		a *agent
		h *listHook
	}
	ws := make([]writer, agents)
	for i := range ws {
		memory := i%3 == 2
		h := &listHook{worktreeOnly: i%3 == 1}
		var opt Option
		if h.worktreeOnly {
			opt = WithHook(worktreeHook{h})
		} else {
			opt = WithHook(h)
		}
		a := newAgent(t, remote, memory, opt)
		a.repo.cfg.DeferReplays = deferred
		h.fs = a.fs
		ws[i] = writer{a, h}
	}
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func(i int, w writer) {
			defer wg.Done()
			for j := 0; j < writes; j++ {
				p := fmt.Sprintf("tools/a%d/t%d.ts", i, j)
				content := fmt.Sprintf("export default %d;\n", i*100+j)
				if err := w.a.fs.MkdirAll(path.Dir(p), 0o755); err != nil {
					t.Error(err)
					return
				}
				if err := w.a.fs.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Error(err)
					return
				}
				w.h.record(t, p, content)
				if _, err := w.a.repo.Persist(context.Background(), Change{Paths: []string{p, DerivedFile}, Message: "forge: " + p}); err != nil {
					t.Errorf("agent %d: %v", i, err)
					return
				}
			}
		}(i, w)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	gittest.Git(t, remote, "fsck", "--strict")
	if n := strings.Count(gittest.Git(t, remote, "log", "--format=%s", "main"), "forge: "); n != agents*writes {
		t.Fatalf("%d commits on the remote, want %d (one per write)", n, agents*writes)
	}
	files := strings.Fields(gittest.Git(t, remote, "ls-tree", "-r", "--name-only", "main", "--", "tools"))
	if len(files) != agents*writes {
		t.Fatalf("%d of %d writes on the remote", len(files), agents*writes)
	}
	if got, want := gittest.Git(t, remote, "show", "main:"+DerivedFile), listing(t, remote, "main"); got != want {
		t.Fatalf("meta.json on the remote is not its tree's listing:\n%s\nwant\n%s", got, want)
	}
	fromTree, unwritten := 0, 0
	for _, w := range ws {
		unwritten += checkRootConsistent(t, w.a, w.h, remote)
		if w.h.worktreeOnly && w.h.fromTree != 0 {
			t.Fatal("a worktree hook was asked to derive from the tree")
		}
		fromTree += w.h.fromTree
	}
	if fromTree == 0 {
		t.Fatal("no replay derived meta.json from the merged tree (no contention?)")
	}
	if unwritten == 0 {
		t.Fatal("no root on disk left another agent's file unwritten")
	}
}

// TestStopAfterPushLosesNothing: a persist whose replay was pushed stops
// (the process dies) before the root took it, after the checkout, or
// after its branch moved. The change is on the remote once; a new process
// on the root finds the root consistent after Hydrate, at the remote's
// tip, with no empty or repeated commit, and persists again.
func TestStopAfterPushLosesNothing(t *testing.T) {
	gittest.RequireGit(t)
	for _, point := range []string{"pushed", "checked-out", "branch-moved"} {
		t.Run(point, func(t *testing.T) {
			remote := gittest.BareRemote(t)
			other := newAgent(t, remote, true)
			other.write(t, "tools/seed.ts", "export default 0;\n")
			h := &listHook{}
			a := newAgent(t, remote, false, WithHook(h))
			h.fs = a.fs
			other.write(t, "tools/other.ts", "export default 1;\n")
			a.repo.stopAt = func(p string) bool { return p == point }
			if err := a.fs.WriteFile("tools/mine.ts", []byte("export default 2;\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			h.record(t, "tools/mine.ts", "export default 2;\n")
			_, err := a.repo.Persist(context.Background(), Change{Paths: []string{"tools/mine.ts", DerivedFile}, Message: "forge: mine"})
			if !errors.Is(err, errStopped) {
				t.Fatalf("persist: %v", err)
			}
			if got := gittest.Git(t, remote, "show", "main:tools/mine.ts"); got != "export default 2;\n" {
				t.Fatalf("the change is not on the remote: %q", got)
			}
			_ = a.repo.Close()
			// A new process on the same root.
			h2 := &listHook{fs: a.fs}
			r2, err := Open(context.Background(), a.fs.Billy(), a.repo.cfg, WithHook(h2), WithLockFile(LockFilePath(a.fs.Root())))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r2.Hydrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			b := &agent{fs: a.fs, repo: r2}
			h2.mu.Lock()
			h2.rebuild(t)
			h2.mu.Unlock()
			tip := plumbing.NewHash(gittest.Git(t, remote, "rev-parse", "main"))
			if head, _ := r2.head(); head != tip {
				t.Fatalf("after boot HEAD is %s, the remote %s", short(head), short(tip))
			}
			checkRootConsistent(t, b, h2, remote)
			if got := gittest.Git(t, remote, "log", "--format=%s", "main"); got != "forge: mine\nforge: tools/other.ts\nforge: tools/seed.ts\n" {
				t.Fatalf("remote history:\n%s", got)
			}
			if err := a.fs.WriteFile("tools/next.ts", []byte("export default 3;\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			h2.record(t, "tools/next.ts", "export default 3;\n")
			if _, err := r2.Persist(context.Background(), Change{Paths: []string{"tools/next.ts", DerivedFile}, Message: "forge: next"}); err != nil {
				t.Fatal(err)
			}
			checkRootConsistent(t, b, h2, remote)
			if got, want := gittest.Git(t, remote, "show", "main:"+DerivedFile), listing(t, remote, "main"); got != want {
				t.Fatalf("meta.json on the remote:\n%s\nwant\n%s", got, want)
			}
			gittest.Git(t, remote, "fsck", "--strict")
		})
	}
}

// TestReplayOfTheLastDeletionCommitsTheEmptyTree: an agent deletes one of
// the two files while another deleted the other and pushed first; the
// replay's tree is empty, and its commit must name git's empty tree, not
// the zero hash (it did, and the remote took it: git fsck fails on it,
// and the next fetch of that commit failed to read tree 0000...).
func TestReplayOfTheLastDeletionCommitsTheEmptyTree(t *testing.T) {
	gittest.RequireGit(t)
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprint("deferred=", deferred), func(t *testing.T) {
			remote := gittest.BareRemote(t)
			other := newAgent(t, remote, true)
			other.write(t, "x.txt", "x\n")
			other.write(t, "y.txt", "y\n")
			a := newAgent(t, remote, false)
			a.repo.cfg.DeferReplays = deferred
			if err := other.fs.Remove("y.txt"); err != nil {
				t.Fatal(err)
			}
			if _, err := other.repo.Persist(context.Background(), Change{Paths: []string{"y.txt"}, Message: "rm y"}); err != nil {
				t.Fatal(err)
			}
			if err := a.fs.Remove("x.txt"); err != nil {
				t.Fatal(err)
			}
			res, err := a.repo.Persist(context.Background(), Change{Paths: []string{"x.txt"}, Message: "rm x"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Replayed {
				t.Fatal("no replay")
			}
			gittest.Git(t, remote, "fsck", "--strict")
			if tree := gittest.Git(t, remote, "rev-parse", "main^{tree}"); tree != "4b825dc642cb6eb9a060e54bf8d69288fbee4904\n" {
				t.Fatalf("the remote's tree is %s, want git's empty tree", tree)
			}
			// The next writer reads that commit.
			other.write(t, "z.txt", "z\n")
			a.write(t, "w.txt", "w\n")
			if err := a.repo.Settle(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := gittest.Git(t, remote, "ls-tree", "--name-only", "main"); got != "w.txt\nz.txt\n" {
				t.Fatalf("remote tree:\n%s", got)
			}
			gittest.Git(t, remote, "fsck", "--strict")
			gittest.Git(t, a.fs.Root(), "fsck", "--strict")
		})
	}
}
