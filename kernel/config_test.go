package kernel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeYAML(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tgp.config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigLayering(t *testing.T) {
	f := writeYAML(t, "git:\n  branch: dev\n  retry:\n    max_attempts: 3\nsandbox:\n  timeout: 2s\n  allowed_fetch_urls: [\"https://api.example.com/\"]\n")
	c, err := LoadConfig(LoadOptions{
		File:      f,
		Environ:   []string{"TGP_GIT_RETRY_MAX_ATTEMPTS=5", "TGP_GIT_REMOTE=/tmp/remote.git", "TGP_GIT_TOKEN=s3cret", "HOME=/x"},
		Overrides: map[string]any{"git.remote": "/opt/override.git"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Git.Branch != "dev" {
		t.Errorf("file layer: branch %q", c.Git.Branch)
	}
	if c.Git.Retry.MaxAttempts != 5 {
		t.Errorf("env layer over file: max_attempts %d", c.Git.Retry.MaxAttempts)
	}
	if c.Git.Remote != "/opt/override.git" {
		t.Errorf("options over env: remote %q", c.Git.Remote)
	}
	if c.Sandbox.Timeout != 2*time.Second || c.Sandbox.MemoryMB != 128 {
		t.Errorf("sandbox %+v", c.Sandbox)
	}
	if len(c.Sandbox.AllowedFetchURLs) != 1 || c.RootDir != ".tgp" || c.Approval.Policy != "never" {
		t.Errorf("defaults/lists: %+v", c)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name, yaml string
		env        []string
		over       map[string]any
		key        string
		hint       string
	}{
		{"unknown file key", "git:\n  remot: x\n", nil, nil, "git.remot", "unknown key"},
		{"wrong type", "git:\n  depth: lots\n", nil, nil, "git.depth", `"lots" is not a whole number`},
		{"bad enum", "approval:\n  policy: sometimes\n", nil, nil, "approval.policy", "never, on_risk, always"},
		{"out of range", "sandbox:\n  memory_mb: 0\n", nil, nil, "sandbox.memory_mb", ">= 1"},
		{"bad isolation", "sandbox:\n  isolation: vm\n", nil, nil, "sandbox.isolation", "inproc, process"},
		{"no workers", "", []string{"TGP_SANDBOX_WORKERS=0"}, nil, "sandbox.workers", ">= 1"},
		{"bad provider from env", "", []string{"TGP_GIT_PROVIDER=gitlub"}, nil, "git.provider", "auto, github, gitlab, bitbucket, gitea, forgejo, local, generic"},
		{"pr on a host auto cannot tell", "", []string{"TGP_GIT_WRITE_STRATEGY=pr", "TGP_GIT_REMOTE=https://git.example.com/acme/tools.git"}, nil, "git.provider", "github, gitlab, bitbucket, gitea, forgejo"},
		{"pr with an API URL of no known shape", "", []string{"TGP_GIT_WRITE_STRATEGY=pr", "TGP_GIT_REMOTE=https://git.example.com/acme/tools.git", "TGP_GIT_API_URL=https://git.example.com/rest"}, nil, "git.provider", "api/v4 for GitLab"},
		{"env typo", "", []string{"TGP_GIT_REMOT=x"}, nil, "TGP_GIT_REMOT", "unknown"},
		{"unknown option", "", nil, map[string]any{"sandbox.timeoutt": "1s"}, "sandbox.timeoutt", "unknown key"},
		{"bad rule severity", "sandbox:\n  check:\n    rules:\n      no-any: loud\n", nil, nil, "sandbox.check.rules.no-any", "off, warning, error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lo := LoadOptions{Environ: append([]string{}, c.env...), Overrides: c.over}
			if c.yaml != "" {
				lo.File = writeYAML(t, c.yaml)
			}
			_, err := LoadConfig(lo)
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) {
				t.Fatalf("want *ConfigError, got %v", err)
			}
			if ce.Key != c.key || !strings.Contains(err.Error(), c.hint) {
				t.Fatalf("error %q: key %q, want key %q and hint %q", err, ce.Key, c.key, c.hint)
			}
		})
	}
}

func TestSecretsOnlyFromEnvironment(t *testing.T) {
	c, err := LoadConfig(LoadOptions{Environ: []string{"MY_PAT=abc"}, Overrides: map[string]any{"git.token_env": "MY_PAT"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := Secret([]string{"MY_PAT=abc"}, c.Git.TokenEnv); got != "abc" {
		t.Fatalf("secret %q", got)
	}
	// A secret named by token_env under our prefix is not a config typo.
	if _, err := LoadConfig(LoadOptions{Environ: []string{"TGP_GIT_PAT=abc"}, Overrides: map[string]any{"git.token_env": "TGP_GIT_PAT"}}); err != nil {
		t.Fatalf("secret variable refused as config: %v", err)
	}
	if _, err := LoadConfig(LoadOptions{Environ: []string{"TGP_GIT_PAT=abc"}}); err == nil {
		t.Fatal("an unknown TGP_GIT_ variable that is no configured secret must be refused")
	} else if strings.Contains(err.Error(), "abc") {
		t.Fatalf("error leaks the value: %v", err)
	}
}

func TestConfigTemplateMatchesDefaults(t *testing.T) {
	f := writeYAML(t, ConfigTemplate)
	fromFile, err := LoadConfig(LoadOptions{File: f, Required: true, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	builtIn, err := LoadConfig(LoadOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := fmt.Sprintf("%+v", *fromFile), fmt.Sprintf("%+v", *builtIn)
	if a != b {
		t.Fatalf("template differs from defaults:\n%s\n%s", a, b)
	}
	for key := range Defaults() {
		leaf := key[strings.LastIndex(key, ".")+1:]
		if !strings.Contains(ConfigTemplate, leaf+":") {
			t.Errorf("template lacks key %s", key)
		}
	}
}
