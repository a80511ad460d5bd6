package git

// Regression tests for git_log and git_show, one per difference category
// the randomized differential suite (test/integration) found: each builds
// a repository with the git CLI and compares the tool's text with git's
// byte for byte.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
		if msg := err.Error(); !strings.Contains(strings.TrimSpace(errOut), strings.TrimSpace(strings.TrimPrefix(msg, "execution_failed: "))) {
			t.Errorf("%s %s: error %q, git said %q", tool, raw, msg, errOut)
		}
		return
	}
	if err != nil {
		t.Errorf("%s %s: %v; git printed:\n%s", tool, raw, err, out)
		return
	}
	if got := res.Value.(string); got != out {
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

var _ = tools.KindBadArgs
