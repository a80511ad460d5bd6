package forge_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/forge"
	"github.com/tgp-go/tgp/forge/github"
	"github.com/tgp-go/tgp/forge/githubtest"
	"github.com/tgp-go/tgp/gitbackend/gittest"
)

func setup(t *testing.T, enterprise bool, extra ...forge.Option) (*githubtest.Server, forge.Forge, string) {
	t.Helper()
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
	gittest.Git(t, remote, "branch", "tgp/forge-abc", "main")
	srv := githubtest.New(t, "acme", "toolbox", "s3cret", remote, enterprise)
	noWait := forge.WithSleep(func(context.Context, time.Duration) error { return nil })
	opts := []forge.Option{forge.WithAPIURL(srv.BaseURL()), noWait}
	if enterprise {
		opts = []forge.Option{forge.WithBaseURL(srv.Server.URL), noWait}
	}
	g, err := github.New("acme", "toolbox", "s3cret", append(opts, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return srv, g, remote
}

func TestOpenIsIdempotent(t *testing.T) {
	for _, ent := range []bool{false, true} {
		srv, g, _ := setup(t, ent)
		ctx := context.Background()
		pr, err := g.OpenOrUpdatePR(ctx, forge.PRRequest{Title: "forge: tools", Head: "tgp/forge-abc", Base: "main", Body: "one"})
		if err != nil || !pr.Created || pr.Number != 1 || !strings.HasSuffix(pr.URL, "/pull/1") {
			t.Fatalf("enterprise=%v: %+v %v", ent, pr, err)
		}
		again, err := g.OpenOrUpdatePR(ctx, forge.PRRequest{Title: "forge: tools v2", Head: "tgp/forge-abc", Base: "main", Body: "two"})
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
		if ent && !strings.HasPrefix(srv.Requests()[0], "GET /api/v3/repos/acme/toolbox/pulls") {
			t.Fatalf("enterprise path: %v", srv.Requests())
		}
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	var waited []time.Duration
	srv, g, _ := setup(t, false, forge.WithSleep(func(ctx context.Context, d time.Duration) error {
		waited = append(waited, d)
		if len(waited) == 1 {
			// go-github itself refuses to send until a secondary
			// limit's Retry-After has passed: this wait is real.
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}))
	srv.FailNext(403, 1, true)  // secondary rate limit on the look-up
	srv.FailNext(429, 2, false) // too many requests on the retry
	pr, err := g.OpenOrUpdatePR(context.Background(), forge.PRRequest{Title: "t", Head: "tgp/forge-abc", Base: "main"})
	if err != nil || pr == nil {
		t.Fatal(err)
	}
	if len(waited) != 2 || waited[0] != time.Second || waited[1] != 2*time.Second {
		t.Fatalf("waits %v (requests %v)", waited, srv.Requests())
	}
	if n := len(srv.Requests()); n != 4 { // 2 failed lists, 1 list, 1 create
		t.Fatalf("requests %v", srv.Requests())
	}
}

func TestAuthAndValidationErrors(t *testing.T) {
	srv, _, _ := setup(t, false)
	bad, _ := github.New("acme", "toolbox", "wrong", forge.WithAPIURL(srv.BaseURL()))
	_, err := bad.OpenOrUpdatePR(context.Background(), forge.PRRequest{Title: "t", Head: "tgp/forge-abc", Base: "main"})
	if !errors.Is(err, forge.ErrAuth) || !strings.Contains(err.Error(), "Bad credentials") {
		t.Fatalf("%v", err)
	}
	if len(srv.Requests()) != 1 {
		t.Fatalf("auth failure retried: %v", srv.Requests())
	}
	_, g, _ := setup(t, false)
	_, err = g.OpenOrUpdatePR(context.Background(), forge.PRRequest{Title: "t", Head: "no-such-branch", Base: "main"})
	var api *forge.APIError
	if !errors.As(err, &api) || api.Status != 422 || !strings.Contains(api.Message, "Validation Failed") {
		t.Fatalf("%v", err)
	}
}

func TestNoneAndParse(t *testing.T) {
	_, err := forge.None{Reason: "provider local has no pull-request API"}.OpenOrUpdatePR(context.Background(), forge.PRRequest{})
	if !errors.Is(err, forge.ErrNoForge) || !strings.Contains(err.Error(), "provider local") {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"acme/tools": "acme/tools", "https://github.com/acme/tools.git": "acme/tools",
		"git@github.com:acme/tools.git": "acme/tools", "ssh://git@ghe.example.com/acme/tools": "acme/tools"} {
		o, n, err := forge.ParseRepo(in)
		if err != nil || o+"/"+n != want {
			t.Errorf("%s: %s/%s %v", in, o, n, err)
		}
	}
	if _, _, err := forge.ParseRepo("nope"); err == nil {
		t.Error("bad repo accepted")
	}
}
