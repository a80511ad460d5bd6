// Package github is the forge of github.com and GitHub Enterprise, on
// github.com/google/go-github/v60. Importing it registers the github
// provider with forge.New.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/tgp-go/tgp/forge"
)

func init() {
	forge.Register(forge.ProviderGitHub, forge.ByOwner(New))
}

// api is GitHub's part of a forge (forge.API).
type api struct {
	client *gh.Client
	owner  string
	repo   string
	retry  *forge.Policy
}

// New builds the GitHub forge for owner/repo with a token (sent as
// "Authorization: Bearer", as go-github does).
func New(owner, repo, token string, opts ...forge.Option) (*forge.Client, error) {
	o := forge.Apply(opts)
	if owner == "" || repo == "" {
		return nil, fmt.Errorf("forge: owner and repository are required")
	}
	c := gh.NewClient(o.Client())
	if token != "" {
		c = c.WithAuthToken(token)
	}
	if o.BaseURL != "" {
		var err error
		if c, err = c.WithEnterpriseURLs(o.BaseURL, o.BaseURL); err != nil {
			return nil, fmt.Errorf("forge: base URL %q: %w", o.BaseURL, err)
		}
	}
	if o.APIURL != "" {
		u, err := url.Parse(strings.TrimSuffix(o.APIURL, "/") + "/")
		if err != nil {
			return nil, fmt.Errorf("forge: API URL %q: %w", o.APIURL, err)
		}
		c.BaseURL = u
	}
	p := o.Policy(forge.ProviderGitHub)
	p.Judge(limits(p))
	return forge.FromAPI(&api{client: c, owner: owner, repo: repo, retry: p}), nil
}

func (g *api) Provider() string { return forge.ProviderGitHub }

// limits reads go-github's rate-limit errors: the secondary limit is a
// 403 whose body says so, with or without Retry-After.
func limits(p *forge.Policy) func(*http.Response, error) (forge.Outcome, bool, bool) {
	return func(resp *http.Response, err error) (forge.Outcome, bool, bool) {
		var abuse *gh.AbuseRateLimitError
		if errors.As(err, &abuse) {
			o := forge.Outcome{Status: resp.StatusCode, Limited: true, Told: true, Wait: time.Minute}
			if abuse.RetryAfter != nil {
				o.Wait = *abuse.RetryAfter
			}
			return o, true, true
		}
		var rl *gh.RateLimitError
		if errors.As(err, &rl) {
			o := forge.Outcome{Status: resp.StatusCode, Limited: true, Told: true, Wait: rl.Rate.Reset.Time.Sub(p.Now()) + time.Second}
			if o.Wait < time.Second {
				o.Wait = time.Second
			}
			return o, true, true
		}
		return forge.Outcome{}, false, false
	}
}

func (g *api) do(ctx context.Context, op string, call func() (*gh.Response, error)) error {
	return g.retry.Do(ctx, op, func() (*http.Response, error) {
		resp, err := call()
		if resp == nil {
			return nil, err
		}
		return resp.Response, err
	}, classify)
}

func classify(resp *http.Response, err error) error {
	if resp != nil && (resp.StatusCode == http.StatusUnauthorized) {
		return &forge.AuthError{Host: "GitHub", Status: resp.StatusCode, Message: message(err)}
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) {
		return &forge.APIError{Host: "GitHub", Status: er.Response.StatusCode, Message: message(err)}
	}
	return err
}

// message is GitHub's message plus its validation errors' messages.
func message(err error) string {
	var er *gh.ErrorResponse
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

func state(p *gh.PullRequest) string {
	if p.GetMerged() || p.MergedAt != nil {
		return "merged"
	}
	return p.GetState()
}

func toPR(p *gh.PullRequest, created bool) *forge.PR {
	return &forge.PR{Number: p.GetNumber(), URL: p.GetHTMLURL(), Head: p.GetHead().GetRef(), Base: p.GetBase().GetRef(),
		State: state(p), Created: created, Provider: forge.ProviderGitHub, Term: forge.Term(forge.ProviderGitHub)}
}

// Verify reads the repository with the token.
func (g *api) Verify(ctx context.Context) error {
	var repo *gh.Repository
	err := g.do(ctx, "read repository", func() (*gh.Response, error) {
		r, resp, err := g.client.Repositories.Get(ctx, g.owner, g.repo)
		repo = r
		return resp, err
	})
	if err != nil {
		var apiErr *forge.APIError
		if errors.As(err, &apiErr) && (apiErr.Status == http.StatusForbidden || apiErr.Status == http.StatusNotFound) {
			// GitHub answers 404 for a private repository the token
			// cannot see.
			return &forge.AuthError{Host: "GitHub", Status: apiErr.Status, Message: fmt.Sprintf("%s (repository %s/%s)", apiErr.Message, g.owner, g.repo)}
		}
		return err
	}
	if p := repo.GetPermissions(); p != nil && !p["push"] {
		return &forge.AuthError{Host: "GitHub", Status: http.StatusForbidden, Message: fmt.Sprintf("the token's account cannot push to %s/%s", g.owner, g.repo)}
	}
	return nil
}

// ListOpen lists the open pull requests from owner:head, 100 a page.
func (g *api) ListOpen(ctx context.Context, head, page string) ([]*forge.PR, string, error) {
	opt := &gh.PullRequestListOptions{Head: g.owner + ":" + head, State: "open", ListOptions: gh.ListOptions{PerPage: 100}}
	opt.Page, _ = strconv.Atoi(page)
	var prs []*gh.PullRequest
	var next int
	err := g.do(ctx, "list pull requests", func() (*gh.Response, error) {
		p, resp, err := g.client.PullRequests.List(ctx, g.owner, g.repo, opt)
		prs = p
		if resp != nil {
			next = resp.NextPage
		}
		return resp, err
	})
	if err != nil {
		return nil, "", err
	}
	out := make([]*forge.PR, 0, len(prs))
	for _, p := range prs {
		out = append(out, toPR(p, false))
	}
	if next == 0 {
		return out, "", nil
	}
	return out, strconv.Itoa(next), nil
}

// Create opens the pull request.
func (g *api) Create(ctx context.Context, req forge.PRRequest) (*forge.PR, error) {
	var out *forge.PR
	err := g.do(ctx, "create pull request", func() (*gh.Response, error) {
		p, resp, err := g.client.PullRequests.Create(ctx, g.owner, g.repo, &gh.NewPullRequest{
			Title: gh.String(req.Title), Head: gh.String(req.Head), Base: gh.String(req.Base),
			Body: gh.String(req.Body), Draft: gh.Bool(req.Draft)})
		if err == nil {
			out = toPR(p, true)
		}
		return resp, err
	})
	return out, err
}

// Duplicate: GitHub answers 422 "A pull request already exists for
// owner:head."
func (g *api) Duplicate(err error) bool { return strings.Contains(err.Error(), "already exists") }

// Update edits the title and body.
func (g *api) Update(ctx context.Context, pr *forge.PR, req forge.PRRequest) error {
	return g.do(ctx, "update pull request", func() (*gh.Response, error) {
		_, resp, err := g.client.PullRequests.Edit(ctx, g.owner, g.repo, pr.Number, &gh.PullRequest{Title: gh.String(req.Title), Body: gh.String(req.Body)})
		return resp, err
	})
}

// Comment comments on the pull request's issue.
func (g *api) Comment(ctx context.Context, number int, body string) error {
	return g.do(ctx, "comment", func() (*gh.Response, error) {
		_, resp, err := g.client.Issues.CreateComment(ctx, g.owner, g.repo, number, &gh.IssueComment{Body: gh.String(body)})
		return resp, err
	})
}
