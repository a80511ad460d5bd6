package gittools

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestAddPathspecRandom compares git_add with git add for random
// pathspecs (every magic form, from the top and from subdirectories,
// uncleaned paths like ":(top)." and ":/./d", excludes, globs, names that
// match nothing, empty directories, ignored files) on a repository with
// modified, deleted, untracked and ignored files: the outcome (staged or
// refused) and the index must be git's. TGP_ADDSPEC_SEEDS runs more.
func TestAddPathspecRandom(t *testing.T) {
	gittest.RequireGit(t)
	n, _ := strconv.Atoi(os.Getenv("TGP_ADDSPEC_SEEDS"))
	if n == 0 {
		n = 60
	}
	s0, _ := strconv.Atoi(os.Getenv("TGP_ADDSPEC_SEED0"))
	base, paths, magics, wds := pathspecFixture(t)
	diffs := 0
	for seed := s0; seed < s0+n; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		var spec []string
		for k := 1 + r.Intn(2); k > 0; k-- {
			spec = append(spec, magics[r.Intn(len(magics))]+paths[r.Intn(len(paths))])
		}
		wd := wds[r.Intn(len(wds))]
		mode := r.Intn(5) // 0: -A, 1: -u, else paths only
		gitDir, toolDir := copyTree(t, base), copyTree(t, base)
		_ = os.MkdirAll(filepath.Join(gitDir, wd), 0o755)
		_ = os.MkdirAll(filepath.Join(toolDir, wd), 0o755)
		gargs := []string{"add"}
		args := map[string]any{"paths": anySlice(spec)}
		switch mode {
		case 0:
			gargs, args["all"] = append(gargs, "-A"), true
		case 1:
			gargs, args["update"] = append(gargs, "-u"), true
		}
		if wd != "" {
			args["working_dir"] = wd
		}
		gargs = append(append(gargs, "--"), spec...)
		gout, gerr := gittest.GitErr(filepath.Join(gitDir, wd), gargs...)
		g := open(t, toolDir)
		raw, _ := json.Marshal(args)
		_, terr := g.set.Call(context.Background(), "git_add", raw)
		if te, ok := terr.(*tools.Error); ok && gerr != nil && strings.TrimSpace(te.Message) != gitMessage(gout) {
			diffs++
			t.Errorf("seed %d: git %s (in %q): message %q, git's %q", seed, strings.Join(gargs, " "), wd, te.Message, gout)
		}
		gi, _ := gittest.GitErr(gitDir, "ls-files", "-s")
		ti, _ := gittest.GitErr(toolDir, "ls-files", "-s")
		what := fmt.Sprintf("seed %d: git %s (in %q)", seed, strings.Join(gargs, " "), wd)
		switch {
		case (gerr == nil) != (terr == nil):
			diffs++
			t.Errorf("%s: git error %v, tool error %v", what, gerr, terr)
		case gi != ti:
			diffs++
			t.Errorf("%s: index differs:\n--- git\n%s--- tool\n%s", what, gi, ti)
		}
	}
	if diffs > 0 {
		t.Errorf("%d of %d differ", diffs, n)
	}
}

// pathspecFixture is a repository with tracked, modified, deleted, new,
// ignored files and an empty directory, and the path pieces, pathspec
// magic and working directories the random pathspec tests draw from.
func pathspecFixture(t *testing.T) (base string, paths, magics, wds []string) {
	t.Helper()
	base = filepath.Join(t.TempDir(), "base")
	gittest.Git(t, "", "init", "-q", "-b", "main", base)
	f := &fixture{dir: base}
	for _, p := range []string{"a.txt", "B.md", "d/b.txt", "d/e/c.go", "d/e/C.txt", "x/y.txt", "sp ace/z.txt", "g/st*r.txt", "g/q?.md", "g/[ab].txt", "g/a.txt", "h*/k.txt"} {
		f.write(t, p, "1\n")
	}
	f.write(t, ".gitignore", "*.log\nbuild/\n")
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", "base")
	for _, p := range []string{"a.txt", "d/b.txt", "d/e/C.txt", "sp ace/z.txt", "g/st*r.txt", "g/[ab].txt"} {
		f.write(t, p, "2\n")
	}
	f.write(t, "g/q?.txt", "new\n")
	_ = os.Remove(filepath.Join(base, "x/y.txt"))
	f.write(t, "new.txt", "n\n")
	f.write(t, "d/new.go", "n\n")
	f.write(t, "d/e/debug.log", "ignored\n")
	f.write(t, "build/out.txt", "ignored\n")
	_ = os.MkdirAll(filepath.Join(base, "empty/dir"), 0o755)
	paths = []string{"", ".", "./", "..", "a.txt", "d", "d/", "./d", "d/e", "d/../a.txt", "./d/e", "*.txt", "d/*", "**/c.go", "*.go", "e/*",
		"nonexistent", "c.TXT", "E", "D/E", "debug.log", "d/e/debug.log", "build", "empty", "empty/dir", "x", "x/y.txt", "sp ace", "../a.txt", "b.txt", "new.txt",
		"g/st*r.txt", "g/q?.md", "g/[ab].txt", "g/[ab]*", "st*r.txt", "g/*.md", "g/q?.*", "[ab].txt",
		"*/", "d*/", "*/e/", "d/*/", "*/.", "e*/", "**/", "g/*/", "h*/", "h*", "[dg]/"}
	magics = []string{"", "", "", ":/", ":(top)", ":!", ":^", ":(exclude)", ":(icase)", ":(glob)", ":(literal)", ":(top,icase)", ":(top,glob)", ":/!", ":(exclude,top)", ":(top,literal)", ":(icase,exclude)"}
	wds = []string{"", "", "d", "d/e", "x", "empty", "g"}
	return base, paths, magics, wds
}

// gitMessage is what a tool's error holds of git's stderr: its warnings
// left out, and the repository's directory an "outside repository" names.
func gitMessage(stderr string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "warning: ") {
			keep = append(keep, l)
		}
	}
	return outsideAt.ReplaceAllString(strings.Join(keep, "\n"), "$1")
}

var outsideAt = regexp.MustCompile(`(is outside repository) at '[^']*'`)

// TestRegressAddSparseWholeTreeAsGit: git add reports a pathspec item
// that matched only entries outside the sparse checkout (skip-worktree)
// even when it is the whole tree: "." at the top, or the item a pathspec
// of excludes only starts from, which git names "." (differential seed
// 900339: ":(icase,exclude)*.MD" staged nothing and said nothing).
func TestRegressAddSparseWholeTreeAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "src/data2.txt", "a\n")
	f.commitAll(t, "base")
	f.git(t, "update-index", "--skip-worktree", "--", "src/data2.txt")
	f = open(t, f.dir)
	for _, wd := range []string{"", "src"} {
		for _, ps := range []string{".", ":(icase,exclude)*.MD", ":!x", "*"} {
			compareTool(t, f, "git_add", map[string]any{"paths": []string{ps}, "working_dir": wd}, wd, "add", "--", ps)
		}
	}
}

// TestRegressAddPathspecBeyondSymlinkAsGit: git add parses its pathspec
// with PATHSPEC_SYMLINK_LEADING_PATH, so an item whose path goes through
// a symbolic link (an exclude too, the link itself with a trailing slash)
// is fatal before anything is staged or matched, at the first such item
// in order (differential seeds 760197, 760269: git_add staged the other
// paths).
func TestRegressAddPathspecBeyondSymlinkAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "real/x.txt", "x\n")
	f.write(t, "d/y.txt", "y\n")
	f.commitAll(t, "base")
	if err := os.Symlink("real", filepath.Join(f.dir, "l")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "d/y.txt", "changed\n")
	f.write(t, "new.txt", "new\n")
	cases := []struct {
		wd   string
		spec []string
	}{
		{"", []string{"l/x.txt", "d/y.txt"}},
		{"", []string{":!l/x.txt"}},
		{"", []string{"d/y.txt", ":(exclude)l/x.txt"}},
		{"", []string{"l/"}},
		{"", []string{"l"}},
		{"", []string{"l/nothing/here"}},
		{"", []string{"nomatch.txt", "l/x.txt"}},
		{"", []string{"l/*.txt"}},
		{"d", []string{"../l/x.txt"}},
		{"d", []string{":(top)l/x.txt"}},
		{"d", []string{"y.txt", "../../outside", "../l/x.txt"}},
		{"d", []string{"../l/x.txt", "../../outside"}},
	}
	for _, c := range cases {
		gitDir, toolDir := copyTree(t, f.dir), copyTree(t, f.dir)
		gout, gerr := gittest.GitErr(filepath.Join(gitDir, c.wd), append([]string{"add", "--"}, c.spec...)...)
		args := map[string]any{"paths": anySlice(c.spec)}
		if c.wd != "" {
			args["working_dir"] = c.wd
		}
		raw, _ := json.Marshal(args)
		_, terr := open(t, toolDir).set.Call(context.Background(), "git_add", raw)
		what := fmt.Sprintf("git add %q in %q", c.spec, c.wd)
		if (gerr == nil) != (terr == nil) {
			t.Errorf("%s: git error %v (%s), tool error %v", what, gerr, gout, terr)
			continue
		}
		if te, ok := terr.(*tools.Error); ok && strings.TrimSpace(te.Message) != gitMessage(gout) {
			t.Errorf("%s: message %q, git's %q", what, te.Message, gout)
		}
		same(t, what, gittest.Git(t, toolDir, "ls-files", "-s"), gittest.Git(t, gitDir, "ls-files", "-s"))
	}
}

// TestRegressGlobDirectoryPathspecMatchesNothing: a pathspec item with a
// wildcard and a trailing slash ("*/", "d*/", "*/e/", ":(glob)*/", "*/.")
// is fnmatched whole by git, slash included, so it matches no file (no
// path ends in "/"), only one under a directory literally so named. git
// add, restore and checkout refuse it, diff and log print nothing for it
// (held-out fuzz: git_add {"paths": ["*/", ...]} staged everything).
func TestRegressGlobDirectoryPathspecMatchesNothing(t *testing.T) {
	f := newRepo(t)
	for _, p := range []string{"top.txt", "d/a.txt", "d/e/b.txt", "h*/k.txt"} {
		f.write(t, p, "1\n")
	}
	f.commitAll(t, "base")
	for _, p := range []string{"top.txt", "d/a.txt", "d/e/b.txt", "h*/k.txt"} {
		f.write(t, p, "2\n")
	}
	f.write(t, "d/new.txt", "n\n")
	base := f.dir
	f = open(t, base)
	for _, ps := range []string{"*/", "d*/", "*/e/", "d/*/", "*/.", ":(glob)*/", ":(glob)**/", ":(icase)D*/", "h*/"} {
		for _, wd := range []string{"", "d"} {
			compareTool(t, f, "git_diff", map[string]any{"paths": []string{ps}, "working_dir": wd}, wd, "diff", "--", ps)
			compareTool(t, f, "git_log", map[string]any{"path": ps, "working_dir": wd}, wd, "log", "--", ps)
			for _, c := range []struct {
				tool string
				args map[string]any
				git  []string
			}{
				{"git_add", map[string]any{"paths": []string{ps, "."}}, []string{"add", "--", ps, "."}},
				{"git_restore", map[string]any{"paths": []string{ps, "top.txt"}}, []string{"restore", "--", ps, "top.txt"}},
				{"git_checkout", map[string]any{"paths": []string{ps}}, []string{"checkout", "--", ps}},
				{"git_checkout", map[string]any{"paths": []string{"top.txt", ps}, "commit": "HEAD"}, []string{"checkout", "HEAD", "--", "top.txt", ps}},
			} {
				c.args["working_dir"] = wd
				gitDir, toolDir := copyTree(t, base), copyTree(t, base)
				gout, gerr := gittest.GitErr(filepath.Join(gitDir, wd), c.git...)
				raw, _ := json.Marshal(c.args)
				_, terr := open(t, toolDir).set.Call(context.Background(), c.tool, raw)
				what := fmt.Sprintf("%s %s vs git %s", c.tool, raw, strings.Join(c.git, " "))
				if (gerr == nil) != (terr == nil) {
					t.Errorf("%s: git error %v (%s), tool error %v", what, gerr, strings.TrimSpace(gout), terr)
					continue
				}
				if te, ok := terr.(*tools.Error); ok && strings.TrimSpace(te.Message) != gitMessage(gout) {
					t.Errorf("%s: message %q, git's %q", what, te.Message, gout)
				}
				view := func(dir string) string {
					st, _ := gittest.GitErr(dir, "status", "--porcelain=2", "-uall")
					ls, _ := gittest.GitErr(dir, "ls-files", "-s")
					return st + ls
				}
				if gv, tv := view(gitDir), view(toolDir); gv != tv {
					t.Errorf("%s: state differs:\n--- git\n%s--- tool\n%s", what, gv, tv)
				}
			}
		}
	}
}
