package gitbackend

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestPersistReflogsAsGit: the kernel's own moves of its branch are in
// the reflogs of the branch and of HEAD as git writes them for the
// commands that do the same: a persist's commit as git commit's ("commit:
// <subject>"), a refresh that moves to the remote's tip as git pull's
// fast-forward, after the clone's "clone: from <remote>". A twin made
// with the git CLI (its own copy of the remote) must read the same.
func TestPersistReflogsAsGit(t *testing.T) {
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

	a.write(t, "tools/new.ts", "export default 1;\n")
	gittest.WriteFile(t, twin, "tools/new.ts", "export default 1;\n")
	gittest.Git(t, twin, "add", "tools/new.ts")
	gittest.Git(t, twin, "commit", "-q", "-m", "forge: tools/new.ts")
	gittest.Git(t, twin, "push", "-q")

	// Someone else pushes to both remotes; both pull it.
	for _, r := range []string{remote, twinRemote} {
		other := gittest.Clone(t, r)
		gittest.WriteFile(t, other, "other.txt", "o\n")
		gittest.Git(t, other, "add", "other.txt")
		gittest.Git(t, other, "commit", "-q", "-m", "other")
		gittest.Git(t, other, "push", "-q")
	}
	if _, err := a.repo.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, twin, "pull")

	logs := func(dir, remote string) string {
		var b strings.Builder
		for _, ref := range []string{"HEAD", "main"} {
			out := gittest.Git(t, dir, "reflog", "show", "--format=%gs", ref)
			b.WriteString(ref + ":\n" + strings.ReplaceAll(out, remote, "<remote>"))
		}
		return b.String()
	}
	if got, want := logs(a.fs.Root(), remote), logs(twin, twinRemote); got != want {
		t.Errorf("reflogs differ from git's:\n--- kernel\n%s--- git\n%s", got, want)
	}
}
