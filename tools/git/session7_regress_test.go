package git

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// Regressions shrunk from the differential suite in session 7.

// A combined diff (a merge, a stash's W) takes its context from
// diff.context as the two-way diff does (combine-diff.c make_hunks), not
// a fixed 3 lines.
func TestRegressCombinedDiffContextAsGit(t *testing.T) {
	f := newRepo(t)
	base := []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	f.write(t, "f.txt", strings.Join(base, "\n")+"\n")
	f.commitAll(t, "base")
	f.git(t, "checkout", "-q", "-b", "side")
	side := append([]string(nil), base...)
	side[2] = "THREE side"
	f.write(t, "f.txt", strings.Join(side, "\n")+"\n")
	f.commitAll(t, "side")
	f.git(t, "checkout", "-q", "main")
	mine := append([]string(nil), base...)
	mine[6] = "SEVEN main"
	f.write(t, "f.txt", strings.Join(mine, "\n")+"\n")
	f.commitAll(t, "main")
	f.git(t, "merge", "-q", "--no-commit", "side")
	res := append([]string(nil), base...)
	res[2], res[4], res[6] = "THREE side", "FIVE evil", "SEVEN main"
	f.write(t, "f.txt", strings.Join(res, "\n")+"\n")
	f.commitAll(t, "merge")
	for _, ctx := range []string{"0", "1", "2", "5"} {
		f.git(t, "config", "diff.context", ctx)
		sameOutput(t, f.dir, "git_show", map[string]any{"commit": "HEAD"}, "show", "HEAD")
	}
}

// A stash's untracked files come back whatever their names (go-git's tree
// iterator stopped at a name its path check refuses, and pop then
// dropped the stash without them); stash push -u spares the directory it
// runs in, as git clean does.
func TestRegressStashUntrackedAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "docs/a.log", "")
	f.commitAll(t, "base")
	f.write(t, "né/tab\there/readme.txt", "hi\n")
	f.git(t, "stash", "push", "-q", "-u")
	twin(t, f.dir, "docs", "git_stash", map[string]any{"action": "pop", "index": 0}, "stash", "pop", "-q", "stash@{0}")

	g := newRepo(t)
	g.write(t, "a.txt", "a\n")
	g.commitAll(t, "base")
	g.write(t, "w/untracked.txt", "u\n")
	h := open(t, copyTree(t, g.dir))
	h.call(t, "git_stash", map[string]any{"action": "push", "include_untracked": true, "working_dir": "w"})
	gittest.GitErr(filepath.Join(g.dir, "w"), "stash", "push", "-q", "-u")
	for _, dir := range []string{g.dir, h.dir} {
		if info, err := os.Stat(filepath.Join(dir, "w")); err != nil || !info.IsDir() {
			t.Fatalf("%s: the directory stash push ran in is gone", dir)
		}
	}
}

// An unmerged path whose file was replaced by a directory is diffed
// combined against an empty result, every line removed (combine-diff.c
// reads a directory's place as the null blob); a missing file shows the
// header only (differential seed 1183).
func TestRegressCombinedDiffDirectoryInPlaceAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "b.txt", "base\n")
	f.commitAll(t, "base")
	f.git(t, "checkout", "-q", "-b", "side")
	f.write(t, "both/added.txt", "\nzeta\nx\n")
	f.commitAll(t, "side")
	f.git(t, "checkout", "-q", "main")
	f.write(t, "both/added.txt", "\n\tindented\nzeta\n")
	f.commitAll(t, "here")
	gittest.GitErr(f.dir, "merge", "-q", "side")
	if err := os.Remove(filepath.Join(f.dir, "both/added.txt")); err != nil {
		t.Fatal(err)
	}
	sameOutput(t, f.dir, "git_diff", map[string]any{}, "diff")
	f.write(t, "both/added.txt/notes.txt", "n\n")
	sameOutput(t, f.dir, "git_diff", map[string]any{}, "diff")
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
