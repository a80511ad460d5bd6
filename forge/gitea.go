package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"code.gitea.io/sdk/gitea"
)

// Gitea is the Forge for Gitea and Forgejo (Forgejo serves Gitea's
// /api/v1): pull requests of owner/repo on the instance at its base URL.
type Gitea struct {
	base     string
	token    string
	hc       *http.Client
	owner    string
	repo     string
	provider string // gitea or forgejo: how the host is named to people
	retry    *policy
}

// NewGitea builds the forge for a Gitea instance (WithBaseURL: its web
// root; WithAPIURL: its .../api/v1 root) with an access token, sent as
// "Authorization: token", as the SDK does.
func NewGitea(owner, repo, token string, opts ...Option) (*Gitea, error) {
	return newGitea(ProviderGitea, owner, repo, token, opts...)
}

// NewForgejo is NewGitea for a Forgejo instance (the same API; the host is
// called Forgejo in messages).
func NewForgejo(owner, repo, token string, opts ...Option) (*Gitea, error) {
	return newGitea(ProviderForgejo, owner, repo, token, opts...)
}

func newGitea(provider, owner, repo, token string, opts ...Option) (*Gitea, error) {
	o := defaultOptions()
	for _, f := range opts {
		f(&o)
	}
	if owner == "" || repo == "" {
		return nil, fmt.Errorf("forge: owner and repository are required")
	}
	base := strings.TrimSuffix(o.baseURL, "/")
	if o.apiURL != "" {
		// The SDK adds /api/v1 to every path itself.
		base = strings.TrimSuffix(strings.TrimSuffix(o.apiURL, "/"), "/api/v1")
	}
	if base == "" {
		return nil, fmt.Errorf("forge: %s needs the instance's URL (git.api_url)", hostName(provider))
	}
	return &Gitea{base: base, token: token, hc: o.client(), owner: owner, repo: repo, provider: provider, retry: o.policy(provider)}, nil
}

// Provider implements Describer.
func (g *Gitea) Provider() string { return g.provider }

// client is made per call: the SDK keeps one context per client, and
// concurrent calls must not share (or cancel) each other's. Making one
// does no I/O: the version probe is skipped.
func (g *Gitea) client(ctx context.Context) (*gitea.Client, error) {
	return gitea.NewClient(g.base, gitea.SetToken(g.token), gitea.SetHTTPClient(g.hc), gitea.SetContext(ctx),
		gitea.SetGiteaVersion(""), gitea.SetUserAgent("tgp"))
}

func (g *Gitea) do(ctx context.Context, op string, call func(*gitea.Client) (*gitea.Response, error)) error {
	c, err := g.client(ctx)
	if err != nil {
		return fmt.Errorf("forge: %s client: %w", hostName(g.provider), err)
	}
	return g.retry.do(ctx, op, func() (*http.Response, error) {
		resp, err := call(c)
		if resp == nil {
			return nil, err
		}
		return resp.Response, err
	}, g.classify)
}

func (g *Gitea) classify(resp *http.Response, err error) error {
	if resp == nil {
		return err
	}
	host := hostName(g.provider)
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return &AuthError{Host: host, Status: resp.StatusCode, Message: err.Error()}
	case http.StatusForbidden:
		if strings.Contains(err.Error(), "scope") {
			return &AuthError{Host: host, Status: resp.StatusCode, Message: err.Error()}
		}
	}
	return &APIError{Host: host, Status: resp.StatusCode, Message: err.Error()}
}

func (g *Gitea) toPR(p *gitea.PullRequest, created bool) *PR {
	state := string(p.State)
	if p.HasMerged {
		state = "merged"
	}
	out := &PR{Number: int(p.Index), URL: p.HTMLURL, State: state, Created: created, Provider: g.provider, Term: Term(g.provider)}
	if p.Head != nil {
		out.Head = p.Head.Ref
	}
	if p.Base != nil {
		out.Base = p.Base.Ref
	}
	return out
}

// Verify implements Verifier: the repository, read with the token; a
// token whose account cannot push is refused here too.
func (g *Gitea) Verify(ctx context.Context) error {
	var repo *gitea.Repository
	err := g.do(ctx, "read repository", func(c *gitea.Client) (*gitea.Response, error) {
		r, resp, err := c.GetRepo(g.owner, g.repo)
		repo = r
		return resp, err
	})
	var api *APIError
	if errors.As(err, &api) && (api.Status == http.StatusNotFound || api.Status == http.StatusForbidden) {
		return &AuthError{Host: api.Host, Status: api.Status, Message: fmt.Sprintf("%s (repository %s/%s)", api.Message, g.owner, g.repo)}
	}
	if err != nil {
		return err
	}
	if repo.Permissions != nil && !repo.Permissions.Push {
		return &AuthError{Host: hostName(g.provider), Status: http.StatusForbidden, Message: fmt.Sprintf("the token's account cannot push to %s/%s", g.owner, g.repo)}
	}
	return nil
}

// FindPR implements Forge: the open pull request from head in this
// repository (the list has no head filter on every version: pages are
// read until it turns up).
func (g *Gitea) FindPR(ctx context.Context, head string) (*PR, error) {
	opt := gitea.ListPullRequestsOptions{ListOptions: gitea.ListOptions{Page: 1, PageSize: 50}, State: gitea.StateOpen}
	for {
		var prs []*gitea.PullRequest
		var next int
		err := g.do(ctx, "list pull requests", func(c *gitea.Client) (*gitea.Response, error) {
			p, resp, err := c.ListRepoPullRequests(g.owner, g.repo, opt)
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
			if p.Head == nil || p.Head.Ref != head || p.State != gitea.StateOpen {
				continue
			}
			if p.Base != nil && p.Head.RepoID != 0 && p.Base.RepoID != 0 && p.Head.RepoID != p.Base.RepoID {
				continue // a fork's branch of the same name
			}
			return g.toPR(p, false), nil
		}
		if next == 0 || next <= opt.Page {
			return nil, nil
		}
		opt.Page = next
	}
}

// OpenOrUpdatePR implements Forge: it is idempotent per head branch.
func (g *Gitea) OpenOrUpdatePR(ctx context.Context, req PRRequest) (*PR, error) {
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

func giteaTitle(req PRRequest) string {
	if req.Draft && !strings.HasPrefix(req.Title, "WIP:") {
		return "WIP: " + req.Title // Gitea's work-in-progress prefix
	}
	return req.Title
}

func (g *Gitea) openOrUpdate(ctx context.Context, req PRRequest) (*PR, error) {
	existing, err := g.FindPR(ctx, req.Head)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return g.update(ctx, existing, req)
	}
	var out *PR
	err = g.do(ctx, "create pull request", func(c *gitea.Client) (*gitea.Response, error) {
		p, resp, err := c.CreatePullRequest(g.owner, g.repo, gitea.CreatePullRequestOption{
			Head: req.Head, Base: req.Base, Title: giteaTitle(req), Body: req.Body})
		if err == nil {
			out = g.toPR(p, true)
		}
		return resp, err
	})
	var api *APIError
	if errors.As(err, &api) && api.Status == http.StatusConflict && strings.Contains(api.Message, "already exists") {
		// "pull request already exists for these targets": opened by
		// another process since our look-up, or by a create retried
		// after a 5xx that had gone through.
		if existing, ferr := g.FindPR(ctx, req.Head); ferr == nil && existing != nil {
			return g.update(ctx, existing, req)
		}
	}
	return out, err
}

func (g *Gitea) update(ctx context.Context, pr *PR, req PRRequest) (*PR, error) {
	body := req.Body
	err := g.do(ctx, "update pull request", func(c *gitea.Client) (*gitea.Response, error) {
		_, resp, err := c.EditPullRequest(g.owner, g.repo, int64(pr.Number), gitea.EditPullRequestOption{Title: giteaTitle(req), Body: &body})
		return resp, err
	})
	return pr, err
}

// Comment implements Forge: a comment on the pull request's issue.
func (g *Gitea) Comment(ctx context.Context, number int, body string) error {
	return g.do(ctx, "comment", func(c *gitea.Client) (*gitea.Response, error) {
		_, resp, err := c.CreateIssueComment(g.owner, g.repo, int64(number), gitea.CreateIssueCommentOption{Body: body})
		return resp, err
	})
}
