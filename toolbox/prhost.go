package toolbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tgp-go/tgp/tools"
)

// PROpener is what the pull-request strategy needs from a code host. It
// is defined here, where it is used, so that the toolbox links no host's
// SDK: the kernel adapts a forge.Forge to it.
type PROpener interface {
	// OpenOrUpdatePR opens a pull request for req.Head, or updates the
	// open one (idempotent per head branch).
	OpenOrUpdatePR(ctx context.Context, req PRRequest) (*PR, error)
	// FindPR returns the open pull request of a head branch, or nil.
	FindPR(ctx context.Context, head string) (*PR, error)
}

// TokenVerifier is a PROpener that can check its token before anything
// is pushed: an error matching ErrTokenRefused means the host refused it.
type TokenVerifier interface {
	Verify(ctx context.Context) error
}

// ToolChecker is check_tool's analysis, for the results a pull request's
// description lists (the kernel gives the sandbox's; without one the
// tools are listed unchecked). tools.ToolChecker has the same method.
type ToolChecker interface {
	CheckTool(path string, src []byte) (errs, warnings []tools.Diagnostic)
}

// ErrTokenRefused matches a PROpener's error when the host refused the
// token (401, or 403 for a token without the scope the API needs).
var ErrTokenRefused = errors.New("the host refused the token")

// ErrNoPRHost matches NoPRHostError.
var ErrNoPRHost = errors.New("no pull-request API")

// NoPRHostError says why no pull request was opened: the host has no API
// (a local or generic remote). The branch is pushed all the same.
type NoPRHostError struct{ Reason string }

func (e *NoPRHostError) Error() string { return "no PR opened: " + e.Reason }

// Is makes errors.Is(err, ErrNoPRHost) true.
func (e *NoPRHostError) Is(t error) bool { return t == ErrNoPRHost }

// PRRequest describes a pull request to open or update.
type PRRequest struct {
	Title string
	Head  string // branch name
	Base  string
	Body  string
	Draft bool
}

// PR is a pull request (a merge request on GitLab), as the toolbox
// reports it.
type PR struct {
	Number  int
	URL     string
	Head    string
	State   string // open, closed or merged
	Created bool
	// Name is the host's term and reference: "merge request !3".
	Name string
	// Host is the host's display name (GitLab) and Retries the rate
	// limits and server errors it answered, each waited out.
	Host    string
	Retries []string
}

// noHost is the opener of a configuration without a pull-request host.
type noHost struct{ reason string }

func (n noHost) OpenOrUpdatePR(context.Context, PRRequest) (*PR, error) {
	return nil, &NoPRHostError{Reason: n.reason}
}

func (n noHost) FindPR(context.Context, string) (*PR, error) {
	return nil, &NoPRHostError{Reason: n.reason}
}

// ToolChange is one tool changed by the session, for the PR body.
type ToolChange struct {
	Path        string
	Description string
	Valid       bool
	Errors      []string
	Warnings    []string
}

// PRBody renders the PR description: the tools changed, what they do, and
// what check_tool said about them.
func PRBody(summary string, changes []ToolChange) string {
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
