package gitbackend

import (
	"path/filepath"
	"sort"
	"strconv"
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
	view := func(dir string) string {
		lines := strings.Split(strings.TrimSpace(gittest.Git(t, dir, "log", "--format=%H %P", "HEAD")), "\n")
		sort.Strings(lines)
		return strings.Join(lines, "\n") + "\n" + gittest.Git(t, dir, "rev-parse", "--is-shallow-repository")
	}
	// Depth 0 is a whole clone (the boot's packed walk); a depth a copy
	// of the remote's commits (--depth 3 and 5 reach its shallow ones).
	for _, depth := range []int{0, 1, 3, 5} {
		theirs := filepath.Join(t.TempDir(), "git-clone")
		if depth > 0 {
			gittest.Git(t, "", "clone", "-q", "--depth", strconv.Itoa(depth), "file://"+remote, theirs)
		} else {
			gittest.Git(t, "", "clone", "-q", remote, theirs)
		}
		f, _, _, err := bootRootDepth(t, remote, "", false, "", depth)
		if err != nil {
			t.Fatalf("depth %d: boot: %v", depth, err)
		}
		if got, want := view(f.Root()), view(theirs); got != want {
			t.Errorf("depth %d: history differs from git clone's:\n%s\nwant\n%s", depth, got, want)
		}
		if d := compareWithGitCloneDepth(t, remote, f.Root(), depth); len(d) > 0 {
			t.Errorf("depth %d: differs from git clone:\n%s", depth, strings.Join(d, "\n"))
		}
	}
}
