package gitbackend

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestKnownReplayLogsOnlyTheFinish: a persist that replays the root's
// commit onto a remote that moved logs the branch as git pull --rebase's
// finish, HEAD with the branch's entry, and the push; git pull --rebase
// logs on HEAD its start, each pick and a finish of its own ("returning
// to"), and its fetch on the remote-tracking branch.
// Still open: the replay is made in memory (HEAD never points at the
// commits git's start and picks name in this root) and the fetch is
// go-git's, which logs nothing.
func TestKnownReplayLogsOnlyTheFinish(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
	twinRemote := filepath.Join(t.TempDir(), "twin.git")
	if out, err := exec.Command("cp", "-a", remote, twinRemote).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	a := newAgent(t, remote, false)
	twin := filepath.Join(t.TempDir(), "twin")
	gittest.Git(t, "", "clone", "-q", "-b", "main", twinRemote, twin)
	gittest.Git(t, twin, "config", "user.name", "Agent")
	gittest.Git(t, twin, "config", "user.email", "agent@example.com")
	// Someone else pushes to both remotes first.
	for _, r := range []string{remote, twinRemote} {
		other := gittest.Clone(t, r)
		gittest.WriteFile(t, other, "other.txt", "o\n")
		gittest.Git(t, other, "add", "other.txt")
		gittest.Git(t, other, "commit", "-q", "-m", "other")
		gittest.Git(t, other, "push", "-q")
	}
	a.write(t, "tools/new.ts", "export default 1;\n")
	if _, err := a.repo.Persist(context.Background(), Change{Paths: []string{"tools/new.ts"}, Message: "forge: tools/new.ts"}); err != nil {
		t.Fatal(err)
	}
	gittest.WriteFile(t, twin, "tools/new.ts", "export default 1;\n")
	gittest.Git(t, twin, "add", "tools/new.ts")
	gittest.Git(t, twin, "commit", "-q", "-m", "forge: tools/new.ts")
	gittest.Git(t, twin, "pull", "--rebase") // not quiet: -q is in git's messages
	gittest.Git(t, twin, "push", "-q")
	logs := func(dir, remote string) map[string]string {
		out := map[string]string{}
		for _, ref := range []string{"HEAD", "main", "origin/main"} {
			s := gittest.Git(t, dir, "reflog", "show", "--format=%gs", ref)
			// Commit names differ (the dates): keep the messages' words.
			for _, h := range strings.Fields(gittest.Git(t, dir, "rev-list", "--all")) {
				s = strings.ReplaceAll(s, h, "<commit>")
			}
			out[ref] = strings.ReplaceAll(s, remote, "<remote>")
		}
		return out
	}
	got, want := logs(a.fs.Root(), remote), logs(twin, twinRemote)
	if got["main"] != want["main"] {
		t.Errorf("the branch's log differs from git's:\n--- kernel\n%s--- git\n%s", got["main"], want["main"])
	}
	for _, ref := range []string{"HEAD", "origin/main"} {
		var missing []string
		for _, l := range strings.Split(want[ref], "\n") {
			if l != "" && !strings.Contains(got[ref], l+"\n") {
				missing = append(missing, l)
			}
		}
		var wantMissing []string
		if ref == "HEAD" {
			wantMissing = []string{"pull --rebase (finish): returning to refs/heads/main", "pull --rebase (pick): forge: tools/new.ts", "pull --rebase (start): checkout <commit>"}
		} else {
			wantMissing = []string{"pull --rebase: fast-forward"}
		}
		if strings.Join(missing, "|") != strings.Join(wantMissing, "|") {
			t.Errorf("%s: git's entries the kernel lacks %q, want %q (is the difference closed? update docs/git-fidelity.md)\n--- kernel\n%s--- git\n%s", ref, missing, wantMissing, got[ref], want[ref])
		}
	}
}
