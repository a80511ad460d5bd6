package gitbackend

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/internal/gitformat"
)

// Guard limits for one persist (a new file in a directory two levels
// down, pushed to a local remote). They were measured after the pack and
// index work of issue #15 (5 files, ~2,100 allocations, where a persist
// used to create ~15 files and make ~6,800 allocations); a change that
// makes a persist create more files or allocate much more fails here.
const (
	maxFilesPerPersist  = 5
	maxAllocsPerPersist = 2400
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

// TestEncodeIndexMatchesGoGit: the index encoder writes what go-git's
// does, byte for byte, for random entries (stages, long names, flags).
func TestEncodeIndexMatchesGoGit(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 50; round++ {
		idx := &index.Index{Version: uint32(2 + round%2)}
		for i := 0; i < rng.Intn(40); i++ {
			name := fmt.Sprintf("d%d/f%d", rng.Intn(5), rng.Intn(1000))
			if rng.Intn(10) == 0 {
				name = strings.Repeat("x", 4000+rng.Intn(200)) + name
			}
			e := &index.Entry{Name: name, Mode: filemode.Regular, Size: uint32(rng.Intn(1 << 20)),
				Dev: uint32(rng.Intn(100)), Inode: rng.Uint32(), UID: 1000, GID: 1000}
			rng.Read(e.Hash[:])
			if rng.Intn(2) == 0 {
				e.ModifiedAt = time.Unix(int64(rng.Intn(2e9)), int64(rng.Intn(1e9)))
				e.CreatedAt = e.ModifiedAt
			}
			if idx.Version == 3 && rng.Intn(4) == 0 {
				e.IntentToAdd = true
			}
			idx.Entries = append(idx.Entries, e)
		}
		// Distinct names: git's order for equal names (by stage) is one
		// go-git's sort leaves unspecified.
		seen := map[string]bool{}
		kept := idx.Entries[:0]
		for _, e := range idx.Entries {
			if !seen[e.Name] {
				seen[e.Name] = true
				kept = append(kept, e)
			}
		}
		idx.Entries = kept
		var want bytes.Buffer
		if err := index.NewEncoder(&want).Encode(idx); err != nil {
			t.Fatal(err)
		}
		got, err := gitformat.EncodeIndex(nil, idx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("round %d: EncodeIndex differs from go-git's encoder (%d vs %d bytes)", round, len(got), want.Len())
		}
		back := &index.Index{}
		if err := index.NewDecoder(bytes.NewReader(got)).Decode(back); err != nil || len(back.Entries) != len(idx.Entries) {
			t.Fatalf("round %d: decode: %v", round, err)
		}
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

// TestPackReaderMatchesGoGit: every object of a repository git packed
// (with deltas) reads the same through packReader as through go-git, and
// raw entries, where given, are whole objects that inflate to it.
func TestPackReaderMatchesGoGit(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("d%d/f%d.txt", i%3, i)] = strings.Repeat(fmt.Sprintf("line %d\n", i%4), 50+i)
	}
	remote := gittest.SeedRemote(t, files)
	clone := gittest.Clone(t, remote)
	for i := 0; i < 5; i++ { // similar versions: git stores deltas
		p := filepath.Join(clone, "d0", "f0.txt")
		if err := os.WriteFile(p, []byte(strings.Repeat("line 0\n", 60+i)+"end\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, clone, "commit", "-qam", fmt.Sprint("v", i))
	}
	gittest.Git(t, clone, "push", "-q", "origin", "main")
	gittest.Git(t, remote, "gc", "-q", "--aggressive")
	ref := (&localRemote{path: remote}).open()
	defer ref.Close()
	pr, err := openPackReader(remote, (&localRemote{path: remote}).open, &packCache{})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var enc packEncoder
	var hashes []plumbing.Hash
	for _, line := range strings.Split(strings.TrimSpace(gittest.Git(t, remote, "rev-list", "--objects", "--all")), "\n") {
		h := plumbing.NewHash(strings.Fields(line)[0])
		hashes = append(hashes, h)
		want, err := ref.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pr.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		if got.Type() != want.Type() || got.Hash() != want.Hash() {
			t.Fatalf("%s: read %s %s, go-git %s %s", h, got.Type(), got.Hash(), want.Type(), want.Hash())
		}
	}
	// A pack made from the reader (raw entries copied) is a valid pack.
	p, err := enc.encode(pr, hashes)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	gittest.Git(t, "", "init", "-q", "--bare", dst)
	if err := writePackFiles(dst, p, nil); err != nil {
		t.Fatal(err)
	}
	out := gittest.Git(t, dst, "verify-pack", "-v", filepath.Join(dst, "objects", "pack", "pack-"+p.sum.String()+".idx"))
	if !strings.Contains(out, fmt.Sprintf("non delta: %d objects", len(hashes))) {
		t.Fatalf("verify-pack:\n%s", out)
	}
}
