package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

type agent struct {
	fs   *vfs.FS
	repo *Repo
}

func newAgent(t testing.TB, remote string, memory bool, opts ...Option) *agent {
	t.Helper()
	var f *vfs.FS
	if memory {
		f = vfs.NewMemory()
	} else {
		var err error
		if f, err = vfs.NewOS(t.TempDir()); err != nil {
			t.Fatal(err)
		}
		opts = append(opts, WithLockFile(LockFilePath(f.Root())))
	}
	r, err := Open(context.Background(), f.Billy(), Config{Remote: remote, Branch: "main",
		Author: Identity{Name: "Agent", Email: "agent@example.com"}, CarryKey: testCarryKey,
		Retry: RetryConfig{MaxAttempts: 50, BaseDelay: 2 * time.Millisecond}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &agent{fs: f, repo: r}
}

func (a *agent) write(t testing.TB, p, content string) *PersistResult {
	t.Helper()
	if err := a.fs.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := a.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: "forge: " + p})
	if err != nil {
		t.Fatalf("persist %s: %v", p, err)
	}
	return res
}

func TestHydrateFromCLIRemoteAndPersistVisibleInClone(t *testing.T) {
	for _, memory := range []bool{false, true} {
		t.Run(fmt.Sprintf("memory=%v", memory), func(t *testing.T) {
			remote := gittest.SeedRemote(t, map[string]string{"tools/hello.ts": "/** Hi. */\nexport default () => 'hi';\n", "README.md": "r\n"})
			a := newAgent(t, remote, memory)
			b, err := a.fs.ReadFile("tools/hello.ts")
			if err != nil || !strings.Contains(string(b), "'hi'") {
				t.Fatalf("hydrated content: %q %v", b, err)
			}
			res := a.write(t, "tools/new.ts", "export default 1;\n")
			if res.Commit == "" || res.Attempts != 1 {
				t.Fatalf("result %+v", res)
			}
			clone := gittest.Clone(t, remote)
			got, err := os.ReadFile(filepath.Join(clone, "tools/new.ts"))
			if err != nil || string(got) != "export default 1;\n" {
				t.Fatalf("clone content %q %v", got, err)
			}
			if log := gittest.Git(t, clone, "log", "--format=%s|%an"); !strings.HasPrefix(log, "forge: tools/new.ts|Agent\nseed|Test") {
				t.Fatalf("log:\n%s", log)
			}
			gittest.Git(t, remote, "fsck", "--strict")
			if !memory {
				gittest.Git(t, a.fs.Root(), "fsck", "--strict")
				if st := gittest.Git(t, a.fs.Root(), "status", "--porcelain"); st != "" {
					t.Fatalf("git status in the root is not clean:\n%s", st)
				}
			}
			// Delete is persisted too.
			if err := a.fs.Remove("README.md"); err != nil {
				t.Fatal(err)
			}
			if _, err := a.repo.Persist(context.Background(), Change{Paths: []string{"README.md"}, Message: "forge: delete README.md"}); err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, clone, "pull", "-q")
			if _, err := os.Stat(filepath.Join(clone, "README.md")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("delete not on remote: %v", err)
			}
		})
	}
}

func TestSecondAgentSeesFirstAgentsTool(t *testing.T) {
	remote := gittest.BareRemote(t)
	a := newAgent(t, remote, false)
	a.write(t, "tools/a.ts", "export default 'a';\n")
	b := newAgent(t, remote, true)
	if got, err := b.fs.ReadFile("tools/a.ts"); err != nil || string(got) != "export default 'a';\n" {
		t.Fatalf("b does not see a's tool: %q %v", got, err)
	}
	a.write(t, "tools/a2.ts", "export default 'a2';\n")
	res, err := b.repo.Hydrate(context.Background())
	if err != nil || res.Action != "fetched" {
		t.Fatalf("pull: %+v %v", res, err)
	}
	if _, err := b.fs.ReadFile("tools/a2.ts"); err != nil {
		t.Fatal(err)
	}
}

// runAgents has k agents each persist n distinct files concurrently and
// checks every file and commit is on the remote.
func runAgents(t *testing.T, remote, gitdir string, k, n int, memory bool) {
	agents := make([]*agent, k)
	for i := range agents {
		agents[i] = newAgent(t, remote, memory && i%2 == 0)
	}
	var wg sync.WaitGroup
	errs := make(chan error, k*n)
	for i, a := range agents {
		wg.Add(1)
		go func(i int, a *agent) {
			defer wg.Done()
			for j := 0; j < n; j++ {
				p := fmt.Sprintf("tools/agent%d/tool%d.ts", i, j)
				if err := a.fs.WriteFile(p, []byte(fmt.Sprintf("export default %d;\n", i*1000+j)), 0o644); err != nil {
					errs <- err
					return
				}
				if _, err := a.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: "forge: " + p}); err != nil {
					errs <- fmt.Errorf("agent %d write %d: %w", i, j, err)
				}
			}
		}(i, a)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	clone := gittest.Clone(t, remote)
	for i := 0; i < k; i++ {
		for j := 0; j < n; j++ {
			p := filepath.Join(clone, fmt.Sprintf("tools/agent%d/tool%d.ts", i, j))
			if b, err := os.ReadFile(p); err != nil || string(b) != fmt.Sprintf("export default %d;\n", i*1000+j) {
				t.Errorf("lost write %s: %q %v", p, b, err)
			}
		}
	}
	count := strings.Count(gittest.Git(t, clone, "log", "--format=%s"), "forge: ")
	if count != k*n {
		t.Errorf("history has %d forge commits, want %d", count, k*n)
	}
	gittest.Git(t, gitdir, "fsck", "--strict")
}

func TestMultiAgentLocal(t *testing.T) {
	for _, k := range []int{2, 4, 8, 16} {
		t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) {
			r := gittest.SeedRemote(t, map[string]string{"README.md": "x\n"})
			runAgents(t, r, r, k, 10, true)
		})
	}
	t.Run("K=8 empty remote", func(t *testing.T) {
		r := gittest.BareRemote(t)
		runAgents(t, r, r, 8, 10, true)
	})
}

func TestMultiAgentHTTP(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "tools.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", remote)
	gittest.Git(t, remote, "config", "http.receivepack", "true")
	srv := gittest.NewHTTPServer(t, root, "")
	runAgents(t, srv.URL("tools.git"), remote, 8, 3, false)
}

func TestSameFileDifferentFunctionsMerge(t *testing.T) {
	base := "export function a() {\n  return 1;\n}\n\nexport function b() {\n  return 2;\n}\n"
	remote := gittest.SeedRemote(t, map[string]string{"tools/lib.ts": base})
	x, y := newAgent(t, remote, false), newAgent(t, remote, true)
	x.write(t, "tools/lib.ts", strings.Replace(base, "return 1", "return 10", 1))
	res := y.write(t, "tools/lib.ts", strings.Replace(base, "return 2", "return 20", 1))
	if !res.Replayed {
		t.Fatalf("expected a replay: %+v", res)
	}
	want := strings.Replace(strings.Replace(base, "return 1", "return 10", 1), "return 2", "return 20", 1)
	got, _ := y.fs.ReadFile("tools/lib.ts")
	if string(got) != want {
		t.Fatalf("merged worktree:\n%s", got)
	}
	clone := gittest.Clone(t, remote)
	if b, _ := os.ReadFile(filepath.Join(clone, "tools/lib.ts")); string(b) != want {
		t.Fatalf("remote:\n%s", b)
	}
}

func TestSameLineConflictKeepsBothVersions(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/rate.ts": "export const rate = 1;\n"})
	x, y := newAgent(t, remote, false), newAgent(t, remote, false)
	x.write(t, "tools/rate.ts", "export const rate = 2;\n")
	if err := y.fs.WriteFile("tools/rate.ts", []byte("export const rate = 3;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := y.repo.Persist(context.Background(), Change{Paths: []string{"tools/rate.ts"}, Message: "forge: rate 3"})
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) || !ce.Pushed || ce.Paths[0] != "tools/rate.ts" {
		t.Fatalf("want pushed conflict, got %v", err)
	}
	if !strings.HasPrefix(ce.Branch, "tgp/conflict/") {
		t.Fatalf("branch %q", ce.Branch)
	}
	show := gittest.Git(t, remote, "show", ce.Branch+":tools/rate.ts")
	if show != "export const rate = 3;\n" {
		t.Fatalf("agent's version not on the conflict branch: %q", show)
	}
	if main := gittest.Git(t, remote, "show", "main:tools/rate.ts"); main != "export const rate = 2;\n" {
		t.Fatalf("main: %q", main)
	}
	if got, _ := y.fs.ReadFile("tools/rate.ts"); string(got) != "export const rate = 2;\n" {
		t.Fatalf("y's root not reset to the remote: %q", got)
	}
	if st := gittest.Git(t, y.fs.Root(), "status", "--porcelain"); st != "" {
		t.Fatalf("root not clean after conflict:\n%s", st)
	}
	// y can go on working.
	y.write(t, "tools/other.ts", "export default 0;\n")
}

func TestTransientHTTPFailureRetried(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "r.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", remote)
	gittest.Git(t, remote, "config", "http.receivepack", "true")
	srv := gittest.NewHTTPServer(t, root, "s3cret")
	a := &agent{}
	f, _ := vfs.NewOS(t.TempDir())
	r, err := Open(context.Background(), f.Billy(), Config{Remote: srv.URL("r.git"), Branch: "main", Token: "s3cret",
		Author: Identity{"A", "a@example.com"}, Retry: RetryConfig{MaxAttempts: 6, BaseDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	a.fs, a.repo = f, r
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.FailReceivePacks.Store(2)
	res := a.write(t, "tools/x.ts", "x\n")
	if res.Attempts != 3 || srv.ReceivePacks.Load() != 1 {
		t.Fatalf("attempts %d, receive-packs reaching git %d", res.Attempts, srv.ReceivePacks.Load())
	}
	if got := gittest.Git(t, remote, "show", "main:tools/x.ts"); got != "x\n" {
		t.Fatalf("remote %q", got)
	}
	// Wrong token: a clear auth error, no retry storm.
	f2, _ := vfs.NewOS(t.TempDir())
	r2, _ := Open(context.Background(), f2.Billy(), Config{Remote: srv.URL("r.git"), Token: "wrong", Author: Identity{"A", "a@example.com"}})
	if _, err := r2.Hydrate(context.Background()); !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("want ErrAuth without the token in it, got %v", err)
	}
}

func TestGitDaemonRemote(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "d.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", remote)
	base := gittest.Daemon(t, root)
	a := newAgent(t, base+"/d.git", true)
	a.write(t, "tools/d.ts", "d\n")
	b := newAgent(t, base+"/d.git", false)
	if got, err := b.fs.ReadFile("tools/d.ts"); err != nil || string(got) != "d\n" {
		t.Fatalf("%q %v", got, err)
	}
}

func TestNoGitBinaryNeeded(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/a.ts": "a\n"})
	t.Setenv("PATH", t.TempDir())
	a := newAgent(t, "file://"+remote, true)
	a.write(t, "tools/b.ts", "b\n")
	b := newAgent(t, remote, false)
	if got, _ := b.fs.ReadFile("tools/b.ts"); string(got) != "b\n" {
		t.Fatalf("%q", got)
	}
}

func TestRemoteBranchDeletedAndForcePushed(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	x := newAgent(t, remote, false)
	x.write(t, "b.txt", "b\n")
	// Someone force-pushes an unrelated history.
	other := filepath.Join(t.TempDir(), "other")
	gittest.Git(t, "", "init", "-q", "-b", "main", other)
	if err := os.WriteFile(filepath.Join(other, "c.txt"), []byte("c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, other, "add", "-A")
	gittest.Git(t, other, "commit", "-q", "-m", "rewrite")
	gittest.Git(t, other, "push", "-q", "-f", remote, "main")
	x.write(t, "d.txt", "d\n")
	clone := gittest.Clone(t, remote)
	for _, f := range []string{"c.txt", "d.txt"} {
		if _, err := os.Stat(filepath.Join(clone, f)); err != nil {
			t.Fatalf("%s missing after force-push replay: %v", f, err)
		}
	}
	// The branch is deleted: the next persist recreates it.
	gittest.Git(t, remote, "update-ref", "-d", "refs/heads/main")
	x.write(t, "e.txt", "e\n")
	if got := gittest.Git(t, remote, "show", "main:e.txt"); got != "e\n" {
		t.Fatalf("%q", got)
	}
}

// TestIdentityResolvedAsGitDoes: with nothing configured the commit is
// the bot's; the global git config (HOME) is read; GIT_COMMITTER_* names
// the committer apart from the author; user.useConfigOnly refuses.
func TestIdentityResolvedAsGitDoes(t *testing.T) {
	remote := gittest.BareRemote(t)
	f := vfs.NewMemory()
	home := t.TempDir()
	base := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
	r, err := Open(context.Background(), f.Billy(), Config{Remote: remote, Environ: base})
	if err != nil {
		t.Fatal(err)
	}
	step := 0
	persist := func(env []string) error {
		step++
		r.cfg.Environ = env
		_ = f.WriteFile("x", []byte(fmt.Sprint(step)), 0o644)
		_, err := r.Persist(context.Background(), Change{Paths: []string{"x"}})
		return err
	}
	last := func() string { return gittest.Git(t, remote, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "main") }
	if err := persist(base); err != nil {
		t.Fatal(err)
	}
	if got := last(); got != "tgp-bot[bot] <tgp-bot@users.noreply.github.com>|tgp-bot[bot] <tgp-bot@users.noreply.github.com>\n" {
		t.Fatalf("no identity: %q", got)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Global User\n\temail = global@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := persist(base); err != nil {
		t.Fatal(err)
	}
	if got := last(); got != "Global User <global@example.com>|Global User <global@example.com>\n" {
		t.Fatalf("global config: %q", got)
	}
	if err := persist(append(base, "GIT_COMMITTER_NAME=Env C", "GIT_COMMITTER_EMAIL=c@example.com")); err != nil {
		t.Fatal(err)
	}
	if got := last(); got != "Global User <global@example.com>|Env C <c@example.com>\n" {
		t.Fatalf("committer env: %q", got)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tuseConfigOnly = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := persist(base); !errors.Is(err, ErrNoIdentity) || !strings.Contains(err.Error(), "useConfigOnly") {
		t.Fatalf("useConfigOnly: %v", err)
	}
	// The refused commit left no half-state: the index still has HEAD's x.
	idx, err := r.repo.Storer.Index()
	if err != nil {
		t.Fatal(err)
	}
	e, err := idx.Entry("x")
	if err != nil {
		t.Fatal(err)
	}
	head, _ := r.repo.Head()
	c, _ := r.repo.CommitObject(head.Hash())
	hf, err := c.File("x")
	if err != nil || hf.Hash != e.Hash {
		t.Fatalf("index has %s for x, HEAD %v (%v): a refused commit staged the change", e.Hash, hf, err)
	}
}
