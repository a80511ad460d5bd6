package journal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/sqldb/pgtest"
	"github.com/tgp-go/tgp/vfs"
)

var pgDSN string

func TestMain(m *testing.M) {
	c, err := pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		os.Exit(1) // the journal is PostgreSQL: run `make deps`
	}
	pgDSN = c.DSN
	code := m.Run()
	_ = c.Stop()
	os.Exit(code)
}

type root struct {
	fs   *vfs.FS
	repo *gitbackend.Repo
}

// machineRoot is a root on a machine (lockDir) writing through j.
func machineRoot(t *testing.T, remote, lockDir string, j gitbackend.Journal, pushes int, window time.Duration) *root {
	t.Helper()
	return machineRootReading(t, remote, lockDir, j, pushes, window, 15)
}

// machineRootReading is machineRoot with a read budget of reads a second.
func machineRootReading(t *testing.T, remote, lockDir string, j gitbackend.Journal, pushes int, window time.Duration, reads int) *root {
	t.Helper()
	return openRoot(t, t.TempDir(), gitbackend.Config{Remote: remote, Branch: "main", LockDir: lockDir,
		Journal: j, PushesPerMinute: pushes, BudgetWindow: window, ReadsPerSecond: reads})
}

// openRoot opens (and boots) the root in dir with cfg, its author and
// retries set for tests.
// openJournal opens the journal at dsn for the test, closed at its end.
func openJournal(t *testing.T, dsn string) *Postgres {
	t.Helper()
	j, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Close)
	return j
}

func openRoot(t *testing.T, dir string, cfg gitbackend.Config) *root {
	t.Helper()
	f, err := vfs.NewOS(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Author = gitbackend.Identity{Name: "Agent", Email: "agent@example.com"}
	cfg.Retry = gitbackend.RetryConfig{BaseDelay: 2 * time.Millisecond, Deadline: 2 * time.Minute}
	r, err := gitbackend.Open(context.Background(), f.Billy(), cfg, gitbackend.WithLockFile(gitbackend.LockFilePath(f.Root())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &root{fs: f, repo: r}
}

func (r *root) write(p string) error {
	_, err := r.persist(p)
	return err
}

func (r *root) persist(p string) (*gitbackend.PersistResult, error) {
	if err := r.fs.WriteFile(p, []byte(p+"\n"), 0o644); err != nil {
		return nil, err
	}
	return r.repo.Persist(context.Background(), gitbackend.Change{Paths: []string{p}, Message: "forge: " + p})
}

// TestFleetSharesOneBudget: 3 machines x 3 roots write 2 files each at
// once through one journal to a remote that refuses any push past 2 in
// 3 s. The fleet's budget is 2 pushes per 4 s: every write lands once, in
// a linear history, the remote refuses nothing, and every entry is
// settled as landed with the commit the remote holds.
func TestFleetSharesOneBudget(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "", gittest.WithPushLimit(2, 3*time.Second))
	remote := srv.URL(filepath.Base(bare))
	dsn := FreshDatabase(t, pgDSN)
	const machines, perMachine, writes = 3, 3, 2
	var roots []*root
	for range machines {
		j := openJournal(t, dsn)
		locks := t.TempDir()
		for range perMachine {
			roots = append(roots, machineRoot(t, remote, locks, j, 2, 4*time.Second))
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(roots)*writes)
	for i, r := range roots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range writes {
				if err := r.write(fmt.Sprintf("tools/r%d/w%d.ts", i, w)); err != nil {
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
	if len(files) != len(roots)*writes+1 {
		t.Fatalf("%d files on the remote, want %d", len(files), len(roots)*writes+1)
	}
	if n := len(strings.Fields(gittest.Git(t, bare, "rev-list", "main"))); n != len(roots)*writes+1 {
		t.Fatalf("%d commits, want one per write and the seed", n)
	}
	if refused := srv.RefusedPushes.Load(); refused != 0 {
		t.Fatalf("the remote refused %d pushes", refused)
	}
	j, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var waiting, landed int
	var bad []string
	rows, err := j.pool.Query(context.Background(), `SELECT state, commit_hash FROM tgp_journal_entries`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var state, commit string
		if err := rows.Scan(&state, &commit); err != nil {
			t.Fatal(err)
		}
		switch state {
		case "waiting":
			waiting++
		case "landed":
			landed++
			if _, err := gittest.GitErr(bare, "merge-base", "--is-ancestor", commit, "main"); err != nil {
				bad = append(bad, commit)
			}
		}
	}
	if waiting != 0 || landed == 0 || len(bad) > 0 {
		t.Fatalf("journal: %d waiting, %d landed, landed commits not on main: %v", waiting, landed, bad)
	}
	t.Logf("%d writes in %d pushes, %d entries landed by another machine's push", len(roots)*writes, srv.ReceivePacks.Load(), landed)
	gittest.Git(t, bare, "fsck", "--strict")
}

// TestFleetSharesOneReadBudget: 3 machines x 2 roots check the remote's
// tip at once, over and over, through one journal with a read budget of
// 3 a second. The host counts at most 3 reads in any second, though each
// machine's own budget alone would let the fleet make 9.
func TestFleetSharesOneReadBudget(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	remote := srv.URL(filepath.Base(bare))
	dsn := FreshDatabase(t, pgDSN)
	const machines, perMachine, checks, perSecond = 3, 2, 4, 3
	var roots []*root
	for range machines {
		j := openJournal(t, dsn)
		locks := t.TempDir()
		for range perMachine {
			roots = append(roots, machineRootReading(t, remote, locks, j, 6, time.Minute, perSecond))
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, r := range roots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range checks {
				if _, err := r.repo.Refresh(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var reads []time.Time
	for _, at := range srv.ReadTimes() {
		if !at.Before(start) {
			reads = append(reads, at)
		}
	}
	if len(reads) < len(roots)*checks {
		t.Fatalf("%d reads for %d tip checks: the test does not read what it means to", len(reads), len(roots)*checks)
	}
	// The database's clock starts each read's turn; the server records it
	// a little later, by a delay that varies: a read at the edge of a
	// window can land in the next one. So the check is over two seconds,
	// with one read of slack, and over the whole run: 24 reads at 3 a
	// second take 7 s at least (each machine's budget alone allows 9 a
	// second: under 3 s).
	elapsed := reads[len(reads)-1].Sub(reads[0])
	most := mostWithin(reads, 2*time.Second)
	t.Logf("%d reads in %v, at most %d within 2 s", len(reads), elapsed.Round(time.Millisecond), most)
	if most > 2*perSecond+1 {
		t.Errorf("%d reads within 2 s (budget %d a second for the fleet)", most, perSecond)
	}
	if least := time.Duration(len(reads)/perSecond-1) * time.Second; elapsed < least {
		t.Errorf("%d reads in %v: faster than %d a second allows (%v)", len(reads), elapsed, perSecond, least)
	}
}

// mostWithin is the most of ts within any window d long.
func mostWithin(ts []time.Time, d time.Duration) int {
	most := 0
	for i := range ts {
		n := 0
		for _, u := range ts {
			if !u.Before(ts[i]) && u.Sub(ts[i]) < d {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}
