package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/forge/githubtest"
	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestCLICallsShareAPRSession: two consecutive `tgp call`s in
// PR mode give one branch with two commits and one pull request; `tgp
// session end` makes the next call open a new one; without the token the
// call fails naming the variable and pushes nothing.
func TestCLICallsShareAPRSession(t *testing.T) {
	seed := gittest.SeedRemote(t, map[string]string{"README.md": "toolbox\n"})
	bare := filepath.Join(t.TempDir(), "toolbox.git")
	gittest.Git(t, "", "clone", "-q", "--bare", seed, bare)
	gh := githubtest.New(t, "acme", "toolbox", "gh-token", bare, false)
	dir := t.TempDir()
	base := []string{"HOME=" + t.TempDir(), "TGP_GIT_REMOTE=" + bare, "TGP_GIT_WRITE_STRATEGY=pr", "TGP_GIT_PROVIDER=github",
		"TGP_GIT_REPO=acme/toolbox", "TGP_GIT_API_URL=" + gh.BaseURL(), "TGP_GIT_TOKEN_ENV=GH_TOKEN",
		"TGP_GIT_AUTHOR_NAME=Agent", "TGP_GIT_AUTHOR_EMAIL=agent@example.com"}
	withToken := append(append([]string{}, base...), "GH_TOKEN=gh-token")
	call := func(env []string, args ...string) (int, string) {
		t.Helper()
		var out, errb bytes.Buffer
		wd, _ := os.Getwd()
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(wd)
		code := run(context.Background(), args, strings.NewReader(""), &out, &errb, env)
		return code, out.String() + errb.String()
	}
	write := func(env []string, p string) (int, string) {
		return call(env, "call", "write_file", `{"path":"`+p+`","content":"/** T. */\nexport default () => 1;\n"}`)
	}
	if code, out := write(base, "tools/none.ts"); code == 0 || !strings.Contains(out, "GH_TOKEN") {
		t.Fatalf("without a token: %d %s", code, out)
	}
	if refs := gittest.Git(t, bare, "for-each-ref", "refs/heads/tgp"); refs != "" {
		t.Fatalf("pushed without a token: %s", refs)
	}
	for _, p := range []string{"tools/a.ts", "tools/b.ts"} {
		if code, out := write(withToken, p); code != 0 {
			t.Fatalf("write %s: %d %s", p, code, out)
		}
	}
	prs := gh.PRs()
	if len(prs) != 1 {
		t.Fatalf("%d PRs after two calls, want 1", len(prs))
	}
	if n := strings.TrimSpace(gittest.Git(t, bare, "rev-list", "--count", "main.."+prs[0].Head)); n != "2" {
		t.Fatalf("session branch has %s commits, want 2", n)
	}
	if code, out := call(withToken, "session", "end"); code != 0 || !strings.Contains(out, prs[0].Head+" ended") {
		t.Fatalf("session end: %d %s", code, out)
	}
	if code, out := write(withToken, "tools/c.ts"); code != 0 || len(gh.PRs()) != 2 {
		t.Fatalf("after session end: %d %s, %d PRs", code, out, len(gh.PRs()))
	}
}
