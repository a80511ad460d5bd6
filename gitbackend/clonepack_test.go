package gitbackend

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// countObjects is `git count-objects -v` as a map.
func gitCountObjects(t *testing.T, dir string) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(gittest.Git(t, dir, "count-objects", "-v")), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		m[k], _ = strconv.Atoi(v)
	}
	return m
}

// deltaCount is the number of delta entries in dir's packs.
func deltaCount(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	for _, idx := range idxs {
		for _, l := range strings.Split(gittest.Git(t, dir, "verify-pack", "-v", idx), "\n") {
			if f := strings.Fields(l); len(f) == 7 && len(f[0]) == 40 {
				n++ // sha type size size-in-pack offset depth base
			}
		}
	}
	return n
}

// TestBootKeepsTheRemotesDeltas: a root booted from a long history over
// file:// stores one pack with its deltas, as git clone does: git fsck
// --strict finds nothing wrong, no object is loose, and the pack is
// within 1.5× of git clone's. Every object git clone gets is there.
func TestBootKeepsTheRemotesDeltas(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "h.git")
	gittest.History(t, remote, gittest.HistoryOptions{Seed: 7, Commits: 300, Dirs: 3, FilesPerDir: 5, BigLines: 400, BigEvery: 3, Repack: true})
	// A second pack and a loose object on the remote, as pushes leave
	// them, and a branch and an annotated tag besides main.
	work := gittest.Clone(t, remote)
	writeFile(t, work, "later.txt", "later\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "later")
	gittest.Git(t, work, "push", "-q", "origin", "main:side")
	gittest.Git(t, work, "tag", "-a", "-m", "v1", "v1", "HEAD~5")
	gittest.Git(t, work, "push", "-q", "origin", "v1")
	blob := strings.TrimSpace(gittest.GitStdin(t, remote, "loose\n", "hash-object", "-w", "--stdin"))
	gittest.Git(t, remote, "tag", "loose-blob", blob)

	_, r, _, err := bootRoot(t, "file://"+remote, "main", false, "")
	if err != nil {
		t.Fatal(err)
	}
	root := r.wt.Root()
	gittest.Git(t, root, "fsck", "--strict", "--no-dangling")
	ours := gitCountObjects(t, root)
	clone := filepath.Join(t.TempDir(), "c")
	gittest.Git(t, "", "clone", "-q", "file://"+remote, clone)
	theirs := gitCountObjects(t, clone)
	if ours["count"] != 0 || ours["packs"] != 1 {
		t.Fatalf("count-objects: %v (want no loose object, one pack)", ours)
	}
	if ours["in-pack"] != theirs["in-pack"] {
		t.Fatalf("%d objects, git clone has %d", ours["in-pack"], theirs["in-pack"])
	}
	if float64(ours["size-pack"]) > 1.5*float64(theirs["size-pack"]) {
		t.Fatalf("pack of %d KiB, git clone's %d KiB", ours["size-pack"], theirs["size-pack"])
	}
	if deltaCount(t, root) == 0 {
		t.Fatal("the pack holds no delta")
	}
	for _, rev := range []string{"refs/remotes/origin/side", "refs/tags/v1", "refs/tags/loose-blob"} {
		if a, b := gittest.Git(t, root, "rev-parse", rev), gittest.Git(t, clone, "rev-parse", rev); a != b {
			t.Fatalf("%s: %s, git clone has %s", rev, a, b)
		}
	}
}

// TestBootDeltaOfAnUnreachableBase: a delta whose base the clone does not
// take (an object only a deleted branch reached) is stored whole; the
// objects of the deleted branch are not taken.
func TestBootDeltaOfAnUnreachableBase(t *testing.T) {
	work := workRepo(t, "main")
	big := make([]byte, 6000)
	_, _ = rand.Read(big)
	body := fmt.Sprintf("%x\n", big)
	writeFile(t, work, "f.txt", body, 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "main")
	gittest.Git(t, work, "checkout", "-q", "-b", "tmp")
	writeFile(t, work, "f.txt", body+strings.Repeat("more\n", 400), 0o644)
	gittest.Git(t, work, "commit", "-q", "-am", "bigger")
	remote := bareFrom(t, work, "main")
	gittest.Git(t, remote, "repack", "-adfq")
	gittest.Git(t, remote, "update-ref", "-d", "refs/heads/tmp")
	mainBlob := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main:f.txt"))
	tmpBlob := strings.TrimSpace(gittest.Git(t, work, "rev-parse", "tmp:f.txt"))
	idx, _ := filepath.Glob(filepath.Join(remote, "objects", "pack", "*.idx"))
	if !strings.Contains(gittest.Git(t, remote, "verify-pack", "-v", idx[0]), mainBlob) ||
		!strings.Contains(gittest.Git(t, remote, "verify-pack", "-v", idx[0]), " "+tmpBlob) {
		t.Skip("git did not make main's blob a delta of the deleted branch's")
	}
	var line string
	for _, l := range strings.Split(gittest.Git(t, remote, "verify-pack", "-v", idx[0]), "\n") {
		if strings.HasPrefix(l, mainBlob) {
			line = l
		}
	}
	if !strings.HasSuffix(line, tmpBlob) {
		t.Skipf("main's blob is not a delta of the deleted branch's: %s", line)
	}
	_, r, _, err := bootRoot(t, "file://"+remote, "main", false, "")
	if err != nil {
		t.Fatal(err)
	}
	root := r.wt.Root()
	gittest.Git(t, root, "fsck", "--strict")
	if _, err := gittest.GitErr(root, "cat-file", "-e", tmpBlob); err == nil {
		t.Fatal("the deleted branch's blob was cloned")
	}
	if got, err := os.ReadFile(filepath.Join(root, "f.txt")); err != nil || string(got) != body {
		t.Fatalf("f.txt checked out as %d bytes: %v", len(got), err)
	}
}

// TestBootWritesGitsCommitGraph: the boot leaves the commit-graph git
// would write for the clone (`git commit-graph write --reachable
// --changed-paths`, byte for byte), which `git commit-graph verify`
// accepts, and git's path-limited log reads through it what it reads
// without it.
func TestBootWritesGitsCommitGraph(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "h.git")
	gittest.History(t, remote, gittest.HistoryOptions{Seed: 9, Commits: 400, Dirs: 4, FilesPerDir: 4, BigLines: 100, BigEvery: 4, Repack: true})
	work := gittest.Clone(t, remote)
	gittest.Git(t, work, "checkout", "-q", "-b", "side", "HEAD~20")
	writeFile(t, work, "side.txt", "side\n", 0o644)
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "side")
	gittest.Git(t, work, "push", "-q", "origin", "side")
	_, r, _, err := bootRoot(t, "file://"+remote, "main", false, "")
	if err != nil {
		t.Fatal(err)
	}
	root := r.wt.Root()
	ours, err := os.ReadFile(filepath.Join(root, ".git/objects/info/commit-graph"))
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, root, "commit-graph", "verify")
	copyDir := filepath.Join(t.TempDir(), "copy.git")
	gittest.Git(t, "", "clone", "-q", "--bare", "--no-local", root, copyDir)
	gittest.Git(t, copyDir, "fetch", "-q", "file://"+remote, "+refs/heads/*:refs/remotes/origin/*")
	gittest.Git(t, copyDir, "commit-graph", "write", "--reachable", "--changed-paths")
	theirs, err := os.ReadFile(filepath.Join(copyDir, "objects/info/commit-graph"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, theirs) {
		t.Fatalf("commit-graph of %d bytes, git writes %d", len(ours), len(theirs))
	}
	for _, p := range []string{"pkg01/file02.go", "big/blame.txt", "pkg03", "side.txt"} {
		want := gittest.Git(t, root, "-c", "core.commitGraph=false", "log", "--all", "--format=%H", "--", p)
		if got := gittest.Git(t, root, "log", "--all", "--format=%H", "--", p); got != want {
			t.Fatalf("git log -- %s through the graph differs", p)
		}
	}
}
