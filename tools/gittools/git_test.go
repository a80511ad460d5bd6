package gittools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// fixture is a repository made with the git CLI and a tool set on it.
type fixture struct {
	dir string
	set *tools.Set
}

func open(t *testing.T, dir string) *fixture {
	t.Helper()
	return openEnv(t, dir)
}

// openEnv is open with more variables in the tools' environment (the
// identity's dates, say).
func openEnv(t *testing.T, dir string, env ...string) *fixture {
	t.Helper()
	return openSigning(t, dir, "", env...)
}

// openSigning is openEnv with git.signing_key set to key.
func openSigning(t *testing.T, dir, key string, env ...string) *fixture {
	t.Helper()
	f, err := vfs.NewOS(dir)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := gitbackend.Open(context.Background(), f.Billy(), gitbackend.Config{})
	if err != nil {
		t.Fatal(err)
	}
	set := tools.NewSet(tools.WithClassifier(func(err error) tools.Kind {
		if strings.Contains(err.Error(), "sandbox") || strings.Contains(err.Error(), "outside") {
			return tools.KindSandboxViolation
		}
		return ""
	}))
	// git.author is Test unless env names an author: then the identity
	// variables decide, as with no git.author configured.
	name, email := "Test", "test@example.com"
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_AUTHOR_NAME=") {
			name, email = "", ""
		}
	}
	if err := set.Add(Tools(Deps{FS: f, Repo: func() *gitbackend.Repo { return repo }, Environ: append([]string{"MY_API_TOKEN=supersecretvalue", "GIT_CONFIG_NOSYSTEM=1"}, env...),
		AuthorName: name, AuthorEmail: email, SigningKey: key})...); err != nil {
		t.Fatal(err)
	}
	return &fixture{dir: dir, set: set}
}

func (f *fixture) git(t *testing.T, args ...string) string {
	t.Helper()
	return gittest.Git(t, f.dir, args...)
}

func (f *fixture) write(t *testing.T, p, content string) {
	t.Helper()
	full := filepath.Join(f.dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) call(t *testing.T, name string, args map[string]any) string {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := f.set.Call(context.Background(), name, raw)
	if err != nil {
		t.Fatalf("%s %s: %v", name, raw, err)
	}
	return res.Value.(string)
}

func (f *fixture) callErr(t *testing.T, name string, args map[string]any) *tools.Error {
	t.Helper()
	raw, _ := json.Marshal(args)
	_, err := f.set.Call(context.Background(), name, raw)
	te, ok := err.(*tools.Error)
	if !ok {
		t.Fatalf("%s %s: want an error, got %v", name, raw, err)
	}
	return te
}

// history builds a repository with several commits and a varied worktree.
func history(t *testing.T) *fixture {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "repo")
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	f := open(t, dir)
	f.write(t, "src/app.ts", "function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n")
	f.write(t, "README.md", "# demo\n")
	f.write(t, "dir with space/ünï.txt", "unicode\n")
	f.git(t, "add", "-A")
	f.git(t, "-c", "user.name=Alice", "-c", "user.email=alice@example.com", "commit", "-q", "-m", "feat: first commit\n\nWith a body line.")
	f.write(t, "src/app.ts", "function a() {\n  return 10;\n}\n\nfunction b() {\n  return 2;\n}\n")
	f.write(t, "docs/guide.md", "guide\n")
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", "fix(app): change a")
	f.write(t, "README.md", "# demo\nmore\n")
	f.git(t, "commit", "-q", "-am", "docs: readme")
	// Worktree state: staged, unstaged, deleted, untracked file and dir.
	f.write(t, "src/app.ts", "function a() {\n  return 10;\n}\n\nfunction b() {\n  return 20;\n}\n")
	f.write(t, "staged.txt", "staged\n")
	f.git(t, "add", "staged.txt")
	_ = os.Remove(filepath.Join(dir, "docs/guide.md"))
	f.write(t, "notes.txt", "untracked\n")
	f.write(t, "newdir/a.txt", "a\n")
	f.write(t, "newdir/sub/b.txt", "b\n")
	f.write(t, ".gitignore", "*.log\n")
	f.write(t, "debug.log", "ignored\n")
	return f
}

func same(t *testing.T, what, ours, theirs string) {
	t.Helper()
	if ours != theirs {
		t.Fatalf("%s differs from git:\n--- ours\n%s--- git\n%s", what, ours, theirs)
	}
}

func TestT_GIT_STATUS_01(t *testing.T) {
	f := history(t)
	same(t, "status porcelain -b", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	same(t, "status -uno", f.call(t, "git_status", map[string]any{"untracked": false}), f.git(t, "status", "--porcelain=1", "-b", "-uno"))
	same(t, "status no branch", f.call(t, "git_status", map[string]any{"branch": false}), f.git(t, "status", "--porcelain=1"))
}

func TestT_GIT_STATUS_02(t *testing.T) {
	f := history(t)
	same(t, "long status", f.call(t, "git_status", map[string]any{"porcelain": false}), f.git(t, "status"))
	clean := filepath.Join(t.TempDir(), "clean")
	gittest.Git(t, "", "init", "-q", "-b", "main", clean)
	c := open(t, clean)
	c.write(t, "a.txt", "a\n")
	c.git(t, "add", "a.txt")
	c.git(t, "commit", "-q", "-m", "a")
	same(t, "clean long status", c.call(t, "git_status", map[string]any{"porcelain": false}), c.git(t, "status"))
}

func TestT_GIT_EDGE_01(t *testing.T) {
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "empty")
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	f := open(t, dir)
	f.write(t, "a.txt", "a\n")
	same(t, "empty repo status", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
}

func TestT_GIT_EDGE_17(t *testing.T) {
	f := history(t)
	f.git(t, "checkout", "-q", "--detach", "HEAD~1")
	same(t, "detached status", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
}

func TestStatusAheadBehind(t *testing.T) {
	gittest.RequireGit(t)
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	dir := gittest.Clone(t, remote)
	f := open(t, dir)
	f.write(t, "b.txt", "b\n")
	f.git(t, "add", "b.txt")
	f.git(t, "commit", "-q", "-m", "local")
	other := gittest.Clone(t, remote)
	gittest.Git(t, other, "commit", "-q", "--allow-empty", "-m", "remote 1")
	gittest.Git(t, other, "commit", "-q", "--allow-empty", "-m", "remote 2")
	gittest.Git(t, other, "push", "-q")
	f.git(t, "fetch", "-q")
	same(t, "ahead/behind", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
}

func TestT_GIT_LOG_01(t *testing.T) {
	f := history(t)
	same(t, "log", f.call(t, "git_log", map[string]any{}), f.git(t, "log"))
	same(t, "log -n 2", f.call(t, "git_log", map[string]any{"max_count": 2}), f.git(t, "log", "-n", "2"))
	same(t, "oneline", f.call(t, "git_log", map[string]any{"oneline": true}), f.git(t, "log", "--oneline", "--no-decorate"))
	same(t, "path", f.call(t, "git_log", map[string]any{"path": "src/app.ts", "oneline": true}), f.git(t, "log", "--oneline", "--no-decorate", "--", "src/app.ts"))
	same(t, "grep", f.call(t, "git_log", map[string]any{"grep": "readme", "oneline": true}), f.git(t, "log", "--oneline", "--no-decorate", "--grep=readme"))
}

func TestT_GIT_LOG_02(t *testing.T) {
	f := history(t)
	same(t, "author", f.call(t, "git_log", map[string]any{"author": "Alice", "oneline": true}), f.git(t, "log", "--oneline", "--no-decorate", "--author=Alice"))
}

func TestT_GIT_LOG_03(t *testing.T) {
	f := history(t)
	format := "%H|%h|%T|%t|%P|%p|%an|%ae|%ad|%aI|%at|%cn|%ce|%cI|%ct|%s|%D%x09end"
	same(t, "format", f.call(t, "git_log", map[string]any{"format": format, "oneline": true}), f.git(t, "log", "--format="+format))
	same(t, "body", f.call(t, "git_log", map[string]any{"format": "%s%n%b"}), f.git(t, "log", "--format=%s%n%b"))
	same(t, "since", f.call(t, "git_log", map[string]any{"since": "2 weeks ago", "oneline": true}), f.git(t, "log", "--oneline", "--no-decorate", "--since=2 weeks ago"))
}

func TestT_GIT_EDGE_06(t *testing.T) {
	f := history(t)
	if e := f.callErr(t, "git_log", map[string]any{"max_count": 0}); e.Kind != tools.KindBadArgs || e.Field != "max_count" {
		t.Fatalf("%+v", e)
	}
}

func TestT_GIT_DIFF_01(t *testing.T) {
	f := history(t)
	same(t, "diff", f.call(t, "git_diff", map[string]any{}), f.git(t, "diff"))
	same(t, "diff --cached", f.call(t, "git_diff", map[string]any{"cached": true}), f.git(t, "diff", "--cached"))
	same(t, "diff refs", f.call(t, "git_diff", map[string]any{"from_ref": "HEAD~2", "to_ref": "HEAD"}), f.git(t, "diff", "HEAD~2", "HEAD"))
	same(t, "diff -U1", f.call(t, "git_diff", map[string]any{"unified": 1}), f.git(t, "diff", "-U1"))
	same(t, "diff --stat", f.call(t, "git_diff", map[string]any{"stat": true}), f.git(t, "diff", "--stat"))
	same(t, "diff paths", f.call(t, "git_diff", map[string]any{"paths": []string{"src"}}), f.git(t, "diff", "--", "src"))
}

func TestT_GIT_DIFF_02(t *testing.T) {
	f := history(t)
	out := f.call(t, "git_diff", map[string]any{"from_ref": "HEAD~2", "to_ref": "HEAD", "output_dir": "patches"})
	if !strings.Contains(out, "patches/0001-") {
		t.Fatalf("%q", out)
	}
	if e := f.callErr(t, "git_diff", map[string]any{"from_ref": "HEAD~1", "to_ref": "HEAD", "output_dir": "../outside"}); e.Kind != tools.KindSandboxViolation {
		t.Fatalf("T-GIT-SEC-04: %+v", e)
	}
}

func TestT_GIT_DIFF_03(t *testing.T) {
	f := history(t)
	if e := f.callErr(t, "git_diff", map[string]any{"cached": true, "from_ref": "HEAD"}); e.Kind != tools.KindBadArgs {
		t.Fatalf("%+v", e)
	}
	if e := f.callErr(t, "git_diff", map[string]any{"output_dir": "p", "from_ref": "HEAD"}); e.Kind != tools.KindBadArgs {
		t.Fatalf("%+v", e)
	}
}

func TestT_GIT_DIFF_04(t *testing.T) {
	f := history(t)
	same(t, "name_only over stat", f.call(t, "git_diff", map[string]any{"name_only": true, "stat": true}), f.git(t, "diff", "--name-only"))
}

func TestT_GIT_EDGE_02(t *testing.T) {
	f := history(t)
	if out := f.call(t, "git_diff", map[string]any{"paths": []string{"README.md"}}); out != "" {
		t.Fatalf("%q", out)
	}
}

func TestT_GIT_SHOW_01(t *testing.T) {
	f := history(t)
	same(t, "show HEAD", f.call(t, "git_show", map[string]any{}), f.git(t, "show", "HEAD"))
	same(t, "show root", f.call(t, "git_show", map[string]any{"commit": "HEAD~2"}), f.git(t, "show", "HEAD~2"))
	same(t, "show --stat", f.call(t, "git_show", map[string]any{"commit": "HEAD~1", "stat": true}), f.git(t, "show", "--stat", "HEAD~1"))
	if e := f.callErr(t, "git_show", map[string]any{"commit": "nope"}); !strings.Contains(e.Message, "unknown revision") {
		t.Fatalf("%+v", e)
	}
}

func TestT_GIT_SHOW_02(t *testing.T) {
	f := history(t)
	same(t, "show name_only", f.call(t, "git_show", map[string]any{"name_only": true, "stat": true}), f.git(t, "show", "--name-only", "HEAD"))
}

func copyRepo(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return dst
}

func TestT_GIT_ADD_01(t *testing.T) {
	f := history(t)
	ref := copyRepo(t, f.dir)
	out := f.call(t, "git_add", map[string]any{"paths": []string{"src/app.ts", "notes.txt"}})
	gittest.Git(t, ref, "add", "--", "src/app.ts", "notes.txt")
	if out != "Staged 2 file(s)" {
		t.Fatalf("%q", out)
	}
	same(t, "index", f.git(t, "ls-files", "-s"), gittest.Git(t, ref, "ls-files", "-s"))
	same(t, "status", f.git(t, "status", "--porcelain"), gittest.Git(t, ref, "status", "--porcelain"))
}

func TestT_GIT_ADD_02(t *testing.T) {
	f := history(t)
	ref := copyRepo(t, f.dir)
	f.call(t, "git_add", map[string]any{"all": true})
	gittest.Git(t, ref, "add", "-A")
	same(t, "index after -A", f.git(t, "ls-files", "-s"), gittest.Git(t, ref, "ls-files", "-s"))
	same(t, "status after -A", f.git(t, "status", "--porcelain"), gittest.Git(t, ref, "status", "--porcelain"))
	g := history(t)
	ref = copyRepo(t, g.dir)
	g.call(t, "git_add", map[string]any{"update": true})
	gittest.Git(t, ref, "add", "-u")
	same(t, "index after -u", g.git(t, "ls-files", "-s"), gittest.Git(t, ref, "ls-files", "-s"))
}

func TestT_GIT_ADD_03(t *testing.T) {
	f := history(t)
	if e := f.callErr(t, "git_add", map[string]any{"all": true, "update": true}); e.Kind != tools.KindBadArgs || !strings.Contains(e.Message, "mutually exclusive") {
		t.Fatalf("%+v", e)
	}
	if e := f.callErr(t, "git_add", map[string]any{}); e.Kind != tools.KindBadArgs {
		t.Fatalf("%+v", e)
	}
}

func TestT_GIT_EDGE_14(t *testing.T) {
	f := history(t)
	f.write(t, "dir with space/other file.txt", "x\n")
	if out := f.call(t, "git_add", map[string]any{"paths": []string{"dir with space/other file.txt"}}); out != "Staged 1 file(s)" {
		t.Fatalf("%q", out)
	}
}

func TestT_GIT_COMMIT_01_02_03(t *testing.T) {
	f := history(t)
	out := f.call(t, "git_commit", map[string]any{"type": "feat", "scope": "app", "message": "stage a file"})
	if !strings.HasPrefix(out, "[main ") || !strings.Contains(out, "] feat(app): stage a file\n 1 file changed, 1 insertion(+)\n create mode 100644 staged.txt") {
		t.Fatalf("%q", out)
	}
	if log := f.git(t, "log", "-1", "--format=%s|%an"); log != "feat(app): stage a file|Test\n" {
		t.Fatalf("%q", log)
	}
	e := f.callErr(t, "git_commit", map[string]any{"type": "fix", "message": "again"})
	if e.Message != "nothing to commit" {
		t.Fatalf("%+v", e)
	}
	if e := f.callErr(t, "git_commit", map[string]any{"type": "Feat", "message": "x"}); e.Kind != tools.KindBadArgs || e.Field != "type" {
		t.Fatalf("%+v", e)
	}
	f.git(t, "fsck", "--strict")
}

func TestT_GIT_SEC_09(t *testing.T) {
	f := history(t)
	msg := "$(rm -rf /); `id` && echo pwned | cat"
	f.call(t, "git_commit", map[string]any{"type": "chore", "message": msg})
	if got := f.git(t, "log", "-1", "--format=%s"); got != "chore: "+msg+"\n" {
		t.Fatalf("%q", got)
	}
}

func TestT_GIT_EDGE_21(t *testing.T) {
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "r")
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	fsys, _ := vfs.NewOS(dir)
	repo, _ := gitbackend.Open(context.Background(), fsys.Billy(), gitbackend.Config{})
	set := tools.NewSet()
	_ = set.Add(Tools(Deps{FS: fsys, Repo: func() *gitbackend.Repo { return repo }, Environ: []string{}})...)
	_ = os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	gittest.Git(t, dir, "add", "a")
	// With no identity anywhere (no HOME, no variables) git_commit
	// commits as the bot, as every other commit the kernel makes does;
	// user.useConfigOnly turns that into a refusal.
	if _, err := set.Call(context.Background(), "git_commit", json.RawMessage(`{"type":"feat","message":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>"); got != "tgp-bot[bot] <tgp-bot@users.noreply.github.com>|tgp-bot[bot] <tgp-bot@users.noreply.github.com>\n" {
		t.Fatalf("%q", got)
	}
	gittest.Git(t, dir, "config", "user.useConfigOnly", "true")
	_ = os.WriteFile(filepath.Join(dir, "b"), []byte("b"), 0o644)
	gittest.Git(t, dir, "add", "b")
	_, err := set.Call(context.Background(), "git_commit", json.RawMessage(`{"type":"feat","message":"y"}`))
	if err == nil || !strings.Contains(err.Error(), "no commit identity configured") {
		t.Fatalf("%v", err)
	}
}

func TestT_GIT_BRANCH_01_02_03_04(t *testing.T) {
	f := history(t)
	f.git(t, "branch", "feature/foo", "HEAD~1")
	same(t, "branch -v", f.call(t, "git_branch", map[string]any{}), f.git(t, "branch", "-v"))
	f.call(t, "git_branch", map[string]any{"create": "topic"})
	if got := f.git(t, "rev-parse", "topic"); got != f.git(t, "rev-parse", "HEAD") {
		t.Fatal("create did not make a real ref")
	}
	if out := f.call(t, "git_branch", map[string]any{"delete": "feature/foo"}); !strings.HasPrefix(out, "Deleted branch feature/foo (was ") {
		t.Fatalf("merged branch -d: %q", out)
	}
	f.git(t, "checkout", "-q", "-b", "unmerged")
	f.git(t, "commit", "-q", "--allow-empty", "-m", "not on main")
	f.git(t, "checkout", "-q", "main")
	if e := f.callErr(t, "git_branch", map[string]any{"delete": "unmerged"}); !strings.Contains(e.Message, "error: The branch 'unmerged' is not fully merged.") {
		t.Fatalf("%+v", e)
	}
	f.call(t, "git_branch", map[string]any{"rename": "topic", "new_name": "topic2"})
	if out, err := gittest.GitErr(f.dir, "rev-parse", "--verify", "-q", "topic"); err == nil {
		t.Fatalf("old name still there: %s", out)
	}
	if e := f.callErr(t, "git_branch", map[string]any{"rename": "topic2"}); e.Kind != tools.KindBadArgs || e.Field != "new_name" {
		t.Fatalf("%+v", e)
	}
	out := f.call(t, "git_branch", map[string]any{"force_delete": "topic2"})
	if !strings.HasPrefix(out, "Deleted branch topic2 (was ") {
		t.Fatalf("%q", out)
	}
}

func TestT_GIT_SEC_01_10(t *testing.T) {
	f := history(t)
	for _, name := range []string{"-D", "--exec=malicious", "a..b", "bad name", "x.lock"} {
		if e := f.callErr(t, "git_branch", map[string]any{"create": name}); e.Kind != tools.KindBadArgs {
			t.Fatalf("%s: %+v", name, e)
		}
	}
	if e := f.callErr(t, "git_show", map[string]any{"commit": "--exec=malicious"}); e.Kind != tools.KindBadArgs {
		t.Fatalf("%+v", e)
	}
}

func TestT_GIT_SEC_02_03(t *testing.T) {
	f := history(t)
	if e := f.callErr(t, "git_status", map[string]any{"working_dir": "../.."}); e.Kind != tools.KindSandboxViolation {
		t.Fatalf("%+v", e)
	}
	if e := f.callErr(t, "git_add", map[string]any{"paths": []string{"../etc/passwd"}}); e.Kind != tools.KindBadArgs {
		t.Fatalf("%+v", e)
	}
}

func TestT_GIT_ERR_02(t *testing.T) {
	dir := t.TempDir()
	fsys, _ := vfs.NewOS(dir)
	set := tools.NewSet()
	_ = set.Add(Tools(Deps{FS: fsys, Repo: func() *gitbackend.Repo { return nil }})...)
	_, err := set.Call(context.Background(), "git_status", json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), "Not a git repository: .") {
		t.Fatalf("%v", err)
	}
}

func TestT_GIT_SEC_07_08(t *testing.T) {
	f := history(t)
	f.write(t, "leak.txt", "token=supersecretvalue \x1b[31mred\x1b[0m\n")
	f.git(t, "add", "leak.txt")
	out := f.call(t, "git_diff", map[string]any{"cached": true})
	if strings.Contains(out, "supersecretvalue") || strings.Contains(out, "\x1b[") || !strings.Contains(out, "[REDACTED]") {
		t.Fatalf("%q", out)
	}
}

func TestT_GIT_COMMON_03(t *testing.T) {
	f := history(t)
	raw, _ := json.Marshal(map[string]any{"max_bytes": 100})
	res, err := f.set.Call(context.Background(), "git_log", raw)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Value.(string)
	if !res.Truncated || len(s) > 100 || !strings.HasSuffix(s, "\n\n... [output truncated]") {
		t.Fatalf("%q", s)
	}
}

func TestT_GIT_RESTORE_01_02_03(t *testing.T) {
	f := history(t)
	ref := copyRepo(t, f.dir)
	f.call(t, "git_restore", map[string]any{"paths": []string{"src/app.ts"}})
	gittest.Git(t, ref, "restore", "--", "src/app.ts")
	same(t, "restore worktree", f.git(t, "status", "--porcelain"), gittest.Git(t, ref, "status", "--porcelain"))
	f.call(t, "git_restore", map[string]any{"paths": []string{"staged.txt"}, "staged": true, "worktree": false})
	gittest.Git(t, ref, "restore", "--staged", "--", "staged.txt")
	same(t, "restore staged", f.git(t, "status", "--porcelain"), gittest.Git(t, ref, "status", "--porcelain"))
	same(t, "index", f.git(t, "ls-files", "-s"), gittest.Git(t, ref, "ls-files", "-s"))
	if e := f.callErr(t, "git_restore", map[string]any{"paths": []string{"a"}, "staged": false, "worktree": false}); e.Kind != tools.KindBadArgs {
		t.Fatalf("%+v", e)
	}
}

func blameRepo(t *testing.T) *fixture {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "b")
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	f := open(t, dir)
	lines := []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	f.write(t, "f.txt", strings.Join(lines, "\n")+"\n")
	f.git(t, "add", "f.txt")
	f.git(t, "-c", "user.name=Alice Long-Name", "commit", "-q", "-m", "root")
	for i, who := range []string{"Bob", "Carol", "Bob", "Dave"} {
		lines[(i*3+1)%len(lines)] = lines[(i*3+1)%len(lines)] + " edited by " + who
		if i == 2 {
			lines = append(lines[:5], append([]string{"inserted"}, lines[5:]...)...)
		}
		f.write(t, "f.txt", strings.Join(lines, "\n")+"\n")
		f.git(t, "-c", "user.name="+who, "commit", "-q", "-am", "edit "+who)
	}
	return f
}

func TestT_GIT_BLAME_01(t *testing.T) {
	f := blameRepo(t)
	same(t, "blame", f.call(t, "git_blame", map[string]any{"path": "f.txt"}), f.git(t, "blame", "f.txt"))
	same(t, "blame at commit", f.call(t, "git_blame", map[string]any{"path": "f.txt", "commit": "HEAD~2"}), f.git(t, "blame", "HEAD~2", "--", "f.txt"))
}

func TestT_GIT_BLAME_02(t *testing.T) {
	f := blameRepo(t)
	same(t, "blame -L", f.call(t, "git_blame", map[string]any{"path": "f.txt", "start_line": 3, "end_line": 9}), f.git(t, "blame", "-L", "3,9", "f.txt"))
}

func TestT_GIT_BLAME_03(t *testing.T) {
	f := blameRepo(t)
	if e := f.callErr(t, "git_blame", map[string]any{"path": "f.txt", "start_line": 5, "end_line": 2}); e.Kind != tools.KindBadArgs {
		t.Fatalf("%+v", e)
	}
}

func TestT_GIT_CHECKOUT_01_02(t *testing.T) {
	f := history(t)
	f.git(t, "stash", "-u", "-q")
	f.git(t, "branch", "old", "HEAD~2")
	ref := copyRepo(t, f.dir)
	out := f.call(t, "git_checkout", map[string]any{"branch": "old"})
	gittest.Git(t, ref, "checkout", "-q", "old")
	if out != "Switched to branch 'old'\n" {
		t.Fatalf("%q", out)
	}
	for _, args := range [][]string{{"status", "--porcelain", "-b"}, {"ls-files", "-s"}} {
		same(t, strings.Join(args, " "), f.git(t, args...), gittest.Git(t, ref, args...))
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "README.md")); string(b) != "# demo\n" {
		t.Fatalf("worktree not switched: %q", b)
	}
	out = f.call(t, "git_checkout", map[string]any{"create_branch": "feature/x"})
	if out != "Switched to a new branch 'feature/x'\n" || f.git(t, "rev-parse", "--abbrev-ref", "HEAD") != "feature/x\n" {
		t.Fatalf("%q", out)
	}
}

func TestT_GIT_CHECKOUT_03(t *testing.T) {
	f := history(t)
	f.git(t, "stash", "-u", "-q")
	out := f.call(t, "git_checkout", map[string]any{"commit": "HEAD~1"})
	if !strings.Contains(out, "You are in 'detached HEAD' state.") || !strings.Contains(out, "HEAD is now at ") {
		t.Fatalf("%q", out)
	}
	if got := f.git(t, "status", "--porcelain=1", "-b"); !strings.HasPrefix(got, "## HEAD (no branch)") {
		t.Fatalf("%q", got)
	}
}

func TestT_GIT_CHECKOUT_04(t *testing.T) {
	f := history(t)
	if e := f.callErr(t, "git_checkout", map[string]any{}); e.Kind != tools.KindBadArgs {
		t.Fatalf("%+v", e)
	}
}

func TestCheckoutCarriesChangesAndRefusesConflicts(t *testing.T) {
	f := history(t)
	// old has a different README; src/app.ts is the same on both sides
	// except for the uncommitted local edit, which must be carried over.
	f.git(t, "branch", "old", "HEAD~1")
	f.git(t, "stash", "-u", "-q")
	f.write(t, "src/app.ts", "local change\n")
	out := f.call(t, "git_checkout", map[string]any{"branch": "old"})
	if !strings.HasPrefix(out, "Switched to branch 'old'") {
		t.Fatalf("%q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "src/app.ts")); string(b) != "local change\n" {
		t.Fatalf("local change lost: %q", b)
	}
	// A local change to a file the switch must rewrite: git's error, nothing lost.
	f.write(t, "README.md", "mine\n")
	e := f.callErr(t, "git_checkout", map[string]any{"branch": "main"})
	if e.Kind != tools.KindConflict || !strings.Contains(e.Message, "Your local changes to the following files would be overwritten by checkout:\n\tREADME.md") {
		t.Fatalf("%+v", e)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "README.md")); string(b) != "mine\n" {
		t.Fatalf("local change lost: %q", b)
	}
	if got := f.git(t, "rev-parse", "--abbrev-ref", "HEAD"); got != "old\n" {
		t.Fatalf("HEAD moved: %q", got)
	}
}

func stashRepo(t *testing.T) *fixture {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "s")
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	f := open(t, dir)
	f.write(t, "a.txt", "a\n")
	f.write(t, "b.txt", "b\n")
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", "base")
	f.write(t, "a.txt", "a changed\n") // unstaged
	f.write(t, "b.txt", "b staged\n")
	f.git(t, "add", "b.txt") // staged
	f.write(t, "c.txt", "new staged\n")
	f.git(t, "add", "c.txt") // new file, staged
	f.write(t, "u.txt", "untracked\n")
	return f
}

func TestT_GIT_STASH_01_02_03_toolThenCLI(t *testing.T) {
	f := stashRepo(t)
	before := f.git(t, "status", "--porcelain")
	out := f.call(t, "git_stash", map[string]any{"action": "push", "include_untracked": true})
	if !strings.HasPrefix(out, "Saved working directory and index state WIP on main: ") {
		t.Fatalf("%q", out)
	}
	if st := f.git(t, "status", "--porcelain"); st != "" {
		t.Fatalf("tree not clean after push: %q", st)
	}
	same(t, "stash list", f.call(t, "git_stash", map[string]any{"action": "list"}), f.git(t, "stash", "list"))
	same(t, "stash show", f.call(t, "git_stash", map[string]any{"action": "show"}), f.git(t, "stash", "show"))
	f.git(t, "fsck", "--strict")
	// The git CLI pops what the tool stashed.
	f.git(t, "stash", "pop", "--index")
	same(t, "status after CLI pop", f.git(t, "status", "--porcelain"), before)
}

func TestStashCLIThenTool(t *testing.T) {
	f := stashRepo(t)
	f.git(t, "stash", "push", "-u", "-m", "by the CLI")
	same(t, "list", f.call(t, "git_stash", map[string]any{"action": "list"}), f.git(t, "stash", "list"))
	out := f.call(t, "git_stash", map[string]any{"action": "pop"})
	if !strings.Contains(out, "Dropped refs/stash@{0} (") {
		t.Fatalf("%q", out)
	}
	// git stash pop without --index: modifications come back unstaged, new files staged.
	if st := f.git(t, "status", "--porcelain"); st != " M a.txt\n M b.txt\nA  c.txt\n?? u.txt\n" {
		t.Fatalf("status after tool pop: %q", st)
	}
	if list := f.git(t, "stash", "list"); list != "" {
		t.Fatalf("stash not dropped: %q", list)
	}
}

func TestT_GIT_EDGE_10(t *testing.T) {
	f := blameRepo(t)
	if out := f.call(t, "git_stash", map[string]any{}); out != "No local changes to save\n" {
		t.Fatalf("%q", out)
	}
}

func TestStashConflictKeepsEntry_T_GIT_STASH_04(t *testing.T) {
	f := stashRepo(t)
	f.call(t, "git_stash", map[string]any{"message": "mine"})
	f.write(t, "a.txt", "conflicting\n")
	e := f.callErr(t, "git_stash", map[string]any{"action": "pop"})
	if e.Kind != tools.KindConflict || !strings.Contains(e.Message, "a.txt") {
		t.Fatalf("%+v", e)
	}
	if list := f.git(t, "stash", "list"); !strings.Contains(list, "stash@{0}: On main: mine") {
		t.Fatalf("stash lost on conflict: %q", list)
	}
	f.call(t, "git_stash", map[string]any{"action": "clear"})
	if list := f.git(t, "stash", "list"); list != "" {
		t.Fatalf("clear: %q", list)
	}
}

func TestApprovalOnRiskForHighRiskCalls(t *testing.T) {
	f := stashRepo(t)
	var asked []string
	set := tools.NewSet(tools.WithPolicy(tools.PolicyOnRisk), tools.WithApprover(tools.YesNo(func(ctx context.Context, r tools.ApprovalRequest) (bool, error) {
		asked = append(asked, r.Summary)
		return r.Tool == "git_stash", nil // approve the stash clear, refuse the rest
	})))
	fsys, _ := vfs.NewOS(f.dir)
	repo, _ := gitbackend.Open(context.Background(), fsys.Billy(), gitbackend.Config{})
	_ = set.Add(Tools(Deps{FS: fsys, Repo: func() *gitbackend.Repo { return repo }, AuthorName: "T", AuthorEmail: "t@example.com"})...)
	call := func(name, args string) error {
		_, err := set.Call(context.Background(), name, json.RawMessage(args))
		return err
	}
	if err := call("git_restore", `{"paths":["a.txt"]}`); tools.KindOf(err) != tools.KindApprovalRequired || !strings.Contains(err.Error(), "Restore 1 file(s) to worktree") {
		t.Fatalf("restore: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "a.txt")); string(b) != "a changed\n" {
		t.Fatal("refused restore changed the file")
	}
	if err := call("git_branch", `{"force_delete":"main"}`); tools.KindOf(err) != tools.KindApprovalRequired {
		t.Fatalf("force delete: %v", err)
	}
	if err := call("git_branch", `{}`); err != nil {
		t.Fatalf("listing needs no approval: %v", err)
	}
	if err := call("git_stash", `{"action":"list"}`); err != nil || len(asked) != 2 {
		t.Fatalf("stash list needs no approval: %v %v", err, asked)
	}
	if err := call("git_stash", `{"action":"clear"}`); err != nil || len(asked) != 3 || !strings.Contains(asked[2], "WARNING") {
		t.Fatalf("approved stash clear: %v %v", err, asked)
	}
}

func TestT_GIT_INT_01_to_04(t *testing.T) {
	f := stashRepo(t)
	// INT-04: restore undoes add.
	f.call(t, "git_add", map[string]any{"paths": []string{"a.txt"}})
	f.call(t, "git_restore", map[string]any{"paths": []string{"a.txt"}, "staged": true, "worktree": false})
	if st := f.git(t, "status", "--porcelain", "a.txt"); st != " M a.txt\n" {
		t.Fatalf("INT-04: %q", st)
	}
	// INT-03: stash push → list → pop.
	f.call(t, "git_stash", map[string]any{"include_untracked": true})
	if l := f.call(t, "git_stash", map[string]any{"action": "list"}); !strings.HasPrefix(l, "stash@{0}: WIP on main") {
		t.Fatalf("INT-03 list: %q", l)
	}
	f.call(t, "git_stash", map[string]any{"action": "pop"})
	// INT-01: add → commit.
	f.call(t, "git_add", map[string]any{"all": true})
	if out := f.call(t, "git_commit", map[string]any{"type": "feat", "message": "everything"}); !strings.Contains(out, "] feat: everything") {
		t.Fatalf("INT-01: %q", out)
	}
	if st := f.git(t, "status", "--porcelain"); st != "" {
		t.Fatalf("INT-01 not clean: %q", st)
	}
	// INT-02: branch create → checkout → delete.
	f.call(t, "git_branch", map[string]any{"create": "topic"})
	f.call(t, "git_checkout", map[string]any{"branch": "topic"})
	f.call(t, "git_checkout", map[string]any{"branch": "main"})
	if out := f.call(t, "git_branch", map[string]any{"delete": "topic"}); !strings.HasPrefix(out, "Deleted branch topic") {
		t.Fatalf("INT-02: %q", out)
	}
	same(t, "branches", f.call(t, "git_branch", map[string]any{}), f.git(t, "branch", "-v"))
}

func TestStatusRmCached(t *testing.T) {
	f := history(t)
	f.git(t, "rm", "-q", "--cached", "README.md")
	same(t, "rm --cached", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	f.write(t, "src/new.ts", "x\n")
	f.write(t, "ignored/deep/x.log", "x\n")
	same(t, "nested untracked", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
}

// variedRepo has renames (exact and edited), a binary file, CRLF lines, a
// mode change, a symlink and a merge commit.
func variedRepo(t *testing.T) *fixture {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "v")
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	f := open(t, dir)
	f.write(t, "src.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n")
	f.write(t, "same.txt", "identical content\nline two\n")
	f.write(t, "crlf.txt", "one\r\ntwo\r\nthree\r\n")
	f.write(t, "run.sh", "#!/bin/sh\necho hi\n")
	if err := os.WriteFile(filepath.Join(dir, "bin.dat"), []byte{0, 1, 2, 3, 'x', 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", "base")
	_ = os.MkdirAll(filepath.Join(dir, "dir"), 0o755)
	_ = os.MkdirAll(filepath.Join(dir, "other"), 0o755)
	f.git(t, "mv", "src.txt", "dir/moved.txt")
	f.write(t, "dir/moved.txt", "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\n")
	f.git(t, "mv", "same.txt", "other/same.txt")
	f.write(t, "crlf.txt", "one\r\nTWO\r\nthree\r\n")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin.dat"), []byte{0, 1, 2, 4, 'y', 0, 9}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("crlf.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", "renames, binary, crlf, mode, symlink")
	f.git(t, "checkout", "-q", "-b", "side", "HEAD~1")
	f.write(t, "side.txt", "side\n")
	f.git(t, "add", "side.txt")
	f.git(t, "commit", "-q", "-m", "side work")
	f.git(t, "checkout", "-q", "main")
	f.git(t, "merge", "-q", "--no-edit", "side")
	return f
}

func TestVariedHistoryDiffShowLog(t *testing.T) {
	f := variedRepo(t)
	same(t, "show of renames/binary/crlf/mode/symlink", f.call(t, "git_show", map[string]any{"commit": "HEAD~1"}), f.git(t, "show", "HEAD~1"))
	same(t, "show --stat with renames", f.call(t, "git_show", map[string]any{"commit": "HEAD~1", "stat": true}), f.git(t, "show", "--stat", "HEAD~1"))
	same(t, "show --name-only", f.call(t, "git_show", map[string]any{"commit": "HEAD~1", "name_only": true}), f.git(t, "show", "--name-only", "HEAD~1"))
	same(t, "show of a merge", f.call(t, "git_show", map[string]any{}), f.git(t, "show", "HEAD"))
	same(t, "diff across the merge", f.call(t, "git_diff", map[string]any{"from_ref": "HEAD~2", "to_ref": "HEAD"}), f.git(t, "diff", "HEAD~2", "HEAD"))
	same(t, "log with a merge", f.call(t, "git_log", map[string]any{}), f.git(t, "log"))
	same(t, "log --format %d", f.call(t, "git_log", map[string]any{"format": "%h%d %s"}), f.git(t, "log", "--format=%h%d %s"))
	same(t, "blame crlf", f.call(t, "git_blame", map[string]any{"path": "crlf.txt"}), f.git(t, "blame", "crlf.txt"))
}

func TestStagedRenameStatus(t *testing.T) {
	f := variedRepo(t)
	f.git(t, "mv", "other/same.txt", "renamed.txt")
	f.git(t, "mv", "dir/moved.txt", "dir/moved2.txt")
	same(t, "status with staged renames", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	same(t, "long status with renames", f.call(t, "git_status", map[string]any{"porcelain": false}), f.git(t, "status"))
	same(t, "cached diff with renames", f.call(t, "git_diff", map[string]any{"cached": true}), f.git(t, "diff", "--cached"))
	same(t, "cached stat with renames", f.call(t, "git_diff", map[string]any{"cached": true, "stat": true}), f.git(t, "diff", "--cached", "--stat"))
}

func TestValidationRulesReadOnly(t *testing.T) {
	f := history(t)
	for _, c := range []struct {
		tool  string
		args  map[string]any
		field string
	}{
		{"git_status", map[string]any{"timeout_ms": 50}, "timeout_ms"},
		{"git_status", map[string]any{"porcelain": "yes"}, "porcelain"},
		{"git_diff", map[string]any{"unified": -1}, "unified"},
		{"git_diff", map[string]any{"max_bytes": 0}, "max_bytes"},
		{"git_diff", map[string]any{"max_bytes": 5000001}, "max_bytes"},
		{"git_diff", map[string]any{"to_ref": "HEAD"}, "to_ref"},
		{"git_log", map[string]any{"max_count": 0}, "max_count"},
		{"git_log", map[string]any{"since": "the day after tomorrow-ish"}, "since"},
		{"git_log", map[string]any{"nope": 1}, "nope"},
		{"git_show", map[string]any{"commit": "-p"}, "commit_ref"},
		{"git_blame", map[string]any{}, "path"},
		{"git_blame", map[string]any{"path": "f", "start_line": 0}, "start_line"},
	} {
		e := f.callErr(t, c.tool, c.args)
		if e.Kind != tools.KindBadArgs || e.Field != c.field {
			t.Errorf("%s %v: got %s field %q (%s), want bad_args on %s", c.tool, c.args, e.Kind, e.Field, e.Message, c.field)
		}
	}
}

// TestWorktreeOfUnwraps pins the go-git detail worktreeOf relies on: a name
// with a tab must be readable through the worktree it returns.
func TestWorktreeOfUnwraps(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "tab\there"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := gitbackend.Open(context.Background(), mustOS(t, dir).Billy(), gitbackend.Config{})
	if err != nil {
		t.Fatal(err)
	}
	err = repo.Do(context.Background(), func(r *gogit.Repository) error {
		w, err := worktreeOf(r)
		if err != nil {
			return err
		}
		_, err = w.Filesystem.Lstat("tab\there")
		return err
	})
	if err != nil {
		t.Fatalf("worktreeOf: Lstat of a name with a tab: %v", err)
	}
}

func mustOS(t *testing.T, dir string) *vfs.FS {
	f, err := vfs.NewOS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
