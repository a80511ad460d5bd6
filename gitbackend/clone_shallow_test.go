package gitbackend

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestRegressBootFromShallowRemoteAsGit: a remote that is itself a
// shallow clone lists its boundary commits in its shallow file, and git's
// upload-pack reads them as having no parents even where a parent is in
// the remote (here the merged branch's commit, whose parent is main's
// own boundary commit). git clone records both as shallow; the boot read
// the branch's commit with its parent (differential seed 760009).
func TestRegressBootFromShallowRemoteAsGit(t *testing.T) {
	work := workRepo(t, "main")
	for i, c := range []string{"one", "two", "three"} {
		writeFile(t, work, "a.txt", strings.Repeat(c+"\n", i+1), 0o644)
		gittest.Git(t, work, "add", "-A")
		gittest.Git(t, work, "commit", "-q", "-m", c)
	}
	gittest.Git(t, work, "checkout", "-q", "-b", "side")
	writeFile(t, work, "b.txt", "side\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "on side")
	gittest.Git(t, work, "checkout", "-q", "main")
	gittest.Git(t, work, "merge", "-q", "--no-edit", "--no-ff", "side")
	remote := filepath.Join(t.TempDir(), "shallow")
	gittest.Git(t, "", "clone", "-q", "--no-local", "--depth", "2", "file://"+work, remote)
	if got := gittest.Git(t, remote, "rev-parse", "--is-shallow-repository"); got != "true\n" {
		t.Fatalf("remote not shallow: %q", got)
	}
	theirs := filepath.Join(t.TempDir(), "git-clone")
	gittest.Git(t, "", "clone", "-q", remote, theirs)
	view := func(dir string) string {
		lines := strings.Split(strings.TrimSpace(gittest.Git(t, dir, "log", "--format=%H %P", "HEAD")), "\n")
		sort.Strings(lines)
		return strings.Join(lines, "\n") + "\n" + gittest.Git(t, dir, "rev-parse", "--is-shallow-repository")
	}
	want := view(theirs)
	f, _, _, err := bootRoot(t, remote, "", false, "")
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	if got := view(f.Root()); got != want {
		t.Errorf("history differs from git clone's:\n%s\nwant\n%s", got, want)
	}
	if d := compareWithGitClone(t, remote, f.Root()); len(d) > 0 {
		t.Errorf("differs from git clone:\n%s", strings.Join(d, "\n"))
	}
}
