package gittools

// Regression tests for git_log and git_show, one per difference category
// the randomized differential suite (test/integration) found: each builds
// a repository with the git CLI and compares the tool's text with git's
// byte for byte.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// gitAt runs the git CLI in dir with the pinned environment plus env and
// returns stdout, stderr and whether it succeeded.
func gitAt(t *testing.T, dir string, env []string, args ...string) (string, string, bool) {
	t.Helper()
	home := filepath.Join(os.TempDir(), "tgp-gittest-home")
	_ = os.MkdirAll(home, 0o755)
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gittest.Env(home), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err == nil
}

// commitAt commits everything with the given author, message and date
// (author and committer date alike, so the walk order is fixed).
func (f *fixture) commitAt(t *testing.T, who, date, msg string) {
	t.Helper()
	f.git(t, "add", "-A")
	env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
	if who != "" {
		name, email, _ := strings.Cut(who, " <")
		env = append(env, "GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+strings.TrimSuffix(email, ">"))
	}
	if _, errOut, ok := gitAt(t, f.dir, env, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", msg); !ok {
		t.Fatalf("commit: %s", errOut)
	}
}

// compareTool calls a tool and the git CLI (run in wd under the
// repository) and fails when the output, or the failure, differs.
func compareTool(t *testing.T, f *fixture, tool string, args map[string]any, wd string, gitArgs ...string) {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := f.set.Call(context.Background(), tool, raw)
	out, errOut, ok := gitAt(t, filepath.Join(f.dir, wd), nil, gitArgs...)
	if !ok {
		if err == nil {
			t.Errorf("%s %s: git failed (%s) but the tool printed:\n%s", tool, raw, strings.TrimSpace(errOut), res.Value)
			return
		}
		msg := err.Error()
		if te, ok := err.(*tools.Error); ok {
			msg = te.Message
		}
		if !strings.Contains(strings.TrimSpace(errOut), strings.TrimSpace(msg)) {
			t.Errorf("%s %s: error %q, git said %q", tool, raw, msg, errOut)
		}
		return
	}
	if err != nil {
		t.Errorf("%s %s: %v; git printed:\n%s", tool, raw, err, out)
		return
	}
	got := res.Value.(string)
	if tool == "git_blame" {
		// The working tree's lines carry the time each read the clock.
		got, out = nowRe.ReplaceAllString(got, "$1 NOW $2"), nowRe.ReplaceAllString(out, "$1 NOW $2")
	}
	if got != out {
		t.Errorf("%s %s vs git %s differs:\n--- tool\n%q\n--- git\n%q", tool, raw, strings.Join(gitArgs, " "), got, out)
	}
}

// messagesRepo has messages with tabs, trailing spaces, a multi-line
// subject, trailers, a non-UTF-8 line and an empty body, by several
// authors, plus an annotated and a lightweight tag.
func messagesRepo(t *testing.T) *fixture {
	f := newRepo(t)
	f.write(t, "a.txt", "1\n")
	f.commitAt(t, "Alice Ä <alice@example.com>", "1700000000 +0100", "tab\tin subject  \n\n\tindented body\twith tab\ntrailing spaces   \n\n\n")
	f.write(t, "a.txt", "2\n")
	f.commitAt(t, "Bob <bob@x.org>", "1700050000 -0530", "multi\nline subject\n\nbody line one which is rather long and wraps somewhere around here\n\nSigned-off-by: Bob <bob@x.org>\nCo-authored-by: Carol <c@x>\n")
	f.write(t, "b.txt", "b\n")
	f.commitAt(t, "", "1700100000 +0000", "caf\xe9 latin-1 \xff\n\nfix: body with \x01 control")
	f.git(t, "tag", "light")
	f.write(t, "a.txt", "3\n")
	f.commitAt(t, "", "1700200000 +1400", "fix(x): subject.with...dots -- and  [brackets]!!\n\n    code block\n")
	if _, errOut, ok := gitAt(t, f.dir, []string{"GIT_COMMITTER_DATE=1700300000 +0200"}, "tag", "-a", "v2", "-m", "release\n\ntag body\twith tab"); !ok {
		t.Fatal(errOut)
	}
	return open(t, f.dir)
}

// Placeholders: every one git documents expands as git expands it.
func TestRegressLogFormatPlaceholders(t *testing.T) {
	f := messagesRepo(t)
	for _, fm := range []string{
		"%H %h %T %t %P %p", "%an|%aN|%ae|%aE|%al|%aL", "%cn|%cN|%ce|%cE|%cl|%cL",
		"%ad|%aD|%as|%at|%ai|%aI|%ah", "%cd|%cD|%cs|%ct|%ci|%cI|%ch", "%ar|%cr",
		"%s", "%f", "%b", "%B", "%N|%e|%m", "%G?|%GS|%GK|%GF|%GP|%GT|%GG",
		"%gd|%gD|%gn|%gN|%ge|%gE|%gs", "%d|%D", "%x00%x09%x41", "%%|%%%|%", "%z|%Q|%(foo)",
		"%Cred%s%Creset", "%Cgreen%h%Cblue%Creset", "%C(red)%s%C(reset)", "%C(auto)%h%d",
		"%C(auto,blue)x", "%C(bold red ul)x",
		"%+s|%-b|% s", "%+b%-N% N", "%n%n%s%+x41",
		"%(trailers)", "%(trailers:only)", "%(trailers:key=Signed-off-by)", "%(trailers:key=Signed-off-by,valueonly)",
		"%(trailers:separator=%x2C,unfold)", "%(trailers:only=no)",
		"%w(20,2,4)%s", "%w(30)%B", "%w(0,4,8)%b", "%w(10,1,2)%s%w()%n%s", "%w(12)%an %ae %s%w(0)",
		"%<(10)%s|", "%<(10,trunc)%s|", "%<(10,ltrunc)%s|", "%<(10,mtrunc)%s|", "%>(12)%h|", "%><(12)%h|",
		"%>>(20)%s|", "%><(5,trunc)%an|", "%<|(30)%an|", "%>|(30)%an|", "%<(3)%an%<(20)%ae|",
		"format:%h", "tformat:%s", "format:%h%n", "format:", "tformat:",
		"oneline", "short", "medium", "full", "fuller", "raw", "reference", "email", "mboxrd",
	} {
		compareTool(t, f, "git_log", map[string]any{"format": fm}, "", "log", "--format="+fm)
		compareTool(t, f, "git_show", map[string]any{"format": fm, "commit": "HEAD~1"}, "", "show", "--format="+fm, "HEAD~1")
	}
	compareTool(t, f, "git_log", map[string]any{}, "", "log")
	compareTool(t, f, "git_log", map[string]any{"oneline": true}, "", "log", "--oneline")
}

// git_show of an annotated tag, a lightweight tag, a tree and a blob.
func TestRegressShowObjects(t *testing.T) {
	f := messagesRepo(t)
	for _, c := range []string{"v2", "light", "HEAD^{tree}", "HEAD:a.txt", "HEAD:", "v2^{tree}", "HEAD~1^{tree}", "HEAD~2:b.txt", "nonexistent", "HEAD@{0}"} {
		compareTool(t, f, "git_show", map[string]any{"commit": c}, "", "show", c)
		compareTool(t, f, "git_show", map[string]any{"commit": c, "stat": true}, "", "show", "--stat", c)
		compareTool(t, f, "git_show", map[string]any{"commit": c, "format": "%h %s"}, "", "show", "--format=%h %s", c)
		compareTool(t, f, "git_show", map[string]any{"commit": c, "format": "tformat:%h"}, "", "show", "--format=tformat:%h", c)
		compareTool(t, f, "git_show", map[string]any{"commit": c, "name_only": true}, "", "show", "--name-only", c)
	}
}

// since/until take git's approxidate.
func TestRegressLogDates(t *testing.T) {
	f := messagesRepo(t)
	for _, d := range []string{"@1700050000", "1700050000", "2023-11-15", "2023-11-14 23:00:00", "2023-11-15T10:00:00Z",
		"2023-11-15 10:00:00 +0200", "Nov 15 2023", "15 Nov 2023", "2.weeks.ago", "3 years ago", "yesterday", "now",
		"2023.11.16", "11/15/2023", "last friday", "@0"} {
		compareTool(t, f, "git_log", map[string]any{"since": d, "oneline": true}, "", "log", "--oneline", "--since="+d)
		compareTool(t, f, "git_log", map[string]any{"until": d, "oneline": true}, "", "log", "--oneline", "--until="+d)
		compareTool(t, f, "git_log", map[string]any{"until": d, "path": "a.txt", "oneline": true}, "", "log", "--oneline", "--until="+d, "--", "a.txt")
	}
}

// Paths: globs, '.', directories, paths relative to working_dir with
// '../', a path leaving the repository, mode-only changes, control
// characters in names, merges simplified by TREESAME.
func TestRegressLogPaths(t *testing.T) {
	f := newRepo(t)
	f.write(t, "src/a/b.txt", "1\n")
	f.write(t, "src/c.txt", "1\n")
	f.write(t, "lib/x.go", "1\n")
	f.write(t, "tab\there", "1\n")
	f.commitAt(t, "", "1700000000 +0000", "one")
	f.git(t, "update-index", "--chmod=+x", "lib/x.go")
	f.commitAt(t, "", "1700000100 +0000", "mode only")
	f.git(t, "checkout", "-q", "-b", "side")
	f.write(t, "src/c.txt", "side\n")
	f.commitAt(t, "", "1700000200 +0000", "side edit")
	f.git(t, "checkout", "-q", "main")
	f.write(t, "tab\there", "2\n")
	f.commitAt(t, "", "1700000300 +0000", "main edit")
	if _, errOut, ok := gitAt(t, f.dir, []string{"GIT_AUTHOR_DATE=1700000400 +0000", "GIT_COMMITTER_DATE=1700000400 +0000"}, "merge", "-q", "--no-ff", "-m", "merge side", "side"); !ok {
		t.Fatal(errOut)
	}
	f.write(t, "src/a/b.txt", "2\n")
	f.commitAt(t, "", "1700000500 +0000", "after merge")
	f = open(t, f.dir)
	for _, c := range []struct{ wd, p string }{
		{"", "src/*"}, {"", "*.txt"}, {"", "*"}, {"", "."}, {"", "src"}, {"", "src/"}, {"", "lib/x.go"}, {"", "tab\there"},
		{"", "src/c.txt"}, {"", "nope"}, {"src", "../lib/x.go"}, {"src", "a"}, {"src", "."}, {"src", ".."}, {"src/a", "../c.txt"},
		{"", "../x"}, {"src", "../../x"}, {"", "s?c"}, {"", "[sl]*"}, {"", ":(top)lib"}, {"src", ":/lib/x.go"}, {"src", ":(literal)a"}, {"", "src/a/b.txt/"},
	} {
		args := map[string]any{"path": c.p, "oneline": true}
		if c.wd != "" {
			args["working_dir"] = c.wd
		}
		compareTool(t, f, "git_log", args, c.wd, "log", "--oneline", "--", c.p)
		delete(args, "oneline")
		compareTool(t, f, "git_log", args, c.wd, "log", "--", c.p)
	}
	compareTool(t, f, "git_show", map[string]any{"name_only": true}, "", "show", "--name-only", "HEAD")
	compareTool(t, f, "git_show", map[string]any{"name_only": true, "commit": "HEAD~1"}, "", "show", "--name-only", "HEAD~1")
	compareTool(t, f, "git_show", map[string]any{"commit": "HEAD~1", "stat": true}, "", "show", "--stat", "HEAD~1")
	compareTool(t, f, "git_log", map[string]any{"format": "%h %d"}, "", "log", "--format=%h %d")
}

// A shallow clone's boundary commit is decorated "grafted".
func TestRegressLogShallowGrafted(t *testing.T) {
	src := messagesRepo(t)
	dir := filepath.Join(t.TempDir(), "clone")
	if _, errOut, ok := gitAt(t, "", nil, "clone", "-q", "--depth", "2", "file://"+src.dir, dir); !ok {
		t.Fatal(errOut)
	}
	f := open(t, dir)
	for _, fm := range []string{"%h%d", "%D", "%C(auto)%h%d"} {
		compareTool(t, f, "git_log", map[string]any{"format": fm}, "", "log", "--format="+fm)
	}
	compareTool(t, f, "git_show", map[string]any{"format": "%d|%D", "commit": "HEAD~1"}, "", "show", "--format=%d|%D", "HEAD~1")
	compareTool(t, f, "git_log", map[string]any{}, "", "log")
}

// git show of a merge whose side renamed a file the other side edited:
// the combined diff pairs each parent by rename (diff.renames), so the
// result, equal to one parent's renamed file, is not shown.
func TestRegressShowMergeRenamedSide(t *testing.T) {
	f := newRepo(t)
	f.write(t, "main8.ts", "return x;\r\n  two spaces\r\nend\r\n\tindented\r\nbeta\r\nbeta\r\n")
	f.write(t, "k", "keep\n")
	f.commitAt(t, "", "1700000000 +0000", "one")
	f.git(t, "checkout", "-q", "-b", "fix-1")
	if err := os.Rename(filepath.Join(f.dir, "main8.ts"), filepath.Join(f.dir, "b3.log")); err != nil {
		t.Fatal(err)
	}
	f.commitAt(t, "", "1700000100 +0000", "branch")
	f.git(t, "checkout", "-q", "main")
	f.write(t, "main8.ts", "alpha\nfunc f() {\ngamma")
	f.write(t, "k", "keep\nmore\n")
	f.commitAt(t, "", "1700000200 +0000", "main")
	if _, errOut, ok := gitAt(t, f.dir, []string{"GIT_AUTHOR_DATE=1700000300 +0000", "GIT_COMMITTER_DATE=1700000300 +0000"}, "merge", "-q", "--no-edit", "--no-ff", "fix-1"); !ok {
		t.Fatal(errOut)
	}
	f.write(t, "k", "resolved by hand\n")
	f.git(t, "commit", "-q", "--amend", "-a", "--no-edit")
	f = open(t, f.dir)
	for _, a := range [][]string{nil, {"--name-only"}, {"--stat"}, {"--format=%h"}, {"--format=format:%h"}, {"--format=oneline"}} {
		args := map[string]any{}
		for _, x := range a {
			switch {
			case x == "--name-only":
				args["name_only"] = true
			case x == "--stat":
				args["stat"] = true
			default:
				args["format"] = strings.TrimPrefix(x, "--format=")
			}
		}
		compareTool(t, f, "git_show", args, "", append(append([]string{"show"}, a...), "HEAD")...)
	}
}

// A .mailmap maps the Author/Commit lines of the builtin formats and
// %aN/%aE/%aL; a message in ISO-8859-1 with its encoding header is shown
// in UTF-8; odd whitespace (CR, vertical tab, form feed) and a
// '-00xx' zone are kept as git keeps them.
func TestRegressLogMailmapEncodingWhitespace(t *testing.T) {
	f := newRepo(t)
	f.write(t, ".mailmap", "Real Name <real@x.org> <bob@x.org>\nOther <other@x.org> Carol <carol@x.org>\n")
	f.write(t, "a", "1\n")
	f.commitAt(t, "Bob <bob@x.org>", "1700000000 -0030", "crlf subject\r\n\r\nbody\r\nline\x0b\n\x0c\nend  \t")
	f.write(t, "a", "2\n")
	f.commitAt(t, "Carol <carol@x.org>", "1700000100 +1360", "tab\tsubject\twith\ttabs\n\n\tbody\ttab\n")
	f.write(t, "a", "3\n")
	if _, errOut, ok := gitAt(t, f.dir, []string{"GIT_AUTHOR_DATE=1700000200 +0000", "GIT_COMMITTER_DATE=1700000200 +0000"},
		"-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-a", "-m", "caf\xe9 latin\n\nna\xefve body"); !ok {
		t.Fatal(errOut)
	}
	f = open(t, f.dir)
	for _, fm := range []string{"", "medium", "full", "fuller", "short", "raw", "email", "oneline",
		"%an|%aN|%ae|%aE|%al|%aL|%cN", "%e|%s|%b", "%B", "%ad|%ai|%aI|%aD"} {
		args := map[string]any{}
		g := []string{"log"}
		if fm != "" {
			args["format"] = fm
			g = append(g, "--format="+fm)
		}
		compareTool(t, f, "git_log", args, "", g...)
	}
	compareTool(t, f, "git_log", map[string]any{"author": "Real"}, "", "log", "--author=Real")
}

// Abbreviated hashes follow git's default length: core.abbrev, or 7
// grown with the number of packed objects (8 past 2^14), and unique.
func TestRegressLogAbbrevLength(t *testing.T) {
	f := newRepo(t)
	var in strings.Builder
	for i := 0; i < 17000; i++ {
		fmt.Fprintf(&in, "blob\ndata %d\n%d\n", len(strconv.Itoa(i))+1, i)
	}
	in.WriteString("commit refs/heads/main\ncommitter T <t@x> 1700000000 +0000\ndata 2\nc\nM 644 inline a\ndata 2\na\n\n")
	in.WriteString("commit refs/heads/main\ncommitter T <t@x> 1700000100 +0000\ndata 2\nd\nM 644 inline a\ndata 2\nb\n\n")
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = f.dir
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	f = open(t, f.dir)
	for _, fm := range []string{"%h %t %p", "oneline", "medium"} {
		compareTool(t, f, "git_log", map[string]any{"format": fm}, "", "log", "--format="+fm)
	}
	compareTool(t, f, "git_log", map[string]any{"oneline": true}, "", "log", "--oneline")
	f.git(t, "config", "core.abbrev", "12")
	compareTool(t, f, "git_log", map[string]any{"format": "%h %t %p"}, "", "log", "--format=%h %t %p")
	// (the patch's index line is diff.go's; --stat has no hashes)
	compareTool(t, f, "git_show", map[string]any{"format": "%h", "stat": true}, "", "show", "--stat", "--format=%h", "HEAD")
}

// git show of annotated tags under every kind of format: the tagger as
// the format prints an author, the tag object's text, then a separator
// unless the format terminates its records; a tag of a tag, of a tree
// and of a blob.
func TestRegressShowTagFormats(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "1\n")
	f.commitAt(t, "", "1700000000 +0000", "Merge-like: words")
	env := []string{"GIT_COMMITTER_DATE=1700000100 -0030"}
	for _, tag := range [][]string{{"-a", "-m", "release v0", "v0"}, {"-a", "-m", "outer\n\nbody", "v1", "v0"},
		{"-a", "-m", "tree tag", "vt", "HEAD^{tree}"}, {"-a", "-m", "blob tag", "vb", "HEAD:a"}} {
		if _, errOut, ok := gitAt(t, f.dir, env, append([]string{"tag"}, tag...)...); !ok {
			t.Fatal(errOut)
		}
	}
	f = open(t, f.dir)
	for _, c := range []string{"v0", "v1", "vt", "vb"} {
		for _, fm := range []string{"", "format:%h", "tformat:%h", "%h", "oneline", "short", "fuller", "raw", "email", "format:"} {
			args := map[string]any{"commit": c, "stat": true}
			g := []string{"show", "--stat"}
			if fm != "" {
				args["format"] = fm
				g = append(g, "--format="+fm)
			}
			compareTool(t, f, "git_show", args, "", append(g, c)...)
		}
	}
}

// A merge at a shallow clone's boundary is a root to git: no Merge:
// line, no %P, and git show prints its whole tree as added.
func TestRegressShallowMergeBoundary(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "1\n")
	f.commitAt(t, "", "1700000000 +0000", "one")
	f.git(t, "checkout", "-q", "-b", "side")
	f.write(t, "b", "side\n")
	f.commitAt(t, "", "1700000100 +0000", "side")
	f.git(t, "checkout", "-q", "main")
	f.write(t, "a", "2\n")
	f.commitAt(t, "", "1700000200 +0000", "main")
	if _, errOut, ok := gitAt(t, f.dir, []string{"GIT_AUTHOR_DATE=1700000300 +0000", "GIT_COMMITTER_DATE=1700000300 +0000"}, "merge", "-q", "--no-edit", "--no-ff", "side"); !ok {
		t.Fatal(errOut)
	}
	dir := filepath.Join(t.TempDir(), "clone")
	if _, errOut, ok := gitAt(t, "", nil, "clone", "-q", "--depth", "1", "file://"+f.dir, dir); !ok {
		t.Fatal(errOut)
	}
	c := open(t, dir)
	compareTool(t, c, "git_log", map[string]any{}, "", "log")
	compareTool(t, c, "git_log", map[string]any{"format": "%h %p|%P|%d"}, "", "log", "--format=%h %p|%P|%d")
	compareTool(t, c, "git_show", map[string]any{}, "", "show", "HEAD")
	compareTool(t, c, "git_show", map[string]any{"name_only": true}, "", "show", "--name-only", "HEAD")
	compareTool(t, c, "git_show", map[string]any{"stat": true}, "", "show", "--stat", "HEAD")
}

// Notes (refs/notes/commits) show under each commit when no format was
// asked for, and as %N; an empty note, a multi-line one.
func TestRegressLogNotes(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "1\n")
	f.commitAt(t, "", "1700000000 +0000", "one")
	f.write(t, "a", "2\n")
	f.commitAt(t, "", "1700000100 +0000", "two")
	f.write(t, "a", "3\n")
	f.commitAt(t, "", "1700000200 +0000", "three")
	f.git(t, "notes", "add", "-m", "note on two\n\nsecond para", "HEAD~1")
	f.git(t, "notes", "add", "-m", "top note", "HEAD")
	f = open(t, f.dir)
	compareTool(t, f, "git_log", map[string]any{}, "", "log")
	compareTool(t, f, "git_log", map[string]any{"oneline": true}, "", "log", "--oneline")
	for _, fm := range []string{"%h %N|", "medium", "%N%-N"} {
		compareTool(t, f, "git_log", map[string]any{"format": fm}, "", "log", "--format="+fm)
	}
	compareTool(t, f, "git_show", map[string]any{}, "", "show", "HEAD")
	compareTool(t, f, "git_show", map[string]any{"commit": "HEAD~1", "stat": true}, "", "show", "--stat", "HEAD~1")
}

// Literal paths take the raw-tree TREESAME test: an empty root commit is
// not shown for '.', a file that becomes a directory, a 'dir/' item, a
// path through a file, an empty commit on top.
func TestRegressLogLiteralWalk(t *testing.T) {
	f := newRepo(t)
	f.commitAt(t, "", "1700000000 +0000", "empty root")
	f.write(t, "x", "file\n")
	f.write(t, "d/a", "1\n")
	f.commitAt(t, "", "1700000100 +0000", "files")
	if err := os.Remove(filepath.Join(f.dir, "x")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "x/inner", "now a dir\n")
	f.commitAt(t, "", "1700000200 +0000", "file to dir")
	f.git(t, "update-index", "--chmod=+x", "d/a")
	f.commitAt(t, "", "1700000300 +0000", "mode")
	f.commitAt(t, "", "1700000400 +0000", "empty on top")
	f = open(t, f.dir)
	for _, p := range []string{".", "x", "x/", "x/inner", "x/inner/deeper", "d", "d/", "d/a", "d/a/", "nope"} {
		compareTool(t, f, "git_log", map[string]any{"path": p, "oneline": true}, "", "log", "--oneline", "--", p)
	}
}
