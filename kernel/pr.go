package kernel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/tgp-go/tgp/forge"
	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/sandbox/analysis"
	"github.com/tgp-go/tgp/tools"
)

// WithForge replaces the forge built from the configuration (hosts with
// their own GitHub client, tests).
func WithForge(f forge.Forge) Option { return func(o *options) { o.forge = f } }

// prState is the pull-request strategy's session state.
type prState struct {
	branches map[string]string // per-tool: tool path → branch
	session  string            // per-session branch
	tools    map[string]bool   // tools changed on the session's branch(es)
	prs      map[string]*forge.PR
}

// buildForge makes the forge the configuration names.
func (k *Kernel) buildForge() (forge.Forge, error) {
	if k.opts.forge != nil {
		return k.opts.forge, nil
	}
	g := k.cfg.Git
	if g.Provider != "github" {
		return forge.None{Reason: fmt.Sprintf("provider %q has no pull-request API; the branch was pushed, open the PR on your host", g.Provider)}, nil
	}
	repo := g.Repo
	if repo == "" {
		repo = g.Remote
	}
	owner, name, err := forge.ParseRepo(repo)
	if err != nil {
		return nil, &ConfigError{Key: "git.repo", Problem: err.Error() + " (want owner/name)"}
	}
	var opts []forge.Option
	if g.APIURL != "" {
		opts = append(opts, forge.WithAPIURL(g.APIURL))
	}
	if k.opts.httpClient != nil {
		opts = append(opts, forge.WithHTTPClient(k.opts.httpClient))
	}
	return forge.NewGitHub(owner, name, Secret(k.environ(), g.TokenEnv), opts...)
}

var slugRe = regexp.MustCompile(`[^a-z0-9]+`)

func slug(p string) string {
	p = strings.TrimPrefix(p, registry.ToolsDir+"/")
	p = strings.TrimSuffix(p, filepath.Ext(p))
	s := strings.Trim(slugRe.ReplaceAllString(strings.ToLower(p), "-"), "-")
	if len(s) > 40 {
		s = strings.Trim(s[:40], "-")
	}
	if s == "" {
		s = "change"
	}
	return s
}

func shortID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// prBranch picks the branch for a change: one per session (the default)
// or one per tool.
func (k *Kernel) prBranch(paths []string) string {
	k.prMu.Lock()
	defer k.prMu.Unlock()
	first := "change"
	for _, p := range paths {
		if p != registry.FileName {
			first = p
			break
		}
	}
	if k.cfg.Git.PR.Per == "tool" {
		if b, ok := k.pr.branches[first]; ok {
			return b
		}
		b := "tgp/" + slug(first) + "-" + shortID()
		k.pr.branches[first] = b
		return b
	}
	if k.pr.session == "" {
		k.pr.session = "tgp/" + slug(first) + "-" + shortID()
		k.rememberSessionBranch(k.pr.session)
	}
	return k.pr.session
}

// rememberSessionBranch records the branch in .git so that `tgp pr` (a
// later process) can find the session's PR.
func (k *Kernel) rememberSessionBranch(b string) {
	if k.fs.InMemory() {
		return
	}
	_ = os.WriteFile(filepath.Join(k.fs.Root(), ".git", "tgp-session-branch"), []byte(b+"\n"), 0o644)
}

// SessionBranch is the PR branch of this session, or the one the last
// session on this root used.
func (k *Kernel) SessionBranch() string {
	k.prMu.Lock()
	defer k.prMu.Unlock()
	if k.pr.session != "" {
		return k.pr.session
	}
	if k.fs.InMemory() {
		return ""
	}
	b, _ := os.ReadFile(filepath.Join(k.fs.Root(), ".git", "tgp-session-branch"))
	return strings.TrimSpace(string(b))
}

// SessionPR finds the open PR of the session's branch.
func (k *Kernel) SessionPR(ctx context.Context) (*forge.PR, string, error) {
	b := k.SessionBranch()
	if b == "" {
		return nil, "", nil
	}
	f, err := k.buildForge()
	if err != nil {
		return nil, b, err
	}
	pr, err := f.FindPR(ctx, b)
	return pr, b, err
}

// persistPR commits the change on the PR branch, pushes it and opens or
// updates the pull request.
func (k *Kernel) persistPR(ctx context.Context, ch tools.Change, paths []string) (*tools.Persisted, error) {
	branch := k.prBranch(paths)
	res, err := k.repo.PersistBranch(ctx, gitbackend.Change{Paths: paths, Message: ch.Message}, branch)
	if err != nil {
		return nil, tools.Wrap(tools.KindExecutionFailed, err, "push pull-request branch %s", branch)
	}
	out := &tools.Persisted{Persisted: !res.Local, Commit: res.Commit, Branch: branch, Attempts: res.Attempts}
	if res.Local {
		out.Note = "committed on " + branch + " locally: no remote configured"
		return out, nil
	}
	k.prMu.Lock()
	for _, p := range paths {
		if registry.IsTool(p) {
			k.pr.tools[p] = true
		}
	}
	k.prMu.Unlock()
	f, err := k.buildForge()
	if err != nil {
		return nil, err
	}
	pr, err := f.OpenOrUpdatePR(ctx, forge.PRRequest{
		Title: "forge: " + strings.TrimPrefix(branch, "tgp/"), Head: branch, Base: k.cfg.Git.Branch,
		Body: forge.Body(fmt.Sprintf("Changes forged by a TGP agent session on `%s`.", branch), k.prToolChanges()),
	})
	var nf *forge.NoForgeError
	switch {
	case errors.As(err, &nf):
		out.Note = "branch " + branch + " pushed; " + nf.Error()
	case err != nil:
		return nil, tools.Wrap(tools.KindExecutionFailed, err, "branch %s was pushed, but opening the pull request failed", branch)
	default:
		out.PRURL = pr.URL
		k.prMu.Lock()
		k.pr.prs[branch] = pr
		k.prMu.Unlock()
	}
	return out, nil
}

// prToolChanges lists the session's tools with descriptions and their
// check_tool results, for the PR body.
func (k *Kernel) prToolChanges() []forge.ToolChange {
	k.prMu.Lock()
	paths := make([]string, 0, len(k.pr.tools))
	for p := range k.pr.tools {
		paths = append(paths, p)
	}
	k.prMu.Unlock()
	sort.Strings(paths)
	var out []forge.ToolChange
	for _, p := range paths {
		src, err := k.fs.ReadFile(p)
		if err != nil {
			out = append(out, forge.ToolChange{Path: p, Description: "(deleted)", Valid: true})
			continue
		}
		rep := analysis.Analyze(p, src, k.checkConfig())
		tc := forge.ToolChange{Path: p, Description: registry.ExtractDescription(src), Valid: rep.Valid}
		for _, e := range rep.Errors {
			tc.Errors = append(tc.Errors, fmt.Sprintf("%s at %d:%d: %s", e.Rule, e.Line, e.Column, e.Message))
		}
		for _, w := range rep.Warnings {
			tc.Warnings = append(tc.Warnings, fmt.Sprintf("%s at %d:%d: %s", w.Rule, w.Line, w.Column, w.Message))
		}
		out = append(out, tc)
	}
	return out
}
