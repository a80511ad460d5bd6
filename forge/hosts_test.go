package forge_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/forge"
	"github.com/tgp-go/tgp/forge/bitbucket"
	"github.com/tgp-go/tgp/forge/bitbuckettest"
	"github.com/tgp-go/tgp/forge/gitea"
	"github.com/tgp-go/tgp/forge/giteatest"
	"github.com/tgp-go/tgp/forge/github"
	"github.com/tgp-go/tgp/forge/githubtest"
	"github.com/tgp-go/tgp/forge/gitlab"
	"github.com/tgp-go/tgp/forge/gitlabtest"
	"github.com/tgp-go/tgp/forge/hosttest"
	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// hostPR is a host's stored pull request, as the contract tests read it.
type hostPR struct {
	Number      int
	Head, State string
	Title, Body string
	Comments    []string
}

// rig is one host's stand-in and a forge on it, seen through the same
// handles so that one test holds every host to the same contract.
type rig struct {
	provider string
	f        forge.Forge
	waits    *[]time.Duration
	dir      string
	make     func(token string, opts ...forge.Option) forge.Forge
	fail     func(hosttest.Fault)
	stale    func()
	prs      func() []hostPR
	merge    func(n int) error
	requests func() []string
}

// noSleep records the waits instead of sleeping.
func noSleep(waits *[]time.Duration) forge.Option {
	var mu sync.Mutex
	return forge.WithSleep(func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		*waits = append(*waits, d)
		return ctx.Err()
	})
}

func rigs(t *testing.T) []*rig {
	t.Helper()
	return []*rig{githubRig(t), gitlabRig(t), bitbucketRig(t), giteaRig(t)}
}

func (r *rig) build(t *testing.T) {
	t.Helper()
	r.waits = &[]time.Duration{}
	r.f = r.make("s3cret", noSleep(r.waits))
	gittest.Git(t, r.dir, "branch", "tgp/forge-abc", "main")
}

func githubRig(t *testing.T) *rig {
	rm := githubtest.NewRemote(t, "acme", "toolbox", "s3cret")
	s := rm.GH
	r := &rig{provider: forge.ProviderGitHub, dir: rm.Dir,
		make: func(token string, opts ...forge.Option) forge.Forge {
			f, err := github.New("acme", "toolbox", token, append([]forge.Option{forge.WithAPIURL(s.BaseURL()), forge.WithBackoff(time.Second)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		fail: s.Fail, stale: s.StaleListOnce, merge: s.Merge,
		prs: func() []hostPR {
			var out []hostPR
			for _, p := range s.PRs() {
				st := p.State
				if p.Merged {
					st = "merged"
				}
				out = append(out, hostPR{p.Number, p.Head, st, p.Title, p.Body, s.Comments(p.Number)})
			}
			return out
		},
		requests: func() []string { return s.Requests() },
	}
	r.build(t)
	return r
}

func gitlabRig(t *testing.T) *rig {
	rm := gitlabtest.NewRemote(t, "acme/platform/toolbox", "s3cret")
	s := rm.API
	r := &rig{provider: forge.ProviderGitLab, dir: rm.Dir,
		make: func(token string, opts ...forge.Option) forge.Forge {
			f, err := gitlab.New("acme/platform/toolbox", token, append([]forge.Option{forge.WithAPIURL(s.APIURL()), forge.WithBackoff(time.Second)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		fail: s.Fail, stale: s.StaleListOnce, merge: s.Merge, requests: s.Requests,
		prs: func() []hostPR {
			var out []hostPR
			for _, m := range s.MRs() {
				st := m.State
				if st == "opened" {
					st = "open"
				}
				out = append(out, hostPR{m.IID, m.SourceBranch, st, m.Title, m.Description, m.Notes})
			}
			return out
		},
	}
	r.build(t)
	return r
}

func bitbucketRig(t *testing.T) *rig {
	rm := bitbuckettest.NewRemote(t, "acme", "toolbox", "s3cret")
	s := rm.API
	r := &rig{provider: forge.ProviderBitbucket, dir: rm.Dir,
		make: func(token string, opts ...forge.Option) forge.Forge {
			f, err := bitbucket.New("acme", "toolbox", token, append([]forge.Option{forge.WithAPIURL(s.APIURL()), forge.WithBackoff(time.Second)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		fail: s.Fail, stale: s.StaleListOnce, merge: s.Merge, requests: s.Requests,
		prs: func() []hostPR {
			var out []hostPR
			for _, p := range s.PRs() {
				out = append(out, hostPR{p.ID, p.Source, bitbucketState(p.State), p.Title, p.Description, p.Comments})
			}
			return out
		},
	}
	r.build(t)
	return r
}

func giteaRig(t *testing.T) *rig {
	rm := giteatest.NewRemote(t, "acme", "toolbox", "s3cret")
	s := rm.API
	r := &rig{provider: forge.ProviderGitea, dir: rm.Dir,
		make: func(token string, opts ...forge.Option) forge.Forge {
			f, err := gitea.New("acme", "toolbox", token, append([]forge.Option{forge.WithAPIURL(s.APIURL()), forge.WithBackoff(time.Second)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		fail: s.Fail, stale: s.StaleListOnce, merge: s.Merge, requests: s.Requests,
		prs: func() []hostPR {
			var out []hostPR
			for _, p := range s.PRs() {
				st := p.State
				if p.Merged {
					st = "merged"
				}
				out = append(out, hostPR{p.Number, p.Head, st, p.Title, p.Body, p.Comments})
			}
			return out
		},
	}
	r.build(t)
	return r
}

var req = forge.PRRequest{Title: "forge: tools", Head: "tgp/forge-abc", Base: "main", Body: "one"}

func TestHostsOpenIsIdempotent(t *testing.T) {
	for _, r := range rigs(t) {
		t.Run(r.provider, func(t *testing.T) {
			ctx := context.Background()
			pr, err := r.f.OpenOrUpdatePR(ctx, req)
			if err != nil || !pr.Created || pr.Number != 1 || pr.State != "open" || pr.Head != req.Head || pr.Base != "main" {
				t.Fatalf("open: %+v %v", pr, err)
			}
			if !strings.HasSuffix(pr.URL, "/1") || pr.Provider != r.provider || pr.Term != forge.Term(r.provider) {
				t.Fatalf("open: %+v", pr)
			}
			again, err := r.f.OpenOrUpdatePR(ctx, forge.PRRequest{Title: "forge: tools v2", Head: req.Head, Base: "main", Body: "two"})
			if err != nil || again.Created || again.Number != 1 {
				t.Fatalf("second open: %+v %v", again, err)
			}
			prs := r.prs()
			if len(prs) != 1 || prs[0].Body != "two" || prs[0].Title != "forge: tools v2" {
				t.Fatalf("stored: %+v", prs)
			}
			found, err := r.f.FindPR(ctx, req.Head)
			if err != nil || found == nil || found.Number != 1 {
				t.Fatalf("find: %+v %v", found, err)
			}
			if none, err := r.f.FindPR(ctx, "tgp/other"); err != nil || none != nil {
				t.Fatalf("find of a branch with no PR: %+v %v", none, err)
			}
			if err := r.f.Comment(ctx, 1, "check_tool passed"); err != nil || len(r.prs()[0].Comments) != 1 {
				t.Fatalf("comment: %v", err)
			}
			if err := r.f.(forge.Verifier).Verify(ctx); err != nil {
				t.Fatalf("verify: %v", err)
			}
			if len(*r.waits) != 0 {
				t.Fatalf("waited %v with no limit hit", *r.waits)
			}
		})
	}
}

// TestHostsDuplicateOpenReturnsTheOpenOne: a create that meets the host's
// "already exists" answer (another process opened it since our look-up)
// updates and returns the open one.
func TestHostsDuplicateOpenReturnsTheOpenOne(t *testing.T) {
	for _, r := range rigs(t) {
		t.Run(r.provider, func(t *testing.T) {
			ctx := context.Background()
			if _, err := r.f.OpenOrUpdatePR(ctx, req); err != nil {
				t.Fatal(err)
			}
			r.stale()
			pr, err := r.f.OpenOrUpdatePR(ctx, forge.PRRequest{Title: "again", Head: req.Head, Base: "main", Body: "after the race"})
			if err != nil || pr.Number != 1 || pr.Created {
				t.Fatalf("duplicate open: %+v %v", pr, err)
			}
			if prs := r.prs(); len(prs) != 1 || prs[0].Body != "after the race" {
				t.Fatalf("stored: %+v", prs)
			}
		})
	}
}

// TestHostsServerErrorAfterCreateIsNotLost: the host made the pull request
// and then answered 502; the retried create meets it and the call returns
// it, once, reporting the retry.
func TestHostsServerErrorAfterCreateIsNotLost(t *testing.T) {
	for _, r := range rigs(t) {
		t.Run(r.provider, func(t *testing.T) {
			r.fail(hosttest.Fault{}) // the look-up goes through
			r.fail(hosttest.Fault{Status: http.StatusBadGateway, AfterCommit: true, Body: "<html>502 Bad Gateway</html>"})
			pr, err := r.f.OpenOrUpdatePR(context.Background(), req)
			if err != nil || pr.Number != 1 {
				t.Fatalf("open: %+v %v", pr, err)
			}
			if prs := r.prs(); len(prs) != 1 || prs[0].State != "open" {
				t.Fatalf("stored: %+v", prs)
			}
			if len(pr.Retries) != 1 || pr.Retries[0].Status != http.StatusBadGateway || !strings.Contains(pr.Retries[0].Op, "create") {
				t.Fatalf("retries reported: %+v", pr.Retries)
			}
		})
	}
}

func TestHostsRateLimitsAndServerErrorsWaitAndReport(t *testing.T) {
	for _, r := range rigs(t) {
		t.Run(r.provider, func(t *testing.T) {
			var reported []forge.Retry
			var mu sync.Mutex
			f := r.make("s3cret", noSleep(r.waits), forge.WithRetryReport(func(x forge.Retry) { mu.Lock(); reported = append(reported, x); mu.Unlock() }))
			r.fail(hosttest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "3", Body: "Retry later\n"})
			r.fail(hosttest.Fault{Status: http.StatusServiceUnavailable})
			pr, err := f.OpenOrUpdatePR(context.Background(), req)
			if err != nil || pr == nil || !pr.Created {
				t.Fatalf("open: %+v %v", pr, err)
			}
			w := *r.waits
			// 429: the 3s asked for; 503 on the second attempt: backoff
			// from 1s doubled once, with jitter in [1s, 2s].
			if len(w) != 2 || w[0] != 3*time.Second || w[1] < time.Second || w[1] > 2*time.Second {
				t.Fatalf("waits %v", w)
			}
			if len(pr.Retries) != 2 || pr.Retries[0].Status != 429 || pr.Retries[0].Reason != "rate limited" || pr.Retries[1].Status != 503 || pr.Retries[1].Reason != "server error" {
				t.Fatalf("PR.Retries %+v", pr.Retries)
			}
			if len(reported) != 2 || reported[0].WaitMS != 3000 {
				t.Fatalf("reported %+v", reported)
			}
			if !strings.Contains(pr.Retries[0].String(), "HTTP 429 (rate limited), retried after 3s") {
				t.Fatalf("retry text %q", pr.Retries[0])
			}
		})
	}
}

func TestHostsGiveUpWithTheHostsLastAnswer(t *testing.T) {
	for _, r := range rigs(t) {
		t.Run(r.provider, func(t *testing.T) {
			f := r.make("s3cret", noSleep(r.waits), forge.WithRetries(2, time.Minute))
			for i := 0; i < 3; i++ {
				r.fail(hosttest.Fault{Status: http.StatusServiceUnavailable})
			}
			_, err := f.OpenOrUpdatePR(context.Background(), req)
			var re *forge.RetryError
			var api *forge.APIError
			if !errors.As(err, &re) || re.Attempts != 3 || !errors.As(err, &api) || api.Status != 503 {
				t.Fatalf("%v", err)
			}
			if len(r.prs()) != 0 || len(r.requests()) != 3 {
				t.Fatalf("requests %v", r.requests())
			}
			// A wait longer than allowed fails at once, saying so.
			r.fail(hosttest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "3600"})
			_, err = f.FindPR(context.Background(), req.Head)
			if !errors.As(err, &re) || re.Attempts != 1 || !strings.Contains(err.Error(), "more than the 1m0s allowed") {
				t.Fatalf("%v", err)
			}
		})
	}
}

func TestHostsRejectedTokenIsOneErrorWithoutRetry(t *testing.T) {
	for _, r := range rigs(t) {
		t.Run(r.provider, func(t *testing.T) {
			bad := r.make("wrong", noSleep(r.waits))
			err := bad.(forge.Verifier).Verify(context.Background())
			var ae *forge.AuthError
			if !errors.Is(err, forge.ErrAuth) || !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized || ae.Host != forge.HostName(r.provider) {
				t.Fatalf("verify: %v", err)
			}
			if _, err := bad.OpenOrUpdatePR(context.Background(), req); !errors.Is(err, forge.ErrAuth) {
				t.Fatalf("open: %v", err)
			}
			if n := len(r.requests()); n != 2 || len(*r.waits) != 0 {
				t.Fatalf("a refused token was retried: %v", r.requests())
			}
		})
	}
}

func TestHostsMergedPRIsNotFoundAndANewOneOpens(t *testing.T) {
	for _, r := range rigs(t) {
		t.Run(r.provider, func(t *testing.T) {
			ctx := context.Background()
			pr, err := r.f.OpenOrUpdatePR(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			mainBefore := gittest.Git(t, r.dir, "rev-parse", "main")
			if err := r.merge(pr.Number); err != nil {
				t.Fatal(err)
			}
			if parents := gittest.Git(t, r.dir, "rev-list", "--parents", "-n1", "main"); !strings.Contains(parents, strings.TrimSpace(mainBefore)) {
				t.Fatalf("merge commit %s does not follow main", parents)
			}
			if found, err := r.f.FindPR(ctx, req.Head); err != nil || found != nil {
				t.Fatalf("merged forge.PR found as open: %+v %v", found, err)
			}
			next, err := r.f.OpenOrUpdatePR(ctx, req)
			if err != nil || !next.Created || next.Number == pr.Number {
				t.Fatalf("after merge: %+v %v", next, err)
			}
			if prs := r.prs(); len(prs) != 2 || prs[0].State != "merged" || prs[1].State != "open" {
				t.Fatalf("stored: %+v", prs)
			}
		})
	}
}

// TestGitLabSubgroupPathIsEncoded: the project goes in one path segment
// (acme%2Fplatform%2Ftoolbox), as GitLab requires.
func TestGitLabSubgroupPathIsEncoded(t *testing.T) {
	r := gitlabRig(t)
	if _, err := r.f.OpenOrUpdatePR(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	for _, q := range r.requests() {
		if !strings.Contains(q, "/api/v4/projects/acme%2Fplatform%2Ftoolbox/merge_requests") {
			t.Fatalf("request %q", q)
		}
	}
	pr, _ := r.f.FindPR(context.Background(), req.Head)
	if pr.Name() != "merge request !1" || !strings.HasSuffix(pr.URL, "/acme/platform/toolbox/-/merge_requests/1") {
		t.Fatalf("%s %s", pr.Name(), pr.URL)
	}
}

// TestGiteaFindReadsEveryPage: Gitea's list has no head filter, so the
// session's pull request may be on a later page.
func TestGiteaFindReadsEveryPage(t *testing.T) {
	r := giteaRig(t)
	ctx := context.Background()
	if _, err := r.f.OpenOrUpdatePR(ctx, req); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 55; i++ {
		b := fmt.Sprintf("other-%d", i)
		gittest.Git(t, r.dir, "branch", b, "main")
		if _, err := r.f.OpenOrUpdatePR(ctx, forge.PRRequest{Title: b, Head: b, Base: "main"}); err != nil {
			t.Fatal(err)
		}
	}
	before := len(r.requests())
	pr, err := r.f.FindPR(ctx, req.Head)
	if err != nil || pr == nil || pr.Number != 1 {
		t.Fatalf("%+v %v", pr, err)
	}
	if got := r.requests()[before:]; len(got) != 2 || !strings.Contains(got[1], "page=2") {
		t.Fatalf("pages read: %v", got)
	}
}

// TestBitbucketUpdateKeepsReviewers: refreshing the description sends
// only title and description (go-bitbucket's Update would send
// reviewers=[]).
func TestBitbucketUpdateKeepsReviewers(t *testing.T) {
	rm := bitbuckettest.NewRemote(t, "acme", "toolbox", "s3cret")
	gittest.Git(t, rm.Dir, "branch", req.Head, "main")
	f, _ := bitbucket.New("acme", "toolbox", "s3cret", forge.WithAPIURL(rm.API.APIURL()))
	ctx := context.Background()
	if _, err := f.OpenOrUpdatePR(ctx, req); err != nil {
		t.Fatal(err)
	}
	rm.API.AddReviewer(1, "alice")
	if _, err := f.OpenOrUpdatePR(ctx, forge.PRRequest{Title: "v2", Head: req.Head, Base: "main", Body: "two"}); err != nil {
		t.Fatal(err)
	}
	if p := rm.API.PRs()[0]; !slices.Equal(p.Reviewers, []string{"alice"}) || p.Description != "two" {
		t.Fatalf("%+v", p)
	}
}

// TestScopeLimitedTokensAreRefusedBeforeAPush: tokens the git remote takes
// but the API does not (GitLab without api/read_api, Bitbucket without
// pullrequest, a Gitea or GitHub account that cannot push) fail Verify.
func TestScopeLimitedTokensAreRefusedBeforeAPush(t *testing.T) {
	gl := gitlabtest.NewRemote(t, "acme/toolbox", "s3cret")
	gl.API.AddToken("git-only", "write_repository")
	bb := bitbuckettest.NewRemote(t, "acme", "toolbox", "s3cret")
	bb.API.AddToken("git-only", "repository:write")
	gt := giteatest.NewRemote(t, "acme", "toolbox", "s3cret")
	gt.API.AddToken("read-only", false, "read:repository")
	gh := githubtest.NewRemote(t, "acme", "toolbox", "s3cret")
	gh.GH.AddReadOnlyToken("read-only")
	glf, _ := gitlab.New("acme/toolbox", "git-only", forge.WithAPIURL(gl.API.APIURL()))
	bbf, _ := bitbucket.New("acme", "toolbox", "git-only", forge.WithAPIURL(bb.API.APIURL()))
	gtf, _ := gitea.NewForgejo("acme", "toolbox", "read-only", forge.WithAPIURL(gt.API.APIURL()))
	ghf, _ := github.New("acme", "toolbox", "read-only", forge.WithAPIURL(gh.GH.BaseURL()))
	for name, c := range map[string]struct {
		f    forge.Verifier
		want string
	}{"gitlab": {glf, "insufficient_scope"}, "bitbucket": {bbf, "lack one or more required privilege scopes"},
		"forgejo": {gtf, "Forgejo refused the token (HTTP 403): the token's account cannot push to acme/toolbox"},
		"github":  {ghf, "cannot push to acme/toolbox"}} {
		if err := c.f.Verify(context.Background()); !errors.Is(err, forge.ErrAuth) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// bitbucketState is the stand-in's state as the contract reads it.
func bitbucketState(s string) string {
	switch s {
	case "OPEN":
		return "open"
	case "MERGED":
		return "merged"
	}
	return "closed"
}
