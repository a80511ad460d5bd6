package forge

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/forge/githubtest"
	"github.com/tgp-go/tgp/gitbackend/gittest"
)

func setup(t *testing.T, enterprise bool) (*githubtest.Server, *GitHub, string) {
	t.Helper()
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
	gittest.Git(t, remote, "branch", "tgp/forge-abc", "main")
	srv := githubtest.New(t, "acme", "toolbox", "s3cret", remote, enterprise)
	noWait := withSleep(func(context.Context, time.Duration) error { return nil })
	opts := []Option{WithAPIURL(srv.BaseURL()), noWait}
	if enterprise {
		opts = []Option{WithBaseURL(srv.Server.URL), noWait}
	}
	g, err := NewGitHub("acme", "toolbox", "s3cret", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return srv, g, remote
}

func TestOpenIsIdempotent(t *testing.T) {
	for _, ent := range []bool{false, true} {
		srv, g, _ := setup(t, ent)
		ctx := context.Background()
		pr, err := g.OpenOrUpdatePR(ctx, PRRequest{Title: "forge: tools", Head: "tgp/forge-abc", Base: "main", Body: "one"})
		if err != nil || !pr.Created || pr.Number != 1 || !strings.HasSuffix(pr.URL, "/pull/1") {
			t.Fatalf("enterprise=%v: %+v %v", ent, pr, err)
		}
		again, err := g.OpenOrUpdatePR(ctx, PRRequest{Title: "forge: tools v2", Head: "tgp/forge-abc", Base: "main", Body: "two"})
		if err != nil || again.Created || again.Number != 1 {
			t.Fatalf("second open: %+v %v", again, err)
		}
		if prs := srv.PRs(); len(prs) != 1 || prs[0].Body != "two" || prs[0].Title != "forge: tools v2" {
			t.Fatalf("%+v", prs)
		}
		found, err := g.FindPR(ctx, "tgp/forge-abc")
		if err != nil || found == nil || found.Number != 1 {
			t.Fatalf("find: %+v %v", found, err)
		}
		if err := g.Comment(ctx, 1, "check_tool passed"); err != nil || len(srv.Comments(1)) != 1 {
			t.Fatalf("comment: %v", err)
		}
		if ent && !strings.HasPrefix(srv.Requests[0], "GET /api/v3/repos/acme/toolbox/pulls") {
			t.Fatalf("enterprise path: %v", srv.Requests)
		}
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	srv, g, _ := setup(t, false)
	var waited []time.Duration
	g.retry.sleep = func(ctx context.Context, d time.Duration) error {
		waited = append(waited, d)
		if len(waited) == 1 {
			// go-github itself refuses to send until a secondary
			// limit's Retry-After has passed: this wait is real.
			return sleepCtx(ctx, d)
		}
		return nil
	}
	srv.FailNext(403, 1, true)  // secondary rate limit on the look-up
	srv.FailNext(429, 2, false) // too many requests on the retry
	pr, err := g.OpenOrUpdatePR(context.Background(), PRRequest{Title: "t", Head: "tgp/forge-abc", Base: "main"})
	if err != nil || pr == nil {
		t.Fatal(err)
	}
	if len(waited) != 2 || waited[0] != time.Second || waited[1] != 2*time.Second {
		t.Fatalf("waits %v (requests %v)", waited, srv.Requests)
	}
	if n := len(srv.Requests); n != 4 { // 2 failed lists, 1 list, 1 create
		t.Fatalf("requests %v", srv.Requests)
	}
}

func TestAuthAndValidationErrors(t *testing.T) {
	srv, _, _ := setup(t, false)
	bad, _ := NewGitHub("acme", "toolbox", "wrong", WithAPIURL(srv.BaseURL()))
	_, err := bad.OpenOrUpdatePR(context.Background(), PRRequest{Title: "t", Head: "tgp/forge-abc", Base: "main"})
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "Bad credentials") {
		t.Fatalf("%v", err)
	}
	if len(srv.Requests) != 1 {
		t.Fatalf("auth failure retried: %v", srv.Requests)
	}
	_, g, _ := setup(t, false)
	_, err = g.OpenOrUpdatePR(context.Background(), PRRequest{Title: "t", Head: "no-such-branch", Base: "main"})
	var api *APIError
	if !errors.As(err, &api) || api.Status != 422 || !strings.Contains(api.Message, "Validation Failed") {
		t.Fatalf("%v", err)
	}
}

func TestNoneAndParse(t *testing.T) {
	_, err := None{Reason: "provider local has no pull-request API"}.OpenOrUpdatePR(context.Background(), PRRequest{})
	if !errors.Is(err, ErrNoForge) || !strings.Contains(err.Error(), "provider local") {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"acme/tools": "acme/tools", "https://github.com/acme/tools.git": "acme/tools",
		"git@github.com:acme/tools.git": "acme/tools", "ssh://git@ghe.example.com/acme/tools": "acme/tools"} {
		o, n, err := ParseRepo(in)
		if err != nil || o+"/"+n != want {
			t.Errorf("%s: %s/%s %v", in, o, n, err)
		}
	}
	if _, _, err := ParseRepo("nope"); err == nil {
		t.Error("bad repo accepted")
	}
	body := Body("Session summary", []ToolChange{{Path: "tools/a.ts", Description: "Adds.", Valid: true}, {Path: "tools/b.ts", Description: "Bad.", Errors: []string{"no-any at 2:3"}}})
	for _, want := range []string{"`tools/a.ts` — Adds.", "✅ check_tool passed", "❌ check_tool failed", "error: no-any at 2:3"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}
