package gitbackend

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/gitpath"
	"github.com/tgp-go/tgp/vfs"
)

// This file is a differential test of boot against git clone: a seeded
// generator writes random histories into bare remotes with git
// fast-import (files with odd names and bytes, nested directories,
// symlinks, exec bits, gitlinks, files turning into directories and back,
// several branches, HEAD on master or another name); each remote is booted
// by gitbackend and cloned by git, and the two roots must agree on every
// worktree entry, `git ls-files -s` and `git status`. A second boot after
// the remote moves checks the fast-forward path the same way.
//
// `go test` runs cloneGenSeeds seeds (5 with -short); TGP_CLONEGEN_SEEDS=N
// runs N from TGP_CLONEGEN_SEED0 (default 1) on (and TGP_CLONEGEN_SEED=S
// only seed S; TGP_CLONEGEN_NOSHRINK=1
// reports failures without shrinking them). A failing seed is shrunk to a minimal
// op list, printed as Go source for a named regression test.

const cloneGenSeeds = 20

// genOp is one step of a generated history.
type genOp struct {
	Kind string // write, exec, symlink, gitlink, delete, commit, branch, switch
	Path string
	Data string
}

func (o genOp) String() string {
	return fmt.Sprintf("{%q, %q, %q}", o.Kind, o.Path, o.Data)
}

// genCase is a generated remote: ops, the branch HEAD names, the commit
// of that branch the first boot sees (0 = its tip), and the transport.
type genCase struct {
	Ops   []genOp
	Head  string
	Back  int // first boot happens this many commits behind the tip
	HTTP  bool
	Depth int
}

var genNames = []string{
	"a", "b.txt", "README.md", "Dir", "x y", "ünïcödé", "日本語.txt", "-dash", ".hidden", "with\ttab",
	`q"uote`, `back\slash`, "sp ace ", "dot.", "CAPS.TXT", "caps.txt", "#hash", "a.b.c", "e\u200cz", "nul.bin",
	".gitignore", "tools", "data", "~tilde", "new\nline",
}

var genBranches = []string{"master", "main", "trunk", "dev", "release/1.x", "feature/a-b"}

func genPath(rng *rand.Rand) string {
	depth := rng.IntN(4)
	parts := make([]string, 0, depth+1)
	for i := 0; i <= depth; i++ {
		parts = append(parts, genNames[rng.IntN(len(genNames))])
	}
	return strings.Join(parts, "/")
}

func genContent(rng *rand.Rand) string {
	switch rng.IntN(7) {
	case 0:
		return ""
	case 1:
		return "no newline"
	case 2:
		return "crlf\r\nline two\r\n"
	case 3:
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	case 4:
		return strings.Repeat("line "+strconv.Itoa(rng.IntN(100))+"\n", rng.IntN(50)+1)
	default:
		return "text " + strconv.Itoa(rng.IntN(1e6)) + "\n"
	}
}

// generate builds a random case from a seed.
func generate(seed uint64) genCase {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var ops []genOp
	var paths []string
	branches := []string{genBranches[rng.IntN(2)]} // the first is master or main
	ops = append(ops, genOp{Kind: "branch", Path: branches[0]})
	commits := 1 + rng.IntN(5)
	for c := 0; c < commits; c++ {
		if c > 0 && rng.IntN(4) == 0 {
			if rng.IntN(2) == 0 || len(branches) == 1 {
				b := genBranches[rng.IntN(len(genBranches))]
				ops = append(ops, genOp{Kind: "branch", Path: b})
				branches = append(branches, b)
			} else {
				ops = append(ops, genOp{Kind: "switch", Path: branches[rng.IntN(len(branches))]})
			}
		}
		for n := 1 + rng.IntN(8); n > 0; n-- {
			p := genPath(rng)
			if len(paths) > 0 && rng.IntN(3) == 0 {
				p = paths[rng.IntN(len(paths))] // touch an existing path again
			}
			paths = append(paths, p)
			switch k := rng.IntN(12); {
			case k < 6:
				ops = append(ops, genOp{Kind: "write", Path: p, Data: genContent(rng)})
			case k < 7:
				ops = append(ops, genOp{Kind: "exec", Path: p, Data: genContent(rng)})
			case k < 9:
				targets := []string{"a", "../a", "Dir/b.txt", "/etc/passwd", "missing", ".", "x y/ünïcödé"}
				if len(paths) > 1 {
					targets = append(targets, paths[rng.IntN(len(paths))])
				}
				ops = append(ops, genOp{Kind: "symlink", Path: p, Data: targets[rng.IntN(len(targets))]})
			case k < 10:
				ops = append(ops, genOp{Kind: "gitlink", Path: p, Data: fmt.Sprintf("%040x", rng.Uint64())})
			default:
				ops = append(ops, genOp{Kind: "delete", Path: p})
			}
		}
		ops = append(ops, genOp{Kind: "commit", Data: fmt.Sprintf("commit %d", c)})
	}
	if rng.IntN(8) == 0 {
		// A path git refuses to check out, pushed by a careless or hostile
		// client, somewhere in the history.
		hostile := []genOp{
			{Kind: "hostile", Path: ".GIT/config"}, {Kind: "hostile", Path: "git~1/x"},
			{Kind: "hostile", Path: ".git\u200c/hooks/post-checkout"}, {Kind: "hostile", Path: "Dir/.Git/y"},
			{Kind: "hostile", Path: ".git. /z"}, {Kind: "hostile", Path: "GIT~1/q"},
			{Kind: "hostile-link", Path: ".gitmodules", Data: "a"},
		}
		at := rng.IntN(len(ops))
		h := hostile[rng.IntN(len(hostile))]
		h.Data += "x\n"
		ops = append(ops[:at], append([]genOp{h}, ops[at:]...)...)
	}
	gc := genCase{Ops: ops, Head: branches[rng.IntN(len(branches))]}
	if rng.IntN(2) == 0 {
		gc.Back = 1 + rng.IntN(2)
	}
	gc.HTTP = rng.IntN(5) == 0
	if rng.IntN(4) == 0 {
		gc.Depth = 1 + rng.IntN(2)
	}
	return gc
}

// genEntry is one path of the model tree.
type genEntry struct {
	mode string // 100644, 100755, 120000, 160000
	data string // content, link target or gitlink sha
}

// fastImport turns ops into a git fast-import stream. The model tree is
// kept valid the way a worktree is: writing a path removes a file standing
// where one of its directories goes, and everything under it.
func fastImport(ops []genOp) (stream string, branches []string) {
	var b strings.Builder
	trees := map[string]map[string]genEntry{}
	marks := map[string]int{}
	cur := ""
	tree := map[string]genEntry{}
	mark := 0
	when := 1700000000
	for _, op := range ops {
		switch op.Kind {
		case "branch":
			if t, ok := trees[op.Path]; ok { // exists: switch to it
				trees[cur] = tree
				cur, tree = op.Path, t
				continue
			}
			branches = append(branches, op.Path)
			if cur != "" {
				trees[cur] = tree
			}
			tree = cloneModel(tree)
			trees[op.Path] = tree
			if m, ok := marks[cur]; ok {
				marks[op.Path] = m
			}
			cur = op.Path
		case "switch":
			if t, ok := trees[op.Path]; ok {
				trees[cur] = tree
				cur, tree = op.Path, t
			}
		case "delete":
			for p := range tree {
				if p == op.Path || strings.HasPrefix(p, op.Path+"/") {
					delete(tree, p)
				}
			}
		case "commit":
			if cur == "" {
				continue
			}
			mark++
			when += 60
			fmt.Fprintf(&b, "commit refs/heads/%s\nmark :%d\ncommitter T <t@example.com> %d +0000\ndata %d\n%s\n",
				cur, mark, when, len(op.Data), op.Data)
			if m, ok := marks[cur]; ok {
				fmt.Fprintf(&b, "from :%d\n", m)
			}
			b.WriteString("deleteall\n")
			keys := make([]string, 0, len(tree))
			for p := range tree {
				keys = append(keys, p)
			}
			sort.Strings(keys)
			for _, p := range keys {
				e := tree[p]
				if e.mode == "160000" {
					fmt.Fprintf(&b, "M 160000 %s %s\n", e.data, cQuote(p))
					continue
				}
				fmt.Fprintf(&b, "M %s inline %s\ndata %d\n%s\n", e.mode, cQuote(p), len(e.data), e.data)
			}
			marks[cur] = mark
		default: // write, exec, symlink, gitlink; hostile, hostile-link (not verified)
			if op.Path == "" || (!strings.HasPrefix(op.Kind, "hostile") && gitpath.Verify(op.Path, op.Kind == "symlink") != nil) {
				continue
			}
			for p := range tree {
				if p == op.Path || strings.HasPrefix(p, op.Path+"/") || strings.HasPrefix(op.Path, p+"/") {
					delete(tree, p)
				}
			}
			mode := map[string]string{"write": "100644", "exec": "100755", "symlink": "120000", "gitlink": "160000",
				"hostile": "100644", "hostile-link": "120000"}[op.Kind]
			tree[op.Path] = genEntry{mode: mode, data: op.Data}
		}
	}
	return b.String(), branches
}

func cloneModel(m map[string]genEntry) map[string]genEntry {
	out := make(map[string]genEntry, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// cQuote quotes a path for fast-import (C style, bytes above 0x7f kept).
func cQuote(p string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// buildGenRemote writes the case into a new bare remote; it returns the
// remote, the HEAD branch's tip and the commit the first boot should see
// ("" when the HEAD branch has no commit: the case is skipped).
func buildGenRemote(t testing.TB, gc genCase) (remote, tip, first string) {
	t.Helper()
	gittest.RequireGit(t)
	remote = filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", gc.Head, remote)
	gittest.Git(t, remote, "config", "http.receivepack", "true")
	stream, _ := fastImport(gc.Ops)
	if out, err := gittest.GitStdinErr(remote, stream, "fast-import", "--quiet"); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	tipOut, err := gittest.GitErr(remote, "rev-parse", "-q", "--verify", "refs/heads/"+gc.Head)
	if err != nil {
		return remote, "", ""
	}
	tip = strings.TrimSpace(tipOut)
	first = tip
	if gc.Back > 0 {
		list := strings.Fields(gittest.Git(t, remote, "rev-list", "--first-parent", tip))
		first = list[min(gc.Back, len(list)-1)]
	}
	return remote, tip, first
}

// genStats counts what the generated remotes held, so a run can show it
// exercised what it claims to.
type genStats struct {
	cases, skipped, http, fastForwards, refusals int
	modes                                        map[string]int
}

func (s *genStats) add(o *genStats) {
	s.cases += o.cases
	s.skipped += o.skipped
	s.http += o.http
	s.fastForwards += o.fastForwards
	s.refusals += o.refusals
	for k, v := range o.modes {
		s.modes[k] += v
	}
}

// runGenCase boots the case and compares with git clone; it returns the
// differences (empty: agreement).
func runGenCase(t testing.TB, gc genCase, st *genStats) []string {
	t.Helper()
	remote, tip, first := buildGenRemote(t, gc)
	if st != nil {
		st.cases++
	}
	if tip == "" {
		if st != nil {
			st.skipped++
		}
		return nil
	}
	if st != nil {
		if gc.HTTP {
			st.http++
		}
		if first != tip {
			st.fastForwards++
		}
		for _, line := range strings.Split(strings.TrimSpace(gittest.Git(t, remote, "ls-tree", "-r", tip)), "\n") {
			if mode, _, ok := strings.Cut(line, " "); ok {
				st.modes[mode]++
			}
		}
	}
	url := remote
	if gc.HTTP {
		srv := gittest.NewHTTPServer(t, filepath.Dir(remote), "")
		url = srv.URL(filepath.Base(remote))
	}
	gittest.Git(t, remote, "update-ref", "refs/heads/"+gc.Head, first)
	var diffs []string
	root := filepath.Join(t.TempDir(), "root")
	for step, at := range []string{first, tip} {
		if step == 1 {
			if at == first {
				break
			}
			gittest.Git(t, remote, "update-ref", "refs/heads/"+gc.Head, at)
		}
		refused := gitRefuses(t, remote)
		f, r, res, err := bootRootDepth(t, url, "", false, root, gc.Depth)
		if refused != "" {
			if st != nil {
				st.refusals++
			}
			diffs = append(diffs, checkRefusal(t, fmt.Sprintf("boot %d", step), err, refused)...)
			if step == 0 {
				// Nothing may be left but the empty repository Open made.
				if left := listDir(t, root); len(left) != 1 || left[0] != ".git" {
					diffs = append(diffs, fmt.Sprintf("boot 0: refused clone left %v in the root", left))
				}
				if m, _ := filepath.Glob(stagingPrefix(root) + "*"); len(m) > 0 {
					diffs = append(diffs, fmt.Sprintf("boot 0: refused clone left %v", m))
				}
				break
			}
			// A refused fast-forward leaves the root where it was.
			gittest.Git(t, remote, "update-ref", "refs/heads/"+gc.Head, first)
			for _, d := range compareWithGitClone(t, remote, root) {
				diffs = append(diffs, "after refused boot 1: "+d)
			}
			gittest.Git(t, remote, "update-ref", "refs/heads/"+gc.Head, tip)
			break
		}
		if err != nil {
			return append(diffs, fmt.Sprintf("boot %d (%s): %v", step, at[:7], err))
		}
		want := "cloned"
		if step == 1 {
			want = "fetched"
		}
		if res.Action != want || res.Branch != gc.Head || res.Head != at {
			diffs = append(diffs, fmt.Sprintf("boot %d: %+v, want %s %s at %s", step, res, want, gc.Head, at[:7]))
		}
		depth := gc.Depth
		if step == 1 {
			depth = 0 // a fetch into a shallow root deepens it like git fetch, not like a new clone
		}
		for _, d := range compareWithGitCloneDepth(t, remote, f.Root(), depth) {
			diffs = append(diffs, fmt.Sprintf("boot %d: %s", step, d))
		}
		_ = r.Close()
	}
	// A memory root clones in place: same worktree and index.
	refused := gitRefuses(t, remote)
	f, _, _, err := bootRootDepth(t, url, "", true, "", gc.Depth)
	if refused != "" {
		diffs = append(diffs, checkRefusal(t, "memory boot", err, refused)...)
		if infos, _ := f.Billy().ReadDir("."); len(infos) != 1 {
			diffs = append(diffs, fmt.Sprintf("memory boot: refused clone left %d entries in the root", len(infos)))
		}
		return diffs
	}
	if err != nil {
		return append(diffs, fmt.Sprintf("memory boot: %v", err))
	}
	theirs := filepath.Join(t.TempDir(), "git-clone")
	gittest.Git(t, "", "clone", "-q", remote, theirs)
	a, b := snapshotTree(t, theirs), snapshotVFS(t, f)
	for p, v := range a {
		if target, ok := strings.CutPrefix(v, "symlink -> "); ok {
			a[p] = "file " + target // memory roots have no links: core.symlinks=false
		}
	}
	for _, p := range unionKeys(a, b) {
		if a[p] != b[p] {
			diffs = append(diffs, "memory worktree "+p+": git clone "+quoteOrMissing(a[p])+", ours "+quoteOrMissing(b[p]))
		}
	}
	return diffs
}

// gitRefuses clones remote with git, protecting HFS+ and NTFS names as the
// kernel always does, and returns the path git refuses to check out ("" if
// the checkout succeeds).
func gitRefuses(t testing.TB, remote string) string {
	t.Helper()
	out, err := gittest.GitErr("", "-c", "core.protectHFS=true", "-c", "core.protectNTFS=true",
		"clone", "-q", remote, filepath.Join(t.TempDir(), "git-clone"))
	if err == nil {
		return ""
	}
	const pre = "error: invalid path '"
	i := strings.Index(out, pre)
	if i < 0 {
		t.Fatalf("git clone failed otherwise: %v\n%s", err, out)
	}
	p, _, _ := strings.Cut(out[i+len(pre):], "'\n")
	return p
}

// checkRefusal wants err to be git's refusal of path p.
func checkRefusal(t testing.TB, what string, err error, p string) []string {
	var ip *InvalidPathError
	if !errors.As(err, &ip) || ip.Path != p || !strings.Contains(err.Error(), "error: invalid path '"+p+"'") {
		return []string{fmt.Sprintf("%s: git refuses %q; ours: %v", what, p, err)}
	}
	return nil
}

// snapshotVFS describes a memory root like snapshotTree.
func snapshotVFS(t testing.TB, f *vfs.FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	wt := f.Billy()
	var walk func(dir string)
	walk = func(dir string) {
		infos, err := wt.ReadDir(dir)
		if err != nil {
			t.Fatalf("read %s: %v", dir, err)
		}
		for _, i := range infos {
			p := path.Join(dir, i.Name())
			if p == ".git" {
				continue
			}
			switch {
			case i.Mode()&os.ModeSymlink != 0:
				target, err := wt.Readlink(p)
				if err != nil {
					t.Fatal(err)
				}
				out[p] = "symlink -> " + target
			case i.IsDir():
				out[p] = "dir"
				walk(p)
			default:
				b, err := f.ReadFile(p)
				if err != nil {
					t.Fatalf("read %s: %v", p, err)
				}
				kind := "file"
				if i.Mode()&0o100 != 0 {
					kind = "exec"
				}
				out[p] = kind + " " + string(b)
			}
		}
	}
	walk(".")
	return out
}

// shrinkGenCase removes ops (halves, then one at a time), then simplifies
// contents and options, while the case still fails, and returns the
// smallest failing case found.
func shrinkGenCase(t *testing.T, gc genCase) genCase {
	fails := func(c genCase) bool {
		var d []string
		t.Run("shrink", func(t *testing.T) { d = runGenCase(t, c, nil) })
		return len(d) > 0
	}
	for chunk := len(gc.Ops) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(gc.Ops); {
			c := gc
			c.Ops = append(append([]genOp{}, gc.Ops[:i]...), gc.Ops[i+chunk:]...)
			if fails(c) {
				gc = c
				continue
			}
			i += chunk
		}
	}
	for i, op := range gc.Ops {
		if (op.Kind == "write" || op.Kind == "exec") && len(op.Data) > 2 {
			c := gc
			c.Ops = append([]genOp{}, gc.Ops...)
			c.Ops[i].Data = "x\n"
			if fails(c) {
				gc = c
			}
		}
	}
	for _, try := range []func(c *genCase){func(c *genCase) { c.HTTP = false }, func(c *genCase) { c.Back = 0 }, func(c *genCase) { c.Depth = 0 }} {
		c := gc
		try(&c)
		if fails(c) {
			gc = c
		}
	}
	return gc
}

func genSeeds(t *testing.T) []uint64 {
	if s := os.Getenv("TGP_CLONEGEN_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return []uint64{n}
	}
	n := cloneGenSeeds
	if testing.Short() {
		n = 5
	}
	if s := os.Getenv("TGP_CLONEGEN_SEEDS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	first := uint64(1)
	if s := os.Getenv("TGP_CLONEGEN_SEED0"); s != "" {
		var err error
		if first, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = first + uint64(i)
	}
	return seeds
}

// TestBootMatchesGitCloneGenerated is the differential suite.
func TestBootMatchesGitCloneGenerated(t *testing.T) {
	gittest.RequireGit(t)
	st := &genStats{modes: map[string]int{}}
	defer func() {
		t.Logf("%d generated remotes (%d with no HEAD branch, skipped), %d over smart HTTP, %d fast-forwarded at a second boot, %d boots refused like git (invalid path); tree entries by mode: %v",
			st.cases, st.skipped, st.http, st.fastForwards, st.refusals, st.modes)
	}()
	var mu sync.Mutex
	t.Run("seeds", func(t *testing.T) {
		for _, seed := range genSeeds(t) {
			gc := generate(seed)
			t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
				t.Parallel()
				mine := &genStats{modes: map[string]int{}}
				diffs := runGenCase(t, gc, mine)
				mu.Lock()
				st.add(mine)
				mu.Unlock()
				if len(diffs) == 0 {
					return
				}
				t.Errorf("seed %d differs from git clone:\n%s", seed, strings.Join(diffs, "\n"))
				if os.Getenv("TGP_CLONEGEN_NOSHRINK") != "" {
					return
				}
				small := shrinkGenCase(t, gc)
				var src strings.Builder
				fmt.Fprintf(&src, "genCase{Head: %q, Back: %d, HTTP: %v, Depth: %d, Ops: []genOp{\n", small.Head, small.Back, small.HTTP, small.Depth)
				for _, o := range small.Ops {
					fmt.Fprintf(&src, "\t%s,\n", o)
				}
				src.WriteString("}}")
				t.Errorf("seed %d shrunk to (name it in TestBootGeneratedRegressions):\n%s", seed, src.String())
			})
		}
	})
}

// TestBootGeneratedRegressions holds shrunk failures of the generated
// suite, by name.
func TestBootGeneratedRegressions(t *testing.T) {
	gittest.RequireGit(t)
	cases := map[string]genCase{
		// Seed 40: billy's chroot osfs rewrote an absolute link target into
		// the staging directory; git checks links out verbatim.
		"absolute symlink target": {Head: "main", Ops: []genOp{
			{"branch", "main", ""}, {"symlink", "a/a.b.c", "/etc/passwd"}, {"write", "x", "x\n"}, {"commit", "", "c"},
		}},
		// A file becomes a symlink at the second boot (fast-forward):
		// "symlink b.txt: file exists".
		"file replaced by symlink on fast-forward": {Head: "main", Back: 1, Ops: []genOp{
			{"branch", "main", ""}, {"write", "b.txt", "b\n"}, {"commit", "", "one"},
			{"symlink", "b.txt", "a"}, {"commit", "", "two"},
		}},
		// Symlinks, a gitlink and an exec file in a memory root and over
		// smart HTTP.
		"gitlink symlink exec over http": {Head: "trunk", HTTP: true, Ops: []genOp{
			{"branch", "trunk", ""}, {"gitlink", "vendor/mod", "1234567890123456789012345678901234567890"},
			{"symlink", "l", "../outside"}, {"exec", "bin/run", "#!/bin/sh\n"}, {"commit", "", "one"},
		}},
	}
	for name, gc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := runGenCase(t, gc, nil); len(d) > 0 {
				t.Fatalf("differs from git clone:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}
