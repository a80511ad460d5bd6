package journal

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestAckOnceDurable: a root with JournalAckDurable returns from a write
// once its entry is recorded, with the entry's id and nothing pushed; its
// next write supersedes the entry; a writer of another machine that waits
// for its own landing lands them too, in one push; DrainJournal lands an
// acknowledged entry from the root that wrote it and from a root with
// nothing of its own, and brings each to the remote's tip.
func TestAckOnceDurable(t *testing.T) {
	ctx := context.Background()
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	remote := srv.URL(filepath.Base(bare))
	dsn := FreshDatabase(t, pgDSN)
	j := openJournal(t, dsn)
	seed := tip(t, bare)
	acker := openRoot(t, t.TempDir(), gitbackend.Config{Remote: remote, Branch: "main", LockDir: t.TempDir(), Journal: j, JournalAckDurable: true})
	waiter := openRoot(t, t.TempDir(), gitbackend.Config{Remote: remote, Branch: "main", LockDir: t.TempDir(), Journal: j})
	drainer := openRoot(t, t.TempDir(), gitbackend.Config{Remote: remote, Branch: "main", LockDir: t.TempDir(), Journal: j, JournalAckDurable: true})

	start := time.Now()
	first, err := acker.persist("tools/a1.ts")
	if err != nil {
		t.Fatal(err)
	}
	acked := time.Since(start)
	if !first.Unlanded || first.JournalID == 0 {
		t.Fatalf("an acknowledged write: %+v", first)
	}
	if got := tip(t, bare); got != seed || srv.ReceivePacks.Load() != 0 {
		t.Fatalf("the write pushed (remote at %s, %d pushes)", got, srv.ReceivePacks.Load())
	}
	second, err := acker.persist("tools/a2.ts")
	if err != nil {
		t.Fatal(err)
	}
	if !second.Unlanded || second.JournalID <= first.JournalID {
		t.Fatalf("the second write: %+v (first entry %d)", second, first.JournalID)
	}
	if out, err := j.Outcome(ctx, first.JournalID); err != nil || out == nil || !strings.Contains(out.Err, "superseded") {
		t.Fatalf("the first entry after the second write: %+v %v", out, err)
	}
	if ids := waitingIDs(t, j); !slices.Equal(ids, []int64{second.JournalID}) {
		t.Fatalf("waiting %v, want [%d]", ids, second.JournalID)
	}
	// Every root of the remote's branch sees it, with its commit's
	// subject and author.
	un, err := waiter.repo.Unlanded(ctx)
	if err != nil || len(un) != 1 || un[0].ID != second.JournalID || un[0].Head != second.Commit || un[0].Base != seed ||
		un[0].Message != "forge: tools/a2.ts" || un[0].Author != "Agent <agent@example.com>" || !strings.HasSuffix(un[0].Root, ".git") {
		t.Fatalf("unlanded: %+v %v", un, err)
	}

	start = time.Now()
	landed, err := waiter.persist("tools/b.ts")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("an acknowledged write returned in %v, a landed one in %v", acked.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if landed.Unlanded || landed.JournalID != 0 || !isAncestor(bare, landed.Commit) {
		t.Fatalf("the waiting writer: %+v (remote at %s)", landed, tip(t, bare))
	}
	if n := srv.ReceivePacks.Load(); n != 1 {
		t.Fatalf("%d pushes for the waiter's write and the acknowledged ones, want 1", n)
	}
	requireOnRemote(t, bare, "tools/a1.ts", "tools/a2.ts", "tools/b.ts")
	if out, err := j.Outcome(ctx, second.JournalID); err != nil || out == nil || out.Err != "" || !isAncestor(bare, out.Commit) {
		t.Fatalf("the acknowledged entry after the waiter's push: %+v %v", out, err)
	}

	// The root that wrote it drains its own entry, and is then at the
	// remote's tip.
	third, err := acker.persist("tools/a3.ts")
	if err != nil || !third.Unlanded {
		t.Fatalf("third write: %+v %v", third, err)
	}
	if n, err := acker.repo.DrainJournal(ctx); err != nil || n != 1 {
		t.Fatalf("the acker's drain: %d %v", n, err)
	}
	requireOnRemote(t, bare, "tools/a3.ts")
	if st, err := acker.repo.Status(ctx); err != nil || st.Ahead != 0 || st.Head != tip(t, bare) || len(st.Unlanded) != 0 {
		t.Fatalf("the acker after its drain: %+v %v (remote at %s)", st, err, tip(t, bare))
	}

	// A root with nothing of its own drains another's entry, and takes
	// the file.
	fourth, err := acker.persist("tools/a4.ts")
	if err != nil || !fourth.Unlanded {
		t.Fatalf("fourth write: %+v %v", fourth, err)
	}
	if n, err := drainer.repo.DrainJournal(ctx); err != nil || n != 1 {
		t.Fatalf("the drainer's drain: %d %v", n, err)
	}
	requireOnRemote(t, bare, "tools/a4.ts")
	if err := drainer.repo.Materialize(ctx, "tools/a4.ts"); err != nil {
		t.Fatal(err)
	}
	if st, err := drainer.repo.Status(ctx); err != nil || st.Head != tip(t, bare) {
		t.Fatalf("the drainer after the drain: %+v %v (remote at %s)", st, err, tip(t, bare))
	}
	if _, err := drainer.fs.ReadFile("tools/a4.ts"); err != nil {
		t.Fatalf("the drainer's root after the drain: %v", err)
	}
	if n, err := drainer.repo.DrainJournal(ctx); err != nil || n != 0 {
		t.Fatalf("a drain with nothing waiting: %d %v", n, err)
	}
	if ids := waitingIDs(t, j); len(ids) != 0 {
		t.Fatalf("still waiting: %v", ids)
	}
	// The acker's later entries held a1 and a2 again (its root had not
	// taken the remote's commits of them): nothing of them twice.
	if n := strings.TrimSpace(gittest.Git(t, bare, "rev-list", "--count", "main")); n != "6" {
		t.Fatalf("%s commits on main: want the seed and one per write\n%s", n, gittest.Git(t, bare, "log", "--format=%h %s", "main"))
	}
	gittest.Git(t, bare, "fsck", "--strict")
}

func tip(t *testing.T, bare string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, bare, "rev-parse", "main"))
}

func isAncestor(bare, commit string) bool {
	_, err := gittest.GitErr(bare, "merge-base", "--is-ancestor", commit, "main")
	return commit != "" && err == nil
}

func requireOnRemote(t *testing.T, bare string, paths ...string) {
	t.Helper()
	files := strings.Fields(gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main"))
	for _, p := range paths {
		if !slices.Contains(files, p) {
			t.Fatalf("%s is not on the remote (%v)", p, files)
		}
	}
}

func waitingIDs(t *testing.T, j *Postgres) []int64 {
	t.Helper()
	var ids []int64
	rows, err := j.pool.Query(context.Background(), `SELECT id FROM tgp_journal_entries WHERE state = 'waiting' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}
