package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/forge/gitlabtest"
	"github.com/tgp-go/tgp/gitbackend/gittest"
)

func TestResolvedProvider(t *testing.T) {
	for _, c := range []struct {
		provider, remote, api, strategy string
		want, err                       string
	}{
		{"auto", "https://gitlab.com/acme/platform/tools.git", "", "pr", "gitlab", ""},
		{"auto", "git@bitbucket.org:acme/tools.git", "", "pr", "bitbucket", ""},
		{"auto", "https://github.com/acme/tools", "", "direct", "github", ""},
		{"auto", "https://git.corp.example/acme/tools.git", "https://git.corp.example/api/v4", "pr", "gitlab", ""},
		{"auto", "https://git.corp.example/acme/tools.git", "https://git.corp.example/api/v1", "pr", "gitea", ""},
		{"auto", "https://git.corp.example/acme/tools.git", "", "direct", "generic", ""},
		{"auto", "https://git.corp.example/acme/tools.git", "", "pr", "", `auto cannot tell the pull-request host from the remote's host "git.corp.example"; set git.provider to one of: github, gitlab, bitbucket, gitea, forgejo`},
		{"auto", "/srv/git/tools.git", "", "pr", "local", ""},
		{"auto", "", "", "pr", "local", ""},
		{"forgejo", "https://git.corp.example/acme/tools.git", "", "pr", "forgejo", ""},
	} {
		got, err := GitConfig{Provider: c.provider, Remote: c.remote, APIURL: c.api, WriteStrategy: c.strategy}.ResolvedProvider()
		var ce *ConfigError
		if c.err != "" {
			if !errors.As(err, &ce) || ce.Key != "git.provider" || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: want a git.provider error with %q, got %v", c, c.err, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%+v: %q %v", c, got, err)
		}
	}
}

// TestPRModeOnGitLabThroughTheKernel: provider auto, a project in a
// subgroup, the token from the variable git.token_env names; without it
// the write fails naming GitLab and the variable, pushing nothing.
func TestPRModeOnGitLabThroughTheKernel(t *testing.T) {
	rm := gitlabtest.NewRemote(t, "acme/platform/toolbox", "glpat")
	opts := func(env ...string) []Option {
		// Only env: the test process's TGP_* budgets are not config.
		return []Option{WithEnviron(append([]string{}, env...)), WithRoot(t.TempDir()),
			WithSetting("git.remote", rm.URL()), WithSetting("git.write_strategy", "pr"),
			WithSetting("git.api_url", rm.API.APIURL()), WithSetting("git.token_env", "GL_TOKEN"),
			WithSetting("git.author.name", "Agent"), WithSetting("git.author.email", "agent@example.com")}
	}
	boot := func(o []Option) *Kernel {
		k, err := New(context.Background(), o...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
		return k
	}
	// The remote takes a token the API does not know: boot works, the
	// write is refused before the push.
	rm.API.AddToken("deploy", "write_repository")
	k := boot(opts("GL_TOKEN=deploy"))
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]string{"path": "tools/a.ts", "content": "/** A. */\nexport default () => 1;\n"})
	if _, err := k.Call(context.Background(), "write_file", raw); err == nil || !strings.Contains(err.Error(), "the token in GL_TOKEN was refused: GitLab refused the token (HTTP 403)") {
		t.Fatalf("refused token: %v", err)
	}
	if refs := gittest.Git(t, rm.Dir, "for-each-ref", "refs/heads/tgp"); refs != "" {
		t.Fatalf("pushed: %s", refs)
	}
	k = boot(opts("GL_TOKEN=glpat"))
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := writeTool(t, k, "tools/a.ts", "/** A. */\nexport default () => 1;\n")
	if !strings.HasPrefix(p.Note, "opened merge request !1") || !strings.HasSuffix(p.PRURL, "/acme/platform/toolbox/-/merge_requests/1") {
		t.Fatalf("%+v", p)
	}
	if term := k.PRTerm(); term != "merge request" {
		t.Fatalf("term %q", term)
	}
	pr, _, err := k.SessionPR(context.Background())
	if err != nil || pr == nil || pr.Name() != "merge request !1" {
		t.Fatalf("%+v %v", pr, err)
	}
	if mrs := rm.API.MRs(); len(mrs) != 1 || mrs[0].SourceBranch != p.Branch || !strings.Contains(mrs[0].Description, "tools/a.ts") {
		t.Fatalf("%+v", mrs)
	}
	// A remote that needs no token (a path) and no token for the API:
	// the write names the host and the variable, and pushes nothing.
	k = boot(append(opts(), WithSetting("git.remote", rm.Dir), WithSetting("git.provider", "gitlab"), WithSetting("git.repo", "acme/platform/toolbox")))
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = k.Call(context.Background(), "write_file", raw)
	if err == nil || !strings.Contains(err.Error(), "needs a GitLab token: set the environment variable GL_TOKEN") {
		t.Fatalf("no token: %v", err)
	}
	if n := strings.Count(gittest.Git(t, rm.Dir, "for-each-ref", "refs/heads/tgp"), "\n"); n != 1 {
		t.Fatalf("%d session branches, want the one pushed above", n)
	}
}
