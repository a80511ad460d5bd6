package revparse

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// history is a repository built with git: a merge, a branch moved a few
// times (its reflog), an annotated tag of a commit and one of a tree.
func history(t *testing.T) (string, *git.Repository) {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "repo")
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	commit := func(p, content, msg string) {
		gittest.WriteFile(t, dir, p, content)
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", msg)
	}
	commit("a.txt", "a\n", "one")
	commit("d/b.txt", "b\n", "two")
	gittest.Git(t, dir, "checkout", "-q", "-b", "side")
	commit("s.txt", "s\n", "side")
	gittest.Git(t, dir, "checkout", "-q", "main")
	commit("a.txt", "a\na\n", "three")
	gittest.Git(t, dir, "merge", "-q", "--no-edit", "side")
	gittest.Git(t, dir, "tag", "-a", "-m", "v1", "v1")
	tree := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD^{tree}"))
	gittest.Git(t, dir, "tag", "-a", "-m", "a tree", "vtree", tree)
	r, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, r
}

// TestObjectAsGitRevParse: the revisions the git tools take name the
// objects git rev-parse names (a tag unpeeled, a tree, a blob by path, a
// reflog entry, ancestry after it).
func TestObjectAsGitRevParse(t *testing.T) {
	dir, r := history(t)
	for _, rev := range []string{"HEAD", "main", "HEAD~1", "HEAD^2", "HEAD~2^{tree}", "v1", "vtree",
		"HEAD:a.txt", "HEAD:d", "HEAD:d/b.txt", "side:s.txt", "main@{1}", "@{2}", "HEAD@{1}~1", "main@{0}^2",
		"HEAD^{tree}", "v1^{tree}", "X^{tree}..y@{0}"} {
		want, err := gittest.GitErr(dir, "rev-parse", "--verify", "-q", rev)
		o, gerr := Object(r, rev)
		if rev == "X^{tree}..y@{0}" {
			// No such range: git peels "X^{tree}..y@{0}" as X's tree and
			// fails on X; so must we.
			if gerr == nil {
				t.Errorf("%s: resolved to %s, git refuses it", rev, o.ID())
			}
			continue
		}
		if err != nil {
			t.Fatalf("git rev-parse %s: %v", rev, err)
		}
		if gerr != nil {
			t.Errorf("%s: %v, git: %s", rev, gerr, strings.TrimSpace(want))
			continue
		}
		if o.ID().String() != strings.TrimSpace(want) {
			t.Errorf("%s: %s, git %s", rev, o.ID(), strings.TrimSpace(want))
		}
	}
}

// TestFinalCommitAsGit: blame's final commit is git's rev^{commit}; a
// tree or a blob is not one, a reflog entry past the end is counted.
func TestFinalCommitAsGit(t *testing.T) {
	dir, r := history(t)
	for _, rev := range []string{"HEAD", "v1", "main@{1}", "HEAD@{1}~1", "side", "HEAD~1^{commit}"} {
		want := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--verify", rev+"^{commit}"))
		h, err := FinalCommit(r, rev)
		if err != nil || h.String() != want {
			t.Errorf("%s: %s (%v), git %s", rev, h, err, want)
		}
	}
	for rev, want := range map[string]error{"vtree": ErrNotCommit, "HEAD^{tree}": ErrNotCommit, "nope": ErrBadRevision, "HEAD^{blob}": ErrBadRevision} {
		if _, err := FinalCommit(r, rev); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", rev, err, want)
		}
	}
	n := len(strings.Split(strings.TrimSpace(gittest.Git(t, dir, "reflog", "show", "main")), "\n"))
	_, err := FinalCommit(r, "main@{99}")
	var short *ShortLogError
	if !errors.As(err, &short) || short.Count != n || short.Ref != "main" {
		t.Fatalf("main@{99}: %v, want a log of %d entries", err, n)
	}
	out, _ := gittest.GitErr(dir, "rev-parse", "main@{99}")
	if !strings.Contains(out, short.Error()) {
		t.Errorf("git says %q, we say %q", out, short.Error())
	}
}

// TestSyntax: the splits of a revision, as git reads them.
func TestSyntax(t *testing.T) {
	type split struct{ a, b, c string }
	for rev, want := range map[string]split{
		"main@{1}~2": {"main", "1", "~2"}, "@{0}": {"HEAD", "0", ""}, "HEAD~1@{0}": {}, "a:b@{0}": {},
	} {
		ref, spec, rest, ok := SplitReflog(rev)
		if got := (split{ref, spec, rest}); got != want || ok != (want != split{}) {
			t.Errorf("SplitReflog(%q) = %v %v, want %v", rev, got, ok, want)
		}
	}
	for rev, want := range map[string]split{
		"A..B": {"A", "B", ""}, "A...B": {"A", "B", "sym"}, "..B": {"", "B", ""}, "...": {"", "", "sym"}, "..": {}, "AB": {},
	} {
		a, b, sym, ok := SplitRange(rev)
		got := split{a, b, ""}
		if sym {
			got.c = "sym"
		}
		if got != want || ok != (want != split{}) {
			t.Errorf("SplitRange(%q) = %v %v, want %v", rev, got, ok, want)
		}
	}
	for rev, want := range map[string]int{"HEAD~1": 4, "main@{1}^2": 8, "x@{a~b}~1": 7, "v1": 2} {
		if got := NameEnd(rev); got != want {
			t.Errorf("NameEnd(%q) = %d, want %d", rev, got, want)
		}
	}
	if base, p, ok := SplitPath(":a"); !ok || base != "HEAD" || p != "a" {
		t.Errorf("SplitPath(:a) = %q %q %v", base, p, ok)
	}
	if _, _, ok := SplitPath("main@{0}:a"); ok {
		t.Error("SplitPath took the reflog form's path")
	}
	if base, peel := SplitPeel("X^{tree}..y@{0}"); base != "X" || peel != "tree" {
		t.Errorf("SplitPeel = %q %q", base, peel)
	}
}
