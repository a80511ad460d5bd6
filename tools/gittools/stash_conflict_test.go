package gittools

// A randomized differential test of git_stash apply/pop against git stash
// apply/pop where the stash's changes meet changes made since (commits
// and staged changes): conflicts of every kind a stash meets, clean
// merges, refusals.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// sop is one step of building a repository.
type sop struct {
	Kind string // write, chmod, rm, add, addall, mv, commit, stash, config, link
	Path string
	To   string
	Data string
	Flag bool
}

func (o sop) String() string {
	b, _ := json.Marshal(o)
	return string(b)
}

var stashWords = []string{"alpha", "beta", "gamma", "delta", "}", "{", "", "\treturn x;", "end", "same", "same", "x = 1"}

// genStashScenario makes the steps of one seed: a first commit, one or
// two stashes of random edits, then edits committed or staged (and
// sometimes left unstaged) that touch the same files, and the
// action to compare.
func genStashScenario(seed int64) (ops []sop, action string, index int) {
	r := rand.New(rand.NewSource(seed))
	names := []string{"a.txt", "b.txt", "dir/c.txt", "dir/sub/d.md", "e f.txt", "g.bin", "h.sh"}
	files := map[string][]string{}
	eolOf := map[string]string{}
	noNL := map[string]bool{}
	body := func(p string) string {
		ls := files[p]
		eol := eolOf[p]
		s := strings.Join(ls, eol)
		if len(ls) > 0 && !noNL[p] {
			s += eol
		}
		if strings.HasSuffix(p, ".bin") {
			s += "\x00\x01bin"
		}
		return s
	}
	gen := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = stashWords[r.Intn(len(stashWords))]
		}
		return out
	}
	write := func(p string, ls []string) {
		files[p] = ls
		if _, ok := eolOf[p]; !ok {
			eolOf[p] = "\n"
			if r.Intn(8) == 0 {
				eolOf[p] = "\r\n"
			}
			noNL[p] = r.Intn(8) == 0
		}
		ops = append(ops, sop{Kind: "write", Path: p, Data: body(p)})
	}
	switch r.Intn(8) {
	case 0:
		ops = append(ops, sop{Kind: "write", Path: ".gitattributes", Data: []string{"*.txt merge=union\n", "*.md -merge\n", "*.txt conflict-marker-size=10\n", "*.txt text eol=crlf\n"}[r.Intn(4)]})
	case 1:
		ops = append(ops, sop{Kind: "config", Path: "merge.conflictStyle", Data: []string{"diff3", "zdiff3", "merge"}[r.Intn(3)]})
	}
	for _, p := range names[:3+r.Intn(len(names)-2)] {
		write(p, gen(3+r.Intn(10)))
		if r.Intn(6) == 0 {
			ops = append(ops, sop{Kind: "chmod", Path: p, Flag: true})
		}
	}
	ops = append(ops, sop{Kind: "addall"}, sop{Kind: "commit", Data: "base"})
	keys := func() []string {
		var ks []string
		for k := range files {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	edit := func(p string) {
		ls := append([]string(nil), files[p]...)
		for k := 1 + r.Intn(3); k > 0; k-- {
			i := r.Intn(len(ls) + 1)
			switch r.Intn(4) {
			case 0:
				ls = append(ls[:i], append(gen(1+r.Intn(2)), ls[i:]...)...)
			case 1:
				if i < len(ls) {
					ls = append(ls[:i], ls[i+1:]...)
				}
			default:
				if i < len(ls) {
					ls[i] = stashWords[r.Intn(len(stashWords))] + " changed"
				}
			}
		}
		write(p, ls)
	}
	change := func(stage bool) {
		ks := keys()
		p := ks[r.Intn(len(ks))]
		switch k := r.Intn(20); {
		case k < 11:
			edit(p)
		case k < 12:
			ops = append(ops, sop{Kind: "chmod", Path: p, Flag: r.Intn(2) == 0})
		case k < 14:
			ops = append(ops, sop{Kind: "rm", Path: p})
			delete(files, p)
		case k < 16:
			q := []string{"new.txt", "dir/new.txt", "moved.txt", "dir/sub/n.md"}[r.Intn(4)]
			write(q, gen(2+r.Intn(6)))
			stage = true
		case k < 18:
			q := []string{"moved.txt", "dir/moved.txt", "z.txt"}[r.Intn(3)]
			if _, ok := files[q]; !ok {
				ops = append(ops, sop{Kind: "mv", Path: p, To: q})
				files[q] = files[p]
				eolOf[q], noNL[q] = eolOf[p], noNL[p]
				delete(files, p)
				if r.Intn(2) == 0 {
					edit(q)
				}
				stage = true
			}
		default:
			ops = append(ops, sop{Kind: "link", Path: []string{"ln", "dir/ln"}[r.Intn(2)], To: p})
		}
		if stage {
			ops = append(ops, sop{Kind: "addall"})
		}
	}
	snapshot := func() (map[string][]string, map[string]string, map[string]bool) {
		f := map[string][]string{}
		for k, v := range files {
			f[k] = v
		}
		e := map[string]string{}
		for k, v := range eolOf {
			e[k] = v
		}
		n := map[string]bool{}
		for k, v := range noNL {
			n[k] = v
		}
		return f, e, n
	}
	f0, e0, n0 := snapshot()
	restore := func() {
		files, eolOf, noNL = f0, e0, n0
		files, eolOf, noNL = snapshot()
	}
	stashes := 1 + r.Intn(2)
	for s := 0; s < stashes; s++ {
		restore() // the worktree is back at HEAD after a stash
		for k := 1 + r.Intn(4); k > 0; k-- {
			change(r.Intn(3) == 0)
		}
		if r.Intn(5) == 0 {
			ops = append(ops, sop{Kind: "write", Path: []string{"untracked.txt", "new.txt", "dir/u.txt"}[r.Intn(3)], Data: "untracked\n"})
		}
		ops = append(ops, sop{Kind: "stash", Flag: r.Intn(4) == 0, Data: []string{"", "wip"}[r.Intn(2)]})
	}
	restore()
	// Changes since: committed, or only staged.
	for k := 1 + r.Intn(4); k > 0; k-- {
		change(false)
	}
	switch r.Intn(3) {
	case 0, 1:
		ops = append(ops, sop{Kind: "addall"}, sop{Kind: "commit", Data: "upstream"})
	default:
		ops = append(ops, sop{Kind: "addall"})
	}
	if r.Intn(6) == 0 {
		change(false) // left unstaged: may be in the merge's way
	}
	if r.Intn(3) == 0 {
		action = "pop"
	} else {
		action = "apply"
	}
	return ops, action, r.Intn(stashes)
}

// runStashOps builds the repository of ops in dir; a step git refuses is
// skipped (shrinking leaves steps whose preconditions are gone).
func runStashOps(t *testing.T, dir string, ops []sop) {
	t.Helper()
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	clock := 1700000000
	for _, o := range ops {
		full := filepath.Join(dir, o.Path)
		switch o.Kind {
		case "write":
			_ = os.MkdirAll(filepath.Dir(full), 0o755)
			if info, err := os.Lstat(full); err == nil && info.IsDir() {
				continue
			}
			_ = os.Remove(full)
			_ = os.WriteFile(full, []byte(o.Data), 0o644)
		case "chmod":
			m := os.FileMode(0o644)
			if o.Flag {
				m = 0o755
			}
			_ = os.Chmod(full, m)
		case "rm":
			_ = os.Remove(full)
		case "link":
			_ = os.MkdirAll(filepath.Dir(full), 0o755)
			_ = os.Remove(full)
			_ = os.Symlink(o.To, full)
		case "addall":
			_, _ = gittest.GitErr(dir, "add", "-A")
		case "mv":
			_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, o.To)), 0o755)
			_, _ = gittest.GitErr(dir, "mv", o.Path, o.To)
		case "config":
			gittest.Git(t, dir, "config", o.Path, o.Data)
		case "commit":
			clock += 60
			date := fmt.Sprintf("@%d +0000", clock)
			_, _, _ = bgit(t, dir, []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, "commit", "-q", "--allow-empty", "-m", o.Data)
		case "stash":
			clock += 60
			date := fmt.Sprintf("@%d +0000", clock)
			args := []string{"stash", "push", "-q"}
			if o.Flag {
				args = append(args, "-u")
			}
			if o.Data != "" {
				args = append(args, "-m", o.Data)
			}
			_, _, _ = bgit(t, dir, []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, args...)
		}
	}
}

// stashState is what an apply can change: the index, the worktree, the
// stash list and refs.
func stashState(t *testing.T, dir string) string {
	var b strings.Builder
	for _, args := range [][]string{{"ls-files", "-s"}, {"status", "--porcelain=v2", "--untracked-files=all"}, {"stash", "list"}, {"for-each-ref", "--format=%(refname) %(objectname)"}} {
		out, _ := gittest.GitErr(dir, args...)
		fmt.Fprintf(&b, "$ git %s\n%s", strings.Join(args, " "), out)
	}
	b.WriteString("worktree:\n")
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil || rel == "." {
			return nil
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, "  %q -> %q\n", rel, target)
		case info.IsDir():
			fmt.Fprintf(&b, "  %q/\n", rel)
		default:
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "  %q exec=%v %q\n", rel, info.Mode()&0o111 != 0, data)
		}
		return nil
	})
	return b.String()
}

// compareStashApply runs the action with git in one copy of dir and with
// the tool in another; it returns "" when they agree, else how they
// differ.
func compareStashApply(t *testing.T, dir, action string, n int) string {
	gitDir, toolDir := copyTree(t, dir), copyTree(t, dir)
	// The tool's index is git stash's numeric argument (refs/stash@{n}).
	stdout, stderr, gerr := bgit(t, gitDir, nil, "stash", action, strconv.Itoa(n))
	f := open(t, toolDir)
	raw, _ := json.Marshal(map[string]any{"action": action, "index": n})
	res, terr := f.set.Call(context.Background(), "git_stash", raw)
	var problems []string
	switch {
	case gerr == nil && terr != nil:
		problems = append(problems, fmt.Sprintf("git succeeded, the tool failed: %v\n--- git stdout\n%s", terr, stdout))
	case gerr != nil && terr == nil:
		problems = append(problems, fmt.Sprintf("git failed (%v), the tool succeeded\n--- git stdout\n%s--- git stderr\n%s--- tool\n%v", gerr, stdout, stderr, res.Value))
	case gerr == nil:
		if got := res.Value.(string); got != stdout {
			problems = append(problems, "outputs differ:\n"+outputDiffText(stdout, got))
		}
	default:
		var te *tools.Error
		if !errors.As(terr, &te) {
			problems = append(problems, fmt.Sprintf("the tool failed with %v", terr))
			break
		}
		if strings.Contains(te.Message, "does not rebuild") {
			problems = append(problems, "unsupported: "+te.Message)
			break
		}
		if stderr == "" {
			if want := strings.TrimSuffix(stdout, "\n"); te.Message != want {
				problems = append(problems, "error messages differ:\n"+outputDiffText(want, te.Message))
			}
		} else {
			for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
				if !strings.Contains(te.Message, l) {
					problems = append(problems, fmt.Sprintf("git's %q is not in the tool's error:\n%s", l, te.Message))
				}
			}
		}
	}
	if sg, st := stashState(t, gitDir), stashState(t, toolDir); sg != st {
		problems = append(problems, "states differ:\n"+outputDiffText(sg, st))
	}
	return strings.Join(problems, "\n")
}

func outputDiffText(want, got string) string {
	wl, gl := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	at := func(ls []string, i int) string {
		if i < len(ls) {
			return fmt.Sprintf("%q", ls[i])
		}
		return "<end>"
	}
	return fmt.Sprintf("first difference at line %d:\n  git:  %s\n  tool: %s\n--- git\n%s\n--- tool\n%s", i+1, at(wl, i), at(gl, i), want, got)
}

// TestStashApplyRandomConflicts compares git_stash apply/pop with git on
// random repositories whose stash meets later changes (TGP_STASHGEN_SEEDS
// and TGP_STASHGEN_SEED0 run more). A failing seed is shrunk to the
// fewest steps that still differ.
func TestStashApplyRandomConflicts(t *testing.T) {
	gittest.RequireGit(t)
	n, _ := strconv.Atoi(os.Getenv("TGP_STASHGEN_SEEDS"))
	if n == 0 {
		n = 40
	}
	s0, _ := strconv.Atoi(os.Getenv("TGP_STASHGEN_SEED0"))
	var conflicted, failed int
	for seed := s0; seed < s0+n; seed++ {
		ops, action, idx := genStashScenario(int64(seed))
		dir := filepath.Join(t.TempDir(), "repo")
		runStashOps(t, dir, ops)
		if stashCount(dir) <= idx {
			continue
		}
		if c := stashConflicts(t, dir, action, idx); c {
			conflicted++
		}
		diff := compareStashApply(t, dir, action, idx)
		if diff == "" {
			continue
		}
		failed++
		if failed > 3 || os.Getenv("TGP_STASHGEN_SHRINK") == "0" {
			t.Errorf("seed %d: %s", seed, strings.SplitN(diff, "\n", 4)[:3])
			continue
		}
		min := shrinkStashOps(t, ops, action, idx)
		dir = filepath.Join(t.TempDir(), "min")
		runStashOps(t, dir, min)
		t.Errorf("seed %d: git stash %s stash@{%d} differs; minimal steps (%d of %d):\n%s\n%s", seed, action, idx, len(min), len(ops), joinOps(min), compareStashApply(t, dir, action, idx))
	}
	t.Logf("%d seeds, %d with conflicts, %d differing", n, conflicted, failed)
	if n >= 20 && conflicted == 0 {
		t.Errorf("no seed conflicted: the generator tests nothing")
	}
}

func joinOps(ops []sop) string {
	var b strings.Builder
	for _, o := range ops {
		b.WriteString("  " + o.String() + "\n")
	}
	return b.String()
}

// stashConflicts reports whether git's apply leaves unmerged paths.
func stashConflicts(t *testing.T, dir, action string, n int) bool {
	d := copyTree(t, dir)
	stdout, _, _ := bgit(t, d, nil, "stash", action, strconv.Itoa(n))
	return strings.Contains(stdout, "CONFLICT")
}

func stashCount(dir string) int {
	out, _ := gittest.GitErr(dir, "stash", "list")
	return strings.Count(out, "\n")
}

// shrinkStashOps drops steps while the comparison still differs.
func shrinkStashOps(t *testing.T, ops []sop, action string, n int) []sop {
	differs := func(ops []sop) bool {
		dir := filepath.Join(t.TempDir(), "s")
		runStashOps(t, dir, ops)
		if stashCount(dir) <= n {
			return false
		}
		return compareStashApply(t, dir, action, n) != ""
	}
	for changed := true; changed; {
		changed = false
		for i := len(ops) - 1; i >= 0; i-- {
			try := append(append([]sop{}, ops[:i]...), ops[i+1:]...)
			if differs(try) {
				ops, changed = try, true
			}
		}
	}
	return ops
}
