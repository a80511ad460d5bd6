package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// GitHub is the Forge for github.com and GitHub Enterprise.
type GitHub struct {
	client     *github.Client
	owner      string
	repo       string
	maxRetries int
	maxWait    time.Duration
	sleep      func(context.Context, time.Duration) error
}

// Option configures NewGitHub.
type Option func(*ghOptions)

type ghOptions struct {
	baseURL    string
	apiURL     string
	httpClient *http.Client
	maxRetries int
	maxWait    time.Duration
}

// WithBaseURL targets GitHub Enterprise: https://ghe.example.com or its
// API root https://ghe.example.com/api/v3/ (go-github adds api/v3/).
func WithBaseURL(u string) Option { return func(o *ghOptions) { o.baseURL = u } }

// WithAPIURL sets the exact REST API root (for proxies and tests).
func WithAPIURL(u string) Option { return func(o *ghOptions) { o.apiURL = u } }

// WithHTTPClient sets the HTTP client.
func WithHTTPClient(c *http.Client) Option { return func(o *ghOptions) { o.httpClient = c } }

// WithRetries bounds retries on rate limits (default 3) and the longest
// wait honoured (default 2 minutes).
func WithRetries(n int, maxWait time.Duration) Option {
	return func(o *ghOptions) { o.maxRetries, o.maxWait = n, maxWait }
}

// ErrAuth: GitHub refused the token.
var ErrAuth = errors.New("GitHub authentication failed")

// APIError is a GitHub API error with GitHub's own message.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("GitHub API %d: %s", e.Status, e.Message) }

// NewGitHub builds the GitHub forge for owner/repo with a token.
func NewGitHub(owner, repo, token string, opts ...Option) (*GitHub, error) {
	o := ghOptions{maxRetries: 3, maxWait: 2 * time.Minute}
	for _, f := range opts {
		f(&o)
	}
	if owner == "" || repo == "" {
		return nil, fmt.Errorf("forge: owner and repository are required")
	}
	c := github.NewClient(o.httpClient)
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
	return &GitHub{client: c, owner: owner, repo: repo, maxRetries: o.maxRetries, maxWait: o.maxWait, sleep: sleepCtx}, nil
}

// retry runs call, waiting out rate limits as the server asks.
func (g *GitHub) retry(ctx context.Context, call func() (*github.Response, error)) error {
	for attempt := 0; ; attempt++ {
		resp, err := call()
		if err == nil {
			return nil
		}
		wait, limited := retryAfter(resp, err)
		if !limited || attempt >= g.maxRetries {
			return mapErr(resp, err)
		}
		if wait > g.maxWait {
			return fmt.Errorf("GitHub rate limit: retry in %s exceeds the %s limit: %w", wait, g.maxWait, mapErr(resp, err))
		}
		if err := g.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// retryAfter reads how long the server wants us to wait.
func retryAfter(resp *github.Response, err error) (time.Duration, bool) {
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		if abuse.RetryAfter != nil {
			return *abuse.RetryAfter, true
		}
		return time.Minute, true
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		return time.Until(rl.Rate.Reset.Time) + time.Second, true
	}
	if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
		if s := resp.Header.Get("Retry-After"); s != "" {
			if n, perr := strconv.Atoi(s); perr == nil {
				return time.Duration(n) * time.Second, true
			}
		}
		return time.Minute, true
	}
	return 0, false
}

func mapErr(resp *github.Response, err error) error {
	if resp != nil && resp.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("%w: %s", ErrAuth, ghMessage(err))
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) {
		return &APIError{Status: er.Response.StatusCode, Message: ghMessage(err)}
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

func toPR(p *github.PullRequest, created bool) *PR {
	return &PR{Number: p.GetNumber(), URL: p.GetHTMLURL(), Head: p.GetHead().GetRef(), Base: p.GetBase().GetRef(), State: p.GetState(), Created: created}
}

// FindPR implements Forge.
func (g *GitHub) FindPR(ctx context.Context, head string) (*PR, error) {
	var found *PR
	err := g.retry(ctx, func() (*github.Response, error) {
		prs, resp, err := g.client.PullRequests.List(ctx, g.owner, g.repo, &github.PullRequestListOptions{Head: g.owner + ":" + head, State: "open"})
		if err == nil {
			for _, p := range prs {
				if p.GetHead().GetRef() == head {
					found = toPR(p, false)
					break
				}
			}
		}
		return resp, err
	})
	return found, err
}

// OpenOrUpdatePR implements Forge: it is idempotent per head branch.
func (g *GitHub) OpenOrUpdatePR(ctx context.Context, req PRRequest) (*PR, error) {
	if req.Title == "" || req.Head == "" || req.Base == "" {
		return nil, fmt.Errorf("forge: title, head and base are required")
	}
	existing, err := g.FindPR(ctx, req.Head)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return g.update(ctx, existing, req)
	}
	var out *PR
	err = g.retry(ctx, func() (*github.Response, error) {
		p, resp, err := g.client.PullRequests.Create(ctx, g.owner, g.repo, &github.NewPullRequest{
			Title: github.String(req.Title), Head: github.String(req.Head), Base: github.String(req.Base),
			Body: github.String(req.Body), Draft: github.Bool(req.Draft)})
		if err == nil {
			out = toPR(p, true)
		}
		return resp, err
	})
	if err != nil && strings.Contains(err.Error(), "already exists") {
		// Another process opened it between our look-up and create.
		if existing, ferr := g.FindPR(ctx, req.Head); ferr == nil && existing != nil {
			return g.update(ctx, existing, req)
		}
	}
	return out, err
}

func (g *GitHub) update(ctx context.Context, pr *PR, req PRRequest) (*PR, error) {
	err := g.retry(ctx, func() (*github.Response, error) {
		_, resp, err := g.client.PullRequests.Edit(ctx, g.owner, g.repo, pr.Number, &github.PullRequest{Title: github.String(req.Title), Body: github.String(req.Body)})
		return resp, err
	})
	return pr, err
}

// Comment implements Forge.
func (g *GitHub) Comment(ctx context.Context, number int, body string) error {
	return g.retry(ctx, func() (*github.Response, error) {
		_, resp, err := g.client.Issues.CreateComment(ctx, g.owner, g.repo, number, &github.IssueComment{Body: github.String(body)})
		return resp, err
	})
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
