// Package forge opens pull requests for the gatekeeper write strategy: the
// agent's commits go to a branch, and a pull request (a merge request on
// GitLab) carries them to a human or a senior agent.
//
// Every host implements the same Forge: OpenOrUpdatePR is idempotent per
// head branch (a duplicate open returns the existing pull request, also
// when another process opened it between our look-up and our create),
// FindPR finds the open one of a head branch, Comment comments on it, and
// Verify checks the token before anything is pushed. Those are written
// once, here (Client, on a host's API); each host is a package of its
// own, registered with New when a program imports it, so that a program
// links the SDKs of the hosts it uses only:
//
//   - forge/github: github.com and GitHub Enterprise (go-github/v60).
//   - forge/gitlab: gitlab.com and self-hosted GitLab, projects in
//     subgroups (gitlab.com/gitlab-org/api/client-go, its own retries
//     off so that one policy decides, waits and reports on every host).
//   - forge/gitea: Gitea and Forgejo (code.gitea.io/sdk/gitea).
//   - forge/bitbucket: Bitbucket Cloud, REST API 2.0 through net/http.
//
// Rate limits (429 with Retry-After or the host's reset header, GitHub's
// secondary limits) and 5xx answers are retried with backoff; each retry
// is reported on the PR (Retries) and to WithRetryReport, and a call that
// runs out of attempts returns the host's last answer with the count.
// Providers with no API get None, which says why no PR was opened.
package forge

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Provider names, as git.provider spells them.
const (
	ProviderGitHub    = "github"
	ProviderGitLab    = "gitlab"
	ProviderBitbucket = "bitbucket"
	ProviderGitea     = "gitea"
	ProviderForgejo   = "forgejo"
)

// PRRequest describes a pull request to open or update.
type PRRequest struct {
	Title string
	Head  string // branch name
	Base  string
	Body  string
	Draft bool
}

// PR is a pull request (a merge request on GitLab).
type PR struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	Head   string `json:"head"`
	Base   string `json:"base"`
	// State is open, closed or merged on every host.
	State   string `json:"state"`
	Created bool   `json:"created"`
	// Provider is the host (github, gitlab, bitbucket, gitea, forgejo);
	// Term is its word for a pull request ("merge request" on GitLab).
	Provider string `json:"provider,omitempty"`
	Term     string `json:"term,omitempty"`
	// Retries lists the host's rate limits and server errors the call
	// waited out before it succeeded.
	Retries []Retry `json:"retries,omitempty"`
}

// Ref is how the host writes the PR's number: !3 on GitLab, #3 elsewhere.
func (p *PR) Ref() string {
	if p.Provider == ProviderGitLab {
		return fmt.Sprintf("!%d", p.Number)
	}
	return fmt.Sprintf("#%d", p.Number)
}

// Name is the host's term and reference: "merge request !3".
func (p *PR) Name() string {
	t := p.Term
	if t == "" {
		t = Term(p.Provider)
	}
	return t + " " + p.Ref()
}

// Term is a provider's word for a pull request.
func Term(provider string) string {
	if provider == ProviderGitLab {
		return "merge request"
	}
	return "pull request"
}

// Forge is what the kernel needs from a code host.
type Forge interface {
	// OpenOrUpdatePR opens a PR for Head, or updates the open one.
	OpenOrUpdatePR(ctx context.Context, req PRRequest) (*PR, error)
	// FindPR returns the open PR for a head branch, or nil.
	FindPR(ctx context.Context, head string) (*PR, error)
	// Comment adds a comment to a PR.
	Comment(ctx context.Context, number int, body string) error
}

// Verifier is a Forge that can check its token against the host before
// anything is pushed: an error matching ErrAuth means the host refused it.
type Verifier interface {
	Verify(ctx context.Context) error
}

// Describer is a Forge that names its host (Provider returns github,
// gitlab, bitbucket, gitea or forgejo).
type Describer interface {
	Provider() string
}

// TermOf is the word the forge's host uses for a pull request.
func TermOf(f Forge) string {
	if d, ok := f.(Describer); ok {
		return Term(d.Provider())
	}
	return Term("")
}

// ErrNoForge matches NoForgeError.
var ErrNoForge = errors.New("no pull-request API")

// None is the forge of providers without an API (local, generic).
type None struct{ Reason string }

// NoForgeError says why no PR was opened.
type NoForgeError struct{ Reason string }

func (e *NoForgeError) Error() string { return "no PR opened: " + e.Reason }

func (e *NoForgeError) Is(t error) bool { return t == ErrNoForge }

// OpenOrUpdatePR implements Forge.
func (n None) OpenOrUpdatePR(context.Context, PRRequest) (*PR, error) {
	return nil, &NoForgeError{Reason: n.Reason}
}

// FindPR implements Forge.
func (n None) FindPR(context.Context, string) (*PR, error) {
	return nil, &NoForgeError{Reason: n.Reason}
}

// Comment implements Forge.
func (n None) Comment(context.Context, int, string) error { return &NoForgeError{Reason: n.Reason} }

// RepoPath reads the repository path of "owner/name", "group/sub/project"
// or a remote URL (https://host/o/r.git, git@host:o/r.git,
// ssh://git@host/o/r): every segment, so that GitLab subgroups survive.
func RepoPath(s string) (string, error) {
	s = strings.TrimSpace(s)
	path := s
	switch {
	case strings.Contains(s, "://"):
		u, perr := url.Parse(s)
		if perr != nil {
			return "", fmt.Errorf("forge: bad repository URL %q: %w", s, perr)
		}
		path = u.Path
	case strings.Contains(s, "@") && strings.Contains(s, ":"):
		path = s[strings.Index(s, ":")+1:]
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	parts := strings.Split(path, "/")
	if len(parts) < 2 {
		return "", fmt.Errorf("forge: cannot find owner/name in %q", s)
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return "", fmt.Errorf("forge: cannot find owner/name in %q", s)
		}
	}
	return path, nil
}

// ParseRepo reads "owner/name" or a remote URL (https://host/o/r.git,
// git@host:o/r.git, ssh://git@host/o/r): the last two segments.
func ParseRepo(s string) (owner, name string, err error) {
	path, err := RepoPath(s)
	if err != nil {
		return "", "", err
	}
	parts := strings.Split(path, "/")
	return parts[len(parts)-2], parts[len(parts)-1], nil
}
