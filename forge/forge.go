// Package forge opens pull requests for the gatekeeper write strategy: the
// agent's commits go to a branch, and a PR carries them to a human or a
// senior agent. GitHub (and GitHub Enterprise) is implemented on
// github.com/google/go-github/v60; providers with no API get None, which
// says why no PR was opened.
package forge

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// PRRequest describes a pull request to open or update.
type PRRequest struct {
	Title string
	Head  string // branch name
	Base  string
	Body  string
	Draft bool
}

// PR is an open pull request.
type PR struct {
	Number  int    `json:"number"`
	URL     string `json:"url"`
	Head    string `json:"head"`
	Base    string `json:"base"`
	State   string `json:"state"`
	Created bool   `json:"created"`
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

// ParseRepo reads "owner/name" or a remote URL (https://host/o/r.git,
// git@host:o/r.git, ssh://git@host/o/r).
func ParseRepo(s string) (owner, name string, err error) {
	s = strings.TrimSpace(s)
	path := s
	switch {
	case strings.Contains(s, "://"):
		u, perr := url.Parse(s)
		if perr != nil {
			return "", "", fmt.Errorf("forge: bad repository URL %q: %w", s, perr)
		}
		path = u.Path
	case strings.Contains(s, "@") && strings.Contains(s, ":"):
		path = s[strings.Index(s, ":")+1:]
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	parts := strings.Split(path, "/")
	if len(parts) < 2 || parts[len(parts)-2] == "" || parts[len(parts)-1] == "" {
		return "", "", fmt.Errorf("forge: cannot find owner/name in %q", s)
	}
	return parts[len(parts)-2], parts[len(parts)-1], nil
}

// ToolChange is one tool changed by the session, for the PR body.
type ToolChange struct {
	Path        string
	Description string
	Valid       bool
	Errors      []string
	Warnings    []string
}

// Body renders the PR description: the tools changed, what they do, and
// what check_tool said about them.
func Body(summary string, changes []ToolChange) string {
	var b strings.Builder
	if summary != "" {
		b.WriteString(summary + "\n\n")
	}
	b.WriteString("### Tools changed\n\n")
	if len(changes) == 0 {
		b.WriteString("_No tool files changed._\n")
	}
	for _, c := range changes {
		status := "✅ check_tool passed"
		if !c.Valid {
			status = "❌ check_tool failed"
		}
		fmt.Fprintf(&b, "- `%s` — %s  \n  %s\n", c.Path, c.Description, status)
		for _, e := range c.Errors {
			fmt.Fprintf(&b, "  - error: %s\n", e)
		}
		for _, w := range c.Warnings {
			fmt.Fprintf(&b, "  - warning: %s\n", w)
		}
	}
	b.WriteString("\n_Opened by TGP (gatekeeper mode)._\n")
	return b.String()
}
