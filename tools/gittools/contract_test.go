package gittools

// The git tools' contract as agents meet it: git's error texts, approval,
// results as JSON strings, max_bytes, timeouts and cancellation, and the
// edge cases of names, line endings, shallow clones, submodules and
// symlinks, one test each (the T_GIT ids in the names number the cases).
// Cases about child processes are restated for an in-process git and say
// how.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

func (f *fixture) callRes(t *testing.T, name string, args map[string]any) (tools.Result, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	return f.set.Call(context.Background(), name, raw)
}

// T-GIT-COMMON-01: git's error text reaches the caller. In process there is
// no stderr stream; the error message carries what git prints there.
func TestT_GIT_COMMON_01_ErrorTextIsGits(t *testing.T) {
	f := history(t)
	_, gitErr := gittest.GitErr(f.dir, "show", "nope")
	e := f.callErr(t, "git_show", map[string]any{"commit": "nope"})
	if !strings.Contains(gitErr.Error()+fmt.Sprint(gitErr), "exit status") || !strings.Contains(e.Message, "fatal: ambiguous argument 'nope': unknown revision") {
		t.Fatalf("tool: %q", e.Message)
	}
}

// T-GIT-COMMON-02 and T-GIT-EDGE-22: with approval.policy always a mutating
// tool asks first, and git_checkout restoring paths is high risk (asked
// even on_risk); a refusal changes nothing.
func TestT_GIT_COMMON_02_EDGE_22_Approval(t *testing.T) {
	f := history(t)
	for _, c := range []struct {
		policy tools.Policy
		tool   string
		args   string
	}{
		{tools.PolicyAlways, "git_add", `{"paths":["notes.txt"]}`},
		{tools.PolicyOnRisk, "git_checkout", `{"paths":["src/app.ts"]}`},
	} {
		set := tools.NewSet(tools.WithPolicy(c.policy), tools.WithApprover(tools.YesNo(func(context.Context, tools.ApprovalRequest) (bool, error) { return false, nil })))
		fsys := mustOS(t, f.dir)
		repo, err := gitbackend.Open(context.Background(), fsys.Billy(), gitbackend.Config{})
		if err != nil {
			t.Fatal(err)
		}
		_ = set.Add(Tools(Deps{FS: fsys, Repo: func() *gitbackend.Repo { return repo }})...)
		before := f.git(t, "status", "--porcelain")
		_, err = set.Call(context.Background(), c.tool, json.RawMessage(c.args))
		if tools.KindOf(err) != tools.KindApprovalRequired {
			t.Fatalf("%s under %s: %v", c.tool, c.policy, err)
		}
		if after := f.git(t, "status", "--porcelain"); after != before {
			t.Fatalf("refused %s changed the repository", c.tool)
		}
	}
}

// T-GIT-COMMON-04: the result of a git tool is the text git prints, as one
// JSON string (the tgp call envelope is tested in cmd/tgp).
func TestT_GIT_COMMON_04_ResultIsJSONString(t *testing.T) {
	f := history(t)
	res, err := f.callRes(t, "git_status", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res.Value)
	if err != nil || raw[0] != '"' {
		t.Fatalf("%s %v", raw, err)
	}
}

// T-GIT-EDGE-03/04: output exactly max_bytes long is whole; one byte more is
// cut with the marker and truncated set.
func TestT_GIT_EDGE_03_04_MaxBytesBoundary(t *testing.T) {
	f := history(t)
	full := f.call(t, "git_diff", map[string]any{})
	res, err := f.callRes(t, "git_diff", map[string]any{"max_bytes": len(full)})
	if err != nil || res.Truncated || res.Value != full {
		t.Fatalf("exactly max_bytes: truncated=%v err=%v", res.Truncated, err)
	}
	res, err = f.callRes(t, "git_diff", map[string]any{"max_bytes": len(full) - 1})
	if err != nil || !res.Truncated || !strings.HasSuffix(res.Value.(string), "[output truncated]") || len(res.Value.(string)) > len(full)-1 {
		t.Fatalf("one byte over: %v %q", err, res.Value)
	}
}

// T-GIT-EDGE-05: log of a repository with one commit.
func TestT_GIT_EDGE_05_SingleCommitLog(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "a\n")
	f.commitAll(t, "only")
	f = open(t, f.dir)
	same(t, "log", f.call(t, "git_log", map[string]any{}), f.git(t, "log"))
	same(t, "show", f.call(t, "git_show", map[string]any{}), f.git(t, "show"))
}

// T-GIT-EDGE-07/08: branch names with Unicode and with slashes.
func TestT_GIT_EDGE_07_08_BranchNames(t *testing.T) {
	f := history(t)
	for _, name := range []string{"caf\u00e9-\u65e5\u672c", "feature/foo", "a/b/c"} {
		f.call(t, "git_branch", map[string]any{"create": name})
		if got, want := f.git(t, "rev-parse", "refs/heads/"+name), f.git(t, "rev-parse", "HEAD"); got != want {
			t.Fatalf("%s: %s vs %s", name, got, want)
		}
	}
	same(t, "branch -v", f.call(t, "git_branch", map[string]any{}), f.git(t, "branch", "-v"))
}

// T-GIT-EDGE-09: a branch named like a file: branch switches, paths restore.
func TestT_GIT_EDGE_09_BranchNamedLikeAFile(t *testing.T) {
	f := history(t)
	f.git(t, "stash", "-q", "-u")
	f.git(t, "branch", "README.md")
	f.write(t, "README.md", "changed\n")
	f.call(t, "git_checkout", map[string]any{"paths": []string{"README.md"}})
	if b, _ := os.ReadFile(filepath.Join(f.dir, "README.md")); string(b) != "# demo\nmore\n" {
		t.Fatalf("paths: %q", b)
	}
	f.call(t, "git_checkout", map[string]any{"branch": "README.md"})
	if got := strings.TrimSpace(f.git(t, "symbolic-ref", "--short", "HEAD")); got != "README.md" {
		t.Fatalf("branch: %s", got)
	}
}

// T-GIT-EDGE-11: blame of a file with CRLF line endings.
func TestT_GIT_EDGE_11_BlameCRLF(t *testing.T) {
	f := newRepo(t)
	f.write(t, "w.txt", "one\r\ntwo\r\n")
	f.commitAll(t, "crlf")
	f.write(t, "w.txt", "one\r\ntwo\r\nthree\r\n")
	f.commitAll(t, "more")
	f = open(t, f.dir)
	same(t, "blame", f.call(t, "git_blame", map[string]any{"path": "w.txt"}), f.git(t, "blame", "w.txt"))
}

// T-GIT-EDGE-13: restore with a glob.
func TestT_GIT_EDGE_13_RestoreGlob(t *testing.T) {
	f := history(t)
	ref := copyRepo(t, f.dir)
	f.write(t, "src/app.ts", "x\n")
	gittest.Git(t, ref, "restore", "--", "src/*.ts")
	f.call(t, "git_restore", map[string]any{"paths": []string{"src/*.ts"}})
	same(t, "status", f.git(t, "status", "--porcelain"), gittest.Git(t, ref, "status", "--porcelain"))
}

// T-GIT-EDGE-15: a multi-line commit message is kept (cleaned like git).
func TestT_GIT_EDGE_15_MultiLineCommit(t *testing.T) {
	f := history(t)
	f.call(t, "git_commit", map[string]any{"type": "feat", "message": "subject line\n\nbody one\nbody two"})
	if got := f.git(t, "log", "-1", "--format=%B"); got != "feat: subject line\n\nbody one\nbody two\n\n" {
		t.Fatalf("%q", got)
	}
}

// T-GIT-EDGE-16: show of a merge commit (TestRegressShowCombinedDiff covers
// a merge resolved by hand).
func TestT_GIT_EDGE_16_ShowMerge(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "a\n")
	f.commitAll(t, "base")
	f.git(t, "checkout", "-q", "-b", "t")
	f.write(t, "b", "b\n")
	f.commitAll(t, "side")
	f.git(t, "checkout", "-q", "main")
	f.write(t, "c", "c\n")
	f.commitAll(t, "main")
	f.git(t, "merge", "-q", "--no-edit", "t")
	f = open(t, f.dir)
	same(t, "show", f.call(t, "git_show", map[string]any{}), f.git(t, "show"))
	same(t, "show --stat", f.call(t, "git_show", map[string]any{"stat": true}), f.git(t, "show", "--stat"))
	same(t, "log", f.call(t, "git_log", map[string]any{}), f.git(t, "log"))
}

// T-GIT-EDGE-18: a shallow clone: log stops at the boundary, show of the
// boundary commit shows its whole tree.
func TestT_GIT_EDGE_18_ShallowClone(t *testing.T) {
	src := newRepo(t)
	for i := 0; i < 4; i++ {
		src.write(t, "f", fmt.Sprintf("%d\n", i))
		src.commitAll(t, fmt.Sprintf("c%d", i))
	}
	dir := filepath.Join(t.TempDir(), "shallow")
	gittest.Git(t, "", "clone", "-q", "--no-local", "--depth", "2", "file://"+src.dir, dir)
	f := open(t, dir)
	same(t, "log", f.call(t, "git_log", map[string]any{}), f.git(t, "log"))
	same(t, "show boundary", f.call(t, "git_show", map[string]any{"commit": "HEAD~1"}), f.git(t, "show", "HEAD~1"))
	same(t, "status", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
}

// T-GIT-EDGE-19: a file tracked by Git LFS is a pointer file in git: blame
// blames the pointer's lines, as git does without the LFS filter.
func TestT_GIT_EDGE_19_BlameLFSPointer(t *testing.T) {
	f := newRepo(t)
	f.write(t, ".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n")
	f.write(t, "big.bin", "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")
	f.commitAll(t, "lfs")
	f = open(t, f.dir)
	same(t, "blame", f.call(t, "git_blame", map[string]any{"path": "big.bin"}), f.git(t, "blame", "big.bin"))
}

// T-GIT-EDGE-20: a path inside a submodule directory (TestRegressGitlink...
// covers status and diff of the gitlink itself).
func TestT_GIT_EDGE_20_PathInSubmodule(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "a\n")
	f.git(t, "add", "a")
	f.git(t, "update-index", "--add", "--cacheinfo", "160000,0000000000000000000000000000000000003039,sub")
	f.git(t, "commit", "-q", "-m", "x")
	f.write(t, "sub/inner.txt", "not ours\n")
	f = open(t, f.dir)
	same(t, "status", f.call(t, "git_status", map[string]any{}), f.git(t, "status", "--porcelain=1", "-b"))
	same(t, "log -- sub", f.call(t, "git_log", map[string]any{"path": "sub"}), f.git(t, "log", "--", "sub"))
}

// T-GIT-ERR-01: a working_dir that does not exist or is a file.
func TestT_GIT_ERR_01_InvalidWorkingDir(t *testing.T) {
	f := history(t)
	for _, wd := range []string{"no/such/dir", "README.md"} {
		if e := f.callErr(t, "git_status", map[string]any{"working_dir": wd}); e.Kind != tools.KindExecutionFailed || !strings.Contains(e.Message, "Not a git repository") {
			t.Fatalf("%s: %+v", wd, e)
		}
	}
}

// T-GIT-ERR-04: switching to an unknown branch is not_found.
func TestT_GIT_ERR_04_UnknownBranch(t *testing.T) {
	f := history(t)
	if e := f.callErr(t, "git_checkout", map[string]any{"branch": "nope"}); e.Kind != tools.KindNotFound {
		t.Fatalf("%+v", e)
	}
}

// T-GIT-ERR-05: a switch that would overwrite local changes is conflict,
// with git's message, and changes nothing.
func TestT_GIT_ERR_05_CheckoutConflict(t *testing.T) {
	f := history(t)
	f.git(t, "branch", "old", "HEAD~2")
	before := f.git(t, "status", "--porcelain")
	e := f.callErr(t, "git_checkout", map[string]any{"branch": "old"})
	if e.Kind != tools.KindConflict || !strings.Contains(e.Message, "Your local changes to the following files would be overwritten by checkout") {
		t.Fatalf("%+v", e)
	}
	if after := f.git(t, "status", "--porcelain"); after != before {
		t.Fatal("a refused checkout changed the worktree")
	}
}

// T-GIT-INT-05..08: diff between two tags, log by author and date range,
// blame at a historical commit, show with a custom format.
func TestT_GIT_INT_05_to_08(t *testing.T) {
	f := history(t)
	f.git(t, "tag", "v1", "HEAD~2")
	f.git(t, "tag", "-a", "-m", "two", "v2", "HEAD")
	same(t, "INT-05 diff v1 v2", f.call(t, "git_diff", map[string]any{"from_ref": "v1", "to_ref": "v2"}), f.git(t, "diff", "v1", "v2"))
	args := map[string]any{"author": "Alice", "since": "2000-01-01", "until": "2100-01-01"}
	same(t, "INT-06 log author+dates", f.call(t, "git_log", args), f.git(t, "log", "--author=Alice", "--since=2000-01-01", "--until=2100-01-01"))
	same(t, "INT-07 blame at commit", f.call(t, "git_blame", map[string]any{"path": "src/app.ts", "commit": "HEAD~1"}), f.git(t, "blame", "HEAD~1", "--", "src/app.ts"))
	same(t, "INT-08 show format", f.call(t, "git_show", map[string]any{"commit": "v2", "format": "%h %an %s%n%b"}), f.git(t, "show", "--format=%h %an %s%n%b", "v2"))
}

// T-GIT-SEC-05: a working_dir through a symbolic link out of the root is a
// sandbox violation.
func TestT_GIT_SEC_05_SymlinkOut(t *testing.T) {
	f := history(t)
	if err := os.Symlink(os.TempDir(), filepath.Join(f.dir, "out")); err != nil {
		t.Fatal(err)
	}
	if e := f.callErr(t, "git_status", map[string]any{"working_dir": "out"}); e.Kind != tools.KindSandboxViolation {
		t.Fatalf("%+v", e)
	}
}

// T-GIT-SEC-06 is about Windows junctions: there are none where this runs.
func TestT_GIT_SEC_06_WindowsJunction(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("T-GIT-SEC-06: NTFS junctions exist only on Windows; on Unix the symlink case is T-GIT-SEC-05")
	}
}

// bigHistory makes a repository with n commits quickly (git fast-import).
func bigHistory(t *testing.T, n int) *fixture {
	f := newRepo(t)
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "commit refs/heads/main\ncommitter T <t@x> %d +0000\ndata %d\nc%06d\n", 1700000000+i, 8, i)
		fmt.Fprintf(&b, "M 644 inline f\ndata %d\n%06d\n\n", 7, i)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env = f.dir, gittest.Env(t.TempDir())
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v %s", err, out)
	}
	f.git(t, "reset", "-q", "--hard")
	return open(t, f.dir)
}

// T-GIT-ERR-03, T-GIT-TIMEOUT-01/02: a git tool past its timeout stops and
// returns what it produced, marked and flagged truncated (in process there
// is no process to kill: the walk checks its context). T-GIT-TIMEOUT-03: a
// cancelled context ends the call as cancelled.
func TestT_GIT_ERR_03_TIMEOUT_01_02_03(t *testing.T) {
	f := bigHistory(t, 60000)
	start := time.Now()
	res, err := f.callRes(t, "git_log", map[string]any{"timeout_ms": 100, "oneline": true, "max_bytes": 5000000})
	switch {
	case err != nil:
		// Nothing produced before the deadline (a loaded machine): a
		// plain timeout error.
		if tools.KindOf(err) != tools.KindTimeout {
			t.Fatalf("want a timeout, got %v", err)
		}
		t.Logf("timed out before the first commit, after %v", time.Since(start))
	case strings.HasSuffix(res.Value.(string), " c000001\n"):
		t.Logf("finished within the timeout (%v): nothing partial to check", time.Since(start))
	default:
		out := res.Value.(string)
		if !res.Truncated || !strings.HasSuffix(out, TimeoutMarker) || !strings.Contains(out, " c060000\n") {
			t.Fatalf("partial output: truncated=%v head=%q tail=%q", res.Truncated, out[:min(80, len(out))], out[max(0, len(out)-80):])
		}
		t.Logf("stopped after %v with %d bytes", time.Since(start), len(out))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = f.set.Call(ctx, "git_log", json.RawMessage(`{}`))
	if tools.KindOf(err) != tools.KindCancelled && !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// T-GIT-TIMEOUT-04 asks that the git process group is killed on timeout:
// the git tools run in process and start no process (TestNoGitBinaryNeeded
// in gitbackend runs them with no git on PATH).
func TestT_GIT_TIMEOUT_04_NoProcessToKill(t *testing.T) {
	f := history(t)
	want := gittest.Git(t, f.dir, "status", "--porcelain=1", "-b")
	t.Setenv("PATH", t.TempDir()) // no git binary reachable
	same(t, "status without a git binary", f.call(t, "git_status", map[string]any{}), want)
}

var _ = vfs.ErrViolation
