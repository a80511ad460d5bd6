// Package gitea is the forge of Gitea and Forgejo (Forgejo serves Gitea's
// /api/v1), on code.gitea.io/sdk/gitea. Importing it registers the gitea
// and forgejo providers with forge.New.
//
// The SDK's server-version probe is skipped (the endpoints used exist
// since Gitea 1.11, and Forgejo's version strings confuse the probe), and
// a client is made per call because the SDK keeps the context on the
// client, not on the request.
package gitea

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/tgp-go/tgp/forge"
)

func init() {
	forge.Register(forge.ProviderGitea, forge.ByOwner(New))
	forge.Register(forge.ProviderForgejo, forge.ByOwner(NewForgejo))
}

type api struct {
	base     string
	token    string
	hc       *http.Client
	owner    string
	repo     string
	provider string // gitea or forgejo: how the host is named to people
	retry    *forge.Policy
}

// New builds the forge for a Gitea instance (WithBaseURL: its web root;
// WithAPIURL: its .../api/v1 root) with an access token, sent as
// "Authorization: token", as the SDK does.
func New(owner, repo, token string, opts ...forge.Option) (*forge.Client, error) {
	return newAPI(forge.ProviderGitea, owner, repo, token, opts...)
}

// NewForgejo is New for a Forgejo instance (the same API; the host is
// called Forgejo in messages).
func NewForgejo(owner, repo, token string, opts ...forge.Option) (*forge.Client, error) {
	return newAPI(forge.ProviderForgejo, owner, repo, token, opts...)
}

func newAPI(provider, owner, repo, token string, opts ...forge.Option) (*forge.Client, error) {
	o := forge.Apply(opts)
	if owner == "" || repo == "" {
		return nil, fmt.Errorf("forge: owner and repository are required")
	}
	base := strings.TrimSuffix(o.BaseURL, "/")
	if o.APIURL != "" {
		// The SDK adds /api/v1 to every path itself.
		base = strings.TrimSuffix(strings.TrimSuffix(o.APIURL, "/"), "/api/v1")
	}
	if base == "" {
		return nil, fmt.Errorf("forge: %s needs the instance's URL (git.api_url)", forge.HostName(provider))
	}
	return forge.FromAPI(&api{base: base, token: token, hc: o.Client(), owner: owner, repo: repo, provider: provider, retry: o.Policy(provider)}), nil
}

func (g *api) Provider() string { return g.provider }

// client is made per call: the SDK keeps one context per client, and
// concurrent calls must not share (or cancel) each other's. Making one
// does no I/O: the version probe is skipped.
func (g *api) client(ctx context.Context) (*sdk.Client, error) {
	return sdk.NewClient(g.base, sdk.SetToken(g.token), sdk.SetHTTPClient(g.hc), sdk.SetContext(ctx),
		sdk.SetGiteaVersion(""), sdk.SetUserAgent("tgp"))
}

func (g *api) do(ctx context.Context, op string, call func(*sdk.Client) (*sdk.Response, error)) error {
	c, err := g.client(ctx)
	if err != nil {
		return fmt.Errorf("forge: %s client: %w", forge.HostName(g.provider), err)
	}
	return g.retry.Do(ctx, op, func() (*http.Response, error) {
		resp, err := call(c)
		if resp == nil {
			return nil, err
		}
		return resp.Response, err
	}, g.classify)
}

func (g *api) classify(resp *http.Response, err error) error {
	if resp == nil {
		return err
	}
	host := forge.HostName(g.provider)
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return &forge.AuthError{Host: host, Status: resp.StatusCode, Message: err.Error()}
	case http.StatusForbidden:
		if strings.Contains(err.Error(), "scope") {
			return &forge.AuthError{Host: host, Status: resp.StatusCode, Message: err.Error()}
		}
	}
	return &forge.APIError{Host: host, Status: resp.StatusCode, Message: err.Error()}
}

func (g *api) toPR(p *sdk.PullRequest, created bool) *forge.PR {
	state := string(p.State)
	if p.HasMerged {
		state = "merged"
	}
	out := &forge.PR{Number: int(p.Index), URL: p.HTMLURL, State: state, Created: created, Provider: g.provider, Term: forge.Term(g.provider)}
	if p.Head != nil {
		out.Head = p.Head.Ref
	}
	if p.Base != nil {
		out.Base = p.Base.Ref
	}
	return out
}

// Verify reads the repository with the token; a token whose account
// cannot push is refused here too.
func (g *api) Verify(ctx context.Context) error {
	var repo *sdk.Repository
	err := g.do(ctx, "read repository", func(c *sdk.Client) (*sdk.Response, error) {
		r, resp, err := c.GetRepo(g.owner, g.repo)
		repo = r
		return resp, err
	})
	var apiErr *forge.APIError
	if errors.As(err, &apiErr) && (apiErr.Status == http.StatusNotFound || apiErr.Status == http.StatusForbidden) {
		return &forge.AuthError{Host: apiErr.Host, Status: apiErr.Status, Message: fmt.Sprintf("%s (repository %s/%s)", apiErr.Message, g.owner, g.repo)}
	}
	if err != nil {
		return err
	}
	if repo.Permissions != nil && !repo.Permissions.Push {
		return &forge.AuthError{Host: forge.HostName(g.provider), Status: http.StatusForbidden, Message: fmt.Sprintf("the token's account cannot push to %s/%s", g.owner, g.repo)}
	}
	return nil
}

// ListOpen reads one page of the repository's open pull requests (the
// list has no head filter on every version: FindPR reads pages until
// head's turns up). A fork's branch of the same name is left out.
func (g *api) ListOpen(ctx context.Context, head, page string) ([]*forge.PR, string, error) {
	opt := sdk.ListPullRequestsOptions{ListOptions: sdk.ListOptions{Page: 1, PageSize: 50}, State: sdk.StateOpen}
	if n, err := strconv.Atoi(page); err == nil {
		opt.Page = n
	}
	var prs []*sdk.PullRequest
	var next int
	err := g.do(ctx, "list pull requests", func(c *sdk.Client) (*sdk.Response, error) {
		p, resp, err := c.ListRepoPullRequests(g.owner, g.repo, opt)
		prs = p
		if resp != nil {
			next = resp.NextPage
		}
		return resp, err
	})
	if err != nil {
		return nil, "", err
	}
	var out []*forge.PR
	for _, p := range prs {
		if p.Head == nil || p.Head.Ref != head || p.State != sdk.StateOpen {
			continue
		}
		if p.Base != nil && p.Head.RepoID != 0 && p.Base.RepoID != 0 && p.Head.RepoID != p.Base.RepoID {
			continue // a fork's branch of the same name
		}
		out = append(out, g.toPR(p, false))
	}
	if next == 0 || next <= opt.Page {
		return out, "", nil
	}
	return out, strconv.Itoa(next), nil
}

// title is Gitea's work-in-progress prefix for a draft.
func title(req forge.PRRequest) string {
	if req.Draft && !strings.HasPrefix(req.Title, "WIP:") {
		return "WIP: " + req.Title
	}
	return req.Title
}

// Create opens the pull request.
func (g *api) Create(ctx context.Context, req forge.PRRequest) (*forge.PR, error) {
	var out *forge.PR
	err := g.do(ctx, "create pull request", func(c *sdk.Client) (*sdk.Response, error) {
		p, resp, err := c.CreatePullRequest(g.owner, g.repo, sdk.CreatePullRequestOption{
			Head: req.Head, Base: req.Base, Title: title(req), Body: req.Body})
		if err == nil {
			out = g.toPR(p, true)
		}
		return resp, err
	})
	return out, err
}

// Duplicate: 409 "pull request already exists for these targets".
func (g *api) Duplicate(err error) bool { return forge.AlreadyExists(err) }

// Update sets the title and body.
func (g *api) Update(ctx context.Context, pr *forge.PR, req forge.PRRequest) error {
	body := req.Body
	return g.do(ctx, "update pull request", func(c *sdk.Client) (*sdk.Response, error) {
		_, resp, err := c.EditPullRequest(g.owner, g.repo, int64(pr.Number), sdk.EditPullRequestOption{Title: title(req), Body: &body})
		return resp, err
	})
}

// Comment comments on the pull request's issue.
func (g *api) Comment(ctx context.Context, number int, body string) error {
	return g.do(ctx, "comment", func(c *sdk.Client) (*sdk.Response, error) {
		_, resp, err := c.CreateIssueComment(g.owner, g.repo, int64(number), sdk.CreateIssueCommentOption{Body: body})
		return resp, err
	})
}
