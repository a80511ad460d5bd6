package gittest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// historyVersion names the generator's output: change it whenever the
// generator changes, so a cached history made by an older one is not used.
const historyVersion = "h1"

// HistoryOptions shapes a generated long history.
type HistoryOptions struct {
	Seed uint64
	// Commits is the number of commits in all (merges and side-branch
	// commits included).
	Commits int
	// Dirs × FilesPerDir source files, each edited a few lines at a time.
	Dirs, FilesPerDir int
	// BigLines is the length of big/blame.txt (about 45 bytes a line),
	// edited by every BigEvery-th commit.
	BigLines, BigEvery int
	// Repack: `git repack -adf` the result (fresh deltas, one pack, as a
	// served repository is); otherwise fast-import's own pack.
	Repack bool
}

// BenchHistory is the long history of the benchmarks: 5,000+ commits with
// merges, 120 files, a 135 KB file for blame.
var BenchHistory = HistoryOptions{Seed: 30, Commits: 5200, Dirs: 12, FilesPerDir: 10, BigLines: 3000, BigEvery: 5, Repack: true}

// HistoryFacts describes what History generated, for the callers' rows.
type HistoryFacts struct {
	// Path is a file edited often over the whole history (for log --
	// path), Big the file for blame.
	Path, Big string
}

// History generates a bare repository (HEAD: main) with a long history:
// commits on main with side branches merged back, files edited a few lines
// at a time (so the pack holds delta chains), occasional renames, adds and
// deletes, and one large file many commits edit. The same options give
// the same repository, byte for byte.
func History(t testing.TB, dir string, o HistoryOptions) HistoryFacts {
	t.Helper()
	RequireGit(t)
	Git(t, "", "init", "-q", "--bare", "-b", "main", dir)
	var in bytes.Buffer
	facts := writeHistory(&in, o)
	cmd := exec.Command("git", "fast-import", "--quiet", "--depth=50")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, Env(t.TempDir()), &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v %s", err, out)
	}
	if _, err := GitErr(dir, "rev-parse", "-q", "--verify", "refs/heads/topic"); err == nil {
		Git(t, dir, "update-ref", "-d", "refs/heads/topic") // merged: main holds it all
	}
	if o.Repack {
		Git(t, dir, "repack", "-adfq", "--window=10", "--depth=50")
	}
	Git(t, dir, "config", "http.receivepack", "true")
	return facts
}

// CachedHistory is History made once per generator version and options,
// under the system's temporary directory (a benchmark run regenerates
// nothing), and returns the bare repository's path. The caller must not
// change it: it clones from it, pushes nothing.
func CachedHistory(t testing.TB, o HistoryOptions) (string, HistoryFacts) {
	t.Helper()
	RequireGit(t)
	key := fmt.Sprintf("tgp-history-%s-%d-%d-%dx%d-%d-%d-%t", historyVersion, o.Seed, o.Commits, o.Dirs, o.FilesPerDir, o.BigLines, o.BigEvery, o.Repack)
	dir := filepath.Join(os.TempDir(), key+".git")
	facts := historyFacts(o)
	if _, err := os.Stat(filepath.Join(dir, "tgp-ready")); err == nil {
		return dir, facts
	}
	tmp, err := os.MkdirTemp(os.TempDir(), key+".tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	History(t, filepath.Join(tmp, "r.git"), o)
	if err := os.WriteFile(filepath.Join(tmp, "r.git", "tgp-ready"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Another run may have made it meanwhile: theirs is as good.
	if err := os.Rename(filepath.Join(tmp, "r.git"), dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "tgp-ready")); serr != nil {
			t.Fatal(err)
		}
	}
	return dir, facts
}

// historyFacts names the files writeHistory makes the hot one and the
// big one.
func historyFacts(o HistoryOptions) HistoryFacts {
	k := o.Dirs * o.FilesPerDir / 3
	return HistoryFacts{Path: fmt.Sprintf("pkg%02d/file%02d.go", k/o.FilesPerDir, k%o.FilesPerDir), Big: "big/blame.txt"}
}

// histFile is one file of the generated tree.
type histFile struct {
	path  string
	lines []string
}

type histGen struct {
	rng   *rand.Rand
	out   *bytes.Buffer
	mark  int
	when  int64
	words []string
	made  int
}

func (g *histGen) line() string {
	n := 3 + g.rng.IntN(6)
	w := make([]string, n)
	for i := range w {
		w[i] = g.words[g.rng.IntN(len(g.words))]
	}
	switch g.rng.IntN(4) {
	case 0:
		return "\t" + strings.Join(w, " ")
	case 1:
		return "\tif " + w[0] + " != nil { return " + strings.Join(w[1:], "_") + " }"
	case 2:
		return "// " + strings.Join(w, " ")
	}
	return "\t" + w[0] + " := " + strings.Join(w[1:], ".") + "()"
}

// edit changes a few lines of f.
func (g *histGen) edit(f *histFile) {
	for k := 1 + g.rng.IntN(3); k > 0; k-- {
		i := g.rng.IntN(len(f.lines))
		switch op := g.rng.IntN(10); {
		case op < 6:
			f.lines[i] = g.line()
		case op < 9 || len(f.lines) < 20:
			f.lines = append(f.lines[:i], append([]string{g.line()}, f.lines[i:]...)...)
		default:
			f.lines = append(f.lines[:i], f.lines[i+1:]...)
		}
	}
}

func (f *histFile) body() string { return strings.Join(f.lines, "\n") + "\n" }

func (g *histGen) put(f *histFile) {
	b := f.body()
	fmt.Fprintf(g.out, "M 100644 inline %s\ndata %d\n%s\n", f.path, len(b), b)
}

// commit writes a commit header on ref (from, merge: marks, 0 none) and
// returns its mark.
func (g *histGen) commit(ref string, from, merge int, msg string) int {
	g.mark++
	g.made++
	g.when += 600 + int64(g.rng.IntN(7200))
	dev := g.rng.IntN(9)
	fmt.Fprintf(g.out, "commit %s\nmark :%d\nauthor Dev%d <dev%d@example.com> %d +0000\ncommitter Dev%d <dev%d@example.com> %d +0000\ndata %d\n%s\n",
		ref, g.mark, dev, dev, g.when, dev, dev, g.when+int64(g.rng.IntN(600)), len(msg), msg)
	if from > 0 {
		fmt.Fprintf(g.out, "from :%d\n", from)
	}
	if merge > 0 {
		fmt.Fprintf(g.out, "merge :%d\n", merge)
	}
	return g.mark
}

func writeHistory(out *bytes.Buffer, o HistoryOptions) HistoryFacts {
	g := &histGen{rng: rand.New(rand.NewPCG(o.Seed, 0x7467702d68697374)), out: out, when: 1500000000,
		words: strings.Fields("ctx err buf rows cfg node tree hash pack index commit blob path walk diff line read write open close name mode size tip base head ref lock")}
	var files []*histFile
	for d := 0; d < o.Dirs; d++ {
		for f := 0; f < o.FilesPerDir; f++ {
			hf := &histFile{path: fmt.Sprintf("pkg%02d/file%02d.go", d, f)}
			hf.lines = append(hf.lines, fmt.Sprintf("package pkg%02d", d), "")
			for n := 30 + g.rng.IntN(90); n > 0; n-- {
				hf.lines = append(hf.lines, g.line())
			}
			files = append(files, hf)
		}
	}
	big := &histFile{path: "big/blame.txt"}
	for i := 0; i < o.BigLines; i++ {
		big.lines = append(big.lines, fmt.Sprintf("%04d %s", i, g.line()))
	}
	facts := historyFacts(o)
	hot := files[len(files)/3]
	if hot.path != facts.Path {
		panic("gittest: history facts disagree with the generator")
	}
	head := g.commit("refs/heads/main", 0, 0, "initial import")
	for _, f := range files {
		g.put(f)
	}
	g.put(big)
	n := 0
	for g.made < o.Commits {
		n++
		if n%37 == 0 && o.Commits-g.made > 8 {
			// A side branch of a few commits on files of one directory,
			// then merged back; main moves on meanwhile elsewhere.
			d := g.rng.IntN(o.Dirs)
			in := func(f *histFile) bool { return strings.HasPrefix(f.path, fmt.Sprintf("pkg%02d/", d)) }
			topic, fork := 0, head
			var touched []*histFile
			for k := 2 + g.rng.IntN(4); k > 0; k-- {
				f := files[g.rng.IntN(len(files))]
				if !in(f) {
					continue
				}
				g.edit(f)
				from := topic
				if from == 0 {
					from = fork
				}
				topic = g.commit("refs/heads/topic", from, 0, fmt.Sprintf("topic: rework %s", f.path))
				g.put(f)
				touched = append(touched, f)
				// main moves too, outside the topic's directory.
				if m := files[g.rng.IntN(len(files))]; !in(m) {
					g.edit(m)
					head = g.commit("refs/heads/main", head, 0, fmt.Sprintf("tweak %s", m.path))
					g.put(m)
				}
			}
			if topic == 0 {
				continue
			}
			head = g.commit("refs/heads/main", head, topic, "Merge branch 'topic'")
			for _, f := range touched {
				g.put(f)
			}
			continue
		}
		var change []*histFile
		for k := 1 + g.rng.IntN(3); k > 0; k-- {
			change = append(change, files[g.rng.IntN(len(files))])
		}
		if n%4 == 0 {
			change = append(change, hot)
		}
		msg := fmt.Sprintf("change %d: %s", n, change[0].path)
		switch {
		case n%401 == 0 && len(files) > 2:
			// Rename a file (not the hot one: its log stays plain).
			i := g.rng.IntN(len(files))
			if files[i] == hot {
				break
			}
			old := files[i].path
			files[i].path = strings.TrimSuffix(old, ".go") + "_moved.go"
			head = g.commit("refs/heads/main", head, 0, "rename "+old)
			fmt.Fprintf(g.out, "R %s %s\n", old, files[i].path)
			continue
		case n%173 == 0:
			nf := &histFile{path: fmt.Sprintf("pkg%02d/new%04d.go", g.rng.IntN(o.Dirs), n)}
			nf.lines = []string{"package x", ""}
			for k := 20 + g.rng.IntN(40); k > 0; k-- {
				nf.lines = append(nf.lines, g.line())
			}
			files = append(files, nf)
			change = append(change, nf)
			msg = "add " + nf.path
		case n%293 == 0 && len(files) > 100:
			i := g.rng.IntN(len(files))
			if files[i] == hot {
				break
			}
			gone := files[i]
			files = append(files[:i], files[i+1:]...)
			head = g.commit("refs/heads/main", head, 0, "remove "+gone.path)
			fmt.Fprintf(g.out, "D %s\n", gone.path)
			continue
		}
		head = g.commit("refs/heads/main", head, 0, msg)
		for _, f := range change {
			g.edit(f)
			g.put(f)
		}
		if o.BigEvery > 0 && n%o.BigEvery == 0 {
			g.edit(big)
			g.put(big)
		}
	}
	return facts
}
