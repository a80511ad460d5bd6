package gitbackend

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
