package gitbackend

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/internal/gitformat"
)

// The generator below builds repositories with the git CLI — files added,
// changed and removed, the index split and unsplit at random points,
// versions 2, 3 and 4, assume-unchanged, skip-worktree, intent-to-add,
// conflict stages, names longer than 0xfff bytes, the untracked cache,
// GIT_TEST_SPLIT_INDEX — and after every step compares our reading of the
// index with git's (ls-files -s --debug, ls-files -v). At random points,
// and at the end, the index is written back as the git tools write it:
// the bytes must be the entries git writes when it writes the same index
// whole (git update-index --no-split-index --force-write-index), and git
// must read, check, split and status it as before. A failure is shrunk
// to the fewest steps that still fail and printed as a regression test.

// ixOp is one step of a generated repository.
type ixOp struct {
	Kind string
	Path string
	N    int
}

func (o ixOp) String() string { return fmt.Sprintf("{%q, %q, %d}", o.Kind, o.Path, o.N) }

// ixPaths share prefixes (version 4 compresses them) and include names
// git orders apart from a plain sort of directories.
var ixPaths = []string{
	"a", "a.b", "a-b", "a/b", "a/b/c", "a/bc", "b", "d/e/f/g/h", "d/e/f/g/i",
	"d/e/f/x", "d/e/y", "d/ee", "z", "sp ace", "é/ü.txt", "x/" + strings.Repeat("long", 30) + "/1",
	"x/" + strings.Repeat("long", 30) + "/2",
}

var ixKinds = []string{
	"write", "write", "write", "write", "addall", "rm", "rmwt", "split", "split", "nosplit",
	"version", "version", "assume", "assume", "noassume", "skip", "skip", "noskip", "intent",
	"commit", "maxpct", "conflict", "status", "untracked", "testsplit", "longname", "ourwrite",
	"expire", "manyfiles", "threads", "reset", "readtree", "mv",
}

func ixOps(rng *rand.Rand, n int) []ixOp {
	ops := make([]ixOp, n)
	for i := range ops {
		ops[i] = ixOp{
			Kind: ixKinds[rng.IntN(len(ixKinds))],
			Path: ixPaths[rng.IntN(len(ixPaths))],
			N:    rng.IntN(1 << 16),
		}
	}
	return ops
}

// ixRepo is a generated repository.
type ixRepo struct {
	dir   string
	blobs [3]string
	// racy counts entries git smudged (size 0) where we kept the size:
	// git smudges a racily clean entry when it writes (the file changed
	// within the index's timestamp); the tools' write does not.
	racy int
	// seen counts the states compared: split, v4, conflict, ...
	seen map[string]int
}

// note counts what the index holds now.
func (g *ixRepo) note() {
	data, err := os.ReadFile(filepath.Join(g.dir, ".git", "index"))
	if err != nil {
		return
	}
	p, ok := gitformat.ParseIndex(data)
	if !ok {
		g.seen["unparsed"]++
		return
	}
	g.seen["checked"]++
	if p.Link != nil {
		g.seen["split"]++
		if p.Link.Replace.Each(func(uint64) error { return gitformat.ErrEWAH }) != nil {
			g.seen["split+replace"]++
		}
		if p.Link.Delete.Each(func(uint64) error { return gitformat.ErrEWAH }) != nil {
			g.seen["split+delete"]++
		}
	}
	g.seen[fmt.Sprintf("v%d", p.Index.Version)]++
	if len(p.Valid) > 0 {
		g.seen["assume-valid"]++
	}
	var ita, skip, stage, long bool
	for _, e := range p.Index.Entries {
		ita = ita || e.IntentToAdd
		skip = skip || e.SkipWorktree
		stage = stage || e.Stage != 0
		long = long || len(e.Name) >= 0xfff
	}
	for k, v := range map[string]bool{"intent-to-add": ita, "skip-worktree": skip, "conflict": stage, "long name": long} {
		if v {
			g.seen[k]++
		}
	}
	for _, ext := range []string{"UNTR", "REUC", "TREE", "IEOT", "EOIE"} {
		if bytes.Contains(data, []byte(ext)) {
			g.seen[ext]++
		}
	}
}

func newIxRepo(t testing.TB, version int) *ixRepo {
	g := &ixRepo{dir: t.TempDir(), seen: map[string]int{}}
	gittest.Git(t, "", "init", "-q", "-b", "main", g.dir)
	if version != 0 {
		gittest.Git(t, g.dir, "config", "index.version", strconv.Itoa(version))
	}
	for i := range g.blobs {
		out, err := gittest.GitStdinErr(g.dir, fmt.Sprintf("stage %d\n", i+1), "hash-object", "-w", "--stdin")
		if err != nil {
			t.Fatal(out)
		}
		g.blobs[i] = strings.TrimSpace(out)
	}
	return g
}

// apply runs one step; git's refusals (a path in the way, nothing to
// commit) are part of the game. It returns a failure of our write.
func (g *ixRepo) apply(op ixOp) string {
	dir := g.dir
	run := func(args ...string) { _, _ = gitEnv(dir, nil, args...) }
	// Steps on an entry take a path of the index (op.N chooses), else
	// op.Path.
	tracked := func() string {
		out, err := gitEnv(dir, nil, "ls-files", "-z")
		if err != nil || out == "" {
			return op.Path
		}
		l := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
		return l[op.N%len(l)]
	}
	write := func() bool {
		full := filepath.Join(dir, op.Path)
		if os.MkdirAll(filepath.Dir(full), 0o755) != nil {
			return false
		}
		return os.WriteFile(full, []byte(fmt.Sprintf("%s %d\n", op.Path, op.N)), 0o644) == nil
	}
	switch op.Kind {
	case "write":
		if write() {
			run("add", "--", op.Path)
		}
	case "addall":
		run("add", "-A")
	case "rm":
		op.Path = tracked()
		run("rm", "-q", "--cached", "--", op.Path)
	case "rmwt":
		op.Path = tracked()
		run("rm", "-q", "-f", "--", op.Path)
	case "split":
		run("update-index", "--split-index")
	case "nosplit":
		run("update-index", "--no-split-index")
	case "version":
		run("update-index", "--index-version", strconv.Itoa(2+op.N%3))
	case "threads":
		// Entry offset table: version 4 names start afresh per block.
		run("config", "index.threads", strconv.Itoa(2+op.N%3))
		run("config", "index.recordOffsetTable", "true")
		run("config", "index.recordEndOfIndexEntries", "true")
	case "reset":
		run("reset", "-q")
	case "readtree":
		run("read-tree", "HEAD")
	case "mv":
		op.Path = tracked()
		run("mv", "-k", "--", op.Path, op.Path+".moved")
	case "manyfiles":
		run("config", "feature.manyFiles", "true")
	case "assume":
		op.Path = tracked()
		run("update-index", "--assume-unchanged", "--", op.Path)
	case "noassume":
		op.Path = tracked()
		run("update-index", "--no-assume-unchanged", "--", op.Path)
	case "skip":
		op.Path = tracked()
		run("update-index", "--skip-worktree", "--", op.Path)
	case "noskip":
		op.Path = tracked()
		run("update-index", "--no-skip-worktree", "--", op.Path)
	case "intent":
		if write() {
			run("add", "-N", "--", op.Path)
		}
	case "commit":
		run("commit", "-q", "--allow-empty", "-m", "c")
	case "maxpct":
		run("config", "splitIndex.maxPercentChange", strconv.Itoa([]int{0, 10, 20, 50, 100, 20}[op.N%6]))
	case "conflict":
		op.Path = tracked()
		var in strings.Builder
		fmt.Fprintf(&in, "0 %s\t%s\n", strings.Repeat("0", 40), op.Path)
		for s := 1; s <= 3; s++ {
			if op.N&1 == 0 || s != 1 { // sometimes no base (add/add)
				fmt.Fprintf(&in, "100644 %s %d\t%s\n", g.blobs[s-1], s, op.Path)
			}
		}
		_, _ = gittest.GitStdinErr(dir, in.String(), "update-index", "--index-info")
	case "status":
		run("status", "--porcelain")
	case "untracked":
		run("config", "core.untrackedCache", "true")
		run("status", "--porcelain")
	case "testsplit":
		if write() {
			_, _ = gitEnv(dir, []string{"GIT_TEST_SPLIT_INDEX=1"}, "add", "--", op.Path)
		}
	case "longname":
		long := strings.Repeat("L/", 2100) + strconv.Itoa(op.N%8)
		run("update-index", "--add", "--cacheinfo", "100644,"+g.blobs[op.N%3]+","+long)
	case "expire":
		run("config", "splitIndex.sharedIndexExpire", "now")
	case "ourwrite":
		return g.checkWrite(false)
	}
	return ""
}

// checkWrite writes the index back as the git tools do and checks it
// against git's own write of it; resplit then splits it again with git.
func (g *ixRepo) checkWrite(resplit bool) string {
	dir := g.dir
	git := func(args ...string) (string, error) { return gitEnv(dir, nil, args...) }
	if _, err := os.Stat(filepath.Join(dir, ".git", "index")); err != nil {
		return ""
	}
	status0, err := git("status", "--porcelain")
	if err != nil {
		return "" // git refuses the index (a conflict it cannot take): nothing to write
	}
	ls0, _ := git("ls-files", "-s", "--debug", "-z")
	v0, _ := git("ls-files", "-v", "-z")
	// git's write of the same index, whole.
	oracle := filepath.Join(dir, ".git", "index.oracle")
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		return err.Error()
	}
	if p, ok := gitformat.ParseIndex(data); ok {
		g.seen[fmt.Sprintf("write v%d", p.Index.Version)]++
		if p.Link != nil {
			g.seen["write split"]++
		}
	}
	if err := os.WriteFile(oracle, data, 0o644); err != nil {
		return err.Error()
	}
	out, err := gitEnv(dir, []string{"GIT_INDEX_FILE=" + oracle}, "update-index", "--no-split-index", "--force-write-index")
	if err != nil {
		return "git update-index --force-write-index: " + out
	}
	want, err := os.ReadFile(oracle)
	os.Remove(oracle)
	if err != nil {
		return err.Error()
	}
	if _, err := writeBack(dir); err != nil {
		return "our write: " + err.Error()
	}
	got, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		return err.Error()
	}
	if d := g.sameEntries(got, want); d != "" {
		return d
	}
	if ls1, _ := git("ls-files", "-s", "--debug", "-z"); maskFlags(ls1) != maskFlags(ls0) {
		return fmt.Sprintf("git reads our write differently:\n%q\nbefore:\n%q", ls1, ls0)
	}
	if v1, _ := git("ls-files", "-v", "-z"); v1 != v0 {
		return fmt.Sprintf("ls-files -v after our write:\n%q\nbefore:\n%q", v1, v0)
	}
	if s1, _ := git("status", "--porcelain"); s1 != status0 {
		return fmt.Sprintf("git status after our write:\n%s\nbefore:\n%s", s1, status0)
	}
	if out, err := git("fsck", "--no-dangling", "--no-progress"); err != nil {
		return "git fsck after our write: " + out
	}
	if resplit {
		if out, err := git("update-index", "--split-index"); err != nil {
			return "git update-index --split-index after our write: " + out
		}
		if d := diffWithGit(dir); d != "" {
			return "split again: " + d
		}
	}
	return ""
}

// sameEntries compares our index file with git's: the same header and
// entries, byte for byte, and the same extensions but for those the
// tools do not write (git's goes on with TREE, UNTR, EOIE, ...; both
// keep REUC, the resolve-undo records, after the entries), but for
// entries git smudged as racily clean.
func (g *ixRepo) sameEntries(got, want []byte) string {
	body := want[:len(want)-20]
	ours := got[:len(got)-20]
	if n, ok := entriesEnd(got); ok && len(body) >= n && bytes.Equal(body[:n], ours[:n]) {
		gotExt, ok1 := extensions(ours[n:])
		wantExt, ok2 := extensions(body[n:])
		if !ok1 || !ok2 {
			return fmt.Sprintf("an index's extensions do not parse: ours %v, git's %v", ok1, ok2)
		}
		var kept []string
		for _, e := range wantExt {
			if e[:4] == "REUC" {
				kept = append(kept, e)
			}
		}
		if strings.Join(gotExt, "\x00") != strings.Join(kept, "\x00") {
			return fmt.Sprintf("our extensions differ from git's (entries equal):\n%q\ngit (tools write REUC only):\n%q", gotExt, wantExt)
		}
		return ""
	}
	a, aok := gitformat.ParseIndex(got)
	b, bok := gitformat.ParseIndex(want)
	if !aok || !bok || a.Index.Version != b.Index.Version || len(a.Index.Entries) != len(b.Index.Entries) {
		return fmt.Sprintf("our write differs from git's: version %d vs %d, %d vs %d bytes", binary.BigEndian.Uint32(got[4:]), binary.BigEndian.Uint32(want[4:]), len(got), len(want))
	}
	racy := 0
	for i, e := range a.Index.Entries {
		w := *b.Index.Entries[i]
		if w.Size == 0 && e.Size != 0 {
			w.Size = e.Size
			racy++
		}
		if *e != w {
			return fmt.Sprintf("our write differs from git's at entry %d:\n%+v\ngit:\n%+v", i, *e, w)
		}
	}
	if racy == 0 {
		if a.Index.Version == 4 && bytes.Contains(want, []byte("IEOT")) {
			// git's entry offset table (index.threads with
			// index.recordOffsetTable) restarts the name compression at
			// each of its blocks; the tools write no such table.
			g.seen["v4 blocks restarted by git"]++
			return ""
		}
		return "our write differs from git's (entries equal, bytes not)"
	}
	g.racy += racy
	return ""
}

// entriesEnd is where an index file's entries end: its length written
// again without extensions, less the checksum.
func entriesEnd(data []byte) (int, bool) {
	p, ok := gitformat.ParseIndex(data)
	if !ok {
		return 0, false
	}
	enc, err := gitformat.EncodeIndex(nil, p.Index, p.ValidNames())
	if err != nil || len(enc) < 20 || len(data) < len(enc) || !bytes.Equal(enc[:len(enc)-20], data[:len(enc)-20]) {
		return 0, false
	}
	return len(enc) - 20, true
}

// extensions splits what follows the entries into extensions (signature
// and body).
func extensions(b []byte) ([]string, bool) {
	var out []string
	for len(b) > 0 {
		if len(b) < 8 {
			return nil, false
		}
		n := 8 + int(binary.BigEndian.Uint32(b[4:]))
		if n > len(b) {
			return nil, false
		}
		out = append(out, string(b[:n]))
		b = b[n:]
	}
	return out, true
}

// runIx plays ops on a new repository; it returns the first failure and
// the entries git smudged.
func runIx(t testing.TB, version int, ops []ixOp, seen map[string]int) (string, int) {
	g := newIxRepo(t, version)
	if seen != nil {
		g.seen = seen
	}
	for i, op := range ops {
		if d := g.apply(op); d != "" {
			return fmt.Sprintf("step %d %v: %s", i, op, d), g.racy
		}
		g.note()
		if d := diffWithGit(g.dir); d != "" {
			return fmt.Sprintf("step %d %v: %s", i, op, d), g.racy
		}
	}
	if d := g.checkWrite(true); d != "" {
		return "final write: " + d, g.racy
	}
	return "", g.racy
}

// shrinkIx drops steps while the run still fails.
func shrinkIx(t testing.TB, version int, ops []ixOp) ([]ixOp, string) {
	fail, _ := runIx(t, version, ops, nil)
	for changed := true; changed; {
		changed = false
		for i := len(ops) - 1; i >= 0; i-- {
			try := append(append([]ixOp(nil), ops[:i]...), ops[i+1:]...)
			if f, _ := runIx(t, version, try, nil); f != "" {
				ops, fail, changed = try, f, true
			}
		}
	}
	return ops, fail
}

// TestIndexGenerated: TGP_INDEX_GEN repositories (8 by default) from
// seeds TGP_INDEX_SEED.. (1 by default).
func TestIndexGenerated(t *testing.T) {
	gittest.RequireGit(t)
	n, first := 8, uint64(1)
	if v, err := strconv.Atoi(os.Getenv("TGP_INDEX_GEN")); err == nil {
		n = v
	}
	if v, err := strconv.ParseUint(os.Getenv("TGP_INDEX_SEED"), 10, 64); err == nil {
		first = v
	}
	failed, racy := 0, 0
	seen := map[string]int{}
	ran := 0
	for seed := first; seed < first+uint64(n); seed++ {
		ran++
		rng := rand.New(rand.NewPCG(seed, 0x1de))
		version := []int{0, 0, 2, 3, 4, 4}[rng.IntN(6)] // index.version; 0: none
		ops := ixOps(rng, 20+rng.IntN(20))
		fail, r := runIx(t, version, ops, seen)
		racy += r
		if fail == "" {
			continue
		}
		failed++
		small, sfail := shrinkIx(t, version, ops)
		var lit strings.Builder
		for _, o := range small {
			fmt.Fprintf(&lit, "\t%v,\n", o)
		}
		t.Errorf("seed %d: %s\nshrunk to %d steps (index.version %d):\n%s%s", seed, fail, len(small), version, lit.String(), sfail)
		if failed >= 3 {
			break
		}
	}
	t.Logf("%d repositories from seed %d, %d differing, %d entries git smudged as racily clean; indexes compared: %v", ran, first, failed, racy, seen)
}

// TestIndexGeneratedRegressions replays shrunk generator failures.
func TestIndexGeneratedRegressions(t *testing.T) {
	gittest.RequireGit(t)
	long := "x/" + strings.Repeat("long", 30) + "/1"
	for _, c := range []struct {
		name    string
		version int
		ops     []ixOp
		seen    []string // what the case must have met (ixRepo.seen)
	}{
		// git's entry offset table restarts version 4's name
		// compression at each block: git reads our unrestarted names
		// the same (seeds 1010, 1016, 1033).
		{"v4 offset table, conflict", 4, []ixOp{{"threads", long, 17862}, {"conflict", long, 45956}}, []string{"write v4", "v4 blocks restarted by git"}},
		{"manyFiles offset table", 0, []ixOp{{"manyfiles", "d/e/f/x", 34540}, {"write", "a/b", 22074}, {"write", "a-b", 37805}, {"threads", "d/e/f/g/h", 42917}}, []string{"write v4", "v4 blocks restarted by git"}},
		{"v4 offset table, intent-to-add", 4, []ixOp{{"threads", "a/b/c", 45870}, {"intent", "d/e/f/x", 39018}, {"write", "d/ee", 64595}}, []string{"write v4", "v4 blocks restarted by git"}},
		// A reset of a conflict leaves resolve-undo records: the tools
		// write them after the entries, where git writes them after its
		// cache tree (seeds 700004, 700006, 700009).
		{"resolve-undo after reset", 0, []ixOp{{"commit", "a/b", 11345}, {"conflict", "a", 63761}, {"reset", "b", 23000}}, []string{"REUC", "TREE"}},
		{"resolve-undo after rm", 0, []ixOp{{"commit", "a.b", 62707}, {"conflict", "d/e/f/g/h", 56976}, {"rm", "a/b", 46820}}, []string{"REUC", "TREE"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			seen := map[string]int{}
			if fail, _ := runIx(t, c.version, c.ops, seen); fail != "" {
				t.Fatal(fail)
			}
			for _, k := range c.seen {
				if seen[k] == 0 {
					t.Fatalf("the case met no %q: %v", k, seen)
				}
			}
		})
	}
}
