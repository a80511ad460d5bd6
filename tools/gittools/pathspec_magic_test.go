package gittools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// Pathspec magic as agents write it (exclusions above all), through
// git_diff, git_log, git_add and git_restore, against the git CLI.
func TestPathspecMagicMatchesGit(t *testing.T) {
	f := newRepo(t)
	for _, p := range []string{"a.go", "b.py", "README.md", "src/x.go", "src/deep/y.go", "src/z.txt", "star*.txt", "docs/Guide.MD"} {
		f.write(t, p, "1\n")
	}
	f.commitAll(t, "x")
	for _, p := range []string{"a.go", "b.py", "README.md", "src/x.go", "src/deep/y.go", "src/z.txt", "star*.txt", "docs/Guide.MD"} {
		f.write(t, p, "2\n")
	}
	g := open(t, f.dir)
	specs := [][]string{
		{":!a.go"}, {".", ":(exclude)*.go"}, {":^src"}, {":(glob)src/*"}, {":(glob)**/*.go"}, {":(icase)readme.MD"},
		{":(literal)star*.txt"}, {"star*.txt"}, {":/src/x.go"}, {":(top)docs"}, {":(icase,exclude)*.md", "src"}, {":(glob,icase)DOCS/*"},
		{":/."}, {":(top)."}, {":!:-a.go"}, {":$x"},
	}
	for _, ps := range specs {
		args := map[string]any{"paths": anySlice(ps), "name_only": true}
		same(t, "diff "+strings.Join(ps, " "), g.call(t, "git_diff", args), f.git(t, append([]string{"diff", "--name-only", "--"}, ps...)...))
		if len(ps) == 1 {
			same(t, "log "+ps[0], g.call(t, "git_log", map[string]any{"path": ps[0], "oneline": true}), f.git(t, "log", "--oneline", "--", ps[0]))
		}
	}
	// Short magic punctuation git does not implement is git's error.
	want, err := gittest.GitErr(f.dir, "diff", "--", ":!-a.go")
	if e := g.callErr(t, "git_diff", map[string]any{"paths": []any{":!-a.go"}}); err == nil || e == nil || e.Message != strings.TrimSpace(want) {
		t.Errorf("':!-a.go': tool %v, git %q (%v)", e, want, err)
	}
	// Mutations: the tool's index against the index git makes from the
	// same state.
	g.call(t, "git_add", map[string]any{"paths": []any{":!src"}})
	got := f.git(t, "ls-files", "-s")
	f.git(t, "reset", "-q")
	f.git(t, "add", "--", ":!src")
	same(t, "index after git_add ':!src'", got, f.git(t, "ls-files", "-s"))
	g = open(t, f.dir)
	g.call(t, "git_restore", map[string]any{"paths": []any{":(exclude)*.py"}, "staged": true})
	got = f.git(t, "ls-files", "-s")
	f.git(t, "add", "--", ":!src")
	f.git(t, "restore", "--staged", "--", ":(exclude)*.py")
	same(t, "index after git_restore --staged ':(exclude)*.py'", got, f.git(t, "ls-files", "-s"))
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestCheckoutFromCommitReportsPathspecsAsGit: checkout <commit> -- with
// exclusions refuses exactly when git does. git reads the entries the
// whole pathspec selects and marks items on those only, so a positive
// item whose paths are all excluded did not match, and with nothing
// selected every item (an exclusion too) did not; checkout from the index
// and restore never name an exclusion. Found by the differential suite
// with working directories (seed 18: ':^sp ace' on a tree holding only
// files under "sp ace").
func TestCheckoutFromCommitReportsPathspecsAsGit(t *testing.T) {
	f := newRepo(t)
	for _, p := range []string{"a.txt", "b.txt", "d/x"} {
		f.write(t, p, "1\n")
	}
	f.commitAll(t, "x")
	for _, ps := range [][]string{
		{"a.txt", ":!a.txt"}, {":!a.txt"}, {":!d"}, {":!nomatch"}, {"d", ":!d"}, {"a.txt", ":!nomatch"},
		{"d/x", ":!d"}, {":!*.txt", ":!d"}, {"*.txt", ":!b.txt"},
	} {
		for _, commit := range []string{"HEAD", ""} {
			args := map[string]any{"paths": anySlice(ps)}
			gitArgs := []string{"checkout"}
			if commit != "" {
				args["commit"] = commit
				gitArgs = append(gitArgs, commit)
			}
			_, gerr := gittest.GitErr(f.dir, append(append(gitArgs, "--"), ps...)...)
			raw, _ := json.Marshal(args)
			_, terr := open(t, f.dir).set.Call(context.Background(), "git_checkout", raw)
			if (gerr != nil) != (terr != nil) {
				t.Errorf("checkout %q -- %q: git error %v, tool error %v", commit, ps, gerr, terr)
			}
		}
	}
}

// Pathspec icase magic folds ASCII letters only, as git's strncasecmp and
// wildmatch do.
func TestRegressIcaseFoldsASCIIOnlyAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "ü.txt", "a\n")
	f.write(t, "B.TXT", "b\n")
	f.commitAll(t, "one")
	f.write(t, "ü.txt", "a\nc\n")
	f.write(t, "B.TXT", "b\nc\n")
	sameOutput(t, f.dir, "git_diff", map[string]any{"stat": true, "paths": []string{":(icase)Ü.TXT", ":(icase)b.txt"}}, "diff", "--stat", "--", ":(icase)Ü.TXT", ":(icase)b.txt")
	sameOutput(t, f.dir, "git_diff", map[string]any{"stat": true, "paths": []string{":(icase)*Ü*"}}, "diff", "--stat", "--", ":(icase)*Ü*")
}
