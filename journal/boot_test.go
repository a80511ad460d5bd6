package journal

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

// TestWarmBootTrustsTheJournal counts the remote's reads (upload-pack
// advertisements) of each boot. With a journal, a warm root at the tip
// the journal last recorded as landed boots with no read; once another
// root's write lands, the same root fetches and takes it; a cold root
// clones. Without a journal the same warm boot reads.
func TestWarmBootTrustsTheJournal(t *testing.T) {
	ctx := context.Background()
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	remote := srv.URL(filepath.Base(bare))
	dsn := FreshDatabase(t, pgDSN)
	j := openJournal(t, dsn)
	cfg := func(j gitbackend.Journal) gitbackend.Config {
		return gitbackend.Config{Remote: remote, Branch: "main", LockDir: t.TempDir(), Journal: j}
	}
	// boot opens the root in dir and says what its boot did and how many
	// reads the remote served meanwhile.
	boot := func(dir string, j gitbackend.Journal) (*root, string, int) {
		t.Helper()
		before := len(srv.ReadTimes())
		f, err := vfs.NewOS(dir)
		if err != nil {
			t.Fatal(err)
		}
		c := cfg(j)
		c.Author = gitbackend.Identity{Name: "Agent", Email: "agent@example.com"}
		c.Retry = gitbackend.RetryConfig{BaseDelay: 2 * time.Millisecond, Deadline: time.Minute}
		r, err := gitbackend.Open(ctx, f.Billy(), c, gitbackend.WithLockFile(gitbackend.LockFilePath(f.Root())))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		res, err := r.Hydrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return &root{fs: f, repo: r}, res.Action, len(srv.ReadTimes()) - before
	}

	dir := t.TempDir()
	writer, action, reads := boot(dir, j)
	if action != "cloned" || reads == 0 {
		t.Fatalf("a cold root with the journal: %s with %d reads, want a clone", action, reads)
	}
	if err := writer.write("tools/w.ts"); err != nil {
		t.Fatal(err)
	}
	if last, err := j.LastLanded(ctx, remote, "main"); err != nil || last != tip(t, bare) {
		t.Fatalf("the journal's last landed tip: %q %v, remote at %s", last, err, tip(t, bare))
	}

	_, action, reads = boot(dir, j)
	t.Logf("warm boot with the journal: %s, %d reads", action, reads)
	if action != "up-to-date" || reads != 0 {
		t.Fatalf("a warm root at the journal's tip: %s with %d reads, want none", action, reads)
	}
	_, action, reads = boot(dir, nil)
	t.Logf("warm boot without a journal: %s, %d reads", action, reads)
	if reads == 0 {
		t.Fatal("a warm boot without the journal made no read: the test cannot tell the journal's effect")
	}

	other := openRoot(t, t.TempDir(), cfg(j))
	if err := other.write("tools/o.ts"); err != nil {
		t.Fatal(err)
	}
	moved, action, reads := boot(dir, j)
	if action != "fetched" || reads == 0 {
		t.Fatalf("a warm root behind the journal's tip: %s with %d reads, want a fetch", action, reads)
	}
	if st, err := moved.repo.Status(ctx); err != nil || st.Head != tip(t, bare) {
		t.Fatalf("after the fetch: %+v %v (remote at %s)", st, err, tip(t, bare))
	}
}
