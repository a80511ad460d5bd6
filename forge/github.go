package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// GitHub is the Forge for github.com and GitHub Enterprise.
type GitHub struct {
	client *github.Client
	owner  string
	repo   string
	retry  *policy
}

// NewGitHub builds the GitHub forge for owner/repo with a token (sent as
// "Authorization: Bearer", as go-github does).
func NewGitHub(owner, repo, token string, opts ...Option) (*GitHub, error) {
	o := defaultOptions()
	for _, f := range opts {
		f(&o)
	}
	if owner == "" || repo == "" {
		return nil, fmt.Errorf("forge: owner and repository are required")
	}
	c := github.NewClient(o.client())
	if token != "" {
		c = c.WithAuthToken(token)
	}
	if o.baseURL != "" {
		var err error
		if c, err = c.WithEnterpriseURLs(o.baseURL, o.baseURL); err != nil {
			return nil, fmt.Errorf("forge: base URL %q: %w", o.baseURL, err)
		}
	}
	if o.apiURL != "" {
		u, err := url.Parse(strings.TrimSuffix(o.apiURL, "/") + "/")
		if err != nil {
			return nil, fmt.Errorf("forge: API URL %q: %w", o.apiURL, err)
		}
		c.BaseURL = u
	}
	p := o.policy(ProviderGitHub)
	p.special = githubLimits(p)
	return &GitHub{client: c, owner: owner, repo: repo, retry: p}, nil
}

// Provider implements Describer.
func (g *GitHub) Provider() string { return ProviderGitHub }

// githubLimits reads go-github's rate-limit errors: the secondary limit is
// a 403 whose body says so, with or without Retry-After.
func githubLimits(p *policy) func(*http.Response, error) (outcome, bool, bool) {
	return func(resp *http.Response, err error) (outcome, bool, bool) {
		var abuse *github.AbuseRateLimitError
		if errors.As(err, &abuse) {
			o := outcome{status: resp.StatusCode, limited: true, told: true, wait: time.Minute}
			if abuse.RetryAfter != nil {
				o.wait = *abuse.RetryAfter
			}
			return o, true, true
		}
		var rl *github.RateLimitError
		if errors.As(err, &rl) {
			o := outcome{status: resp.StatusCode, limited: true, told: true, wait: rl.Rate.Reset.Time.Sub(p.now()) + time.Second}
			if o.wait < time.Second {
				o.wait = time.Second
			}
			return o, true, true
		}
		return outcome{}, false, false
	}
}

func (g *GitHub) do(ctx context.Context, op string, call func() (*github.Response, error)) error {
	return g.retry.do(ctx, op, func() (*http.Response, error) {
		resp, err := call()
		if resp == nil {
			return nil, err
		}
		return resp.Response, err
	}, githubErr)
}

func githubErr(resp *http.Response, err error) error {
	if resp != nil && (resp.StatusCode == http.StatusUnauthorized) {
		return &AuthError{Host: "GitHub", Status: resp.StatusCode, Message: ghMessage(err)}
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) {
		return &APIError{Host: "GitHub", Status: er.Response.StatusCode, Message: ghMessage(err)}
	}
	return err
}

// ghMessage is GitHub's message plus its validation errors' messages.
func ghMessage(err error) string {
	var er *github.ErrorResponse
	if !errors.As(err, &er) {
		return err.Error()
	}
	msg := er.Message
	for _, e := range er.Errors {
		if e.Message != "" {
			msg += ": " + e.Message
		} else if e.Field != "" {
			msg += fmt.Sprintf(": %s %s", e.Field, e.Code)
		}
	}
	return msg
}

func ghState(p *github.PullRequest) string {
	if p.GetMerged() || p.MergedAt != nil {
		return "merged"
	}
	return p.GetState()
}

func toPR(p *github.PullRequest, created bool) *PR {
	return &PR{Number: p.GetNumber(), URL: p.GetHTMLURL(), Head: p.GetHead().GetRef(), Base: p.GetBase().GetRef(),
		State: ghState(p), Created: created, Provider: ProviderGitHub, Term: Term(ProviderGitHub)}
}

// Verify implements Verifier: the repository, read with the token.
func (g *GitHub) Verify(ctx context.Context) error {
	var repo *github.Repository
	err := g.do(ctx, "read repository", func() (*github.Response, error) {
		r, resp, err := g.client.Repositories.Get(ctx, g.owner, g.repo)
		repo = r
		return resp, err
	})
	if err != nil {
		var api *APIError
		if errors.As(err, &api) && (api.Status == http.StatusForbidden || api.Status == http.StatusNotFound) {
			// GitHub answers 404 for a private repository the token
			// cannot see.
			return &AuthError{Host: "GitHub", Status: api.Status, Message: fmt.Sprintf("%s (repository %s/%s)", api.Message, g.owner, g.repo)}
		}
		return err
	}
	if p := repo.GetPermissions(); p != nil && !p["push"] {
		return &AuthError{Host: "GitHub", Status: http.StatusForbidden, Message: fmt.Sprintf("the token's account cannot push to %s/%s", g.owner, g.repo)}
	}
	return nil
}

// FindPR implements Forge.
func (g *GitHub) FindPR(ctx context.Context, head string) (*PR, error) {
	opt := &github.PullRequestListOptions{Head: g.owner + ":" + head, State: "open", ListOptions: github.ListOptions{PerPage: 100}}
	for {
		var prs []*github.PullRequest
		var next int
		err := g.do(ctx, "list pull requests", func() (*github.Response, error) {
			p, resp, err := g.client.PullRequests.List(ctx, g.owner, g.repo, opt)
			prs = p
			if resp != nil {
				next = resp.NextPage
			}
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		for _, p := range prs {
			if p.GetHead().GetRef() == head {
				return toPR(p, false), nil
			}
		}
		if next == 0 {
			return nil, nil
		}
		opt.Page = next
	}
}

// OpenOrUpdatePR implements Forge: it is idempotent per head branch.
func (g *GitHub) OpenOrUpdatePR(ctx context.Context, req PRRequest) (*PR, error) {
	if req.Title == "" || req.Head == "" || req.Base == "" {
		return nil, fmt.Errorf("forge: title, head and base are required")
	}
	ctx, col := withCollector(ctx)
	pr, err := g.openOrUpdate(ctx, req)
	if pr != nil {
		pr.Retries = col.retries()
	}
	return pr, err
}

func (g *GitHub) openOrUpdate(ctx context.Context, req PRRequest) (*PR, error) {
	existing, err := g.FindPR(ctx, req.Head)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return g.update(ctx, existing, req)
	}
	var out *PR
	err = g.do(ctx, "create pull request", func() (*github.Response, error) {
		p, resp, err := g.client.PullRequests.Create(ctx, g.owner, g.repo, &github.NewPullRequest{
			Title: github.String(req.Title), Head: github.String(req.Head), Base: github.String(req.Base),
			Body: github.String(req.Body), Draft: github.Bool(req.Draft)})
		if err == nil {
			out = toPR(p, true)
		}
		return resp, err
	})
	if err != nil && strings.Contains(err.Error(), "already exists") {
		// Another process opened it between our look-up and create (or
		// a create retried after a 5xx had gone through).
		if existing, ferr := g.FindPR(ctx, req.Head); ferr == nil && existing != nil {
			return g.update(ctx, existing, req)
		}
	}
	return out, err
}

func (g *GitHub) update(ctx context.Context, pr *PR, req PRRequest) (*PR, error) {
	err := g.do(ctx, "update pull request", func() (*github.Response, error) {
		_, resp, err := g.client.PullRequests.Edit(ctx, g.owner, g.repo, pr.Number, &github.PullRequest{Title: github.String(req.Title), Body: github.String(req.Body)})
		return resp, err
	})
	return pr, err
}

// Comment implements Forge.
func (g *GitHub) Comment(ctx context.Context, number int, body string) error {
	return g.do(ctx, "comment", func() (*github.Response, error) {
		_, resp, err := g.client.Issues.CreateComment(ctx, g.owner, g.repo, number, &github.IssueComment{Body: github.String(body)})
		return resp, err
	})
}
