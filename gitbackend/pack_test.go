package gitbackend

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// Guard limits for one persist (a new file in a directory two levels
// down, pushed to a local remote). They were measured once a persist
// wrote its objects as one pack and kept the index decoded (5 files,
// ~2,100 allocations, where a persist used to create ~15 files and make
// ~6,800 allocations), then raised by what the reflog entries git writes
// for a commit and a push cost (three appends: ~170 allocations, ~220
// under -race), then by what resolving the commit signer (git's
// commit.gpgsign / gpg.format / user.signingkey, read with the identity)
// and the root id of the machine queue cost: 2,253 allocations before,
// 2,488 after, without -race (2,621 under it); a change that makes a
// persist create more files or allocate much more fails here.
const (
	maxFilesPerPersist  = 5
	maxAllocsPerPersist = 2800
)

// fileIDs maps every file under the directories to its inode: a path that
// is new, or whose inode changed (renamed over), was created.
func fileIDs(t *testing.T, dirs ...string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			info, err := e.Info()
			if err != nil {
				return nil // removed while walking
			}
			out[p] = inodeOf(info)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestPersistFileAndAllocGuard counts what one persist creates and
// allocates. It is not timed: the counts do not depend on the machine.
func TestPersistFileAndAllocGuard(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "x\n", "tools/a/one.ts": "1\n"})
	a := newAgent(t, remote, false)
	for i := 0; i < 3; i++ { // warm: the index cache, the open packs
		a.write(t, fmt.Sprintf("tools/w/warm%d.ts", i), "w\n")
	}
	p := "tools/w/new.ts"
	if err := a.fs.WriteFile(p, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileIDs(t, a.fs.Root(), remote)
	temps := a.repo.store.Filesystem().(*storeFS).temps.Load()
	if _, err := a.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: "forge: " + p}); err != nil {
		t.Fatal(err)
	}
	// Nor one created and removed: go-git's pack writer, which storePack
	// asks only to register the pack, gets a file in memory.
	if n := a.repo.store.Filesystem().(*storeFS).temps.Load() - temps; n != 0 {
		t.Errorf("one persist made %d temporary files through the store", n)
	}
	var created []string
	for f, ino := range fileIDs(t, a.fs.Root(), remote) {
		if old, ok := before[f]; !ok || old != ino {
			created = append(created, f)
		}
	}
	t.Logf("files created by one persist: %d %v", len(created), created)
	if len(created) > maxFilesPerPersist {
		t.Errorf("one persist created %d files (limit %d): %v", len(created), maxFilesPerPersist, created)
	}
	n := 0
	allocs := testing.AllocsPerRun(20, func() {
		n++
		p := fmt.Sprintf("tools/w/g%d.ts", n)
		if err := a.fs.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := a.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: "forge: " + p}); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("allocations per persist: %.0f", allocs)
	if allocs > maxAllocsPerPersist {
		t.Errorf("one persist made %.0f allocations (limit %d)", allocs, maxAllocsPerPersist)
	}
	gittest.Git(t, remote, "fsck", "--strict")
	gittest.Git(t, a.fs.Root(), "fsck", "--strict")
}

// TestPacksMergedAndComplete: many persists from two roots leave few
// packs on the remote and in the roots, and both pass git fsck with every
// file where it belongs.
func TestPacksMergedAndComplete(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	a := newAgent(t, remote, false)
	b := newAgent(t, remote, true)
	const n = 45
	for i := 0; i < n; i++ {
		a.write(t, fmt.Sprintf("d/a%d.txt", i), fmt.Sprintf("a %d\n", i))
		b.write(t, fmt.Sprintf("e/b%d.txt", i), fmt.Sprintf("b %d\n", i))
	}
	countPacks := func(gitdir string) int {
		m, _ := filepath.Glob(filepath.Join(gitdir, "objects", "pack", "*.pack"))
		return len(m)
	}
	if got := countPacks(remote); got > maxSmallPacks+1 {
		t.Errorf("%d packs on the remote after %d pushes", got, 2*n)
	}
	if got := countPacks(filepath.Join(a.fs.Root(), ".git")); got > maxSmallPacks+1 {
		t.Errorf("%d packs in the root after %d persists", got, 2*n)
	}
	gittest.Git(t, remote, "fsck", "--strict")
	gittest.Git(t, a.fs.Root(), "fsck", "--strict")
	clone := gittest.Clone(t, remote)
	for i := 0; i < n; i++ {
		for _, p := range []string{fmt.Sprintf("d/a%d.txt", i), fmt.Sprintf("e/b%d.txt", i)} {
			if _, err := os.Stat(filepath.Join(clone, p)); err != nil {
				t.Fatalf("%s missing on the remote: %v", p, err)
			}
		}
	}
	if st := gittest.Git(t, a.fs.Root(), "status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Fatalf("the root is not clean after its persists:\n%s", st)
	}
}

// TestIndexCacheSeesOtherWriters: an index rewritten behind the cache's
// back (same size, same second) is read again, not overwritten with the
// cached one.
func TestIndexCacheSeesOtherWriters(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	a := newAgent(t, remote, false)
	a.write(t, "b.txt", "b\n") // the cache now holds the index
	// A git tool stages c.txt through go-git, in place.
	if err := a.fs.WriteFile("c.txt", []byte("c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := StagePaths(a.repo.store, a.repo.wt, []string{"c.txt"}); err != nil {
		t.Fatal(err)
	}
	a.write(t, "d.txt", "d\n")
	out := gittest.Git(t, a.fs.Root(), "ls-files", "--stage")
	if !strings.Contains(out, "\tc.txt") {
		t.Fatalf("c.txt, staged by another writer, is gone from the index:\n%s", out)
	}
	h := plumbing.ComputeHash(plumbing.BlobObject, []byte("c\n")).String()
	if !strings.Contains(out, h) {
		t.Fatalf("c.txt staged with the wrong blob:\n%s", out)
	}
}
