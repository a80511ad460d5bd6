package kernel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tgp-go/tgp/forge"
)

// providerChoices are git.provider's values.
var providerChoices = append(append([]string{"auto"}, forge.Providers...), "local", "generic")

// ResolvedProvider is git.provider with auto made concrete: the hosted
// service the remote URL names (github.com, gitlab.com, bitbucket.org,
// gitea.com, codeberg.org), else what git.api_url's shape says (api/v3:
// GitHub Enterprise, api/v4: GitLab, api/v1: Gitea or Forgejo, /2.0:
// Bitbucket); a remote that is a path has no host (local). With
// write_strategy pr a remote on a host it cannot tell is a configuration
// error naming the choices; with direct it is generic (no API needed).
func (g GitConfig) ResolvedProvider() (string, error) {
	if g.Provider != "auto" {
		return g.Provider, nil
	}
	if p := forge.Detect(g.Remote, g.APIURL); p != "" {
		return p, nil
	}
	host := forge.Host(g.Remote)
	if host == "" && g.APIURL == "" {
		return "local", nil
	}
	if g.WriteStrategy != "pr" {
		return "generic", nil
	}
	what := fmt.Sprintf("the remote's host %q", host)
	if g.APIURL != "" {
		what = fmt.Sprintf("git.api_url %q (want .../api/v3 for GitHub Enterprise, .../api/v4 for GitLab, .../api/v1 for Gitea or Forgejo, .../2.0 for Bitbucket)", g.APIURL)
	}
	return "", &ConfigError{Key: "git.provider", Problem: fmt.Sprintf(
		"auto cannot tell the pull-request host from %s; set git.provider to one of: %s (a self-hosted one with git.api_url), or local/generic to push the branch without opening a pull request",
		what, strings.Join(forge.Providers, ", "))}
}

// hasForge says whether a provider has a pull-request API.
func hasForge(provider string) bool { return slices.Contains(forge.Providers, provider) }

// tokenUser is the basic-auth user name a host wants with a token over
// git's HTTP: Bitbucket's access tokens go with x-token-auth, GitLab
// documents oauth2 (its personal access tokens take any name); the others
// take any, and x-access-token is sent.
func tokenUser(provider string) string {
	switch provider {
	case forge.ProviderBitbucket:
		return "x-token-auth"
	case forge.ProviderGitLab:
		return "oauth2"
	}
	return ""
}
