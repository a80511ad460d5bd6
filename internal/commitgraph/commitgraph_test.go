package commitgraph

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// histRepo makes a repository whose history has what the format has
// cases for: merges, an octopus merge, a root commit beside the main one,
// a commit changing more than 512 files, an empty commit, paths with
// bytes over 0x7f (hashed as signed chars), nested directories.
func histRepo(t *testing.T) string {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "r")
	git := func(args ...string) string { return gittest.Git(t, dir, args...) }
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	write := func(p, c string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(msg string) {
		git("add", "-A")
		git("commit", "-q", "--allow-empty", "-m", msg)
	}
	for i := 0; i < 12; i++ {
		write(fmt.Sprintf("d%d/sub/f%d.txt", i%3, i), fmt.Sprint(i))
		if i == 5 {
			write("ünïcödé/ÿ.txt", "x")
		}
		commit(fmt.Sprint("c", i))
	}
	for _, b := range []string{"a", "b", "c"} {
		git("checkout", "-q", "-b", b, "main~3")
		write(b+"/file", b)
		commit("on " + b)
	}
	git("checkout", "-q", "main")
	git("merge", "-q", "--no-edit", "a")
	git("merge", "-q", "--no-edit", "-s", "octopus", "b", "c")
	for i := 0; i < 600; i++ {
		write(fmt.Sprintf("many/%03d", i), "m")
	}
	commit("many")
	commit("empty")
	git("checkout", "-q", "--orphan", "other")
	git("rm", "-rfq", ".")
	write("o", "o")
	commit("other root")
	git("checkout", "-q", "main")
	git("merge", "-q", "--no-edit", "--allow-unrelated-histories", "other")
	return dir
}

// commitsOf reads every commit reachable in dir with git, and the files
// each changed against its first parent.
func commitsOf(t *testing.T, dir string) []Commit {
	t.Helper()
	var out []Commit
	for _, l := range strings.Split(strings.TrimSpace(gittest.Git(t, dir, "rev-list", "--all", "--parents")), "\n") {
		f := strings.Fields(l)
		c := Commit{Hash: plumbing.NewHash(f[0])}
		for _, p := range f[1:] {
			c.Parents = append(c.Parents, plumbing.NewHash(p))
		}
		info := strings.Fields(gittest.Git(t, dir, "show", "-s", "--format=%T %ct", f[0]))
		c.Tree = plumbing.NewHash(info[0])
		c.Time, _ = strconv.ParseInt(info[1], 10, 64)
		var diff string
		if len(c.Parents) == 0 {
			diff = gittest.Git(t, dir, "diff-tree", "-r", "-z", "--no-renames", "--name-only", "--root", f[0])
		} else {
			diff = gittest.Git(t, dir, "diff-tree", "-r", "-z", "--no-renames", "--name-only", f[1], f[0])
		}
		var paths []string
		for _, p := range strings.Split(diff, "\x00") {
			if p != "" && p != f[0] {
				paths = append(paths, p)
			}
		}
		c.Filter = NewFilter(paths, false)
		out = append(out, c)
	}
	return out
}

// TestEncodeIsGits: given the same commits, Encode writes the file git
// writes, byte for byte, and Parse reads back what was written.
func TestEncodeIsGits(t *testing.T) {
	dir := histRepo(t)
	commits := commitsOf(t, dir)
	gittest.Git(t, dir, "commit-graph", "write", "--reachable", "--changed-paths")
	want, err := os.ReadFile(filepath.Join(dir, ".git/objects", FileName))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Encode(commits, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		g, _ := Parse(got, nil)
		w, err := Parse(want, nil)
		if err != nil || g == nil {
			t.Fatalf("parse: %v", err)
		}
		for _, c := range commits {
			pg, _ := g.Find(c.Hash)
			pw, _ := w.Find(c.Hash)
			if a, b := fmt.Sprint(g.Commit(pg)), fmt.Sprint(w.Commit(pw)); a != b {
				t.Errorf("%s: ours %s, git's %s", c.Hash, a, b)
			}
			if a, b := g.Filter(pg), w.Filter(pw); !bytes.Equal(a, b) {
				t.Errorf("%s: filter %x, git's %x", c.Hash, a, b)
			}
		}
		t.Fatalf("%d bytes, git wrote %d", len(got), len(want))
	}
	g, err := Parse(got, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(); err != nil {
		t.Fatal(err)
	}
	if g.Len() != len(commits) || !g.HasFilters() {
		t.Fatalf("%d commits, filters %v", g.Len(), g.HasFilters())
	}
	octopus := 0
	for _, c := range commits {
		pos, ok := g.Find(c.Hash)
		if !ok || g.Hash(pos) != c.Hash {
			t.Fatalf("%s not found", c.Hash)
		}
		d := g.Commit(pos)
		if d.Tree != c.Tree || d.Time != c.Time || len(d.Parents) != len(c.Parents) {
			t.Fatalf("%s read as %+v", c.Hash, d)
		}
		for i, p := range d.Parents {
			if g.Hash(p) != c.Parents[i] {
				t.Fatalf("%s: parent %d is %s", c.Hash, i, g.Hash(p))
			}
		}
		if len(c.Parents) > 2 {
			octopus++
		}
	}
	if octopus == 0 {
		t.Fatal("no octopus merge: the EDGE chunk is not tested")
	}
	if _, ok := g.Find(plumbing.NewHash(strings.Repeat("ab", 20))); ok {
		t.Fatal("found a commit that is not there")
	}
}

// TestFiltersAnswerAsGitsDo: for every commit and every path of the
// repository, a filter says "maybe" wherever the commit changed the path
// or a file below it (no false negative), and what it says is what git's
// own filter says.
func TestFiltersAnswerAsGitsDo(t *testing.T) {
	dir := histRepo(t)
	gittest.Git(t, dir, "commit-graph", "write", "--reachable", "--changed-paths")
	w, err := Open(filepath.Join(dir, ".git/objects"))
	if err != nil || w == nil {
		t.Fatalf("open git's graph: %v", err)
	}
	paths := strings.Split(strings.TrimSpace(gittest.Git(t, dir, "-c", "core.quotepath=false", "log", "--all", "--format=", "--name-only")), "\n")
	paths = append(paths, "d0", "d0/sub", "many", "ünïcödé", "nowhere/at/all")
	for _, c := range commitsOf(t, dir) {
		pos, _ := w.Find(c.Hash)
		for _, p := range paths {
			if p == "" {
				continue
			}
			k := NewKey(p)
			if a, b := k.in(c.Filter), w.MaybeChanged(pos, k); a != b {
				t.Fatalf("%s %q: ours says %v, git's %v", c.Hash, p, a, b)
			}
		}
	}
}

// TestChainReadByGit: a graph written as two layers (the second on the
// first) is a chain git verifies and reads; Open reads it back.
func TestChainReadByGit(t *testing.T) {
	dir := histRepo(t)
	commits := commitsOf(t, dir)
	// The lower layer: the history up to main~3 (closed under parents).
	lower := map[plumbing.Hash]bool{}
	for _, l := range strings.Fields(gittest.Git(t, dir, "rev-list", "main~3")) {
		lower[plumbing.NewHash(l)] = true
	}
	var a, b []Commit
	for _, c := range commits {
		if lower[c.Hash] {
			a = append(a, c)
		} else {
			b = append(b, c)
		}
	}
	objects := filepath.Join(dir, ".git/objects")
	la, err := Encode(a, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	ga, err := Parse(la, nil)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := Encode(b, ga, true)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := Parse(lb, ga)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(objects, ChainDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Graph{ga, gb} {
		data := la
		if g == gb {
			data = lb
		}
		if err := os.WriteFile(filepath.Join(objects, ChainDir, "graph-"+g.Sum().String()+".graph"), data, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	chain := ga.Sum().String() + "\n" + gb.Sum().String() + "\n"
	if err := os.WriteFile(filepath.Join(objects, ChainName), []byte(chain), 0o444); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "commit-graph", "verify")
	if want, got := gittest.Git(t, dir, "-c", "core.commitGraph=false", "log", "--format=%H %P", "--topo-order", "--all"),
		gittest.Git(t, dir, "log", "--format=%H %P", "--topo-order", "--all"); got != want {
		t.Fatalf("git log through our chain:\n%s\nwithout:\n%s", got, want)
	}
	g, err := Open(objects)
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != len(commits) || g.Layers() != 2 || !g.HasFilters() {
		t.Fatalf("chain read as %d commits in %d layers", g.Len(), g.Layers())
	}
	for _, c := range commits {
		pos, ok := g.Find(c.Hash)
		if !ok {
			t.Fatalf("%s not in the chain", c.Hash)
		}
		d := g.Commit(pos)
		for i, p := range d.Parents {
			if g.Hash(p) != c.Parents[i] {
				t.Fatalf("%s: parent %d read as %s", c.Hash, i, g.Hash(p))
			}
		}
		if !bytes.Equal(g.Filter(pos), c.Filter) {
			t.Fatalf("%s: filter read as %x", c.Hash, g.Filter(pos))
		}
	}
	// Without its lower layer, the top is refused.
	if _, err := Parse(lb, nil); err == nil {
		t.Fatal("a layer parsed without its base")
	}
}

// TestParseRefusesDamage: a file cut short or with its chunk table
// pointing outside is refused, never read past its end.
func TestParseRefusesDamage(t *testing.T) {
	c := Commit{Hash: plumbing.NewHash(strings.Repeat("12", 20)), Tree: plumbing.NewHash(strings.Repeat("34", 20)), Time: 1}
	good, err := Encode([]Commit{c}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(good); n++ {
		if g, err := Parse(good[:n], nil); err == nil {
			// A shorter file may still parse (the checksum is Verify's):
			// reading it must stay within it.
			pos, ok := g.Find(c.Hash)
			if ok {
				g.Commit(pos)
				g.Filter(pos)
			}
		}
	}
	bad := bytes.Clone(good)
	bad[12] = 0xff // the first chunk's offset, far out
	if _, err := Parse(bad, nil); err == nil {
		t.Fatal("a chunk past the end was accepted")
	}
	bad = bytes.Clone(good)
	bad[len(bad)-1] ^= 1
	if g, err := Parse(bad, nil); err != nil || g.Verify() == nil {
		t.Fatal("a wrong checksum passed Verify")
	}
}
