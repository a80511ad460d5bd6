package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

// unwindRoot is a root on disk with h as its hook, pushing to url with a
// short retry budget.
func unwindRoot(t *testing.T, dir, url string, h *listHook) *agent {
	t.Helper()
	f, err := vfs.NewOS(dir)
	if err != nil {
		t.Fatal(err)
	}
	h.fs = f
	var opt Option = WithHook(h)
	if h.worktreeOnly {
		opt = WithHook(worktreeHook{h})
	}
	r, err := Open(context.Background(), f.Billy(), Config{Remote: url, Branch: "main",
		Author: Identity{Name: "Agent", Email: "agent@example.com"}, CarryKey: testCarryKey,
		Retry: RetryConfig{BaseDelay: 2 * time.Millisecond, Deadline: time.Minute}},
		opt, WithLockFile(LockFilePath(f.Root())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return &agent{fs: f, repo: r}
}

// checkRootAtHead fails unless the root is exactly its HEAD: git status
// finds nothing, nothing of want is absent or extra on disk, meta.json is
// HEAD's and the hook's state is HEAD's listing.
func checkRootAtHead(t *testing.T, a *agent, h *listHook, mustLack ...string) {
	t.Helper()
	root := a.fs.Root()
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("the root is not at its HEAD after the push gave up:\n%s", st)
	}
	for _, p := range mustLack {
		if _, err := a.fs.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s (the remote's, not in HEAD) is in the root: %v", p, err)
		}
	}
	if meta, want := rootFile(t, a, DerivedFile), gittest.Git(t, root, "show", "HEAD:"+DerivedFile); strings.TrimSpace(meta) != strings.TrimSpace(want) {
		t.Fatalf("meta.json is not HEAD's:\n%s\nHEAD:\n%s", meta, want)
	}
	h.mu.Lock()
	state := string(h.marshal())
	h.mu.Unlock()
	if want := listing(t, root, "HEAD"); strings.TrimSpace(state) != strings.TrimSpace(want) {
		t.Fatalf("the hook's state is not HEAD's listing:\n%s\nwant:\n%s", state, want)
	}
}

func rootFile(t *testing.T, a *agent, p string) string {
	t.Helper()
	b, err := a.fs.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAbandonedReplayLeavesTheRootAtItsHead: a root whose push gives up
// (the remote refuses every push until the budget ends) after replaying
// its commit on another writer's is left exactly at its own commit, its
// worktree, index, meta.json and hook's state, whichever way the hook
// derives meta.json (from the merged tree, from the worktree, or from the
// worktree because its state was not built yet, as at a boot). Its next
// write then carries only its own change: nothing of the other writer's
// is deleted on the remote, and meta.json lists every tool.
func TestAbandonedReplayLeavesTheRootAtItsHead(t *testing.T) {
	for _, kind := range []string{"tree", "worktree", "boot"} {
		t.Run(kind, func(t *testing.T) {
			bare := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
			srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
			url := srv.URL(filepath.Base(bare))
			other := newAgent(t, url, false)

			dir := t.TempDir()
			h := &listHook{worktreeOnly: kind == "worktree"}
			a := unwindRoot(t, dir, url, h)
			if _, err := a.repo.Hydrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			write := func(a *agent, h *listHook, p string) error {
				content := fmt.Sprintf("export default %q;\n", p)
				if err := a.fs.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := a.fs.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				h.record(t, p, content)
				_, err := a.repo.Persist(context.Background(), Change{Paths: []string{p, DerivedFile}, Message: "forge: " + p})
				return err
			}
			// The first commit goes out; then another writer moves the
			// remote, and every push is refused for a while.
			if err := write(a, h, "tools/a0.ts"); err != nil {
				t.Fatal(err)
			}
			other.write(t, "tools/other.ts", "export default 'other';\n")
			// The budget is short only while the remote refuses: a push
			// that succeeds on a loaded machine may take longer.
			refuse := func(on bool) {
				a.repo.cfg.Retry.Deadline = time.Minute
				srv.FailReceivePacks.Store(0)
				if on {
					a.repo.cfg.Retry.Deadline = time.Second
					srv.FailReceivePacks.Store(1 << 20)
				}
			}
			refuse(true)
			if err := write(a, h, "tools/a1.ts"); !errors.Is(err, ErrPending) {
				t.Fatalf("persist with every push refused: %v, want ErrPending", err)
			}
			if kind == "boot" {
				// A new process on the root: its hook has no state yet,
				// and the boot's push of the pending commit gives up.
				a.repo.Close()
				h = &listHook{}
				a = unwindRoot(t, dir, url, h)
				refuse(false)
				other.write(t, "tools/other2.ts", "export default 'other2';\n")
				refuse(true)
				res, err := a.repo.Hydrate(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Pending) != 1 {
					t.Fatalf("boot with every push refused: pending %v, want the one commit", res.Pending)
				}
				if h.rebuilt == 0 {
					t.Fatal("the boot's replay did not regenerate from the worktree: the case is not tested")
				}
			}
			checkRootAtHead(t, a, h, "tools/other.ts", "tools/other2.ts")

			refuse(false)
			if err := write(a, h, "tools/a2.ts"); err != nil {
				t.Fatal(err)
			}
			want := []string{"tools/a0.ts", "tools/a1.ts", "tools/a2.ts", "tools/other.ts"}
			if kind == "boot" {
				want = append(want, "tools/other2.ts")
			}
			if got := strings.Fields(gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main", "tools")); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("tools on the remote: %v, want %v", got, want)
			}
			if meta, want := gittest.Git(t, bare, "show", "main:"+DerivedFile), listing(t, bare, "main"); strings.TrimSpace(meta) != strings.TrimSpace(want) {
				t.Fatalf("meta.json on the remote:\n%s\nwant:\n%s", meta, want)
			}
			checkRootConsistent(t, a, h, bare)
		})
	}
}
