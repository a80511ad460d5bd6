package gitbackend

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

// TestCrashBeforePushIsRepairedAtBoot: a process committed but died before
// its push was accepted; the next Hydrate on that root pushes the commit.
func TestCrashBeforePushIsRepairedAtBoot(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	root := t.TempDir()
	f, _ := vfs.NewOS(root)
	cfg := Config{Remote: remote, Branch: "main", Author: Identity{"A", "a@example.com"}}
	r, err := Open(context.Background(), f.Billy(), cfg, WithLockFile(LockFilePath(root)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Another agent moves the remote meanwhile.
	other := newAgent(t, remote, true)
	other.write(t, "b.txt", "b\n")
	// The "crashed" persist: committed locally, never pushed.
	_ = f.WriteFile("c.txt", []byte("c\n"), 0o644)
	if _, _, err := r.commitPaths(context.Background(), "main", mustHead(t, r), Change{Paths: []string{"c.txt"}, Message: "forge: c.txt"}); err != nil {
		t.Fatal(err)
	}
	// A stale lock file left by the dead process must not block the next boot.
	_ = os.WriteFile(LockFilePath(root), nil, 0o644)
	r2, err := Open(context.Background(), f.Billy(), cfg, WithLockFile(LockFilePath(root)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r2.Hydrate(context.Background())
	if err != nil || res.Pushed != 1 {
		t.Fatalf("repair: %+v %v", res, err)
	}
	clone := gittest.Clone(t, remote)
	for _, p := range []string{"a.txt", "b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(clone, p)); err != nil {
			t.Fatalf("%s missing after repair: %v", p, err)
		}
	}
}

func mustHead(t *testing.T, r *Repo) plumbing.Hash {
	t.Helper()
	head, err := r.head()
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// TestMultiProcessWriters re-executes this test binary as several OS
// processes, each with its own root, all pushing to one local remote: the
// ref lock must hold across processes so no commit is lost.
func TestMultiProcessWriters(t *testing.T) {
	if os.Getenv("TGP_WRITER_REMOTE") != "" {
		writerProcess(t)
		return
	}
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "x\n"})
	const procs, writes = 4, 5
	var cmds []*exec.Cmd
	for i := 0; i < procs; i++ {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMultiProcessWriters$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TGP_WRITER_REMOTE="+remote, fmt.Sprintf("TGP_WRITER_ID=%d", i),
			fmt.Sprintf("TGP_WRITER_N=%d", writes), "TGP_WRITER_ROOT="+t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	clone := gittest.Clone(t, remote)
	if n := strings.Count(gittest.Git(t, clone, "log", "--format=%s"), "forge: "); n != procs*writes {
		t.Fatalf("%d commits on the remote, want %d", n, procs*writes)
	}
	for i := 0; i < procs; i++ {
		for j := 0; j < writes; j++ {
			if _, err := os.Stat(filepath.Join(clone, fmt.Sprintf("p%d/w%d.txt", i, j))); err != nil {
				t.Fatalf("lost write p%d/w%d: %v", i, j, err)
			}
		}
	}
}

func writerProcess(t *testing.T) {
	var id, n int
	fmt.Sscan(os.Getenv("TGP_WRITER_ID"), &id)
	fmt.Sscan(os.Getenv("TGP_WRITER_N"), &n)
	f, err := vfs.NewOS(os.Getenv("TGP_WRITER_ROOT"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), f.Billy(), Config{Remote: os.Getenv("TGP_WRITER_REMOTE"), Branch: "main",
		Author: Identity{"P", "p@example.com"}, Retry: RetryConfig{MaxAttempts: 20, BaseDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < n; j++ {
		p := fmt.Sprintf("p%d/w%d.txt", id, j)
		_ = f.WriteFile(p, []byte(p), 0o644)
		if _, err := r.Persist(context.Background(), Change{Paths: []string{p}, Message: "forge: " + p}); err != nil {
			t.Fatal(err)
		}
	}
}
