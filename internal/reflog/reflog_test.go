package reflog

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
)

const stash = plumbing.ReferenceName("refs/stash")

func entry(i int) Entry {
	return Entry{
		Old:     plumbing.NewHash(fmt.Sprintf("%040x", i)),
		New:     plumbing.NewHash(fmt.Sprintf("%040x", i+1)),
		Who:     Ident("A U Thor", "a@example.com", time.Unix(1700000000+int64(i), 0).In(time.FixedZone("", 3600))),
		Message: fmt.Sprintf("On main: entry %d", i),
	}
}

func entries(n int) []Entry {
	var es []Entry
	for i := range n {
		es = append(es, entry(i))
	}
	return es
}

func TestAppendReadRoundTrip(t *testing.T) {
	dot := osfs.New(t.TempDir())
	for _, e := range entries(3) {
		if err := Append(dot, stash, e, true); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(dot, stash)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(entries(3)) {
		t.Fatalf("read %v\nwant %v", got, entries(3))
	}
	raw, _ := os.ReadFile(filepath.Join(dot.Root(), "logs/refs/stash"))
	want := "0000000000000000000000000000000000000000 0000000000000000000000000000000000000001 A U Thor <a@example.com> 1700000000 +0100\tOn main: entry 0\n"
	if !strings.HasPrefix(string(raw), want) {
		t.Errorf("first line %q, want git's %q", strings.SplitAfter(string(raw), "\n")[0], want)
	}
}

func TestAppendCondensesAndCreatesOnlyWhenAsked(t *testing.T) {
	dot := osfs.New(t.TempDir())
	tag := plumbing.ReferenceName("refs/tags/v1")
	if err := Append(dot, tag, entry(0), DefaultCreate(tag, "true")); err != nil {
		t.Fatal(err)
	}
	if es, _ := Read(dot, tag); es != nil {
		t.Fatalf("a tag got a log under logAllRefUpdates=true: %v", es)
	}
	e := entry(1)
	e.Message = "  commit:\tmany   spaces \n"
	head := plumbing.HEAD
	if err := Append(dot, head, e, DefaultCreate(head, "true")); err != nil {
		t.Fatal(err)
	}
	es, err := Read(dot, head)
	if err != nil || len(es) != 1 || es[0].Message != "commit: many spaces" {
		t.Fatalf("read %v, %v", es, err)
	}
}

// A writer that died mid-line leaves a partial line: the reader skips it
// and the next append starts on a line of its own.
// Both on disk and in memory (a root in memory keeps its .git there).
func TestTornAppendLosesNoEntry(t *testing.T) {
	for name, dot := range map[string]billy.Filesystem{"disk": osfs.New(t.TempDir()), "memory": memfs.New()} {
		for _, e := range entries(2) {
			if err := Append(dot, stash, e, true); err != nil {
				t.Fatal(err)
			}
		}
		f, err := dot.OpenFile("logs/refs/stash", os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write([]byte("0000000000000000000000000000000000000002 00000000"))
		f.Close()
		if err := Append(dot, stash, entry(2), true); err != nil {
			t.Fatal(err)
		}
		got, err := Read(dot, stash)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(entries(3)) {
			t.Fatalf("%s: read %v\nwant %v", name, got, entries(3))
		}
	}
}

func TestWriteReplacesAndEmptyRemoves(t *testing.T) {
	dot := osfs.New(t.TempDir())
	if err := Write(dot, stash, entries(4)); err != nil {
		t.Fatal(err)
	}
	kept := append(entries(4)[:1], entries(4)[2:]...)
	if err := Write(dot, stash, kept); err != nil {
		t.Fatal(err)
	}
	got, _ := Read(dot, stash)
	if fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Fatalf("read %v\nwant %v", got, kept)
	}
	if err := Write(dot, stash, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dot.Root(), "logs/refs/stash")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an emptied log stays: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dot.Root(), "logs/refs/stash.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock file stays: %v", err)
	}
}

// A write abandoned between the lock file and the rename leaves the log as
// it was and no lock behind.
func TestWriteFailingBeforeRenameKeepsLog(t *testing.T) {
	dot := osfs.New(t.TempDir())
	if err := Write(dot, stash, entries(3)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("fault before rename")
	if err := Write(dot, stash, entries(1), WithBeforeRename(func() error { return boom })); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the fault", err)
	}
	got, _ := Read(dot, stash)
	if fmt.Sprint(got) != fmt.Sprint(entries(3)) {
		t.Fatalf("read %v\nwant %v", got, entries(3))
	}
	if err := Write(dot, stash, entries(2)); err != nil {
		t.Fatalf("the abandoned write left its lock: %v", err)
	}
}

// TestCrashBetweenWriteAndRename kills a writer process (SIGKILL, no
// cleanup) after it has written the new log to the lock file and before
// the rename: the log keeps every entry, the next writer is refused with
// the lock named (as git refuses), and once the stale lock is removed the
// log is written again.
func TestCrashBetweenWriteAndRename(t *testing.T) {
	dir := t.TempDir()
	dot := osfs.New(dir)
	if err := Write(dot, stash, entries(5)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriterProcess$")
	cmd.Env = append(os.Environ(), "TGP_REFLOG_WRITER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "before rename\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("writer said %q, %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	got, err := Read(dot, stash)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(entries(5)) {
		t.Fatalf("after the crash the log reads %v\nwant %v", got, entries(5))
	}
	lock, err := os.ReadFile(filepath.Join(dir, "logs/refs/stash.lock"))
	if err != nil {
		t.Fatalf("no lock file left by the killed writer: %v", err)
	}
	if len(Parse(lock)) != 1 {
		t.Fatalf("the lock file holds %q, want the writer's one entry", lock)
	}
	var le *LockedError
	if err := Write(dot, stash, entries(2)); !errors.As(err, &le) || le.Lock != "logs/refs/stash.lock" {
		t.Fatalf("a write over the stale lock: %v, want a *LockedError naming it", err)
	}
	if got, _ := Read(dot, stash); len(got) != 5 {
		t.Fatalf("the refused write changed the log: %v", got)
	}
	if err := os.Remove(filepath.Join(dir, "logs/refs/stash.lock")); err != nil {
		t.Fatal(err)
	}
	if err := Write(dot, stash, entries(2)); err != nil {
		t.Fatal(err)
	}
	if got, _ := Read(dot, stash); fmt.Sprint(got) != fmt.Sprint(entries(2)) {
		t.Fatalf("read %v", got)
	}
}

// TestHelperWriterProcess is the writer TestCrashBetweenWriteAndRename
// kills: it drops all but one entry and stops before the rename.
func TestHelperWriterProcess(t *testing.T) {
	dir := os.Getenv("TGP_REFLOG_WRITER_DIR")
	if dir == "" {
		t.Skip("run by TestCrashBetweenWriteAndRename")
	}
	err := Write(osfs.New(dir), stash, entries(1), WithBeforeRename(func() error {
		fmt.Println("before rename")
		select {} // wait for SIGKILL
	}))
	t.Fatalf("the writer was not killed: %v", err)
}

func TestRenameRemoveFind(t *testing.T) {
	dot := osfs.New(t.TempDir())
	from, to := plumbing.NewBranchReferenceName("old"), plumbing.NewBranchReferenceName("dir/new")
	if err := Append(dot, from, entry(0), true); err != nil {
		t.Fatal(err)
	}
	if ref, ok := Find(dot, "old"); !ok || ref != from {
		t.Fatalf("Find(old) = %q, %v", ref, ok)
	}
	if err := Rename(dot, from, to); err != nil {
		t.Fatal(err)
	}
	if es, _ := Read(dot, to); len(es) != 1 {
		t.Fatalf("renamed log reads %v", es)
	}
	if _, ok := Find(dot, "old"); ok {
		t.Fatal("the old name still has a log")
	}
	if err := Rename(dot, from, to); err != nil {
		t.Fatalf("renaming a ref with no log: %v", err)
	}
	if err := Remove(dot, to); err != nil {
		t.Fatal(err)
	}
	if err := Remove(dot, to); err != nil {
		t.Fatalf("removing a missing log: %v", err)
	}
	if _, ok := Find(dot, ""); ok {
		t.Fatal("HEAD has a log in an empty directory")
	}
}

// TestDefaultCreateAsGit: under each core.logAllRefUpdates, a ref moved by
// git update-ref gets a log exactly when DefaultCreate says so.
func TestDefaultCreateAsGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	refs := []plumbing.ReferenceName{"refs/heads/b", "refs/remotes/origin/b", "refs/notes/commits",
		"refs/tags/v1", "refs/stash", "refs/other/x", "refs/headsx/y"}
	for _, mode := range []string{"", "true", "always", "false", "no", "1"} {
		dir := t.TempDir()
		git := func(args ...string) {
			t.Helper()
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
				"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@e", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@e")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		git("init", "-q")
		if mode != "" {
			git("config", "core.logAllRefUpdates", mode)
		}
		git("commit", "-q", "--allow-empty", "-m", "one")
		for _, ref := range refs {
			git("update-ref", "-m", "moved", ref.String(), "HEAD")
			_, err := os.Stat(filepath.Join(dir, ".git", Path(ref)))
			if got, want := DefaultCreate(ref, mode), err == nil; got != want {
				t.Errorf("logAllRefUpdates=%q: %s: DefaultCreate %v, git logged it: %v", mode, ref, got, want)
			}
		}
	}
}
