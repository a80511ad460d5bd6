package githubtest

import (
	"path/filepath"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// Remote is a toolbox repository for pull-request tests: a bare
// repository (seeded with a README) served over smart HTTP with token
// auth, and a GitHub API stand-in for it.
type Remote struct {
	Dir  string
	HTTP *gittest.HTTPServer
	GH   *Server
}

// NewRemote makes owner/repo's remote, reachable as HTTP.URL(repo+".git").
func NewRemote(t testing.TB, owner, repo, token string) *Remote {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, repo+".git")
	seed := gittest.SeedRemote(t, map[string]string{"README.md": "toolbox\n"})
	gittest.Git(t, "", "clone", "-q", "--bare", seed, dir)
	gittest.Git(t, dir, "config", "http.receivepack", "true")
	return &Remote{Dir: dir, HTTP: gittest.NewHTTPServer(t, root, token), GH: New(t, owner, repo, token, dir, false)}
}
