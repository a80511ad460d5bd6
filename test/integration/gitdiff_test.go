package integration

// The randomized differential suite: every git tool against the git CLI on
// generated repositories.
//
// Read tools: the tool's text must equal git's stdout byte for byte (or
// both must fail). Mutating tools: the same operation runs through the tool
// in one copy of the repository and through git in another; the resulting
// states (status, index, HEAD, refs, stash, branch config, every worktree
// file's bytes and mode) must be equal, refusals included.
//
// TGP_GIT_SEEDS (default 16) and TGP_GIT_SEED0 (default 1) choose the
// seeds; `make fuzz-git SEEDS=N` runs more. TGP_GIT_TOOLS=git_log,git_show
// limits the checks to some tools; TGP_GIT_SUMMARY=1 prints one line per
// difference instead of shrinking; TGP_GIT_SHRINK=0 turns shrinking off. A failure is shrunk to a
// minimal list of operations and printed as a shell script.

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tgp-go/tgp/kernel"
	_ "github.com/tgp-go/tgp/kernel/all" // every toolset
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/gittools"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// check is one comparison: a tool call and the git command it stands for.
type check struct {
	Tool string
	Args map[string]any
	Git  []string // run in WD (relative to the repository)
	WD   string
	Mut  bool // compare resulting state, not output
	// Compare output of a mutating call too (listing actions).
	Output bool
	// Then are mutating calls made after this one on the state it left,
	// compared after each.
	Then []check
}

func (c check) String() string {
	raw, _ := json.Marshal(c.Args)
	q := make([]string, len(c.Git))
	for i, a := range c.Git {
		q[i] = shellQuote(a)
	}
	wd := ""
	if c.WD != "" {
		wd = "-C " + shellQuote(c.WD) + " "
	}
	out := fmt.Sprintf("%s %s  vs  git %s%s", c.Tool, raw, wd, strings.Join(q, " "))
	for _, n := range c.Then {
		out += "  then  " + n.String()
	}
	return out
}

func requireGit(t testing.TB) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git CLI missing: run `make test`, which installs it")
		}
		t.Skip("git CLI not installed")
	}
}

func TestGitDifferential(t *testing.T) {
	requireGit(t)
	n := envInt("TGP_GIT_SEEDS", 16)
	seed0 := envInt("TGP_GIT_SEED0", 1)
	var failed atomic.Int32
	var checksRun atomic.Int64
	checksDiffering.Store(0)
	start := time.Now()
	t.Cleanup(func() {
		// Printed even without -v: make fuzz-git reports the budget it ran.
		fmt.Fprintf(os.Stderr, "git differential suite: seeds %d..%d, %d checks, %d differing checks in %d seeds, %d documented differences (%s), %s\n",
			seed0, seed0+n-1, checksRun.Load(), checksDiffering.Load(), failed.Load(), documented.Load(), documentedClasses(), time.Since(start).Round(time.Second))
	})
	for s := seed0; s < seed0+n; s++ {
		seed := int64(s)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			if failed.Load() >= 5 && os.Getenv("TGP_GIT_SUMMARY") == "" {
				t.Skip("five seeds failed already")
			}
			if !runSeed(t, seed, &checksRun) {
				failed.Add(1)
			}
		})
	}
}

// checksDiffering counts the checks that differed from git.
var checksDiffering atomic.Int64

// runSeed builds the seed's repository and runs its checks; it reports
// (and shrinks) failures and returns false when any check failed.
func runSeed(t *testing.T, seed int64, checksRun *atomic.Int64) bool {
	ops := genOps(seed)
	dir, _ := build(t, ops)
	checks := genChecks(rand.New(rand.NewSource(seed^0x5eed)), dir)
	ok := true
	reported := 0
	only := os.Getenv("TGP_GIT_TOOLS")
	for _, c := range checks {
		if only != "" && !strings.Contains(","+only+",", ","+c.Tool+",") {
			continue
		}
		bad, detail := runCheck(t, dir, c)
		checksRun.Add(1)
		if !bad {
			continue
		}
		checksDiffering.Add(1)
		ok = false
		if os.Getenv("TGP_GIT_SUMMARY") != "" {
			t.Errorf("DIFF seed=%d %s :: %s", seed, c, firstLine(strings.SplitN(detail, "\n", 2)[0]+" "+strings.Join(strings.SplitN(detail, "\n", 4)[1:], " | ")))
			continue
		}
		if reported >= 2 {
			t.Errorf("seed %d: %s\n(not shrunk)\n%s", seed, c, detail)
			continue
		}
		reported++
		min := shrink(t, ops, c)
		_, b := build(t, min)
		_, detail = runCheck(t, b.dir, c)
		t.Errorf("seed %d: %s\nminimal reproduction (%d of %d operations):\n  %s\n\nops: %v\n%s",
			seed, c, len(min), len(ops), strings.Join(b.script, "\n  "), min, detail)
	}
	return ok
}

// shrink removes operations while the check still fails.
func shrink(t *testing.T, ops []op, c check) []op {
	if os.Getenv("TGP_GIT_SHRINK") == "0" {
		return ops
	}
	fails := func(ops []op) bool {
		dir, _ := build(t, ops)
		bad, _ := runCheck(t, dir, c)
		return bad
	}
	cur := append([]op(nil), ops...)
	for chunk := len(cur) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(cur); {
			try := append(append([]op(nil), cur[:i]...), cur[i+chunk:]...)
			if fails(try) {
				cur = try
				continue
			}
			i += chunk
		}
	}
	return cur
}

// repoFacts is what the check generator picks arguments from.
type repoFacts struct {
	tracked, dirs, untracked, text []string
	refs, branches                 []string
	commits                        int
	hashes                         []string
	stashes                        int
	big                            bool // a file of over 512 KiB somewhere
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func nulSplit(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\x00") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func facts(dir string) repoFacts {
	var f repoFacts
	g := func(args ...string) string { out, _, _ := runGit(dir, gitEnv(), args...); return out }
	f.tracked = nulSplit(g("ls-files", "-z"))
	seen := map[string]bool{}
	for _, p := range f.tracked {
		for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
			if !seen[d] {
				seen[d] = true
				f.dirs = append(f.dirs, d)
			}
		}
		if fi, err := os.Lstat(filepath.Join(dir, p)); err == nil && fi.Mode().IsRegular() {
			f.text = append(f.text, p)
		}
	}
	sort.Strings(f.dirs)
	f.untracked = nulSplit(g("ls-files", "-z", "--others"))
	f.branches = lines(g("for-each-ref", "--format=%(refname:short)", "refs/heads"))
	f.refs = append(f.refs, f.branches...)
	f.refs = append(f.refs, lines(g("for-each-ref", "--format=%(refname:short)", "refs/tags"))...)
	f.hashes = lines(g("rev-list", "--all"))
	f.commits = len(f.hashes)
	f.stashes = len(lines(g("stash", "list")))
	for _, l := range lines(g("rev-list", "--all", "--objects", "--filter=blob:limit=512k", "--filter-print-omitted")) {
		if strings.HasPrefix(l, "~") {
			f.big = true
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "big")); err == nil && fi.IsDir() {
		f.big = true
	}
	return f
}

func pickS(r *rand.Rand, s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[r.Intn(len(s))]
}

var formats = []string{
	"%H %h %s", "%an <%ae> %ad", "%ar", "%cs", "%N", "%G?", "%e", "%gs", "%b", "%B", "%T %t %P %p",
	"%ci | %cI | %ct", "%d|%D", "%x09tab%x00nul", "%aN %aE %cn %ce", "%f", "%%", "%s%n%b", "%ad %aD %as %at",
	"%cr %cd", "%n%n%s", "format:%h", "tformat:%s", "%w(20,2,4)%s", "%<(10)%s|", "%>(12)%h|", "%(trailers)",
	"%m %s", "%Cred%s%Creset", "%C(auto)%h%d", "%aI %ah", "%l %L %GS %GK", "%G?|%GK|%GF|%GP", "%z", "%x41%X", "%<|(30)%an|",
}

var refExprs = []string{"HEAD", "HEAD~1", "HEAD^", "HEAD~2", "HEAD^2", "HEAD^{tree}", "main", "nonexistent", "HEAD@{0}", "main~1", "stash@{0}", "stash@{1}^2"}

// ref picks a revision expression that may or may not resolve.
func ref(r *rand.Rand, f repoFacts) string {
	switch r.Intn(4) {
	case 0:
		return pickS(r, f.refs, "HEAD")
	case 1:
		h := pickS(r, f.hashes, "HEAD")
		if r.Intn(2) == 0 && len(h) == 40 {
			return h[:7]
		}
		return h
	}
	return refExprs[r.Intn(len(refExprs))]
}

// revArg picks a revision for a tool that takes ranges as git does (the
// commit of git_show and git_blame, the refs of git_diff) or refuses
// them (git_checkout's commit): a revision, A..B, A...B, or one of their
// one-sided forms.
func revArg(r *rand.Rand, f repoFacts) string {
	switch r.Intn(6) {
	case 0:
		return ref(r, f) + ".." + ref(r, f)
	case 1:
		return ref(r, f) + "..." + ref(r, f)
	case 2:
		return []string{"HEAD~1..", "..HEAD~1", "main...", "...main", "HEAD~2..HEAD", "HEAD..HEAD"}[r.Intn(6)]
	}
	return ref(r, f)
}

// pathArg picks a path argument: tracked, a directory, untracked, a glob
// or something that does not exist.
func pathArg(r *rand.Rand, f repoFacts) string {
	switch r.Intn(11) {
	case 9, 10:
		// Pathspec magic: exclusions, glob and icase matching, top.
		t := pickS(r, f.tracked, "a0.txt")
		return []string{":!" + t, ":(exclude)*.txt", ":(glob)src/*", ":(glob)**/*.ts", ":(icase)README*", ":/" + t,
			":(top)" + pickS(r, f.dirs, "."), ":(literal)" + t, ":^" + pickS(r, f.dirs, "x"), ":(icase,exclude)*.MD"}[r.Intn(10)]
	case 0, 1, 2:
		return pickS(r, f.tracked, "a0.txt")
	case 3:
		return pickS(r, f.dirs, ".")
	case 4:
		return pickS(r, f.untracked, "nope.txt")
	case 5:
		globs := []string{"*.txt", "src/*", "*", "**/*.ts", "*a*", "*/", "*/.", ":(glob)*/", "[a-z]*/"}
		if k := r.Intn(len(globs) + 2); k < len(globs) {
			return globs[k]
		} else if d := pickS(r, f.dirs, "src"); k == len(globs) {
			return d + "*/" // a glob with git's trailing slash: matches no file
		} else {
			return d + "/*/"
		}
	case 6:
		return "."
	case 7:
		return "missing/file.txt"
	}
	return pickS(r, f.text, "a0.txt")
}

// underWD rewrites a repository-relative path for a working_dir; paths
// outside it get the ../ git would need.
func underWD(wd, p string) string {
	if wd == "" {
		return p
	}
	if p == wd {
		return "."
	}
	if strings.HasPrefix(p, wd+"/") {
		return strings.TrimPrefix(p, wd+"/")
	}
	return strings.Repeat("../", strings.Count(wd, "/")+1) + p
}

func genChecks(r *rand.Rand, dir string) []check { return genChecksWith(r, dir, facts(dir)) }

// genChecksWith is genChecks on facts already read (a long history's
// take a while).
func genChecksWith(r *rand.Rand, dir string, f repoFacts) []check {
	var cs []check
	defer func() {
		if f.big {
			// Outputs over the tools' default cap (1 MiB) come whole when
			// asked for (max_bytes), as git prints them.
			for _, c := range cs {
				if !c.Mut && c.Tool != "git_status" {
					c.Args["max_bytes"] = 5000000
				}
			}
		}
	}()
	wd := func() string {
		if r.Intn(5) == 0 && len(f.dirs) > 0 {
			return pickS(r, f.dirs, "")
		}
		return ""
	}
	// git_status
	for i := 0; i < 3; i++ {
		a := map[string]any{}
		porcelain, branch, untracked := r.Intn(3) > 0, r.Intn(3) > 0, r.Intn(3) > 0
		if i == 0 {
			porcelain, branch, untracked = true, true, true
		}
		a["porcelain"], a["branch"], a["untracked"] = porcelain, branch, untracked
		g := []string{"status"}
		if porcelain {
			g = append(g, "--porcelain=1")
			if branch {
				g = append(g, "-b")
			}
		}
		if !untracked {
			g = append(g, "-uno")
		}
		w := wd()
		if w != "" {
			a["working_dir"] = w
		}
		cs = append(cs, check{Tool: "git_status", Args: a, Git: g, WD: w})
	}
	// git_log
	for i := 0; i < 6; i++ {
		a := map[string]any{}
		g := []string{"log"}
		if r.Intn(3) == 0 {
			n := 1 + r.Intn(4)
			a["max_count"] = n
			g = append(g, "-n", fmt.Sprint(n))
		}
		switch r.Intn(3) {
		case 0:
			a["oneline"] = true
			g = append(g, "--oneline")
		case 1:
			fm := formats[r.Intn(len(formats))]
			a["format"] = fm
			g = append(g, "--format="+fm)
		}
		if r.Intn(6) == 0 {
			v := []string{"Alice", "bob@", "Ren", "nobody", "Test"}[r.Intn(5)]
			a["author"] = v
			g = append(g, "--author="+v)
		}
		if r.Intn(6) == 0 {
			v := []string{"fix", "body", "^x$", "tab", "caf"}[r.Intn(5)]
			a["grep"] = v
			g = append(g, "--grep="+v)
		}
		if r.Intn(8) == 0 {
			v := []string{"2023-11-15", "@1700050000", "2023-11-14 23:00:00"}[r.Intn(3)]
			a["since"] = v
			g = append(g, "--since="+v)
		}
		if r.Intn(8) == 0 {
			v := []string{"2023-11-16", "@1700030000"}[r.Intn(2)]
			a["until"] = v
			g = append(g, "--until="+v)
		}
		w := wd()
		if r.Intn(2) == 0 {
			p := pathArg(r, f)
			a["path"] = underWD(w, p)
			g = append(g, "--", underWD(w, p))
		}
		if w != "" {
			a["working_dir"] = w
		}
		cs = append(cs, check{Tool: "git_log", Args: a, Git: g, WD: w})
	}
	// git_diff
	for i := 0; i < 6; i++ {
		a := map[string]any{}
		g := []string{"diff"}
		switch r.Intn(4) {
		case 0:
			a["cached"] = true
			g = append(g, "--cached")
		case 1:
			from := revArg(r, f)
			a["from_ref"] = from
			g = append(g, from)
			if r.Intn(2) == 0 {
				to := ref(r, f)
				if r.Intn(4) == 0 {
					to = revArg(r, f)
				}
				a["to_ref"] = to
				g = append(g, to)
			}
		}
		switch r.Intn(4) {
		case 0:
			a["name_only"] = true
			g = append(g[:1], append([]string{"--name-only"}, g[1:]...)...)
		case 1:
			a["stat"] = true
			g = append(g[:1], append([]string{"--stat"}, g[1:]...)...)
		}
		if r.Intn(4) == 0 {
			u := r.Intn(5)
			a["unified"] = u
			g = append(g[:1], append([]string{fmt.Sprintf("-U%d", u)}, g[1:]...)...)
		}
		w := wd()
		if r.Intn(2) == 0 {
			ps := []string{underWD(w, pathArg(r, f))}
			if r.Intn(3) == 0 {
				ps = append(ps, underWD(w, pathArg(r, f)))
			}
			a["paths"] = ps
			g = append(g, "--")
			g = append(g, ps...)
		}
		if w != "" {
			a["working_dir"] = w
		}
		cs = append(cs, check{Tool: "git_diff", Args: a, Git: g, WD: w})
	}
	// git_show
	for i := 0; i < 5; i++ {
		a := map[string]any{}
		g := []string{"show"}
		switch r.Intn(4) {
		case 0:
			a["stat"] = true
			g = append(g, "--stat")
		case 1:
			a["name_only"] = true
			g = append(g, "--name-only")
		}
		if r.Intn(4) == 0 {
			fm := formats[r.Intn(len(formats))]
			a["format"] = fm
			g = append(g, "--format="+fm)
		}
		c := "HEAD"
		if i > 0 {
			c = revArg(r, f)
			a["commit"] = c
		}
		g = append(g, c)
		cs = append(cs, check{Tool: "git_show", Args: a, Git: g})
	}
	// git_blame
	for i := 0; i < 5; i++ {
		w := wd()
		p := pickS(r, f.text, "a0.txt")
		if r.Intn(6) == 0 {
			p = pathArg(r, f)
		}
		a := map[string]any{"path": underWD(w, p)}
		g := []string{"blame"}
		if r.Intn(3) == 0 {
			s := 1 + r.Intn(6)
			e := s + r.Intn(6)
			a["start_line"], a["end_line"] = s, e
			g = append(g, "-L", fmt.Sprintf("%d,%d", s, e))
		}
		if r.Intn(3) == 0 {
			c := revArg(r, f)
			a["commit"] = c
			g = append(g, c)
		}
		g = append(g, "--", underWD(w, p))
		if w != "" {
			a["working_dir"] = w
		}
		cs = append(cs, check{Tool: "git_blame", Args: a, Git: g, WD: w})
	}
	if f.big {
		// Outputs over 1 MiB: the commits that touched the big file, its
		// diff across the history and in the worktree, its blame.
		g := func(args ...string) string { out, _, _ := runGit(dir, gitEnv(), args...); return out }
		for _, h := range lines(g("log", "--all", "--format=%H", "--", "big")) {
			cs = append(cs, check{Tool: "git_show", Args: map[string]any{"commit": h}, Git: []string{"show", h}})
		}
		if first := lines(g("rev-list", "--max-parents=0", "HEAD")); len(first) > 0 {
			cs = append(cs, check{Tool: "git_diff", Args: map[string]any{"from_ref": first[0], "to_ref": "HEAD"}, Git: []string{"diff", first[0], "HEAD"}})
		}
		cs = append(cs, check{Tool: "git_diff", Args: map[string]any{"from_ref": "HEAD", "paths": []string{"big"}}, Git: []string{"diff", "HEAD", "--", "big"}})
		for _, p := range f.tracked {
			if strings.HasPrefix(p, "big/") {
				cs = append(cs, check{Tool: "git_blame", Args: map[string]any{"path": p}, Git: []string{"blame", "--", p}})
				break
			}
		}
	}
	cs = append(cs, genMutations(r, f)...)
	return cs
}

func genMutations(r *rand.Rand, f repoFacts) []check {
	var cs []check
	for i := 0; i < 8; i++ {
		var c check
		c.Mut = true
		// A working directory below the top: path arguments are relative
		// to it, as git's are to the directory it runs in.
		w := ""
		if r.Intn(4) == 0 && len(f.dirs) > 0 {
			w = pickS(r, f.dirs, "")
		}
		pathArg := func(r *rand.Rand, f repoFacts) string { return underWD(w, pathArg(r, f)) }
		switch r.Intn(6) {
		case 0: // git_add
			c.Tool = "git_add"
			switch r.Intn(4) {
			case 0:
				c.Args, c.Git = map[string]any{"all": true}, []string{"add", "-A"}
			case 1:
				c.Args, c.Git = map[string]any{"update": true}, []string{"add", "-u"}
			default:
				ps := []string{pathArg(r, f)}
				if r.Intn(2) == 0 {
					ps = append(ps, underWD(w, pickS(r, f.untracked, "x")))
				}
				c.Args, c.Git = map[string]any{"paths": ps}, append([]string{"add", "--"}, ps...)
			}
		case 1: // git_commit
			c.Tool = "git_commit"
			msg := messages[r.Intn(len(messages))]
			typ := []string{"feat", "fix", "chore"}[r.Intn(3)]
			full := typ + ": " + msg
			c.Args = map[string]any{"type": typ, "message": msg}
			if r.Intn(2) == 0 {
				c.Args["scope"] = "core"
				full = typ + "(core): " + msg
			}
			// Not quiet: the summary git prints is compared, the new
			// commit's hash in it too (the dates are pinned).
			c.Git, c.Output = []string{"commit", "-m", full}, true
		case 2: // git_restore
			c.Tool = "git_restore"
			ps := []string{pathArg(r, f)}
			staged, worktree := r.Intn(2) == 0, r.Intn(3) > 0
			if !staged && !worktree {
				worktree = true
			}
			c.Args = map[string]any{"paths": ps, "staged": staged, "worktree": worktree}
			c.Git = []string{"restore"}
			if staged {
				c.Git = append(c.Git, "--staged")
			}
			if worktree && staged {
				c.Git = append(c.Git, "--worktree")
			}
			c.Git = append(append(c.Git, "--"), ps...)
		case 3: // git_branch
			c.Tool = "git_branch"
			name := []string{"new-b", "topic", "main", "feature/x", "fix-1"}[r.Intn(5)]
			switch r.Intn(7) {
			case 6:
				c.Args, c.Git, c.Output = map[string]any{"list_remote": true}, []string{"branch", "-v", "-r"}, true
			case 0:
				c.Args, c.Git, c.Output = map[string]any{}, []string{"branch", "-v"}, true
			case 1:
				c.Args, c.Git, c.Output = map[string]any{"list_all": true}, []string{"branch", "-v", "-a"}, true
			case 2:
				c.Args, c.Git = map[string]any{"create": name}, []string{"branch", name}
			case 3:
				c.Args, c.Git = map[string]any{"delete": name}, []string{"branch", "-d", name}
			case 4:
				c.Args, c.Git = map[string]any{"force_delete": name}, []string{"branch", "-D", name}
			default:
				from := pickS(r, f.branches, "main")
				c.Args, c.Git = map[string]any{"rename": from, "new_name": name}, []string{"branch", "-m", from, name}
			}
		case 4: // git_checkout
			c.Tool = "git_checkout"
			switch r.Intn(5) {
			case 0:
				b := pickS(r, f.branches, "main")
				c.Args, c.Git = map[string]any{"branch": b}, []string{"checkout", "-q", b}
			case 1:
				// Not quiet: git 2.39's "checkout -q -b" refuses an unmerged
				// index that plain "checkout -b" (what the tool does) keeps.
				c.Args, c.Git = map[string]any{"create_branch": "new-b"}, []string{"checkout", "-b", "new-b"}
			case 2:
				x := ref(r, f)
				if r.Intn(4) == 0 {
					x = revArg(r, f) // a range is git's refusal
				}
				c.Args, c.Git = map[string]any{"commit": x}, []string{"checkout", "-q", "--detach", x}
			case 3:
				ps := []string{pathArg(r, f)}
				c.Args, c.Git = map[string]any{"paths": ps}, append([]string{"checkout", "-q", "--"}, ps...)
			default:
				x := ref(r, f)
				if r.Intn(4) == 0 {
					x = revArg(r, f) // A...B is the merge base, A..B refused
				}
				ps := []string{pathArg(r, f)}
				c.Args, c.Git = map[string]any{"commit": x, "paths": ps}, append([]string{"checkout", "-q", x, "--"}, ps...)
			}
		default: // git_stash
			c.Tool = "git_stash"
			n := r.Intn(2)
			switch r.Intn(7) {
			case 0, 1:
				c.Args, c.Git = map[string]any{"action": "push"}, []string{"stash", "push", "-q"}
				if r.Intn(2) == 0 {
					c.Args["include_untracked"] = true
					c.Git = append(c.Git, "-u")
				}
				if r.Intn(2) == 0 {
					c.Args["message"] = "saved work"
					c.Git = append(c.Git, "-m", "saved work")
				}
			case 2:
				c.Args, c.Git, c.Output = map[string]any{"action": "list"}, []string{"stash", "list"}, true
			case 3:
				c.Args, c.Git = map[string]any{"action": "pop", "index": n}, []string{"stash", "pop", "-q", fmt.Sprintf("stash@{%d}", n)}
			case 4:
				c.Args, c.Git = map[string]any{"action": "apply", "index": n}, []string{"stash", "apply", "-q", fmt.Sprintf("stash@{%d}", n)}
			case 5:
				c.Args, c.Git = map[string]any{"action": "drop", "index": n}, []string{"stash", "drop", "-q", fmt.Sprintf("stash@{%d}", n)}
			default:
				c.Args, c.Git, c.Output = map[string]any{"action": "show", "index": n}, []string{"stash", "show", fmt.Sprintf("stash@{%d}", n)}, true
			}
		}
		if w != "" {
			c.Args["working_dir"], c.WD = w, w
		}
		cs = append(cs, c)
	}
	return append(cs, genSequences(r, f)...)
}

// genSequences makes mutating calls that act on what the call before
// left: a stash the tool saved applied by the tool (on another branch
// sometimes), a commit of what the tool staged (git's summary of its
// renames, mode and type changes compared), a commit on a branch the
// tool made.
func genSequences(r *rand.Rand, f repoFacts) []check {
	stashPush := func() check {
		c := check{Tool: "git_stash", Mut: true, Args: map[string]any{"action": "push"}, Git: []string{"stash", "push", "-q"}}
		if r.Intn(2) == 0 {
			c.Args["include_untracked"] = true
			c.Git = append(c.Git, "-u")
		}
		if r.Intn(3) == 0 {
			c.Args["message"] = "saved work"
			c.Git = append(c.Git, "-m", "saved work")
		}
		return c
	}
	commit := func() check {
		msg := messages[r.Intn(len(messages))]
		return check{Tool: "git_commit", Mut: true, Output: true, Args: map[string]any{"type": "fix", "message": msg}, Git: []string{"commit", "-m", "fix: " + msg}}
	}
	addAll := func() check {
		if r.Intn(3) == 0 {
			return check{Tool: "git_add", Mut: true, Args: map[string]any{"update": true}, Git: []string{"add", "-u"}}
		}
		return check{Tool: "git_add", Mut: true, Args: map[string]any{"all": true}, Git: []string{"add", "-A"}}
	}
	var cs []check
	for i := 0; i < 2; i++ {
		var c check
		switch r.Intn(5) {
		case 0, 1:
			c = stashPush()
			action := []string{"apply", "pop"}[r.Intn(2)]
			if r.Intn(3) == 0 {
				b := pickS(r, f.branches, "main")
				c.Then = append(c.Then, check{Tool: "git_checkout", Mut: true, Args: map[string]any{"branch": b}, Git: []string{"checkout", "-q", b}})
			}
			if r.Intn(3) == 0 {
				// What the tool saved, as git stash show and list print it.
				c.Then = append(c.Then, check{Tool: "git_stash", Mut: true, Output: true, Args: map[string]any{"action": "show"}, Git: []string{"stash", "show"}},
					check{Tool: "git_stash", Mut: true, Output: true, Args: map[string]any{"action": "list"}, Git: []string{"stash", "list"}})
			}
			c.Then = append(c.Then, check{Tool: "git_stash", Mut: true, Args: map[string]any{"action": action}, Git: []string{"stash", action, "-q"}})
		case 2, 3:
			c = addAll()
			c.Then = []check{commit()}
		default:
			c = check{Tool: "git_checkout", Mut: true, Args: map[string]any{"create_branch": "seq-b"}, Git: []string{"checkout", "-b", "seq-b"}}
			c.Then = []check{addAll(), commit()}
		}
		cs = append(cs, c)
	}
	return cs
}

// newKernel boots a kernel on an existing repository (no remote).
// newKernel boots a kernel on dir; the caller shuts it down.
func newKernel(t testing.TB, dir string, env ...string) *kernel.Kernel {
	t.Helper()
	ctx := context.Background()
	k, err := kernel.New(ctx, kernel.WithRoot(dir), kernel.WithEnviron(gitEnv(env...)))
	if err != nil {
		t.Fatalf("kernel.New: %v", err)
	}
	if err := k.Boot(ctx); err != nil {
		t.Fatalf("boot: %v", err)
	}
	return k
}

func callTool(k *kernel.Kernel, c check) (string, error) {
	raw, _ := json.Marshal(c.Args)
	res, err := k.Call(context.Background(), c.Tool, raw)
	if err != nil {
		return "", err
	}
	s, _ := res.Value.(string)
	return s, nil
}

// notCommittedYet matches the time of a not-yet-committed blame line (the
// current time, in any format, with or without emails): git and the tool
// read the clock a moment apart.
var notCommittedYet = regexp.MustCompile(`(Not Committed Yet|<not\.committed\.yet>) +[^)]*? +(\d+\) )`)

// runCheck runs one check on dir; it reports whether the tool and git
// differ, and how.
func runCheck(t *testing.T, dir string, c check) (bool, string) {
	if c.Mut {
		return runMutation(t, dir, c)
	}
	k := newKernel(t, dir)
	// Shut down here, not in t.Cleanup: a finished parallel subtest keeps
	// its cleanup closures until the whole suite ends, and with them every
	// kernel it made (12 MB a seed).
	defer k.Shutdown(context.Background())
	got, terr := callTool(k, c)
	want, stderr, gerr := runGit(filepath.Join(dir, c.WD), gitEnv(), c.Git...)
	switch {
	case gerr != nil && terr != nil:
		return false, ""
	case gitCrashed(gerr):
		// No oracle: git 2.39 itself dies (SIGSEGV) on some checks, as
		// `git -C src diff --cached --stat -- ../.` with diff.relative
		// and an unmerged path (seed 14).
		noteDocumented("git crashed: no oracle")
		return false, ""
	case gerr != nil:
		return true, fmt.Sprintf("git failed (%v: %s) but the tool answered:\n%s", gerr, stderr, clip(got))
	case terr != nil && reflogDateRefused(c, terr):
		noteDocumented("reflog date not read")
		return false, ""
	case terr != nil:
		return true, fmt.Sprintf("the tool failed (%v) but git answered:\n%s", terr, clip(want))
	}
	if c.Tool == "git_blame" {
		got = notCommittedYet.ReplaceAllString(got, "$1 <now> $2")
		want = notCommittedYet.ReplaceAllString(want, "$1 <now> $2")
	}
	mb, ok := c.Args["max_bytes"].(int)
	if !ok && c.Tool != "git_status" {
		// Not asked for: the configuration's default (tools.git.max_bytes),
		// which a real history's log or show goes over.
		mb = 1 << 20
	}
	if len(want) > mb && strings.HasSuffix(got, tools.TruncationMarker) {
		// Over the most a call may ask for: the tool's output must be
		// git's, cut at a character boundary and marked.
		// (Compared to its last whole line: a blame's last, cut, may
		// hold a time the normalization above did not see whole.)
		cut := strings.TrimSuffix(got, tools.TruncationMarker)
		whole := cut[:strings.LastIndexByte(cut, '\n')+1]
		if len(whole) > 0 && strings.HasPrefix(want, whole) {
			return false, ""
		}
	}
	if got != want {
		if got == gittools.StripTerminalControl(want) {
			// Deliberate (docs/git-fidelity.md): the tools' output
			// carries no terminal control sequence, whatever bytes a
			// file holds.
			noteDocumented("terminal control sequences stripped")
			return false, ""
		}
		if c.Tool == "git_status" && untrackedCacheStale(dir, c, got) {
			// Documented (docs/git-fidelity.md): git's untracked cache
			// answered what git's own scan without it does not.
			noteDocumented("git's untracked cache stale")
			return false, ""
		}
		return true, outputDiff(want, got)
	}
	return false, ""
}

// untrackedCacheStale reports whether git, asked again with its
// untracked cache off (on a copy: the cache is in the index), prints
// what the tool printed: the difference was the cache's.
func untrackedCacheStale(dir string, c check, got string) bool {
	if out, _, err := runGit(dir, gitEnv(), "config", "--get", "core.untrackedCache"); err != nil || strings.TrimSpace(out) != "true" {
		return false
	}
	cp, err := os.MkdirTemp("", "tgp-uc-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(cp)
	if err := exec.Command("cp", "-a", dir+"/.", cp).Run(); err != nil {
		return false
	}
	args := append([]string{"-c", "core.untrackedCache=false"}, c.Git...)
	want, _, gerr := runGit(filepath.Join(cp, c.WD), gitEnv(), args...)
	return gerr == nil && want == got
}

// gitCrashed reports whether git was ended by a signal.
func gitCrashed(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ProcessState != nil && ee.ProcessState.ExitCode() == -1
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// outputDiff shows the first line where git and the tool differ.
func outputDiff(want, got string) string {
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
	return fmt.Sprintf("first difference at line %d:\n  git:  %s\n  tool: %s\n--- git output\n%s\n--- tool output\n%s",
		i+1, at(wl, i), at(gl, i), clip(want), clip(got))
}

// copyDir copies a repository with cp -a (modes, symlinks, timestamps).
func copyDir(t testing.TB, src string) string {
	dst := filepath.Join(t.TempDir(), "r")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return dst
}

var hexRe = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

// objectSet lists every object in a repository.
func objectSet(dir string) map[string]bool {
	out, _, _ := runGit(dir, gitEnv(), "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
	m := map[string]bool{}
	for _, l := range lines(out) {
		m[l] = true
	}
	return m
}

// state is everything a mutating command can change, with the hashes of
// commits it made (which hold timestamps) replaced by their trees.
func state(dir string, base map[string]bool) string {
	var b strings.Builder
	g := func(args ...string) {
		out, stderr, err := runGit(dir, gitEnv(), args...)
		fmt.Fprintf(&b, "$ git %s\n%s", strings.Join(args, " "), out)
		if err != nil {
			fmt.Fprintf(&b, "(exit: %v) %s\n", err, firstLine(stderr))
		}
	}
	g("status", "--porcelain=v2", "--branch", "--untracked-files=all")
	g("ls-files", "-s")
	g("ls-files", "--resolve-undo")
	g("symbolic-ref", "-q", "HEAD")
	g("for-each-ref", "--format=%(refname) %(objectname)")
	g("stash", "list")
	g("log", "--walk-reflogs", "--format=%H %P", "refs/stash", "--")
	g("log", "-n", "3", "--format=%T %P %an <%ae> %cn <%ce>%n%B", "HEAD", "--")
	g("rev-parse", "-q", "--verify", "MERGE_HEAD")
	// Each ref's newest reflog entries (one walk of --all would order
	// refs by entry time, which the tool reads from its own clock).
	g("reflog", "show", "-n", "4", "--format=%gs", "HEAD")
	if refs, _, err := runGit(dir, gitEnv(), "for-each-ref", "--format=%(refname)", "refs/heads"); err == nil {
		for _, ref := range lines(refs) {
			g("reflog", "show", "-n", "3", "--format=%gs", ref)
		}
	}
	g("config", "--get-regexp", `^branch\.`)
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
		if err != nil {
			return nil
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, "  %q -> %q\n", rel, target)
		case info.IsDir():
			if rel != "." {
				fmt.Fprintf(&b, "  %q/\n", rel)
			}
		default:
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "  %q exec=%v %x\n", rel, info.Mode()&0o111 != 0, sha1.Sum(data))
		}
		return nil
	})
	s := b.String()
	// The stash's commits are compared by hash (the dates are pinned):
	// only git_commit's, whose message the tool builds from its own
	// arguments, stand for their trees.
	stashed := map[string]bool{}
	if out, _, err := runGit(dir, gitEnv(), "rev-list", "--walk-reflogs", "refs/stash", "--"); err == nil {
		for _, h := range lines(out) {
			stashed[h] = true
			for _, p := range []string{"^2", "^3"} {
				if q, _, err := runGit(dir, gitEnv(), "rev-parse", "-q", "--verify", h+p); err == nil {
					stashed[strings.TrimSpace(q)] = true
				}
			}
		}
	}
	var unknown []string
	for _, h := range hexRe.FindAllString(s, -1) {
		if !base[h] && !stashed[h] {
			unknown = append(unknown, h)
		}
	}
	if len(unknown) == 0 {
		return s
	}
	cmd := exec.Command("git", "cat-file", "--batch-check=%(objectname) %(objecttype)")
	cmd.Dir, cmd.Env = dir, gitEnv()
	cmd.Stdin = strings.NewReader(strings.Join(unknown, "\n") + "\n")
	out, _ := cmd.Output()
	for _, l := range lines(string(out)) {
		h, typ, _ := strings.Cut(l, " ")
		if typ == "commit" {
			tree, _, _ := runGit(dir, gitEnv(), "rev-parse", h+"^{tree}")
			s = strings.ReplaceAll(s, h, "<new commit of tree "+strings.TrimSpace(tree)[:12]+">")
		}
	}
	return s
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// pinnedDates are the author and committer times of the commits a
// mutating call makes, the tool's and git's alike: a stash the tool saves
// must then be git's commit for commit, hash for hash.
var pinnedDates = []string{"GIT_AUTHOR_DATE=1700500000 +0100", "GIT_COMMITTER_DATE=1700500000 +0100"}

// runMutation runs the tool in one copy and git in another and compares
// the states (after each of c.Then's calls too, made on the state the
// call before left: a stash the tool saved is then applied by the tool).
func runMutation(t *testing.T, dir string, c check) (bool, string) {
	base := objectSet(dir)
	toolDir, gitDir := copyDir(t, dir), copyDir(t, dir)
	k := newKernel(t, toolDir, pinnedDates...)
	defer k.Shutdown(context.Background())
	var notes []string
	steps := append([]check{c}, c.Then...)
	for i, c := range steps {
		step := ""
		if len(steps) > 1 {
			step = fmt.Sprintf("step %d (%s): ", i+1, c.Tool)
		}
		got, terr := callTool(k, c)
		if terr != nil && strings.Contains(terr.Error(), "does not rebuild this merge") {
			// A documented difference (docs/git-fidelity.md): git_stash
			// refuses a merge it does not rebuild. The refusal must leave
			// everything as it was (as git's copy still is).
			if before, after := state(gitDir, base), state(toolDir, base); before != after {
				return true, step + "the tool refused (" + terr.Error() + ") but changed the repository:\n" + stateDiff(before, after)
			}
			noteDocumented("stash merge not rebuilt")
			return false, ""
		}
		want, stderr, gerr := runGit(filepath.Join(gitDir, c.WD), gitEnv(pinnedDates...), c.Git...)
		switch {
		case gerr != nil && terr == nil:
			return true, fmt.Sprintf("%sgit refused (%s) but the tool succeeded: %s", step, firstLine(stderr), clip(got))
		case gerr == nil && terr != nil && reflogDateRefused(c, terr):
			// Documented (docs/git-fidelity.md): git read a reflog
			// entry by date; the tools read counts only.
			noteDocumented("reflog date not read")
			return false, ""
		case gerr == nil && terr != nil:
			return true, fmt.Sprintf("%sthe tool refused (%v) but git succeeded: %s", step, terr, clip(want))
		case gerr != nil:
			notes = append(notes, fmt.Sprintf("%sboth refused: git %q, tool %q", step, firstLine(stderr), terr.Error()))
		}
		if c.Tool == "git_commit" && terr == nil {
			// The tool tells whether it pushed the commit; git does not.
			if i := strings.LastIndex(got, "\nPersisted: "); i >= 0 {
				got = got[:i]
			}
			got += "\n"
		}
		if c.Output && gerr == nil && got != want {
			return true, step + outputDiff(want, got)
		}
		if i == len(steps)-1 {
			break
		}
		if sg, st := state(gitDir, base), state(toolDir, base); sg != st {
			if c.Tool == "git_stash" && c.Args["action"] == "push" && onlyAssumeUnchangedDiffer(dir, sg, st) {
				noteDocumented("stash keeps an assume-unchanged change")
				return false, "" // the states go on differing
			}
			return true, step + "states differ after the call (" + strings.Join(notes, "; ") + ")\n" + stateDiff(sg, st)
		}
	}
	sg, st := state(gitDir, base), state(toolDir, base)
	if sg != st {
		last := steps[len(steps)-1]
		if last.Tool == "git_stash" && last.Args["action"] == "push" && onlyAssumeUnchangedDiffer(dir, sg, st) {
			// Deliberate (docs/git-fidelity.md): git's reset loses a
			// modified assume-unchanged file's change; git_stash leaves
			// the file.
			noteDocumented("stash keeps an assume-unchanged change")
			return false, ""
		}
		return true, "states differ after the call (" + strings.Join(notes, "; ") + ")\n" + stateDiff(sg, st)
	}
	return false, ""
}

// reflogDateRefused says whether the tool refused c's revision as
// unknown where git reads a reflog entry by date: a revision ending in
// "}" whose last "@{" before it (get_oid_basic's search) opens a spec
// that is not a count, such as "HEAD@{0}..HEAD^{tree}".
func reflogDateRefused(c check, terr error) bool {
	rev, _ := c.Args["commit"].(string)
	if !strings.Contains(terr.Error(), "unknown revision") || !strings.HasSuffix(rev, "}") {
		return false
	}
	at := strings.LastIndex(rev[:len(rev)-1], "@{")
	if at < 0 {
		return false
	}
	spec := rev[at+2 : len(rev)-1]
	if _, err := strconv.Atoi(spec); err == nil {
		return false
	}
	switch strings.ToLower(spec) {
	case "u", "upstream", "push":
		return false // not a date: the branch's upstream or push target
	}
	return true
}

// documented counts the calls that differed from git as
// docs/git-fidelity.md says they do, by class.
var (
	documented   atomic.Int64
	documentedMu sync.Mutex
	documentedBy = map[string]int{}
)

func noteDocumented(class string) {
	documented.Add(1)
	documentedMu.Lock()
	documentedBy[class]++
	documentedMu.Unlock()
}

// documentedClasses lists the documented differences met, by class.
func documentedClasses() string {
	documentedMu.Lock()
	defer documentedMu.Unlock()
	var out []string
	for c, n := range documentedBy {
		out = append(out, fmt.Sprintf("%s: %d", c, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// onlyAssumeUnchangedDiffer reports whether two states differ only in
// the worktree bytes of files dir's index marks assume-unchanged.
func onlyAssumeUnchangedDiffer(dir, want, got string) bool {
	out, _, err := runGit(dir, gitEnv(), "ls-files", "-v", "-z")
	if err != nil {
		return false
	}
	flagged := map[string]bool{}
	for _, l := range nulSplit(out) {
		if len(l) > 2 && l[0] >= 'a' && l[0] <= 'z' {
			flagged[fmt.Sprintf("  %q exec=", l[2:])] = true
		}
	}
	wm, gm := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		wm[l] = true
	}
	for _, l := range strings.Split(got, "\n") {
		gm[l] = true
	}
	isFlagged := func(l string) bool {
		i := strings.Index(l, " exec=")
		return i > 0 && flagged[l[:i+len(" exec=")]]
	}
	for l := range wm {
		if !gm[l] && !isFlagged(l) {
			return false
		}
	}
	for l := range gm {
		if !wm[l] && !isFlagged(l) {
			return false
		}
	}
	return true
}

func stateDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b bytes.Buffer
	wm, gm := map[string]bool{}, map[string]bool{}
	for _, l := range wl {
		wm[l] = true
	}
	for _, l := range gl {
		gm[l] = true
	}
	for _, l := range wl {
		if !gm[l] {
			fmt.Fprintf(&b, "  git only:  %q\n", l)
		}
	}
	for _, l := range gl {
		if !wm[l] {
			fmt.Fprintf(&b, "  tool only: %q\n", l)
		}
	}
	return b.String()
}
