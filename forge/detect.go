package forge

import (
	"net/url"
	"strings"
)

// publicHosts are the hosted services a remote URL names by itself.
var publicHosts = map[string]string{
	"github.com":        ProviderGitHub,
	"gitlab.com":        ProviderGitLab,
	"bitbucket.org":     ProviderBitbucket,
	"api.github.com":    ProviderGitHub,
	"api.bitbucket.org": ProviderBitbucket,
	"codeberg.org":      ProviderForgejo,
	"gitea.com":         ProviderGitea,
}

// Providers are the git.provider values with a pull-request API.
var Providers = []string{ProviderGitHub, ProviderGitLab, ProviderBitbucket, ProviderGitea, ProviderForgejo}

// Host is the host name of a remote or API URL (https://h/..., ssh://u@h/...,
// u@h:path); "" for a local path.
func Host(s string) string {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		if u.Scheme == "file" {
			return ""
		}
		return strings.ToLower(u.Hostname())
	}
	// scp-like syntax: [user@]host:path (a path has no colon before its
	// first slash).
	if i := strings.Index(s, ":"); i > 0 && !strings.Contains(s[:i], "/") {
		h := s[:i]
		if j := strings.LastIndex(h, "@"); j >= 0 {
			h = h[j+1:]
		}
		if len(h) == 1 {
			return "" // a Windows drive letter (C:\tools.git), not a host
		}
		return strings.ToLower(h)
	}
	return ""
}

// Detect tells the provider of a remote: from the remote URL's host for
// the hosted services (github.com, gitlab.com, bitbucket.org, and the
// Gitea and Forgejo of gitea.com and codeberg.org), else from the shape of
// the API URL (api/v3: GitHub Enterprise; api/v4: GitLab; api/v1: Gitea or
// Forgejo, told apart by nothing, so gitea; /2.0: Bitbucket). "" when it
// cannot tell.
func Detect(remote, apiURL string) string {
	if p, ok := publicHosts[Host(remote)]; ok {
		return p
	}
	if apiURL == "" {
		return ""
	}
	if p, ok := publicHosts[Host(apiURL)]; ok {
		return p
	}
	u, err := url.Parse(apiURL)
	if err != nil {
		return ""
	}
	path := "/" + strings.Trim(u.Path, "/")
	switch {
	case strings.HasSuffix(path, "/api/v3"):
		return ProviderGitHub
	case strings.HasSuffix(path, "/api/v4"):
		return ProviderGitLab
	case strings.HasSuffix(path, "/api/v1"):
		return ProviderGitea
	case strings.HasSuffix(path, "/2.0"):
		return ProviderBitbucket
	}
	return ""
}

// APIURLFor is the API root of a self-hosted instance, from its remote
// URL's host, for a provider chosen without git.api_url: https://host
// plus api/v3 (GitHub Enterprise), api/v4 (GitLab) or api/v1 (Gitea,
// Forgejo). It is "" for the hosted services (each forge knows its own)
// and for a remote with no host.
func APIURLFor(provider, remote string) string {
	h := Host(remote)
	if h == "" {
		return ""
	}
	if _, public := publicHosts[h]; public && provider != ProviderGitea && provider != ProviderForgejo {
		return ""
	}
	scheme := "https"
	if u, err := url.Parse(remote); err == nil && u.Scheme == "http" {
		scheme = "http"
	}
	root := scheme + "://" + h
	if u, err := url.Parse(remote); err == nil && strings.Contains(remote, "://") && u.Port() != "" && (u.Scheme == "http" || u.Scheme == "https") {
		root += ":" + u.Port()
	}
	switch provider {
	case ProviderGitHub:
		return root + "/api/v3"
	case ProviderGitLab:
		return root + "/api/v4"
	case ProviderGitea, ProviderForgejo:
		return root + "/api/v1"
	}
	return ""
}
