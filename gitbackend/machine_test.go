package gitbackend

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

// machineAgent is a root on disk whose pushes go through the machine
// queue in lockDir.
func machineAgent(t *testing.T, remote, lockDir string) *agent {
	t.Helper()
	return machineAgentWith(t, remote, lockDir, RetryConfig{BaseDelay: 2 * time.Millisecond})
}

// machineAgentWith is machineAgent with its retry settings.
func machineAgentWith(t *testing.T, remote, lockDir string, retry RetryConfig) *agent {
	t.Helper()
	return agentWithConfig(t, Config{Remote: remote, Branch: "main", LockDir: lockDir,
		Author: Identity{Name: "Agent", Email: "agent@example.com"}, CarryKey: testCarryKey, Retry: retry})
}

// agentWithConfig is a root on disk with its lock file, opened with cfg
// and hydrated.
func agentWithConfig(t *testing.T, cfg Config) *agent {
	t.Helper()
	f, err := vfs.NewOS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), f.Billy(), cfg, WithLockFile(LockFilePath(f.Root())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &agent{fs: f, repo: r}
}

// TestMachineQueueBatchesTheRootsOfAMachine: roots of two simulated
// machines write at once to one smart-HTTP remote. Every change lands once,
// history stays linear, the remote receives fewer pushes than there are
// commits (the roots of a machine push each other's commits), each root
// ends with every change of its batch, and git fsck accepts the result.
func TestMachineQueueBatchesTheRootsOfAMachine(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	const machines, perMachine, writes = 2, 4, 3
	var agents []*agent
	for m := 0; m < machines; m++ {
		locks := t.TempDir()
		for a := 0; a < perMachine; a++ {
			agents = append(agents, machineAgent(t, srv.URL(filepath.Base(bare)), locks))
		}
	}
	before := srv.ReceivePacks.Load()
	var wg sync.WaitGroup
	errs := make(chan error, len(agents)*writes)
	for i, ag := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := 0; w < writes; w++ {
				p := fmt.Sprintf("tools/a%d/w%d.ts", i, w)
				if err := ag.fs.WriteFile(p, []byte(p+"\n"), 0o644); err != nil {
					errs <- err
					return
				}
				if _, err := ag.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: "forge: " + p}); err != nil {
					errs <- fmt.Errorf("agent %d write %d: %w", i, w, err)
				}
				if _, err := ag.fs.ReadFile(p); err != nil {
					errs <- fmt.Errorf("agent %d lost its own file %s after the push: %w", i, p, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	files := strings.Fields(gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main"))
	if len(files) != len(agents)*writes+1 {
		t.Fatalf("%d files on the remote, want %d", len(files), len(agents)*writes)
	}
	if n := len(strings.Fields(gittest.Git(t, bare, "rev-list", "main"))); n != len(agents)*writes+1 {
		t.Fatalf("%d commits on the remote, want one per change and the seed (%d):\n%s", n, len(agents)*writes+1, gittest.Git(t, bare, "log", "--format=%h %p %s", "--name-status", "--no-renames", "main"))
	}
	if merges := gittest.Git(t, bare, "rev-list", "--merges", "main"); merges != "" {
		t.Fatalf("history is not linear: %s", merges)
	}
	added := map[string]int{}
	for _, l := range strings.Split(gittest.Git(t, bare, "log", "--format=", "--name-status", "--no-renames", "main"), "\n") {
		if st, p, ok := strings.Cut(l, "\t"); ok {
			if st != "A" {
				t.Errorf("history %s %s: a change undone by another's push", st, p)
			}
			if added[p]++; added[p] > 1 {
				t.Errorf("%s added twice: a change pushed twice", p)
			}
		}
	}
	pushes := srv.ReceivePacks.Load() - before
	if pushes >= int32(len(agents)*writes) {
		t.Errorf("%d pushes for %d commits: the roots of a machine did not push each other's commits", pushes, len(agents)*writes)
	}
	t.Logf("%d commits in %d pushes", len(agents)*writes, pushes)
	gittest.Git(t, bare, "fsck", "--strict")
}

// TestMachineQueuePushesWhatAnotherRootLeft: a ticket whose owner stopped
// waiting (its commits committed in its root, queued) is pushed by the
// next root of the machine that pushes: nothing is left behind.
func TestMachineQueuePushesWhatAnotherRootLeft(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	locks := t.TempDir()
	a, b := machineAgent(t, srv.URL(filepath.Base(bare)), locks), machineAgent(t, srv.URL(filepath.Base(bare)), locks)
	// a holds the machine's turn while b persists with a deadline that
	// ends first: b's commit stays queued.
	q := machineQueueFor(locks, srv.URL(filepath.Base(bare)), "main")
	if err := q.submit(&ticket{ID: "0-hold", Branch: "other"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := q.lock.TryLock(); err != nil || !ok {
		t.Fatalf("take the machine's turn: %v", err)
	}
	if err := b.fs.WriteFile("tools/b.ts", []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := b.repo.Persist(ctx, Change{Paths: []string{"tools/b.ts"}, Message: "forge: tools/b.ts"})
	cancel()
	if err == nil || !strings.Contains(err.Error(), "forge: tools/b.ts") {
		t.Fatalf("b's persist with the turn held elsewhere: %v", err)
	}
	q.unlock()
	a.write(t, "tools/a.ts", "a\n")
	files := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
	if !strings.Contains(files, "tools/b.ts") || !strings.Contains(files, "tools/a.ts") {
		t.Fatalf("the remote lacks a queued change:\n%s", files)
	}
}

// A machine that just pushed leaves a gap of about one losing attempt
// (two to three push durations) whether or not it saw contention: the
// winner of a race needs no fetch, so without the gap it wins every
// race after it (the capture effect). Contention widens the gap to about
// a round of the machines contending.
func TestPoliteWaitLeavesAGapAfterEveryPush(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	push := 100 * time.Millisecond
	var nilTip *machineTip
	if w := nilTip.politeWait(now); w != 0 {
		t.Fatalf("no push from this machine yet: wait %v, want 0", w)
	}
	for i := 0; i < 200; i++ {
		fresh := &machineTip{PushedAt: now.UnixNano(), PushNanos: int64(push), Attempts: 1}
		if w := fresh.politeWait(now); w < 2*push || w > 3*push {
			t.Fatalf("uncontended, just pushed: wait %v, want within [%v, %v]", w, 2*push, 3*push)
		}
		contended := &machineTip{PushedAt: now.UnixNano(), PushNanos: int64(push), Attempts: 8,
			ContendedAt: now.Add(-time.Minute).UnixNano()}
		// No retry cycle measured yet: a cycle is taken as 2.5 pushes, and
		// round = 8 cycles: at least half a round, at most one and a half.
		if w := contended.politeWait(now); w < 10*push || w > 30*push {
			t.Fatalf("8 machines contending: wait %v, want within [%v, %v]", w, 10*push, 30*push)
		}
		// A measured cycle (fetch, replay, push) is the unit of the round.
		cycled := *contended
		cycled.CycleNanos = int64(4 * push)
		if w := cycled.politeWait(now); w < 16*push || w > 48*push {
			t.Fatalf("8 machines contending, 4-push cycles: wait %v, want within [%v, %v]", w, 16*push, 48*push)
		}
		stale := &machineTip{PushedAt: now.UnixNano(), PushNanos: int64(push), Attempts: 8,
			ContendedAt: now.Add(-3 * time.Minute).UnixNano()}
		if w := stale.politeWait(now); w > 3*push {
			t.Fatalf("contention 3 minutes ago: wait %v, want the uncontended gap (<= %v)", w, 3*push)
		}
	}
	old := &machineTip{PushedAt: now.Add(-time.Second).UnixNano(), PushNanos: int64(push), Attempts: 1}
	if w := old.politeWait(now); w != 0 {
		t.Fatalf("last push a second ago (gap is at most %v): wait %v, want 0", 3*push, w)
	}
}

// TestContendedMachineFetchesBeforeItsFirstAttempt: while other machines
// contend, the tip a machine last pushed is stale by the time it pushes
// again, so its first attempt fetches (and lands); a machine that saw no
// contention pushes on the tip it knows, and finds out from the refusal.
func TestContendedMachineFetchesBeforeItsFirstAttempt(t *testing.T) {
	for _, contended := range []bool{true, false} {
		t.Run(fmt.Sprintf("contended=%v", contended), func(t *testing.T) {
			bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
			srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
			url := srv.URL(filepath.Base(bare))
			locks := t.TempDir()
			a := machineAgent(t, url, locks)
			a.write(t, "tools/a1.ts", "a1\n")
			other := filepath.Join(t.TempDir(), "other")
			gittest.Git(t, "", "clone", "-q", bare, other)
			gittest.Git(t, other, "-c", "user.name=O", "-c", "user.email=o@example.com", "commit", "-q", "--allow-empty", "-m", "other machine")
			gittest.Git(t, other, "push", "-q", "origin", "HEAD:main")
			// The machine's last push was a minute ago (no hold left).
			q := machineQueueFor(locks, url, "main")
			mt := q.readTip()
			if mt == nil {
				t.Fatal("no tip file after a push through the machine queue")
			}
			now := time.Now()
			mt.PushedAt = now.Add(-time.Minute).UnixNano()
			mt.ContendedAt = 0
			if contended {
				mt.ContendedAt = now.Add(-30 * time.Second).UnixNano()
			}
			q.writeTip(*mt)
			res := a.write(t, "tools/a2.ts", "a2\n")
			want := 2
			if contended {
				want = 1
			}
			if res.Attempts != want {
				t.Fatalf("attempts %d, want %d", res.Attempts, want)
			}
			files := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
			if !strings.Contains(files, "tools/a2.ts") || !strings.Contains(files, "tools/a1.ts") {
				t.Fatalf("the remote lacks a change:\n%s", files)
			}
		})
	}
}
