package gitbackend

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// forgeTicket writes a ticket by hand into the machine queue, as another
// process of the user can: a JSON file named <id>.ticket.
func forgeTicket(t *testing.T, q *machineQueue, tk ticket, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(q.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tk)
	p := q.ticketPath(tk.ID)
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// evilClone is a plain git clone of bare with a commit adding
// tools/evil.ts: its .git, the commit and its parent.
func evilClone(t *testing.T, bare string) (gitdir, base, head string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "evil")
	gittest.Git(t, "", "clone", "-q", bare, dir)
	if err := os.WriteFile(filepath.Join(dir, "tools-evil.ts"), []byte("evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "-c", "user.name=E", "-c", "user.email=e@example.com", "commit", "-q", "-m", "evil")
	return filepath.Join(dir, ".git"), strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD~1")),
		strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
}

// TestForgedTicketIsNeverPushed: another process of the user writes
// tickets into this machine's queue naming a plain clone (or a root of
// this machine, with commits not its own) and an evil commit. The next
// persist that leads pushed them to main; now each is refused, removed
// with its result, reported (progress and Status), and the remote never
// sees the commit. A ticket from a real root still rides along.
func TestForgedTicketIsNeverPushed(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	url := srv.URL(filepath.Base(bare))
	locks := t.TempDir()
	var mu sync.Mutex
	var lines []string
	leader := machineAgentWith(t, url, locks, RetryConfig{BaseDelay: 2 * time.Millisecond})
	leader.repo.cfg.Progress = func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }
	victim := machineAgent(t, url, locks)
	victimGit := filepath.Join(victim.fs.Root(), ".git")
	victimID, err := readRootID(victimGit)
	if err != nil {
		t.Fatalf("a root of a machine-queue remote has no id after boot: %v", err)
	}
	evilGit, base, head := evilClone(t, bare)
	// The evil commit also copied into the victim root's objects, on no
	// branch of it.
	gittest.Git(t, "", "--git-dir="+victimGit, "fetch", "-q", evilGit, "HEAD:refs/evil")

	q := machineQueueFor(locks, url, "main")
	created := time.Now().Add(-time.Second).UnixNano()
	tk := func(id, gitdir, rootID, b, h string) ticket {
		return ticket{ID: id, Remote: redact(url), Branch: "main", Base: b, Head: h, GitDir: gitdir, RootID: rootID, Created: created}
	}
	forged := map[string]string{
		"plain clone":                 forgeTicket(t, q, tk("1-plain", evilGit, "", base, head), 0o600),
		"plain clone, guessed id":     forgeTicket(t, q, tk("1-guessed", evilGit, victimID, base, head), 0o600),
		"root, commit off its branch": forgeTicket(t, q, tk("1-offbranch", victimGit, victimID, base, head), 0o600),
		"root, wrong id":              forgeTicket(t, q, tk("1-wrongid", victimGit, strings.Repeat("0", 32), base, head), 0o600),
		"root, base not an ancestor":  forgeTicket(t, q, tk("1-nobase", victimGit, victimID, strings.Repeat("1", 40), mustRev(t, victimGit, "main")), 0o600),
		"relative gitdir":             forgeTicket(t, q, tk("1-relative", "evil/.git", "", base, head), 0o600),
	}
	if runtime.GOOS != "windows" {
		forged["readable by others"] = forgeTicket(t, q, tk("1-mode", evilGit, "", base, head), 0o644)
		link := q.ticketPath("1-link")
		if err := os.Symlink(forged["plain clone"], link); err != nil {
			t.Fatal(err)
		}
		forged["symlink"] = link
	}
	// A result planted beside a forged ticket (nobody waits for it) goes
	// with it.
	planted := q.resultPath("1-plain")
	if err := os.WriteFile(planted, []byte(`{"commit":"`+head+`","final":"`+head+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	leader.write(t, "tools/ok.ts", "ok\n")
	if _, err := os.Lstat(planted); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the result planted beside a forged ticket is left (%v)", err)
	}

	files := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
	if strings.Contains(files, "evil") || strings.Contains(gittest.Git(t, bare, "log", "--format=%s", "main"), "evil") {
		t.Fatalf("a forged ticket's commit was pushed:\n%s", files)
	}
	if !strings.Contains(files, "tools/ok.ts") {
		t.Fatalf("the leader's own change is not on the remote:\n%s", files)
	}
	for name, p := range forged {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: forged ticket %s left in the queue (%v)", name, filepath.Base(p), err)
		}
	}
	mu.Lock()
	warned := strings.Count(strings.Join(lines, "\n"), "warning: machine queue:")
	mu.Unlock()
	if warned < len(forged) {
		t.Errorf("%d warnings for %d forged tickets in the leader's log:\n%s", warned, len(forged), strings.Join(lines, "\n"))
	}
	st, err := victim.repo.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Warnings) < len(forged) {
		t.Errorf("status reports %d refusals for %d forged tickets: %q", len(st.Warnings), len(forged), st.Warnings)
	}
	if runtime.GOOS != "windows" {
		for _, p := range []string{q.dir, filepath.Join(q.dir, "tip"), filepath.Join(q.dir, refusedLog)} {
			info, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s is %v: open to other users", p, info.Mode().Perm())
			}
		}
	}
}

func mustRev(t *testing.T, gitdir, rev string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, "", "--git-dir="+gitdir, "rev-parse", rev))
}

// TestTicketFromARootOfTheMachineIsTaken: a root's own ticket (its id,
// commits on its branch above its base) passes the leader's check; so
// does one whose commit its branch has since moved past (the reflog).
func TestTicketFromARootOfTheMachineIsTaken(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	url := srv.URL(filepath.Base(bare))
	locks := t.TempDir()
	a, b := machineAgent(t, url, locks), machineAgent(t, url, locks)
	b.write(t, "tools/b1.ts", "b1\n")
	bGit := filepath.Join(b.fs.Root(), ".git")
	id, err := readRootID(bGit)
	if err != nil {
		t.Fatal(err)
	}
	q := machineQueueFor(locks, url, "main")
	first := mustRev(t, bGit, "main")
	b.write(t, "tools/b2.ts", "b2\n")
	for _, h := range []string{mustRev(t, bGit, "main"), first} {
		tk := &ticket{ID: "t-" + h[:7], Remote: redact(url), Branch: "main", Base: mustRev(t, bGit, "main~2"), Head: h, GitDir: bGit, RootID: id}
		if err := a.repo.checkTicket(q, tk); err != nil {
			t.Errorf("a root's own ticket (head %s) refused: %v", h[:7], err)
		}
	}
}

// TestQueueRefusesASymlinkedSpool: a spool directory that is a symlink
// is never used; the persist pushes alone (and lands).
func TestQueueRefusesASymlinkedSpool(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on windows")
	}
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	url := srv.URL(filepath.Base(bare))
	locks := t.TempDir()
	q := machineQueueFor(locks, url, "main")
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, q.dir); err != nil {
		t.Fatal(err)
	}
	if err := q.open(); !errors.Is(err, ErrForged) {
		t.Fatalf("a symlinked spool: %v, want ErrForged", err)
	}
	a := machineAgent(t, url, locks)
	a.write(t, "tools/a.ts", "a\n")
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("tgp wrote %d file(s) through the symlinked spool", len(ents))
	}
}

// TestForgedResultIsNotAdopted: while a root waits for the leader, another
// process writes the result of its ticket naming a plain clone's .git and
// a commit in it as pushed. The waiting root took it: it copied the
// clone's objects and moved its branch to that commit. Now objects are
// read only from a root of this machine (its id in the result), else
// taken only if the remote holds its commit: the root stays where it
// was, its commit pending for the next push.
func TestForgedResultIsNotAdopted(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	url := srv.URL(filepath.Base(bare))
	locks := t.TempDir()
	b := machineAgent(t, url, locks)
	evilGit, _, evil := evilClone(t, bare)
	// The forged commit's objects are even in the root already: reading
	// them from nowhere is not the check.
	bGit := filepath.Join(b.fs.Root(), ".git")
	gittest.Git(t, "", "--git-dir="+bGit, "fetch", "-q", evilGit, "HEAD:refs/evil")
	q := machineQueueFor(locks, url, "main")
	if err := q.open(); err != nil {
		t.Fatal(err)
	}
	if ok, err := q.lock.TryLock(); err != nil || !ok {
		t.Fatalf("take the machine's turn: %v", err)
	}
	defer q.unlock()
	if err := b.fs.WriteFile("tools/b.ts", []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := b.repo.Persist(ctx, Change{Paths: []string{"tools/b.ts"}, Message: "forge: tools/b.ts"})
		done <- err
	}()
	// The attacker waits for the ticket and answers it.
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ents, _ := os.ReadDir(q.dir)
		for _, e := range ents {
			if n, ok := strings.CutSuffix(e.Name(), ".ticket"); ok {
				id = n
			}
		}
	}
	if id == "" {
		t.Fatal("no ticket queued")
	}
	res, _ := json.Marshal(ticketResult{Commit: evil, Final: evil, LeaderGitDir: evilGit, Attempts: 1, Batched: 1})
	if err := os.WriteFile(q.resultPath(id), res, 0o600); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if !errors.Is(err, ErrForged) || !errors.Is(err, ErrPending) {
		t.Fatalf("persist given a forged result: %v, want ErrForged with the commit pending", err)
	}
	if got := mustRev(t, bGit, "main"); got == evil {
		t.Fatalf("the root's branch moved to the forged commit %s", evil[:7])
	}
	if _, err := b.fs.ReadFile("tools-evil.ts"); err == nil {
		t.Fatal("the forged commit's file is in the root")
	}
}
