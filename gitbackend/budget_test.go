package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestRateBudgetKeepsEveryWindow drives budgets with a seeded generator:
// several processes of one machine (budgets sharing one log file) and
// one in process, asking at random times on a fake clock. The oracle is
// the definition: no window of the budget's length holds more than n
// admitted starts, no two are closer than window/n (paced), and a caller
// told to wait d is admitted after d.
func TestRateBudgetKeepsEveryWindow(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(6)
		window := time.Duration(1+rng.IntN(60)) * time.Second
		clock := time.Unix(1_700_000_000, 0)
		now := func() time.Time { return clock }
		dir := t.TempDir()
		shared := rng.IntN(2) == 0
		var budgets []*rateBudget
		for p := 0; p < 1+rng.IntN(4); p++ {
			lockDir := ""
			if shared {
				lockDir = dir
			}
			b := newRateBudget(n, window, lockDir, "https://github.com/o/r.git", "push")
			b.now = now
			budgets = append(budgets, b)
		}
		if !shared {
			budgets = budgets[:1]
		}
		var admitted []time.Time
		for step := 0; step < 200; step++ {
			clock = clock.Add(time.Duration(rng.Int64N(int64(window) / int64(n) * 2)))
			b := budgets[rng.IntN(len(budgets))]
			d, err := b.try(true)
			if err != nil {
				t.Fatal(err)
			}
			if d == 0 {
				admitted = append(admitted, clock)
				continue
			}
			clock = clock.Add(d)
			if d2, err := b.try(true); err != nil || d2 != 0 {
				t.Fatalf("seed %d: told to wait %v, then refused again (%v, %v)", seed, d, d2, err)
			}
			admitted = append(admitted, clock)
		}
		for i := 1; i < len(admitted); i++ {
			if gap := admitted[i].Sub(admitted[i-1]); gap < window/time.Duration(n) {
				t.Fatalf("seed %d: starts %v apart, paced at %v", seed, gap, window/time.Duration(n))
			}
		}
		for i := range admitted {
			in := 0
			for j := i; j < len(admitted) && admitted[j].Sub(admitted[i]) < window; j++ {
				in++
			}
			if in > n {
				t.Fatalf("seed %d: %d starts within %v from %v, budget %d", seed, in, window, admitted[i], n)
			}
		}
	}
}

// TestRateBudgetLogIsUntrusted: a line in the future counts as now (a
// forged or skewed log delays pushes by one window at most), garbage is
// skipped.
func TestRateBudgetLogIsUntrusted(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	data := fmt.Sprintf("x\n%d\n-5\n%d\n\n", now.Add(100*365*24*time.Hour).UnixNano(), now.Add(-time.Second).UnixNano())
	got := parseStarts([]byte(data), now)
	if len(got) != 2 || !got[0].Equal(now.Add(-time.Second)) || !got[1].Equal(now) {
		t.Fatalf("parsed %v", got)
	}
}

// budgetAgent is a root of a machine (lockDir) with a push budget.
func budgetAgent(t *testing.T, remote, lockDir string, perWindow int, window time.Duration) *agent {
	t.Helper()
	return agentWithConfig(t, Config{Remote: remote, Branch: "main", LockDir: lockDir,
		PushesPerMinute: perWindow, BudgetWindow: window, ReadsPerSecond: 15,
		Author: Identity{Name: "Agent", Email: "agent@example.com"},
		Retry:  RetryConfig{BaseDelay: 2 * time.Millisecond, Deadline: time.Minute}})
}

// TestPushBudgetIsNeverRefused: roots of one machine write to a remote
// that refuses any push past 1 in 4 s (429, as a host does). With a
// budget of 1 push per 5 s every write lands and the remote refuses
// none: pushes wait for the budget and carry every write that waited
// (5 roots writing at once), or wait their turn (1 root writing twice in
// a row). Without the budget the second write in a row is refused (the
// remote's window is long enough that a loaded machine's write is still
// inside it).
func TestPushBudgetIsNeverRefused(t *testing.T) {
	for _, c := range []struct {
		roots, writes int
		budget        bool
	}{{5, 2, true}, {1, 2, true}, {1, 2, false}} {
		t.Run(fmt.Sprintf("%dx%d/budget=%v", c.roots, c.writes, c.budget), func(t *testing.T) {
			t.Parallel() // mostly waiting for the budget's window
			bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
			srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "", gittest.WithPushLimit(1, 4*time.Second))
			locks := t.TempDir()
			perWindow := 0
			if c.budget {
				perWindow = 1
			}
			var agents []*agent
			for range c.roots {
				agents = append(agents, budgetAgent(t, srv.URL(filepath.Base(bare)), locks, perWindow, 5*time.Second))
			}
			var wg sync.WaitGroup
			errs := make(chan error, c.roots*c.writes)
			for i, ag := range agents {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for w := range c.writes {
						p := fmt.Sprintf("tools/a%d/w%d.ts", i, w)
						if err := ag.fs.WriteFile(p, []byte(p+"\n"), 0o644); err != nil {
							errs <- err
							return
						}
						if _, err := ag.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: "forge: " + p}); err != nil {
							errs <- fmt.Errorf("root %d write %d: %w", i, w, err)
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
			if len(files) != c.roots*c.writes+1 {
				t.Fatalf("%d files on the remote, want %d", len(files), c.roots*c.writes+1)
			}
			refused := srv.RefusedPushes.Load()
			t.Logf("%d writes in %d pushes, %d refused", c.roots*c.writes, srv.ReceivePacks.Load(), refused)
			if c.budget && refused != 0 {
				t.Fatalf("the remote refused %d pushes within the budget", refused)
			}
			if !c.budget && refused == 0 {
				// On a machine loaded enough, the second write comes after
				// the remote's window: then nothing was there to refuse.
				// Inside it, the remote must have refused.
				if pts := srv.PushTimes(); len(pts) < 2 || pts[1].Sub(pts[0]) < 4*time.Second {
					t.Fatalf("%d writes in a row without a budget were never refused (pushes at %v): the test shows nothing", c.writes, pts)
				}
				t.Logf("the second push came after the remote's window: this run shows nothing without a budget")
			}
			gittest.Git(t, bare, "fsck", "--strict")
		})
	}
}

// TestRateLimitRefusalWaitsAsTold: a push refused for the host's rate
// limit (429, or GitHub's 403 with Retry-After) is retried after the wait
// the host gave, not reported as a bad token; a wait longer than
// git.retry.deadline fails at once, naming the limit, after one refusal.
func TestRateLimitRefusalWaitsAsTold(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusForbidden} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
			srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
			a := budgetAgent(t, srv.URL(filepath.Base(bare)), "", 0, 0)
			var slept []time.Duration
			a.repo.sleep = func(ctx context.Context, d time.Duration) error {
				slept = append(slept, d)
				return ctx.Err()
			}
			srv.RateLimitStatus, srv.RateLimitRetryAfter = status, 7
			srv.RateLimitNext.Store(1)
			res := a.write(t, "tools/x.ts", "x\n")
			if res.Attempts != 2 || srv.RefusedPushes.Load() != 1 {
				t.Fatalf("attempts %d, refused %d", res.Attempts, srv.RefusedPushes.Load())
			}
			if len(slept) == 0 || slept[len(slept)-1] < 7*time.Second {
				t.Fatalf("waited %v before retrying, the host asked for 7s", slept)
			}

			srv.RateLimitRetryAfter = 600
			srv.RateLimitNext.Store(5)
			if err := a.fs.WriteFile("tools/y.ts", []byte("y\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			a.repo.cfg.Retry.Deadline = 30 * time.Second
			_, err := a.repo.Persist(context.Background(), Change{Paths: []string{"tools/y.ts"}, Message: "y"})
			if !errors.Is(err, ErrRateLimited) || errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "retry after 10m0s") {
				t.Fatalf("want a rate-limit error naming the wait, got %v", err)
			}
			if n := srv.RefusedPushes.Load(); n != 2 {
				t.Fatalf("%d refusals: a wait beyond the deadline was retried anyway", n)
			}
		})
	}
}

// TestRetryAfterHints: the waits a host gives, in its headers and its
// words.
func TestRetryAfterHints(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"42"}}, 42 * time.Second},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).UTC().Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"X-Ratelimit-Reset": {fmt.Sprint(now.Add(30 * time.Second).Unix())}}, 30 * time.Second},
		{http.Header{"Ratelimit-Reset": {"12"}}, 12 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{}, 0},
	} {
		if got := retryAfter(c.h, now); got != c.want {
			t.Errorf("%v: %v, want %v", c.h, got, c.want)
		}
	}
	rl := rateLimited(errors.New("remote error: rate limit exceeded; Retry-After: 9"))
	if rl == nil || rl.RetryAfter != 9*time.Second {
		t.Fatalf("ERR line: %+v", rl)
	}
	if rateLimited(errors.New("remote error: repository not found")) != nil {
		t.Fatal("not a rate limit")
	}
}
