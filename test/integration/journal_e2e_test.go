//go:build unix

package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/journal"
	"github.com/tgp-go/tgp/sqldb/pgtest"
)

// TestJournalFleetWithinTheBudget: 3 machines x 3 agents, each agent a
// `tgp call write_file` process writing twice, all through one
// PostgreSQL journal (TGP_GIT_JOURNAL) with TGP_GIT_PUSHES_PER_MINUTE=6,
// to a smart-HTTP remote that refuses any push past 6 in 60 s. The
// first pusher is SIGKILLed after the remote took its push and before it
// told the journal. Then: every call but the killed one succeeds; every
// write is on main exactly once (the killed pusher's batch is settled as
// landed by the next pusher, not pushed again); the remote refused
// nothing; no entry is left waiting.
func TestJournalFleetWithinTheBudget(t *testing.T) {
	pg, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // `make deps` installs PostgreSQL
	}
	t.Cleanup(func() { _ = pg.Stop() })
	dsn := journal.FreshDatabase(t, pg.DSN)

	var killed atomic.Int64
	var once sync.Once
	killPusher := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Errorf("journal: %v", err)
				return
			}
			defer conn.Close(ctx)
			var app string
			err = conn.QueryRow(ctx, `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
				WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE 'tgp pid %' LIMIT 1`).Scan(&app)
			if err != nil {
				t.Errorf("no pusher holds the journal's lock during a push: %v", err)
				return
			}
			pid, _ := strconv.Atoi(strings.TrimPrefix(app, "tgp pid "))
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Errorf("kill the pusher %d: %v", pid, err)
				return
			}
			killed.Store(int64(pid))
			time.Sleep(200 * time.Millisecond) // gone before its answer
		})
	}
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "", gittest.WithPushLimit(6, time.Minute), gittest.WithAfterReceivePack(killPusher))
	remote := srv.URL(filepath.Base(bare))

	const machines, agents, writes = 3, 3, 2
	type call struct {
		agent int
		path  string
		err   error
		out   string
		pid   int
	}
	results := make(chan call, machines*agents*writes)
	prefixOf := map[string]string{} // root's .git -> the agent's directory of tools
	var wg sync.WaitGroup
	for m := range machines {
		home := t.TempDir() // a machine: its own cache, so its own lock directory
		for a := range agents {
			root := t.TempDir()
			agent := m*agents + a
			prefixOf[filepath.Join(root, ".git")] = fmt.Sprintf("tools/m%d/a%d/", m, a)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for w := range writes {
					p := fmt.Sprintf("tools/m%d/a%d/w%d.ts", m, a, w)
					cmd := exec.Command(tgpBin, "call", "write_file", fmt.Sprintf(`{"path":%q,"content":"/** W. */\nexport default () => %d;\n"}`, p, w), "--root", root)
					cmd.Env = []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "PATH=" + os.Getenv("PATH"),
						"TGP_GIT_REMOTE=" + remote, "TGP_GIT_AUTHOR_NAME=Agent", "TGP_GIT_AUTHOR_EMAIL=agent@example.com",
						"TGP_GIT_JOURNAL=" + dsn, "TGP_GIT_PUSHES_PER_MINUTE=6", "TGP_GIT_RETRY_DEADLINE=3m"}
					out, err := cmd.CombinedOutput()
					pid := 0
					if cmd.Process != nil {
						pid = cmd.Process.Pid
					}
					results <- call{agent: agent, path: p, err: err, out: string(out), pid: pid}
				}
			}()
		}
	}
	wg.Wait()
	close(results)
	var lost []string
	for c := range results {
		if c.err == nil {
			continue
		}
		if int64(c.pid) == killed.Load() {
			lost = append(lost, c.path) // its write went out with the batch it pushed
			continue
		}
		t.Errorf("agent %d %s: %v\n%s", c.agent, c.path, c.err, c.out)
	}
	if killed.Load() == 0 {
		t.Fatal("no pusher was killed: the test shows nothing")
	}
	files := strings.Fields(gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main", "tools"))
	if len(files) != machines*agents*writes {
		t.Fatalf("%d tools on the remote, want %d (the killed pusher's %v among them)", len(files), machines*agents*writes, lost)
	}
	added := map[string]int{}
	for _, l := range strings.Split(gittest.Git(t, bare, "log", "--format=", "--name-status", "--no-renames", "main", "--", "tools"), "\n") {
		if st, p, ok := strings.Cut(l, "\t"); ok {
			if added[p]++; added[p] > 1 || st != "A" {
				t.Errorf("%s %s: a write pushed twice or undone", st, p)
			}
		}
	}
	if n := srv.RefusedPushes.Load(); n != 0 {
		t.Fatalf("the remote refused %d pushes past 6 a minute", n)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT id, state, root, commit_hash FROM tgp_journal_entries`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var state, root, commit string
		if err := rows.Scan(&id, &state, &root, &commit); err != nil {
			t.Fatal(err)
		}
		switch state {
		case "waiting":
			t.Errorf("entry %d left waiting", id)
		case "landed":
			// The commit an entry is settled with holds its own change,
			// also for the batch whose pusher died before saying so.
			_, gitdir, _ := strings.Cut(root, ":")
			changed := gittest.Git(t, bare, "diff-tree", "--no-commit-id", "--name-only", "-r", commit)
			if !strings.Contains(changed, prefixOf[gitdir]) {
				t.Errorf("entry %d of %s settled as %s, which changes %q", id, prefixOf[gitdir], commit, changed)
			}
		}
	}
	rows.Close()
	t.Logf("%d writes in %d pushes; pusher %d killed after its push", machines*agents*writes, srv.ReceivePacks.Load(), killed.Load())
	gittest.Git(t, bare, "fsck", "--strict")
}
