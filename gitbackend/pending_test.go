package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// deferringPair is a root on disk that defers its replays (a) and another
// agent (other) on one remote, each with a seed file.
func deferringPair(t *testing.T) (a, other *agent, remote string) {
	t.Helper()
	gittest.RequireGit(t)
	remote = gittest.BareRemote(t)
	other = newAgent(t, remote, true)
	other.write(t, "shared.txt", "v0\n")
	a = newAgent(t, remote, false)
	a.repo.cfg.DeferReplays = true
	return a, other, remote
}

func gitLine(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, dir, args...))
}

// packsIn counts the packs of a root.
func packsIn(t *testing.T, root string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, ".git", "objects", "pack", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// TestDeferredReplayWaitsForARead: a persist that replayed on another
// agent's commit leaves the root on disk at its own commit, whole and
// clean (what a process that died after the push leaves), until something
// reads a path the replay changes; then the root is at the remote's tip.
func TestDeferredReplayWaitsForARead(t *testing.T) {
	a, other, remote := deferringPair(t)
	own := gitLine(t, a.fs.Root(), "rev-parse", "HEAD")
	other.write(t, "tools/other.ts", "export default 1;\n")
	res := a.write(t, "tools/mine.ts", "export default 2;\n")
	if !res.Replayed {
		t.Fatal("the persist did not replay")
	}
	tip := gitLine(t, remote, "rev-parse", "main")
	if res.Commit != tip {
		t.Fatalf("persist says %s, the remote is at %s", res.Commit, tip)
	}
	root := a.fs.Root()
	head := gitLine(t, root, "rev-parse", "HEAD")
	if head == tip || gitLine(t, root, "rev-parse", "HEAD~1") != own {
		t.Fatalf("HEAD %s: want the root's own commit on %s, not the remote's %s", head, own, tip)
	}
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("root not clean while the replay waits:\n%s", st)
	}
	gittest.Git(t, root, "fsck", "--strict")
	if a.repo.Unwritten() < 1 {
		t.Fatalf("Unwritten() = %d with a replay waiting", a.repo.Unwritten())
	}
	// A path the replay does not change: nothing to take.
	if err := a.repo.Materialize(context.Background(), "tools/mine.ts"); err != nil {
		t.Fatal(err)
	}
	if got := gitLine(t, root, "rev-parse", "HEAD"); got != head {
		t.Fatalf("Materialize of an unchanged path moved HEAD to %s", got)
	}
	// Listing tools/ reads the other agent's file.
	if err := a.repo.Materialize(context.Background(), "tools"); err != nil {
		t.Fatal(err)
	}
	if got := gitLine(t, root, "rev-parse", "HEAD"); got != tip {
		t.Fatalf("after a read of tools/ HEAD is %s, the remote %s", got, tip)
	}
	if got := gitLine(t, root, "rev-parse", "origin/main"); got != tip {
		t.Fatalf("origin/main %s, the remote %s", got, tip)
	}
	if !strings.Contains(gittest.Git(t, root, "reflog", "-1", "--format=%gs", "main"), "pull --rebase (finish)") {
		t.Fatalf("reflog: %s", gittest.Git(t, root, "reflog", "main"))
	}
	if a.repo.Unwritten() != 0 {
		t.Fatalf("Unwritten() = %d after Materialize", a.repo.Unwritten())
	}
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("root not clean:\n%s", st)
	}
	if b, err := os.ReadFile(filepath.Join(root, "tools/other.ts")); err != nil || string(b) != "export default 1;\n" {
		t.Fatalf("tools/other.ts: %q %v", b, err)
	}
	gittest.Git(t, root, "fsck", "--strict")
}

// TestDeferredReplayFoldsIntoTheNextCommit: the next persist takes the
// waiting replay into its own commit: one pack for both, the reflog as
// if the root had taken the replay first, nothing lost on either side.
func TestDeferredReplayFoldsIntoTheNextCommit(t *testing.T) {
	a, other, remote := deferringPair(t)
	root := a.fs.Root()
	other.write(t, "tools/o1.ts", "export default 1;\n")
	a.write(t, "tools/m1.ts", "export default 2;\n")
	other.write(t, "tools/o2.ts", "export default 3;\n")
	before := packsIn(t, root)
	res := a.write(t, "tools/m2.ts", "export default 4;\n")
	if !res.Replayed {
		t.Fatal("the second persist did not replay")
	}
	if n := packsIn(t, root) - before; n != 1 {
		t.Fatalf("the folded persist wrote %d packs, want 1 (the replay's objects in the commit's)", n)
	}
	// The root is at the second persist's own commit, on the first's
	// replay, which is on the remote.
	first := gitLine(t, root, "rev-parse", "HEAD~1")
	if _, err := gittest.GitErr(remote, "merge-base", "--is-ancestor", first, "main"); err != nil {
		t.Fatalf("HEAD~1 %s is not the first replay on the remote: %v", first, err)
	}
	if got := gitLine(t, root, "rev-parse", "origin/main"); got != first {
		t.Fatalf("origin/main %s, want the first replay %s", got, first)
	}
	gittest.Git(t, root, "fsck", "--strict")
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("root not clean:\n%s", st)
	}
	if err := a.repo.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	tip := gitLine(t, remote, "rev-parse", "main")
	if got := gitLine(t, root, "rev-parse", "HEAD"); got != tip {
		t.Fatalf("HEAD %s, the remote %s", got, tip)
	}
	want := []string{"pull --rebase (finish)", "commit: forge: tools/m2.ts", "pull --rebase (finish)", "commit: forge: tools/m1.ts"}
	got := strings.Split(gitLine(t, root, "reflog", "-4", "--format=%gs", "main"), "\n")
	for i := range want {
		if i >= len(got) || !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("reflog:\n%s\nwant entries starting %q", strings.Join(got, "\n"), want)
		}
	}
	if log := gittest.Git(t, remote, "log", "--format=%s", "main"); log != "forge: tools/m2.ts\nforge: tools/o2.ts\nforge: tools/m1.ts\nforge: tools/o1.ts\nforge: shared.txt\n" {
		t.Fatalf("remote history:\n%s", log)
	}
	for _, f := range []string{"tools/o1.ts", "tools/o2.ts", "tools/m1.ts", "tools/m2.ts", "shared.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Fatal(err)
		}
	}
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("root not clean:\n%s", st)
	}
	gittest.Git(t, root, "fsck", "--strict")
	gittest.Git(t, remote, "fsck", "--strict")
}

// TestFoldKeepsTheAgentsVersionOfAPathTheReplayChanged: the waiting
// replay changed a file the agent then writes whole; the commit has the
// agent's version and the root keeps it (the replay's is its parent's).
func TestFoldKeepsTheAgentsVersionOfAPathTheReplayChanged(t *testing.T) {
	a, other, remote := deferringPair(t)
	root := a.fs.Root()
	other.write(t, "shared.txt", "v-other\n")
	a.write(t, "tools/mine.ts", "export default 2;\n")
	if got := gitLine(t, root, "show", "HEAD:shared.txt"); got != "v0" {
		t.Fatalf("the replay was taken at once: shared.txt at HEAD is %q", got)
	}
	a.write(t, "shared.txt", "v-agent\n")
	if got := gitLine(t, remote, "show", "main:shared.txt"); got != "v-agent" {
		t.Fatalf("remote shared.txt %q", got)
	}
	if got := gitLine(t, remote, "show", "main~1:shared.txt"); got != "v-other" {
		t.Fatalf("the commit's parent has shared.txt %q, want the other agent's", got)
	}
	if err := a.repo.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "shared.txt")); err != nil || string(b) != "v-agent\n" {
		t.Fatalf("root shared.txt %q %v", b, err)
	}
	if got, tip := gitLine(t, root, "rev-parse", "HEAD"), gitLine(t, remote, "rev-parse", "main"); got != tip {
		t.Fatalf("HEAD %s, remote %s", got, tip)
	}
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("root not clean:\n%s", st)
	}
	gittest.Git(t, root, "fsck", "--strict")
}

// TestWaitingReplayDroppedWhenTheBranchMoved: git run in the root moved
// the branch while a replay waited; the replay is dropped (the remote has
// it), the root is as git left it, and the next persist replays onto the
// remote's tip as any root behind it does.
func TestWaitingReplayDroppedWhenTheBranchMoved(t *testing.T) {
	a, other, remote := deferringPair(t)
	root := a.fs.Root()
	other.write(t, "tools/other.ts", "export default 1;\n")
	a.write(t, "tools/mine.ts", "export default 2;\n")
	gittest.Git(t, root, "-c", "user.name=U", "-c", "user.email=u@x", "commit", "-q", "--allow-empty", "-m", "by hand")
	byHand := gitLine(t, root, "rev-parse", "HEAD")
	if err := a.repo.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := gitLine(t, root, "rev-parse", "HEAD"); got != byHand {
		t.Fatalf("HEAD %s, want git's commit %s left alone", got, byHand)
	}
	a.write(t, "tools/next.ts", "export default 3;\n")
	if err := a.repo.Materialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	tip := gitLine(t, remote, "rev-parse", "main")
	if got := gitLine(t, root, "rev-parse", "HEAD"); got != tip {
		t.Fatalf("HEAD %s, remote %s", got, tip)
	}
	if log := gittest.Git(t, remote, "log", "--format=%s", "main"); log != "forge: tools/next.ts\nby hand\nforge: tools/mine.ts\nforge: tools/other.ts\nforge: shared.txt\n" {
		t.Fatalf("remote history:\n%s", log)
	}
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("root not clean:\n%s", st)
	}
	gittest.Git(t, root, "fsck", "--strict")
	gittest.Git(t, remote, "fsck", "--strict")
}

// TestDeferredReplaysAgainstAModel drives agents that defer their
// replays (and one that does not) through seeded random writes, whole-file
// overwrites of each other's files, deletions and reads, one at a time,
// against a model of the branch (a write that lands replaces the path, one
// refused as a conflict changes nothing on the remote). Every write must
// land as the model says, and once the roots take what they
// pushed, each must be the remote's tip, clean, whole and fsck-clean.
// TGP_PENDING_SEEDS sets how many seeds (from TGP_PENDING_SEED0).
func TestDeferredReplaysAgainstAModel(t *testing.T) {
	gittest.RequireGit(t)
	seeds, seed0 := envInt("TGP_PENDING_SEEDS", 3), envInt("TGP_PENDING_SEED0", 1)
	for s := seed0; s < seed0+seeds; s++ {
		t.Run(fmt.Sprint("seed=", s), func(t *testing.T) { deferredReplaysAgainstAModel(t, int64(s), false) })
		// The same writers over smart HTTP: replays after a refused push
		// (deferral is for local remotes; these take theirs at once).
		t.Run(fmt.Sprint("http/seed=", s), func(t *testing.T) { deferredReplaysAgainstAModel(t, int64(s), true) })
	}
}

// seededRemote is a bare remote with one commit (README.md) and the URL
// the agents push to: its path, or over smart HTTP.
func seededRemote(t *testing.T, overHTTP bool) (dir, url string) {
	t.Helper()
	dir = gittest.BareRemote(t)
	url = dir
	if overHTTP {
		url = gittest.NewHTTPServer(t, filepath.Dir(dir), "").URL(filepath.Base(dir))
	}
	newAgent(t, url, true).write(t, "README.md", "seed\n")
	return dir, url
}

// checkRootOnRemote fails unless a's root (having taken what it pushed)
// is at a commit of the remote's main, its origin/main there too, and, on
// disk, clean and fsck-clean; who names it, after is shown on failure.
func checkRootOnRemote(t *testing.T, who string, a *agent, remote, after string) {
	t.Helper()
	head, err := a.repo.head()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gittest.GitErr(remote, "merge-base", "--is-ancestor", head.String(), "main"); err != nil {
		t.Fatalf("%s at %s, not on the remote\n%s", who, short(head), after)
	}
	if tr := a.repo.trackingTip("main"); tr != head {
		t.Fatalf("%s at %s, its origin/main %s", who, short(head), short(tr))
	}
	if !a.fs.InMemory() {
		if st := gittest.Git(t, a.fs.Root(), "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Fatalf("%s's root not clean:\n%s\n%s", who, st, after)
		}
		gittest.Git(t, a.fs.Root(), "fsck", "--strict")
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func deferredReplaysAgainstAModel(t *testing.T, seed int64, overHTTP bool) {
	rng := rand.New(rand.NewSource(seed))
	remote, url := seededRemote(t, overHTTP)
	model := map[string]string{"README.md": "seed\n"}
	agents := make([]*agent, 3)
	for i := range agents {
		agents[i] = newAgent(t, url, i == 2)
		agents[i].repo.cfg.DeferReplays = i < 2
	}
	paths := []string{"README.md", "tools/a.ts", "tools/b.ts", "tools/x/c.ts", "data/d.txt", "shared.txt"}
	var log []string
	for op := 0; op < 40; op++ {
		i := rng.Intn(len(agents))
		a := agents[i]
		p := paths[rng.Intn(len(paths))]
		// The kernel settles a path before write_file writes over it;
		// a host writing through the root itself may not.
		if rng.Intn(2) == 0 {
			if err := a.repo.Materialize(context.Background(), p); err != nil {
				t.Fatalf("seed %d op %d: materialize %s: %v", seed, op, p, err)
			}
		}
		var next func()
		switch k := rng.Intn(10); {
		case k < 7:
			content := fmt.Sprintf("agent %d op %d\n", i, op)
			if err := a.fs.MkdirAll(path.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := a.fs.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			log = append(log, fmt.Sprintf("agent %d writes %s", i, p))
			next = func() { model[p] = content }
		case k < 8:
			// A file this root has (a tool deletes only what it finds,
			// read after the kernel brought the root up to date).
			if err := a.repo.Materialize(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			if _, err := a.fs.Stat(p); err != nil {
				continue
			}
			if err := a.fs.Remove(p); err != nil {
				t.Fatal(err)
			}
			log = append(log, fmt.Sprintf("agent %d deletes %s", i, p))
			next = func() { delete(model, p) }
		default:
			if err := a.repo.Materialize(context.Background(), path.Dir(p)); err != nil {
				t.Fatal(err)
			}
			log = append(log, fmt.Sprintf("agent %d reads %s", i, path.Dir(p)))
			continue
		}
		_, err := a.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: fmt.Sprintf("op %d", op)})
		switch {
		case err == nil:
			next()
		case errors.Is(err, ErrConflict):
			// Another agent changed the file since this root's version:
			// the remote keeps theirs, the root is reset to it.
			log = append(log, "  (conflict)")
		default:
			t.Fatalf("seed %d op %d (%s): %v\n%s", seed, op, log[len(log)-1], err, strings.Join(log, "\n"))
		}
	}
	clone := gittest.Clone(t, remote)
	got := map[string]string{}
	for _, f := range strings.Fields(gittest.Git(t, clone, "ls-files")) {
		b, err := os.ReadFile(filepath.Join(clone, f))
		if err != nil {
			t.Fatal(err)
		}
		got[f] = string(b)
	}
	if !reflect.DeepEqual(got, model) {
		t.Fatalf("seed %d: the remote has\n%v\nthe model\n%v\nafter\n%s", seed, got, model, strings.Join(log, "\n"))
	}
	gittest.Git(t, remote, "fsck", "--strict")
	tip := gitLine(t, remote, "rev-parse", "main")
	for i, a := range agents {
		if err := a.repo.Materialize(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Each root is at what it last pushed (or fetched), all of it.
		checkRootOnRemote(t, fmt.Sprintf("seed %d: agent %d", seed, i), a, remote, strings.Join(log, "\n"))
		// Brought to the tip, it has the model's files.
		if _, err := a.repo.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := a.repo.Materialize(context.Background()); err != nil {
			t.Fatal(err)
		}
		if head, _ := a.repo.head(); head.String() != tip {
			t.Fatalf("seed %d: agent %d refreshed to %s, the remote at %s", seed, i, short(head), tip)
		}
		if a.fs.InMemory() {
			continue
		}
		root := a.fs.Root()
		if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Fatalf("seed %d: agent %d's root not clean after a refresh:\n%s", seed, i, st)
		}
		for f, want := range model {
			if b, err := os.ReadFile(filepath.Join(root, f)); err != nil || string(b) != want {
				t.Fatalf("seed %d: agent %d's %s is %q (%v), want %q", seed, i, f, b, err, want)
			}
		}
		gittest.Git(t, root, "fsck", "--strict")
	}
}

// TestDeferredReplaysUnderConcurrency: the agents of the model test write
// at once (each its own goroutine; shared paths, so replays merge, fold
// kept paths and conflict). Whatever the order, every write that returned
// must be on the remote's branch in the commit it returned, with its
// content, and every root must end on the remote, clean and fsck-clean.
func TestDeferredReplaysUnderConcurrency(t *testing.T) {
	gittest.RequireGit(t)
	seeds, seed0 := envInt("TGP_PENDING_SEEDS", 3), envInt("TGP_PENDING_SEED0", 1)
	for s := seed0; s < seed0+seeds; s++ {
		t.Run(fmt.Sprint("seed=", s), func(t *testing.T) { deferredReplaysUnderConcurrency(t, int64(s), false) })
		// Over smart HTTP: refused pushes, carries landed by the winner.
		t.Run(fmt.Sprint("http/seed=", s), func(t *testing.T) { deferredReplaysUnderConcurrency(t, int64(s), true) })
	}
}

func deferredReplaysUnderConcurrency(t *testing.T, seed int64, overHTTP bool) {
	remote, url := seededRemote(t, overHTTP)
	const agents, ops = 4, 8
	paths := []string{"tools/a.ts", "tools/b.ts", "tools/x/c.ts", "shared.txt"}
	type landed struct {
		commit, path, content string // content "" for a deletion
	}
	var mu sync.Mutex
	var all []landed
	as := make([]*agent, agents)
	for i := range as {
		as[i] = newAgent(t, url, i == agents-1)
		as[i].repo.cfg.DeferReplays = i%2 == 0
	}
	var wg sync.WaitGroup
	for i, a := range as {
		wg.Add(1)
		go func(i int, a *agent) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed*100 + int64(i)))
			for op := 0; op < ops; op++ {
				p := paths[rng.Intn(len(paths))]
				if rng.Intn(2) == 0 {
					if err := a.repo.Materialize(context.Background(), p); err != nil {
						t.Error(err)
						return
					}
				}
				content := fmt.Sprintf("agent %d op %d\n", i, op)
				if rng.Intn(6) == 0 {
					if err := a.repo.Materialize(context.Background(), p); err != nil {
						t.Error(err)
						return
					}
					if _, err := a.fs.Stat(p); err != nil {
						continue
					}
					if err := a.fs.Remove(p); err != nil {
						t.Error(err)
						return
					}
					content = ""
				} else {
					if err := a.fs.MkdirAll(path.Dir(p), 0o755); err != nil {
						t.Error(err)
						return
					}
					if err := a.fs.WriteFile(p, []byte(content), 0o644); err != nil {
						t.Error(err)
						return
					}
				}
				res, err := a.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: fmt.Sprintf("agent %d op %d", i, op)})
				switch {
				case errors.Is(err, ErrConflict):
				case err != nil:
					t.Errorf("agent %d op %d: %v", i, op, err)
					return
				case !res.NoChange:
					mu.Lock()
					all = append(all, landed{res.Commit, p, content})
					mu.Unlock()
				}
			}
		}(i, a)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(all) == 0 {
		t.Fatalf("seed %d: no write landed", seed)
	}
	t.Logf("seed %d: %d writes landed, %d commits on the remote", seed, len(all), strings.Count(gittest.Git(t, remote, "log", "--format=%s", "main"), "\n"))
	gittest.Git(t, remote, "fsck", "--strict")
	if merges := gitLine(t, remote, "rev-list", "--merges", "main"); merges != "" {
		t.Fatalf("merges on the remote: %s", merges)
	}
	if refs := gitLine(t, remote, "for-each-ref", "refs/tgp/carry"); refs != "" {
		t.Fatalf("carries left on the remote:\n%s", refs)
	}
	for _, l := range all {
		if _, err := gittest.GitErr(remote, "merge-base", "--is-ancestor", l.commit, "main"); err != nil {
			t.Fatalf("seed %d: commit %s of a write to %s is not on the remote's main", seed, l.commit, l.path)
		}
		got, err := gittest.GitErr(remote, "show", l.commit+":"+l.path)
		if l.content == "" {
			if err == nil {
				t.Fatalf("seed %d: %s deleted in %s is there: %q", seed, l.path, l.commit, got)
			}
			continue
		}
		if err != nil || got != l.content {
			t.Fatalf("seed %d: %s in %s is %q (%v), the write was %q\n%s", seed, l.path, l.commit, got, err, l.content,
				gittest.Git(t, remote, "log", "--format=%h %s", "--name-status", "main"))
		}
	}
	for i, a := range as {
		if err := a.repo.Materialize(context.Background()); err != nil {
			t.Fatal(err)
		}
		checkRootOnRemote(t, fmt.Sprintf("seed %d: agent %d", seed, i), a, remote, "")
	}
}
