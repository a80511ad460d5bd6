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
)

// queuedBehindLock starts persist on every agent while the test holds the
// remote ref's lock, waits until all of them queue in this process (one
// leading, waiting for the lock, the others behind it), then lets the
// lock go: one batch takes them all. It returns each persist's error.
func queuedBehindLock(t *testing.T, remote string, agents []*agent, hooks []*listHook, name func(i int) (path, content string)) []error {
	t.Helper()
	gitdir, err := filepath.Abs(remote)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := acquireRefLock(context.Background(), gitdir, "refs/heads/main", true)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		p, content := name(i)
		if err := a.fs.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := a.fs.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths := []string{p}
		if hooks != nil {
			hooks[i].record(t, p, content)
			paths = append(paths, DerivedFile)
		}
		wg.Add(1)
		go func(i int, a *agent) {
			defer wg.Done()
			_, errs[i] = a.repo.Persist(context.Background(), Change{Paths: paths, Message: "forge: " + p})
		}(i, a)
	}
	q := writerQueueFor(gitdir, "refs/heads/main")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		q.mu.Lock()
		n := len(q.waiting)
		q.mu.Unlock()
		if n == len(agents) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d writers queued", n, len(agents))
		}
	}
	lk.release()
	wg.Wait()
	return errs
}

// TestWritersOfOneProcessPushTogether: writers of one process queued
// behind the remote's lock go out in one push, each change its own
// commit with its own author and message, chained; nothing is lost, the
// remote is sound and every root (and its derived meta.json) ends at a
// commit of that chain, consistent.
func TestWritersOfOneProcessPushTogether(t *testing.T) {
	gittest.RequireGit(t)
	remote := gittest.BareRemote(t)
	seed := newAgent(t, remote, true)
	seed.write(t, "README.md", "seed\n")
	const n = 5
	agents := make([]*agent, n)
	hooks := make([]*listHook, n)
	for i := range agents {
		hooks[i] = &listHook{}
		agents[i] = newAgent(t, remote, i%2 == 1, WithHook(hooks[i]))
		hooks[i].fs = agents[i].fs
		agents[i].repo.cfg.Author = Identity{Name: fmt.Sprintf("Agent %d", i), Email: fmt.Sprintf("a%d@example.com", i)}
	}
	// The remote moves after they booted: the first of the batch replays
	// too.
	seed.write(t, "tools/seed.ts", "export default 0;\n")
	before := pushedTogether.Load()
	errs := queuedBehindLock(t, remote, agents, hooks, func(i int) (string, string) {
		return fmt.Sprintf("tools/a%d/t.ts", i), fmt.Sprintf("export default %d;\n", i)
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("agent %d: %v", i, err)
		}
	}
	if got := pushedTogether.Load() - before; got != n {
		t.Fatalf("%d commits pushed together, want %d", got, n)
	}
	gittest.Git(t, remote, "fsck", "--strict")
	log := gittest.Git(t, remote, "log", "--format=%an <%ae> %s", "main")
	for i := 0; i < n; i++ {
		want := fmt.Sprintf("Agent %d <a%d@example.com> forge: tools/a%d/t.ts", i, i, i)
		if strings.Count(log, want) != 1 {
			t.Fatalf("commit of agent %d (%q) not on the remote once:\n%s", i, want, log)
		}
	}
	if got := strings.Count(log, "\n"); got != n+2 {
		t.Fatalf("%d commits on the remote, want %d:\n%s", got, n+2, log)
	}
	if parents := gittest.Git(t, remote, "rev-list", "--min-parents=2", "main"); parents != "" {
		t.Fatalf("merge commits on the remote: %s", parents)
	}
	if got, want := gittest.Git(t, remote, "show", "main:"+DerivedFile), listing(t, remote, "main"); got != want {
		t.Fatalf("meta.json on the remote is not its tree's listing:\n%s\nwant\n%s", got, want)
	}
	for i, a := range agents {
		checkRootConsistent(t, a, hooks[i], remote)
		if _, err := a.fs.ReadFile(fmt.Sprintf("tools/a%d/t.ts", i)); err != nil {
			t.Fatalf("root %d lacks its own change: %v", i, err)
		}
	}
	// And they all go on from there.
	for i, a := range agents {
		p := fmt.Sprintf("tools/a%d/u.ts", i)
		hooks[i].record(t, p, "export default 9;\n")
		if err := a.fs.WriteFile(p, []byte("export default 9;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := a.repo.Persist(context.Background(), Change{Paths: []string{p, DerivedFile}, Message: "forge: " + p}); err != nil {
			t.Fatal(err)
		}
		checkRootConsistent(t, a, hooks[i], remote)
	}
	if got, want := gittest.Git(t, remote, "show", "main:"+DerivedFile), listing(t, remote, "main"); got != want {
		t.Fatalf("meta.json on the remote:\n%s\nwant\n%s", got, want)
	}
}

// TestBatchRefusedTriesEachAlone: the remote's pre-receive hook refuses
// one writer's commit; a batch holding it is refused whole, so each of
// its writers pushes again alone and gets its own verdict: the others'
// changes land, the refused one stays local, and no root (nor its derived
// meta.json) keeps anything of a commit that never reached the remote.
func TestBatchRefusedTriesEachAlone(t *testing.T) {
	gittest.RequireGit(t)
	remote := gittest.BareRemote(t)
	seed := newAgent(t, remote, true)
	seed.write(t, "README.md", "seed\n")
	hook := "#!/bin/sh\nwhile read old new ref; do\n  if git log --format=%s $old..$new | grep -q refuse-me; then echo no; exit 1; fi\ndone\n"
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	const n, bad = 4, 1
	agents := make([]*agent, n)
	hooks := make([]*listHook, n)
	for i := range agents {
		hooks[i] = &listHook{}
		agents[i] = newAgent(t, remote, i%2 == 0, WithHook(hooks[i]))
		hooks[i].fs = agents[i].fs
	}
	before := pushedTogether.Load()
	errs := queuedBehindLock(t, remote, agents, hooks, func(i int) (string, string) {
		if i == bad {
			return "tools/refuse-me.ts", "export default 1;\n"
		}
		return fmt.Sprintf("tools/a%d/t.ts", i), fmt.Sprintf("export default %d;\n", i)
	})
	for i, err := range errs {
		if i == bad {
			if !errors.Is(err, ErrDeclined) {
				t.Fatalf("the refused writer: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("agent %d: %v", i, err)
		}
	}
	if got := pushedTogether.Load() - before; got != 0 {
		t.Fatalf("%d commits pushed together with the refused one", got)
	}
	gittest.Git(t, remote, "fsck", "--strict")
	tree := gittest.Git(t, remote, "ls-tree", "-r", "--name-only", "main")
	if strings.Contains(tree, "refuse-me") {
		t.Fatalf("the refused change is on the remote:\n%s", tree)
	}
	for i := 0; i < n; i++ {
		if i != bad && !strings.Contains(tree, fmt.Sprintf("tools/a%d/t.ts", i)) {
			t.Fatalf("change of agent %d lost:\n%s", i, tree)
		}
	}
	if got, want := gittest.Git(t, remote, "show", "main:"+DerivedFile), listing(t, remote, "main"); got != want {
		t.Fatalf("meta.json on the remote:\n%s\nwant\n%s", got, want)
	}
	for i, a := range agents {
		if i == bad {
			continue
		}
		checkRootConsistent(t, a, hooks[i], remote)
		if _, err := a.fs.ReadFile("tools/refuse-me.ts"); err == nil {
			t.Fatalf("root %d has the refused change", i)
		}
	}
}

// TestLeaderGivingUpPassesTheTurn: the writer leading the queue stops
// waiting for the remote's lock (its context ends); the writers queued
// behind it are not failed with it: the turn passes to them, and they go
// out together once the lock is free.
func TestLeaderGivingUpPassesTheTurn(t *testing.T) {
	gittest.RequireGit(t)
	remote := gittest.BareRemote(t)
	seed := newAgent(t, remote, true)
	seed.write(t, "README.md", "seed\n")
	a, b, c := newAgent(t, remote, true), newAgent(t, remote, true), newAgent(t, remote, false)
	gitdir, err := filepath.Abs(remote)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := acquireRefLock(context.Background(), gitdir, "refs/heads/main", true)
	if err != nil {
		t.Fatal(err)
	}
	q := writerQueueFor(gitdir, "refs/heads/main")
	waitQueued := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			q.mu.Lock()
			got := len(q.waiting)
			q.mu.Unlock()
			if got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d writers queued, want %d", got, n)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	aErr := make(chan error, 1)
	if err := a.fs.WriteFile("a.txt", []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := a.repo.Persist(ctx, Change{Paths: []string{"a.txt"}, Message: "forge: a.txt"})
		aErr <- err
	}()
	waitQueued(1)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, x := range []*agent{b, c} {
		p := fmt.Sprintf("x%d.txt", i)
		if err := x.fs.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(i int, x *agent) {
			defer wg.Done()
			_, errs[i] = x.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: "forge: " + p})
		}(i, x)
	}
	waitQueued(3)
	cancel()
	if err := <-aErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the writer that gave up: %v", err)
	}
	waitQueued(2)
	before := pushedTogether.Load()
	lk.release()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d behind the one that gave up: %v", i, err)
		}
	}
	if got := pushedTogether.Load() - before; got != 2 {
		t.Fatalf("%d commits pushed together, want 2", got)
	}
	tree := gittest.Git(t, remote, "ls-tree", "-r", "--name-only", "main")
	if !strings.Contains(tree, "x0.txt") || !strings.Contains(tree, "x1.txt") || strings.Contains(tree, "a.txt") {
		t.Fatalf("remote tree:\n%s", tree)
	}
	gittest.Git(t, remote, "fsck", "--strict")
	// The one that gave up pushes with its next persist.
	a.write(t, "a2.txt", "a2\n")
	tree = gittest.Git(t, remote, "ls-tree", "-r", "--name-only", "main")
	if !strings.Contains(tree, "a.txt") || !strings.Contains(tree, "a2.txt") {
		t.Fatalf("remote tree after the next persist:\n%s", tree)
	}
}

// TestLeaderWaitsForWritersCommitting: a writer given the turn waits for
// the writers that were making their commits at that moment, so they go
// in its batch; not for one that gave up, nor for one that started after.
func TestLeaderWaitsForWritersCommitting(t *testing.T) {
	saved := maxComingWait
	maxComingWait = time.Hour
	t.Cleanup(func() { maxComingWait = saved })
	q := &writerQueue{}
	ctx := context.Background()
	b, gone := q.expect(), q.expect()
	leader := &pushJob{}
	leader.reset()
	if err := q.join(ctx, leader); err != nil || !leader.designated {
		t.Fatalf("the first writer to join leads: %v %v", err, leader.designated)
	}
	late := make(chan *arrival, 1)
	joined := make(chan error, 1)
	go func() {
		// Once the leader waits: one writer gives up, one starts its
		// commit (after the turn was given: not waited for), and b
		// joins.
		for {
			q.mu.Lock()
			waiting := q.arrived != nil
			q.mu.Unlock()
			if waiting {
				break
			}
			time.Sleep(time.Millisecond)
		}
		gone.done()
		late <- q.expect()
		j := &pushJob{}
		j.reset()
		joined <- q.join(context.WithValue(ctx, arrivalKey{}, b), j)
	}()
	q.awaitComing(ctx)
	q.mu.Lock()
	batch := q.takeLocked(leader)
	q.mu.Unlock()
	if len(batch) != 2 {
		t.Fatalf("batch of %d, want the leader and the writer it waited for", len(batch))
	}
	c := <-late
	q.mu.Lock()
	stillComing := q.coming[c.t]
	q.mu.Unlock()
	if !stillComing {
		t.Fatal("the writer that started after the turn was given is no longer counted")
	}
	q.mu.Lock()
	q.handOffLocked()
	for _, j := range batch {
		j.done = true
		close(j.finished)
	}
	q.mu.Unlock()
	if err := <-joined; err != nil {
		t.Fatal(err)
	}
}
