package forge

import (
	"strings"
	"testing"
)

func TestDetectProvider(t *testing.T) {
	for _, c := range []struct{ remote, api, want string }{
		{"https://github.com/acme/tools.git", "", ProviderGitHub},
		{"git@github.com:acme/tools.git", "", ProviderGitHub},
		{"ssh://git@gitlab.com/acme/platform/tools.git", "", ProviderGitLab},
		{"https://x-token-auth@bitbucket.org/acme/tools.git", "", ProviderBitbucket},
		{"https://codeberg.org/acme/tools.git", "", ProviderForgejo},
		{"https://git.example.com/acme/tools.git", "", ""},
		{"https://git.example.com/acme/tools.git", "https://git.example.com/api/v3", ProviderGitHub},
		{"https://git.example.com/acme/tools.git", "https://git.example.com/api/v4/", ProviderGitLab},
		{"https://git.example.com/acme/tools.git", "https://git.example.com/api/v1", ProviderGitea},
		{"https://git.example.com/acme/tools.git", "https://api.bitbucket.org/2.0", ProviderBitbucket},
		{"https://git.example.com/acme/tools.git", "https://proxy.example.com/gl", ""},
		{"/srv/git/tools.git", "", ""},
		{"file:///srv/git/tools.git", "", ""},
		{"../tools.git", "", ""},
	} {
		if got := Detect(c.remote, c.api); got != c.want {
			t.Errorf("Detect(%q, %q) = %q, want %q", c.remote, c.api, got, c.want)
		}
	}
}

func TestAPIURLForSelfHosted(t *testing.T) {
	for _, c := range []struct{ provider, remote, want string }{
		{ProviderGitLab, "https://gitlab.example.com/acme/sub/tools.git", "https://gitlab.example.com/api/v4"},
		{ProviderGitLab, "git@gitlab.example.com:acme/tools.git", "https://gitlab.example.com/api/v4"},
		{ProviderGitHub, "https://ghe.example.com/acme/tools.git", "https://ghe.example.com/api/v3"},
		{ProviderForgejo, "http://127.0.0.1:3000/acme/tools.git", "http://127.0.0.1:3000/api/v1"},
		{ProviderGitea, "https://gitea.com/acme/tools.git", "https://gitea.com/api/v1"},
		{ProviderGitLab, "https://gitlab.com/acme/tools.git", ""}, // the forge knows gitlab.com
		{ProviderBitbucket, "https://bitbucket.org/acme/tools.git", ""},
		{ProviderGitLab, "/srv/git/tools.git", ""},
	} {
		if got := APIURLFor(c.provider, c.remote); got != c.want {
			t.Errorf("APIURLFor(%q, %q) = %q, want %q", c.provider, c.remote, got, c.want)
		}
	}
}

func TestRepoPathKeepsSubgroups(t *testing.T) {
	for in, want := range map[string]string{
		"https://gitlab.com/acme/platform/tools.git": "acme/platform/tools",
		"git@gitlab.com:acme/a/b/tools.git":          "acme/a/b/tools",
		"acme/tools":                                 "acme/tools",
		"ssh://git@host:2222/acme/tools":             "acme/tools",
	} {
		if got, err := RepoPath(in); err != nil || got != want {
			t.Errorf("RepoPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"tools", "https://host/tools.git", "acme//tools", "../x"} {
		if got, err := RepoPath(bad); err == nil {
			t.Errorf("RepoPath(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := New("local", "acme/tools", "t"); err == nil {
		t.Error("New made a forge for provider local")
	}
	// The host packages register themselves: this test binary links
	// them all (hosts_test.go imports them), a program may not.
	f, err := New(ProviderGitLab, "acme/platform/tools", "t")
	if err != nil || TermOf(f) != "merge request" {
		t.Fatalf("%v %v", f, err)
	}
	registryMu.Lock()
	c := registry[ProviderGitLab]
	delete(registry, ProviderGitLab)
	registryMu.Unlock()
	defer Register(ProviderGitLab, c)
	if _, err := New(ProviderGitLab, "acme/platform/tools", "t"); err == nil || !strings.Contains(err.Error(), "forge/gitlab") {
		t.Fatalf("New made a forge of a host this program did not link: %v", err)
	}
}
