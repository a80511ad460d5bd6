package gittools

// Regression tests for git_blame, one per difference the randomized suite
// (test/integration) found against git 2.39; each builds its repository
// with the git CLI and compares the tool's text (or refusal) with git's.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// bgit runs git with the pinned environment plus extra variables
// (identities, dates) and returns stdout and stderr.
func bgit(t *testing.T, dir string, extra []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	home := filepath.Join(os.TempDir(), "tgp-gittest-home")
	_ = os.MkdirAll(home, 0o755)
	cmd.Env = append(gittest.Env(home), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// commitAs commits everything staged as author at a distinct time.
func commitAs(t *testing.T, f *fixture, who string, n int, msg string, args ...string) {
	t.Helper()
	date := fmt.Sprintf("2023-11-%02d 10:00:00 +0%d00", 1+n, n%10)
	env := []string{"GIT_AUTHOR_NAME=" + who, "GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
	if _, e, err := bgit(t, f.dir, env, append([]string{"commit", "-q", "--allow-empty", "-m", msg}, args...)...); err != nil {
		t.Fatalf("commit: %v %s", err, e)
	}
}

// nowRe matches the time of a not-yet-committed line (the current time,
// in any blame.date format and with or without showEmail): git and the
// tool read the clock a moment apart, so a second may tick between them.
var nowRe = regexp.MustCompile(`(Not Committed Yet|<not\.committed\.yet>) +[^)]*? +(\d+\) )`)

// sameBlame compares git_blame with `git blame` run in wd (relative to the
// repository), refusals included: both fail, with git's message.
func sameBlame(t *testing.T, f *fixture, args map[string]any, wd string, gitArgs ...string) {
	t.Helper()
	raw := fmt.Sprint(args)
	want, stderr, gerr := bgit(t, filepath.Join(f.dir, wd), nil, append([]string{"blame"}, gitArgs...)...)
	jsonArgs, _ := json.Marshal(args)
	res, terr := f.set.Call(context.Background(), "git_blame", jsonArgs)
	switch {
	case gerr != nil && terr != nil:
		if msg := strings.TrimSpace(stderr); !strings.Contains(terr.Error(), msg) {
			t.Fatalf("%s: refusal differs:\n  git:  %s\n  tool: %v", raw, msg, terr)
		}
		return
	case gerr != nil:
		t.Fatalf("%s: git failed (%s) but the tool answered:\n%v", raw, stderr, res.Value)
	case terr != nil:
		t.Fatalf("%s: the tool failed (%v) but git answered:\n%s", raw, terr, want)
	}
	got := nowRe.ReplaceAllString(res.Value.(string), "$1 <now> $2")
	want = nowRe.ReplaceAllString(want, "$1 <now> $2")
	same(t, raw, got, want)
}

func blameFixture(t *testing.T) *fixture {
	t.Helper()
	f := newRepo(t)
	return open(t, f.dir)
}

// With no commit git blames the working tree file: uncommitted lines are
// "00000000 (Not Committed Yet …)" (git's own output for it), a staged file that
// was never committed is all uncommitted, and a rename staged in the index
// is followed to the committed name.
func TestRegressBlameWorkingTree(t *testing.T) {
	f := blameFixture(t)
	f.write(t, "a.txt", "one\ntwo\nthree\n")
	f.write(t, "keep.txt", "k\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Alice", 1, "root")
	f.write(t, "a.txt", "one\ntwo changed\nthree\nfour\n")
	sameBlame(t, f, map[string]any{"path": "a.txt"}, "", "--", "a.txt")
	f.write(t, "staged.txt", "s1\ns2\n")
	f.git(t, "add", "staged.txt")
	sameBlame(t, f, map[string]any{"path": "staged.txt"}, "", "--", "staged.txt")
	f.git(t, "mv", "a.txt", "moved.txt")
	f.write(t, "moved.txt", "zero\none\ntwo\nthree\n")
	sameBlame(t, f, map[string]any{"path": "moved.txt"}, "", "--", "moved.txt")
	// Renamed in the worktree only: git refuses, as the path is unknown.
	if err := os.Rename(filepath.Join(f.dir, "keep.txt"), filepath.Join(f.dir, "kept.txt")); err != nil {
		t.Fatal(err)
	}
	sameBlame(t, f, map[string]any{"path": "kept.txt"}, "", "--", "kept.txt")
	// Deleted from the worktree but in HEAD: git cannot lstat it.
	sameBlame(t, f, map[string]any{"path": "keep.txt"}, "", "--", "keep.txt")
	// Untracked: not in HEAD.
	f.write(t, "untracked.txt", "u\n")
	sameBlame(t, f, map[string]any{"path": "untracked.txt"}, "", "--", "untracked.txt")
}

// An empty file prints nothing; a range past the end is git's "file X has
// only N lines", and a range that starts inside is cut at the end.
func TestRegressBlameEmptyAndRanges(t *testing.T) {
	f := blameFixture(t)
	f.write(t, "empty.txt", "")
	f.write(t, "three.txt", "a\nb\nc\n")
	f.write(t, "one.txt", "a\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Alice", 1, "root")
	sameBlame(t, f, map[string]any{"path": "empty.txt"}, "", "--", "empty.txt")
	sameBlame(t, f, map[string]any{"path": "empty.txt", "commit": "HEAD"}, "", "HEAD", "--", "empty.txt")
	sameBlame(t, f, map[string]any{"path": "empty.txt", "start_line": 1, "end_line": 2}, "", "-L", "1,2", "--", "empty.txt")
	sameBlame(t, f, map[string]any{"path": "three.txt", "start_line": 4, "end_line": 6}, "", "-L", "4,6", "--", "three.txt")
	sameBlame(t, f, map[string]any{"path": "one.txt", "start_line": 2, "end_line": 6}, "", "-L", "2,6", "--", "one.txt")
	sameBlame(t, f, map[string]any{"path": "three.txt", "start_line": 2, "end_line": 9}, "", "-L", "2,9", "--", "three.txt")
	sameBlame(t, f, map[string]any{"path": "three.txt", "start_line": 3}, "", "-L", "3,", "--", "three.txt")
}

// Whole-file renames are followed (also with edits, and from a path that
// became a directory) and the original name is shown for every line once
// any line comes from another path, padded in bytes.
func TestRegressBlameRenames(t *testing.T) {
	f := blameFixture(t)
	body := "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n"
	f.write(t, "old/caf\u00e9 name.ts", body)
	f.git(t, "add", "-A")
	commitAs(t, f, "Ren\u00e9", 1, "root")
	f.git(t, "mv", "old/caf\u00e9 name.ts", "new.ts")
	commitAs(t, f, "Bob", 2, "rename")
	f.write(t, "new.ts", strings.Replace(body, "gamma", "GAMMA", 1)+"iota\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Carol", 3, "edit")
	f.git(t, "mv", "new.ts", "renamed+edited.ts")
	f.write(t, "renamed+edited.ts", strings.Replace(body, "gamma", "GAMMA", 1)+"iota\nkappa\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Dave", 4, "rename with edit")
	sameBlame(t, f, map[string]any{"path": "renamed+edited.ts"}, "", "--", "renamed+edited.ts")
	sameBlame(t, f, map[string]any{"path": "renamed+edited.ts", "start_line": 9, "end_line": 10}, "", "-L", "9,10", "--", "renamed+edited.ts")
	// A file whose name becomes a directory holding it.
	f.git(t, "mv", "renamed+edited.ts", "tmp")
	if err := os.MkdirAll(filepath.Join(f.dir, "renamed+edited.ts"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.git(t, "mv", "tmp", "renamed+edited.ts/inner")
	commitAs(t, f, "Eve", 5, "into a dir")
	sameBlame(t, f, map[string]any{"path": "renamed+edited.ts/inner"}, "", "--", "renamed+edited.ts/inner")
	// Two candidates with the same content: git prefers the same basename.
	f.write(t, "x/dup.txt", "same\ncontent\n")
	f.write(t, "y/other.txt", "same\ncontent\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Alice", 6, "dups")
	f.git(t, "rm", "-q", "x/dup.txt", "y/other.txt")
	f.write(t, "z/dup.txt", "same\ncontent\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Bob", 7, "move one")
	sameBlame(t, f, map[string]any{"path": "z/dup.txt"}, "", "--", "z/dup.txt")
}

// Author names are padded to the widest shown (display width: "日本" is
// four columns) and line numbers to the last one shown.
func TestRegressBlameWidths(t *testing.T) {
	f := blameFixture(t)
	var lines []string
	for i := 0; i < 12; i++ {
		lines = append(lines, fmt.Sprint("line ", i))
	}
	f.write(t, "w.txt", strings.Join(lines, "\n")+"\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Al", 1, "root")
	for i, who := range []string{"\u65e5\u672c", "Bartholomew Long", "Ren\u00e9"} {
		lines[i*4] += " edited"
		f.write(t, "w.txt", strings.Join(lines, "\n")+"\n")
		f.git(t, "add", "-A")
		commitAs(t, f, who, 2+i, "edit")
	}
	sameBlame(t, f, map[string]any{"path": "w.txt"}, "", "--", "w.txt")
	sameBlame(t, f, map[string]any{"path": "w.txt", "start_line": 1, "end_line": 3}, "", "-L", "1,3", "--", "w.txt")
	sameBlame(t, f, map[string]any{"path": "w.txt", "start_line": 8, "end_line": 9, "commit": "HEAD~1"}, "", "-L", "8,9", "HEAD~1", "--", "w.txt")
}

// Paths are relative to working_dir (../ included) and may hold tabs,
// control characters and non-ASCII bytes, which git neither quotes nor
// refuses in blame.
func TestRegressBlamePaths(t *testing.T) {
	f := blameFixture(t)
	f.write(t, "x.txt", "top\n")
	f.write(t, "sub/in.txt", "in\n")
	f.write(t, "tab\there.txt", "t1\nt2\n")
	f.write(t, "ctl\x01x/\u65e5\u672c.md", "c\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Alice", 1, "root")
	f.write(t, "tab\there.txt", "t1\nt2\nt3\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Bob", 2, "edit")
	sameBlame(t, f, map[string]any{"path": "../x.txt", "working_dir": "sub"}, "sub", "--", "../x.txt")
	sameBlame(t, f, map[string]any{"path": "in.txt", "working_dir": "sub"}, "sub", "--", "in.txt")
	sameBlame(t, f, map[string]any{"path": "./../sub/./in.txt", "working_dir": "sub", "commit": "HEAD"}, "sub", "HEAD", "--", "./../sub/./in.txt")
	sameBlame(t, f, map[string]any{"path": "tab\there.txt"}, "", "--", "tab\there.txt")
	sameBlame(t, f, map[string]any{"path": "tab\there.txt", "commit": "HEAD~1"}, "", "HEAD~1", "--", "tab\there.txt")
	sameBlame(t, f, map[string]any{"path": "ctl\x01x/\u65e5\u672c.md"}, "", "--", "ctl\x01x/\u65e5\u672c.md")
}

// Boundaries, merges, binary and CRLF content, no trailing newline,
// symlinks (the link text is blamed), a directory and a missing path (the
// same refusal as git), revisions that are not commits.
func TestRegressBlameContentKinds(t *testing.T) {
	f := blameFixture(t)
	f.write(t, "m.txt", "1\n2\n3\n4\n5\n6\n")
	f.write(t, "crlf.txt", "a\r\nb\r\n")
	f.write(t, "nonl.txt", "x\ny")
	f.write(t, "bin.dat", "\x00\x01\x02\nzz\x00\n")
	f.write(t, "d/f.txt", "f\n")
	if err := os.Symlink("d/f.txt", filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	f.git(t, "add", "-A")
	commitAs(t, f, "Root", 1, "root")
	f.git(t, "checkout", "-q", "-b", "side")
	f.write(t, "m.txt", "1\n2\n3\n4\n5\n6 side\n")
	f.write(t, "crlf.txt", "a\r\nb\r\nc\r\n")
	f.write(t, "bin.dat", "\x00\x01\x02\nyy\x00\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Side", 2, "side")
	f.git(t, "checkout", "-q", "main")
	f.write(t, "m.txt", "1 main\n2\n3\n4\n5\n6\n")
	f.write(t, "nonl.txt", "x\ny\nz")
	if err := os.Remove(filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d/other", filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	f.git(t, "add", "-A")
	commitAs(t, f, "Main", 3, "main")
	env := []string{"GIT_AUTHOR_NAME=Merger", "GIT_AUTHOR_DATE=2023-11-09 10:00:00 +0000", "GIT_COMMITTER_DATE=2023-11-09 10:00:00 +0000"}
	if _, e, err := bgit(t, f.dir, env, "merge", "-q", "--no-edit", "side"); err != nil {
		t.Fatalf("merge: %v %s", err, e)
	}
	for _, p := range []string{"m.txt", "crlf.txt", "nonl.txt", "bin.dat", "link"} {
		sameBlame(t, f, map[string]any{"path": p}, "", "--", p)
		sameBlame(t, f, map[string]any{"path": p, "commit": "HEAD^2"}, "", "HEAD^2", "--", p)
	}
	f.write(t, "nonl.txt", "x\ny\nz\nw")
	sameBlame(t, f, map[string]any{"path": "nonl.txt"}, "", "--", "nonl.txt")
	// The link changed in the worktree (type change to a file, too).
	if err := os.Remove(filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "link", "d/other\n")
	sameBlame(t, f, map[string]any{"path": "link"}, "", "--", "link")
	for _, p := range []string{"d", "missing.txt", "d/"} {
		sameBlame(t, f, map[string]any{"path": p}, "", "--", p)
		sameBlame(t, f, map[string]any{"path": p, "commit": "HEAD"}, "", "HEAD", "--", p)
	}
	sameBlame(t, f, map[string]any{"path": "m.txt", "commit": "HEAD^{tree}"}, "", "HEAD^{tree}", "--", "m.txt")
	sameBlame(t, f, map[string]any{"path": "m.txt", "commit": "HEAD@{0}"}, "", "HEAD@{0}", "--", "m.txt")
	sameBlame(t, f, map[string]any{"path": "m.txt", "commit": "nonexistent"}, "", "nonexistent", "--", "m.txt")
	// Annotated tags are peeled; reflog entries resolve; a tag of a tree
	// is not a commit.
	f.git(t, "tag", "-a", "-m", "t", "v1", "HEAD~1")
	f.git(t, "tag", "-a", "-m", "t", "vtree", "HEAD^{tree}")
	for _, rev := range []string{"v1", "v1^{}", "v1^{commit}", "vtree", "HEAD@{1}", "main@{1}", "HEAD@{99}"} {
		sameBlame(t, f, map[string]any{"path": "m.txt", "commit": rev}, "", rev, "--", "m.txt")
	}
}

// A shallow clone's oldest commit is a boundary ('^') like a root.
func TestRegressBlameShallow(t *testing.T) {
	src := blameFixture(t)
	for i := 0; i < 4; i++ {
		src.write(t, "s.txt", strings.Repeat(fmt.Sprintln("line", i), i+1))
		src.git(t, "add", "-A")
		commitAs(t, src, fmt.Sprint("A", i), 1+i, "c")
	}
	dir := filepath.Join(t.TempDir(), "shallow")
	if _, e, err := bgit(t, "", nil, "clone", "-q", "--depth", "2", "file://"+src.dir, dir); err != nil {
		t.Fatalf("clone: %v %s", err, e)
	}
	f := open(t, dir)
	sameBlame(t, f, map[string]any{"path": "s.txt", "commit": "HEAD"}, "", "HEAD", "--", "s.txt")
}

// git's xdiff decides which copy of a repeated line ("}", blank lines)
// is the unchanged one; blame must pick the same. Random edits of files
// made of few distinct lines, checked against git blame.
func TestRegressBlameRepeatedLines(t *testing.T) {
	f := blameFixture(t)
	words := []string{"}", "{", "", "\treturn x;", "  two", "alpha", "beta", "// c", "func f() {", "end"}
	r := rand.New(rand.NewSource(12))
	var cur []string
	for i := 0; i < 40; i++ {
		cur = append(cur, words[r.Intn(len(words))])
	}
	for c := 0; c < 12; c++ {
		next := append([]string(nil), cur...)
		for e := 0; e < 1+r.Intn(6); e++ {
			at := r.Intn(len(next) + 1)
			switch r.Intn(3) {
			case 0:
				next = append(next[:at], append([]string{words[r.Intn(len(words))]}, next[at:]...)...)
			case 1:
				if at < len(next) {
					next = append(next[:at], next[at+1:]...)
				}
			default:
				if at < len(next) {
					next[at] = words[r.Intn(len(words))]
				}
			}
		}
		cur = next
		f.write(t, "r.txt", strings.Join(cur, "\n")+"\n")
		f.git(t, "add", "-A")
		commitAs(t, f, fmt.Sprint("Author", c), 1+c, "edit")
	}
	sameBlame(t, f, map[string]any{"path": "r.txt"}, "", "--", "r.txt")
	sameBlame(t, f, map[string]any{"path": "r.txt", "commit": "HEAD~5"}, "", "HEAD~5", "--", "r.txt")
}

// A cancelled context stops the work with the context's error.
func TestRegressBlameCancelled(t *testing.T) {
	f := blameFixture(t)
	f.write(t, "a.txt", "a\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "A", 1, "root")
	f.write(t, "a.txt", "a\nb\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "B", 2, "two")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := gogit.PlainOpen(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blame(ctx, r, "", blameArgs{Path: "a.txt", Commit: "HEAD"}); err == nil {
		t.Fatal("blame with a cancelled context succeeded")
	}
}

// Abbreviations grow with the packed object count as git's default does
// (over 2^14 objects: 8 hex digits, so blame prints 9).
func TestRegressBlameAbbrevPacked(t *testing.T) {
	f := blameFixture(t)
	var in bytes.Buffer
	// Unreferenced blobs still land in fast-import's pack.
	for i := 0; i < 17000; i++ {
		body := fmt.Sprintf("blob %d\n", i)
		fmt.Fprintf(&in, "blob\ndata %d\n%s\n", len(body), body)
	}
	in.WriteString("commit refs/heads/main\ncommitter T <t@x> 1700000000 +0000\ndata 2\nx\n")
	in.WriteString("M 100644 inline f.txt\ndata 4\nabc\n\n")
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = f.dir, &in
	cmd.Env = gittest.Env(t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v %s", err, out)
	}
	f.git(t, "reset", "-q", "--hard")
	f = open(t, f.dir) // go-git lists packs once: see fast-import's
	f.write(t, "f.txt", "abc\ndef\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "B", 2, "two")
	sameBlame(t, f, map[string]any{"path": "f.txt"}, "", "--", "f.txt")
	f.git(t, "gc", "-q")
	f = open(t, f.dir)
	sameBlame(t, f, map[string]any{"path": "f.txt"}, "", "--", "f.txt")
	sameBlame(t, f, map[string]any{"path": "f.txt", "commit": "HEAD"}, "", "HEAD", "--", "f.txt")
}

// Paths are normalized like git's normalize_path_copy: "." ".." and a
// trailing slash leave "dir/", which names no file (a directory that was a
// file in an older commit is not blamed as that file).
func TestRegressBlamePathNormalization(t *testing.T) {
	f := blameFixture(t)
	f.write(t, "b10", "was a file\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "A", 1, "file")
	f.git(t, "rm", "-q", "b10")
	f.write(t, "b10/in.txt", "now a dir\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "B", 2, "dir")
	sameBlame(t, f, map[string]any{"path": ".", "working_dir": "b10", "commit": "HEAD~1"}, "b10", "HEAD~1", "--", ".")
	sameBlame(t, f, map[string]any{"path": ".", "working_dir": "b10"}, "b10", "--", ".")
	sameBlame(t, f, map[string]any{"path": "..", "working_dir": "b10"}, "b10", "--", "..")
	sameBlame(t, f, map[string]any{"path": "../..", "working_dir": "b10"}, "b10", "--", "../..")
	sameBlame(t, f, map[string]any{"path": "b10/", "commit": "HEAD~1"}, "", "HEAD~1", "--", "b10/")
	for in, want := range map[string]string{
		"a/./b": "a/b", "a//b": "a/b", "a/b/..": "a/", "a/..": "", "a/.": "a/", "./a": "a",
		"a/../b/": "b/", "..x/.y": "..x/.y",
	} {
		if got, err := blamePath(nil, "", in); err != nil || got != want {
			t.Errorf("blamePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// Authors are shown through .mailmap (simple and name-qualified entries,
// emails without case), as git blame does.
func TestRegressBlameMailmap(t *testing.T) {
	f := blameFixture(t)
	f.write(t, "m.txt", "a\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "old name", 1, "one")
	f.write(t, "m.txt", "a\nb\n")
	f.git(t, "add", "-A")
	env := []string{"GIT_AUTHOR_NAME=Typo Nme", "GIT_AUTHOR_EMAIL=Typo@Example.com", "GIT_AUTHOR_DATE=2023-11-05 10:00:00 +0000"}
	if _, e, err := bgit(t, f.dir, env, "commit", "-q", "-m", "two"); err != nil {
		t.Fatal(err, e)
	}
	f.write(t, "m.txt", "a\nb\nc\n")
	sameBlame(t, f, map[string]any{"path": "m.txt"}, "", "--", "m.txt")
	f.write(t, ".mailmap", "# comment\nProper Person <test@example.com>\nFixed Name <fixed@x> Typo Nme <typo@example.COM>\n<not.committed.yet> <nobody@x>\n")
	sameBlame(t, f, map[string]any{"path": "m.txt"}, "", "--", "m.txt")
	sameBlame(t, f, map[string]any{"path": "m.txt", "commit": "HEAD"}, "", "HEAD", "--", "m.txt")
}

// Author columns use git's display width: wide CJK and emoji count two,
// combining marks and format characters none, the soft hyphen one.
func TestRegressBlameAuthorDisplayWidth(t *testing.T) {
	names := []string{"Ab", "e\u0301e\u0301", "\u65e5\u672c\u8a9e", "x\U0001F600", "a\u200db", "soft\u00adhyphen", "\uff21\uff22", "\u1100\u1161\u11a8"}
	f := blameFixture(t)
	var lines []string
	for i, n := range names {
		lines = append(lines, fmt.Sprint("line ", i))
		f.write(t, "n.txt", strings.Join(lines, "\n")+"\n")
		f.git(t, "add", "-A")
		commitAs(t, f, n, 1+i, "c")
	}
	sameBlame(t, f, map[string]any{"path": "n.txt"}, "", "--", "n.txt")
	for i := range names {
		sameBlame(t, f, map[string]any{"path": "n.txt", "start_line": i + 1, "end_line": i + 1}, "", "-L", fmt.Sprintf("%d,%d", i+1, i+1), "--", "n.txt")
	}
}

// The repository's configuration changes git blame's text: blame.showRoot,
// blame.blankBoundary, blame.showEmail, blame.date, core.abbrev and
// diff.indentHeuristic are honoured as git does.
func TestRegressBlameConfig(t *testing.T) {
	f := blameFixture(t)
	f.write(t, "c.txt", "func a() {\n\tx\n}\n\nfunc b() {\n\ty\n}\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Root", 1, "root")
	env := []string{"GIT_AUTHOR_NAME=Neg", "GIT_AUTHOR_DATE=2023-11-03 10:00:00 -0030", "GIT_COMMITTER_DATE=2023-11-03 10:00:00 -0030"}
	f.write(t, "c.txt", "func a() {\n\tx\n}\n\nfunc n() {\n\tn\n}\n\nfunc b() {\n\ty\n}\n")
	if _, e, err := bgit(t, f.dir, env, "commit", "-q", "-am", "neg tz"); err != nil {
		t.Fatal(err, e)
	}
	f.write(t, "c.txt", "func a() {\n\tx\n}\n\nfunc n() {\n\tn\n}\n\nfunc b() {\n\ty\n}\nlocal\n")
	f.write(t, ".mailmap", "Mapped <mapped@x> <test@example.com>\n")
	check := func(what string) {
		t.Helper()
		sameBlame(t, f, map[string]any{"path": "c.txt"}, "", "--", "c.txt")
		sameBlame(t, f, map[string]any{"path": "c.txt", "commit": "HEAD"}, "", "HEAD", "--", "c.txt")
	}
	check("default")
	for _, kv := range [][2]string{
		{"blame.showRoot", "true"}, {"blame.blankBoundary", "true"}, {"blame.showRoot", "false"},
		{"blame.showEmail", "yes"}, {"core.abbrev", "12"}, {"core.abbrev", "no"}, {"core.abbrev", "auto"},
		{"diff.indentHeuristic", "false"},
		{"blame.date", "short"}, {"blame.date", "iso-strict"}, {"blame.date", "rfc"}, {"blame.date", "raw"},
		{"blame.date", "unix"}, {"blame.date", "default"}, {"blame.date", "iso-local"}, {"blame.date", "default-local"},
	} {
		f.git(t, "config", kv[0], kv[1])
		check(kv[0] + "=" + kv[1])
	}
}

// Odd author lines are read as git's split_ident_line reads them: spaces
// kept before the name, a zone like -0030 or +1360 printed as written, a
// missing date shown as the epoch, a broken ident as "(unknown)".
func TestRegressBlameOddIdents(t *testing.T) {
	f := blameFixture(t)
	f.write(t, "o.txt", "one\n")
	f.git(t, "add", "-A")
	var tree string
	parent := ""
	for i, author := range []string{
		"  Spaced  Name   <a@x> 1700000000 -0030",
		"Odd Zone <b@x> 1700000100 +1360",
		"No Date <c@x>",
		"Broken ident without mail 1700000300 +0000",
		"<only@mail> 1700000400 +0100",
	} {
		f.write(t, "o.txt", strings.Repeat("line\n", i+1)+fmt.Sprintln("v", i))
		f.git(t, "add", "-A")
		tree = strings.TrimSpace(f.git(t, "write-tree"))
		body := "tree " + tree + "\n"
		if parent != "" {
			body += "parent " + parent + "\n"
		}
		body += "author " + author + "\ncommitter C <c@x> 1700000000 +0000\n\nmsg\n"
		path := filepath.Join(t.TempDir(), "c")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		parent = strings.TrimSpace(f.git(t, "hash-object", "-w", "-t", "commit", "--literally", path))
	}
	f.git(t, "update-ref", "refs/heads/odd", parent)
	sameBlame(t, f, map[string]any{"path": "o.txt", "commit": "odd"}, "", "odd", "--", "o.txt")
	f.git(t, "config", "blame.date", "iso-strict")
	sameBlame(t, f, map[string]any{"path": "o.txt", "commit": "odd"}, "", "odd", "--", "o.txt")
}

// The working tree file is blamed as git would store it: CRLF checked out
// through eol=crlf, text, text=auto or core.autocrlf is not a change, a
// -text or binary file keeps its CRs, and text=auto leaves a file alone
// when the staged version already has CRLF.
func TestRegressBlameWorkingTreeEOL(t *testing.T) {
	f := blameFixture(t)
	f.write(t, "a.bat", "one\ntwo\n")
	f.write(t, "b.txt", "one\ntwo\n")
	f.write(t, "c.bin", "one\ntwo\n")
	f.write(t, "d/e.txt", "one\ntwo\n")
	f.write(t, "crlf.txt", "one\r\ntwo\r\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "A", 1, "root")
	f.write(t, "a.bat", "one\r\ntwo\r\nthree\r\n")
	f.write(t, "b.txt", "one\r\ntwo\r\n")
	f.write(t, "c.bin", "one\r\ntwo\r\n")
	f.write(t, "d/e.txt", "one\r\ntwo\r\n")
	f.write(t, "crlf.txt", "one\r\ntwo\r\nthree\r\n")
	check := func() {
		t.Helper()
		for _, p := range []string{"a.bat", "b.txt", "c.bin", "d/e.txt", "crlf.txt"} {
			sameBlame(t, f, map[string]any{"path": p}, "", "--", p)
		}
	}
	check()
	f.write(t, ".gitattributes", "*.bat text eol=crlf\n*.bin binary\n*.txt text=auto\n")
	check()
	f.write(t, "d/.gitattributes", "*.txt -text\n")
	check()
	f.write(t, ".gitattributes", "")
	f.git(t, "config", "core.autocrlf", "true")
	check()
	f.git(t, "config", "core.autocrlf", "input")
	if err := os.MkdirAll(filepath.Join(f.dir, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, ".git", "info", "attributes"), []byte("b.txt -text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check()
}

// TestRegressBlameIdentCollapsed: with the ident attribute git reads a
// worktree "$Id: <hash> $" as the "$Id$" it stores, so blame of the
// working tree keeps the committed line, status and diff show nothing
// for it, and checkout writes it expanded (blame content: a held-out
// fuzz case showed the line as "Not Committed Yet").
func TestRegressBlameIdentCollapsed(t *testing.T) {
	f := blameFixture(t)
	f.write(t, ".gitattributes", "*.c ident\n")
	f.write(t, "a.c", "x\n$Id$\ny\n")
	f.git(t, "add", "-A")
	commitAs(t, f, "Alice", 1, "c1")
	f.write(t, "a.c", "x\n$Id: 0123456789012345678901234567890123456789 $\ny\nz\n")
	f.write(t, "b.c", "$Id$\n")
	f = open(t, f.dir)
	sameBlame(t, f, map[string]any{"path": "a.c"}, "", "--", "a.c")
	compareTool(t, f, "git_status", map[string]any{"porcelain": true}, "", "status", "--porcelain", "-b")
	compareTool(t, f, "git_diff", map[string]any{}, "", "diff")
	f.call(t, "git_add", map[string]any{"paths": []string{"b.c"}})
	f.write(t, "a.c", "changed\n")
	f.call(t, "git_restore", map[string]any{"paths": []string{"a.c"}})
	want := "x\n$Id: " + strings.TrimSpace(f.git(t, "rev-parse", "HEAD:a.c")) + " $\ny\n"
	if got, _ := os.ReadFile(filepath.Join(f.dir, "a.c")); string(got) != want {
		t.Fatalf("restored %q, git checks out %q", got, want)
	}
	compareTool(t, f, "git_status", map[string]any{"porcelain": true}, "", "status", "--porcelain", "-b")
}
