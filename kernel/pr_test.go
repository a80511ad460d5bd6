package kernel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/forge/githubtest"
	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

type prEnv struct {
	remoteDir string
	http      *gittest.HTTPServer
	gh        *githubtest.Server
}

func newPREnv(t *testing.T) *prEnv {
	t.Helper()
	rm := githubtest.NewRemote(t, "acme", "toolbox", "gh-token")
	return &prEnv{remoteDir: rm.Dir, http: rm.HTTP, gh: rm.GH}
}

// kernelAt is a github-provider kernel on a disk root, with extra options
// (later options win).
func (e *prEnv) kernelAt(t *testing.T, root string, extra ...Option) *Kernel {
	t.Helper()
	opts := append(e.options("github"), WithRoot(root))
	k, err := New(context.Background(), append(opts, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k
}

func (e *prEnv) options(provider string) []Option {
	return []Option{
		WithEnviron([]string{"GH_TOKEN=gh-token"}),
		WithSetting("git.remote", e.http.URL("toolbox.git")),
		WithSetting("git.write_strategy", "pr"), WithSetting("git.provider", provider),
		WithSetting("git.repo", "acme/toolbox"), WithSetting("git.api_url", e.gh.BaseURL()),
		WithSetting("git.token_env", "GH_TOKEN"), WithSetting("git.retry.max_attempts", 3),
		WithSetting("git.author.name", "Agent"), WithSetting("git.author.email", "agent@example.com"),
	}
}

func (e *prEnv) kernel(t *testing.T, provider string, memory bool) *Kernel {
	t.Helper()
	opts := []Option{
		WithEnviron([]string{"GH_TOKEN=gh-token"}),
		WithSetting("git.remote", e.http.URL("toolbox.git")),
		WithSetting("git.write_strategy", "pr"), WithSetting("git.provider", provider),
		WithSetting("git.repo", "acme/toolbox"), WithSetting("git.api_url", e.gh.BaseURL()),
		WithSetting("git.token_env", "GH_TOKEN"), WithSetting("git.retry.max_attempts", 3),
		WithSetting("git.author.name", "Agent"), WithSetting("git.author.email", "agent@example.com"),
	}
	if memory {
		opts = append(opts, WithMemoryFS())
	} else {
		opts = append(opts, WithRoot(t.TempDir()))
	}
	k, err := New(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k
}

func writeTool(t *testing.T, k *Kernel, p, content string) *tools.Persisted {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"path": p, "content": content})
	res, err := k.Call(context.Background(), "write_file", raw)
	if err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
	return res.Value.(tools.WriteResult).Persisted
}

func TestPRModeOneBranchOnePRPerSession(t *testing.T) {
	e := newPREnv(t)
	mainBefore := gittest.Git(t, e.remoteDir, "rev-parse", "main")
	k := e.kernel(t, "github", false)
	p1 := writeTool(t, k, "tools/math/add.ts", "/** Adds two numbers. */\nexport default (a: { x: number; y: number }) => a.x + a.y;\n")
	p2 := writeTool(t, k, "tools/math/sub.ts", "/** Subtracts. */\nexport default (a: { x: number; y: number }) => a.x - a.y;\n")
	if !p1.Persisted || p1.Branch == "" || p1.PRURL == "" || p2.Branch != p1.Branch || p2.PRURL != p1.PRURL {
		t.Fatalf("results %+v %+v", p1, p2)
	}
	if !strings.HasPrefix(p1.Branch, "tgp/math-add-") {
		t.Fatalf("branch name %q", p1.Branch)
	}
	ls := gittest.Git(t, e.remoteDir, "ls-remote", ".", "refs/heads/"+p1.Branch)
	if !strings.HasPrefix(ls, p2.Commit) {
		t.Fatalf("branch not on the remote at %s: %q", p2.Commit, ls)
	}
	if log := gittest.Git(t, e.remoteDir, "log", "--format=%s", p1.Branch); !strings.HasPrefix(log, "forge: tools/math/sub.ts\nforge: tools/math/add.ts\nseed") {
		t.Fatalf("branch history:\n%s", log)
	}
	if after := gittest.Git(t, e.remoteDir, "rev-parse", "main"); after != mainBefore {
		t.Fatal("PR mode pushed to main")
	}
	prs := e.gh.PRs()
	if len(prs) != 1 || prs[0].Head != p1.Branch || prs[0].Base != "main" {
		t.Fatalf("PRs %+v", prs)
	}
	for _, want := range []string{"`tools/math/add.ts` — Adds two numbers.", "`tools/math/sub.ts` — Subtracts.", "check_tool passed"} {
		if !strings.Contains(prs[0].Body, want) {
			t.Fatalf("PR body lacks %q:\n%s", want, prs[0].Body)
		}
	}
	pr, branch, err := k.SessionPR(context.Background())
	if err != nil || pr == nil || branch != p1.Branch || pr.Number != 1 {
		t.Fatalf("session PR %+v %s %v", pr, branch, err)
	}
}
