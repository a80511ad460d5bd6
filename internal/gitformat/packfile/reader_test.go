package packfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestReaderMatchesGoGit: every object of a repository git packed (with
// deltas) reads the same through Reader and DeltaReader as through go-git;
// a pack encoded from the Reader (whole objects' entries copied as they
// are), and one copied from its packs deltas included (CopyPack), are
// packs git verifies.
func TestReaderMatchesGoGit(t *testing.T) {
	gittest.RequireGit(t)
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
	open := func() *filesystem.Storage {
		return filesystem.NewStorage(osfs.New(remote), cache.NewObjectLRUDefault())
	}
	ref := open()
	defer ref.Close()
	pr, err := Open(remote, open, &Cache{})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	dr := NewDeltaReader(pr, 1<<20)
	var hashes []plumbing.Hash
	var located []Located
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
		typ, data, err := dr.Read(h)
		if err != nil || typ != want.Type() || plumbing.ComputeHash(typ, data) != h {
			t.Fatalf("%s: resolved as %s %s (%v)", h, typ, plumbing.ComputeHash(typ, data), err)
		}
		pack, pos, off, ok := pr.Locate(h)
		if !ok {
			t.Fatalf("%s: not located", h)
		}
		located = append(located, Located{Hash: h, Pack: pack, Pos: pos, Off: off})
	}
	verify := func(p *Packed, want string) {
		t.Helper()
		dst := t.TempDir()
		gittest.Git(t, "", "init", "-q", "--bare", dst)
		if err := WriteFiles(dst, p, nil); err != nil {
			t.Fatal(err)
		}
		out := gittest.Git(t, dst, "verify-pack", "-v", filepath.Join(dst, "objects", "pack", "pack-"+p.Sum.String()+".idx"))
		if !strings.Contains(out, want) {
			t.Fatalf("verify-pack: no %q in\n%s", want, out)
		}
	}
	var enc Encoder
	p, err := enc.Encode(pr, hashes)
	if err != nil {
		t.Fatal(err)
	}
	verify(p, fmt.Sprintf("non delta: %d objects", len(hashes)))
	if err := pr.LoadWhole(); err != nil {
		t.Fatal(err)
	}
	p, _, err = pr.CopyPack(located, dr.Read, func(plumbing.Hash) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	verify(p, "chain length = 1:")
}
