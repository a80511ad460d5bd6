package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// API is what differs between code hosts: one request each, made through
// the host's own client and its retry Policy. FromAPI builds the Forge on
// it, so that finding, opening-or-updating and paging are written once.
type API interface {
	// Provider names the host (github, gitlab, bitbucket, gitea, forgejo).
	Provider() string
	// ListOpen reads one page of the open pull requests whose head branch
	// is head ("" is the first page); next is "" after the last page. A
	// host whose list cannot filter by head may return others: FindPR
	// keeps the first whose Head is head and whose State is open.
	ListOpen(ctx context.Context, head, page string) (prs []*PR, next string, err error)
	// Create opens a pull request (Created set when the host made a new
	// one).
	Create(ctx context.Context, req PRRequest) (*PR, error)
	// Update sets the title and body of an open pull request, and
	// nothing else a human may have set on it (reviewers, labels).
	Update(ctx context.Context, pr *PR, req PRRequest) error
	// Comment adds a comment to pull request number.
	Comment(ctx context.Context, number int, body string) error
	// Verify reads the repository with the token: an error matching
	// ErrAuth when the host refuses it.
	Verify(ctx context.Context) error
	// Duplicate says whether Create's error means that head already has
	// an open pull request (another process opened it since the
	// look-up, or a create retried after a 5xx had gone through).
	Duplicate(err error) bool
}

// maxPages bounds a look-up: a host whose next link never ends (or loops)
// cannot keep a persist waiting for ever.
const maxPages = 100

// Client is the Forge of a host's API; it also implements Verifier and
// Describer. The host packages' constructors return one.
type Client struct{ api API }

// FromAPI is the Client of a host's API.
func FromAPI(api API) *Client { return &Client{api: api} }

func (h *Client) Provider() string                 { return h.api.Provider() }
func (h *Client) Verify(ctx context.Context) error { return h.api.Verify(ctx) }
func (h *Client) Comment(ctx context.Context, number int, body string) error {
	return h.api.Comment(ctx, number, body)
}

// FindPR implements Forge: the open pull request from head, read page by
// page until it turns up.
func (h *Client) FindPR(ctx context.Context, head string) (*PR, error) {
	page := ""
	for range maxPages {
		prs, next, err := h.api.ListOpen(ctx, head, page)
		if err != nil {
			return nil, err
		}
		for _, p := range prs {
			if p.Head == head && p.State == "open" {
				return p, nil
			}
		}
		if next == "" || next == page {
			return nil, nil
		}
		page = next
	}
	return nil, nil
}

// OpenOrUpdatePR implements Forge: it is idempotent per head branch, also
// when another process opens the same head between the look-up and the
// create.
func (h *Client) OpenOrUpdatePR(ctx context.Context, req PRRequest) (*PR, error) {
	if req.Title == "" || req.Head == "" || req.Base == "" {
		return nil, fmt.Errorf("forge: title, head and base are required")
	}
	ctx, col := withCollector(ctx)
	pr, err := h.openOrUpdate(ctx, req)
	if pr != nil {
		pr.Retries = col.retries()
	}
	return pr, err
}

func (h *Client) openOrUpdate(ctx context.Context, req PRRequest) (*PR, error) {
	existing, err := h.FindPR(ctx, req.Head)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return existing, h.api.Update(ctx, existing, req)
	}
	pr, err := h.api.Create(ctx, req)
	if err != nil && h.api.Duplicate(err) {
		if existing, ferr := h.FindPR(ctx, req.Head); ferr == nil && existing != nil {
			return existing, h.api.Update(ctx, existing, req)
		}
	}
	return pr, err
}

// Constructor builds a host's forge for a repository path (group/sub/
// project on GitLab, owner/name elsewhere) and a token.
type Constructor func(repoPath, token string, opts ...Option) (*Client, error)

// ByOwner is the Constructor of a host that addresses a repository by its
// last two segments, owner/name.
func ByOwner(make func(owner, repo, token string, opts ...Option) (*Client, error)) Constructor {
	return func(repoPath, token string, opts ...Option) (*Client, error) {
		owner, name := OwnerName(repoPath)
		return make(owner, name, token, opts...)
	}
}

// AlreadyExists says whether err is a 409 Conflict saying the pull
// request already exists: how GitLab and Gitea refuse a second open one
// for a head (Duplicate).
func AlreadyExists(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict && strings.Contains(apiErr.Message, "already exists")
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Constructor{}
)

// Register makes provider's forge available to New. The host packages
// register themselves when imported (import _ "github.com/tgp-go/tgp/
// forge/github"), as database/sql drivers do: a program links the SDK of
// only the hosts it imports.
func Register(provider string, c Constructor) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[provider] = c
}

// Registered lists the providers a program linked, sorted.
func Registered() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for p := range registry {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// hostPackage is the package that registers provider.
func hostPackage(provider string) string {
	if provider == ProviderForgejo {
		provider = ProviderGitea
	}
	return "github.com/tgp-go/tgp/forge/" + provider
}

// New builds the forge of a provider for a repository path (group/
// sub/project on GitLab, owner/name elsewhere) and a token. The provider's
// package must be linked (imported by the program, or by kernel/all).
func New(provider, repoPath, token string, opts ...Option) (Forge, error) {
	if !slices.Contains(Providers, provider) {
		return nil, fmt.Errorf("forge: provider %q has no pull-request API; use one of: %s", provider, strings.Join(Providers, ", "))
	}
	if parts := strings.Split(strings.Trim(repoPath, "/"), "/"); len(parts) < 2 {
		return nil, fmt.Errorf("forge: repository %q: want owner/name", repoPath)
	}
	registryMu.RLock()
	c, ok := registry[provider]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("forge: %s is not linked into this program: import _ %q (kernel/all imports every host)", hostName(provider), hostPackage(provider))
	}
	f, err := c(strings.Trim(repoPath, "/"), token, opts...)
	if err != nil {
		return nil, err // not a nil *Client in a non-nil Forge
	}
	return f, nil
}

// OwnerName splits a repository path into its last two segments.
func OwnerName(repoPath string) (owner, name string) {
	parts := strings.Split(strings.Trim(repoPath, "/"), "/")
	if len(parts) < 2 {
		return "", repoPath
	}
	return parts[len(parts)-2], parts[len(parts)-1]
}
