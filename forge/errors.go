package forge

import (
	"errors"
	"fmt"
)

// ErrAuth matches AuthError: the host refused the token (401, or 403 for
// a token without the scope the API needs).
var ErrAuth = errors.New("the host refused the token")

// AuthError is a refused token with the host's own message.
type AuthError struct {
	Host    string // GitHub, GitLab, Bitbucket, Gitea, Forgejo
	Status  int
	Message string
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("%s refused the token (HTTP %d): %s", e.Host, e.Status, e.Message)
}

// Is makes errors.Is(err, ErrAuth) true.
func (e *AuthError) Is(t error) bool { return t == ErrAuth }

// APIError is any other error answer, with the host's own message.
type APIError struct {
	Host    string
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s API %d: %s", e.Host, e.Status, e.Message)
}

// RetryError is a call that was still rate limited or failing when it ran
// out of attempts (or when the host asked for a longer wait than allowed);
// Err is the host's last answer.
type RetryError struct {
	Op       string
	Attempts int
	Reason   string
	Err      error
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("%s: %s after %d attempt(s): %v", e.Op, e.Reason, e.Attempts, e.Err)
}

func (e *RetryError) Unwrap() error { return e.Err }

// hostName is a provider's display name.
func hostName(provider string) string {
	switch provider {
	case ProviderGitHub:
		return "GitHub"
	case ProviderGitLab:
		return "GitLab"
	case ProviderBitbucket:
		return "Bitbucket"
	case ProviderGitea:
		return "Gitea"
	case ProviderForgejo:
		return "Forgejo"
	}
	return provider
}

// HostName is a provider's display name (GitLab for gitlab).
func HostName(provider string) string { return hostName(provider) }
