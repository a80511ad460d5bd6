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

// WithSession names the pull-request session (write_strategy pr): every
// kernel given the same name adds its commits to the same branch
// (tgp/session-<name>) and pull request.
func WithSession(name string) Option { return func(o *options) { o.session = name } }

// WithResumeSession makes the kernel continue the session the last kernel
// on this root recorded (in .git), while its pull request is still open:
// one-shot processes (`tgp call`) then share one branch and one PR instead
// of opening one each. `tgp session end` (EndSession) starts a new one.
func WithResumeSession() Option { return func(o *options) { o.resumeSession = true } }

// prState is the pull-request strategy's session state.
type prState struct {
	branches map[string]string // per-tool: tool path → branch
	session  string            // per-session branch
	resumed  string            // the recorded session this kernel continues
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
		switch {
		case k.opts.session != "":
			k.pr.session = "tgp/session-" + slug(k.opts.session)
		case k.pr.resumed != "":
			k.pr.session = k.pr.resumed
		default:
			k.pr.session = "tgp/" + slug(first) + "-" + shortID()
		}
		k.rememberSessionBranch(k.pr.session, 0)
	}
	return k.pr.session
}

// sessionFile records the root's last PR session: its branch, and the PR
// number once one was opened.
func (k *Kernel) sessionFile() string {
	return filepath.Join(k.fs.Root(), ".git", "tgp-session-branch")
}

// rememberSessionBranch records the branch (and PR) in .git so that `tgp
// pr` and later processes can find the session.
func (k *Kernel) rememberSessionBranch(b string, pr int) {
	if k.fs.InMemory() {
		return
	}
	body := b + "\n"
	if pr > 0 {
		body += fmt.Sprintf("pr=%d\n", pr)
	}
	_ = os.WriteFile(k.sessionFile(), []byte(body), 0o644)
}

// recordedSession reads the session file: branch and PR number (0: none
// opened yet).
func (k *Kernel) recordedSession() (string, int) {
	if k.fs.InMemory() {
		return "", 0
	}
	b, err := os.ReadFile(k.sessionFile())
	if err != nil {
		return "", 0
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	pr := 0
	for _, l := range lines[1:] {
		_, _ = fmt.Sscanf(l, "pr=%d", &pr)
	}
	return strings.TrimSpace(lines[0]), pr
}

// resumeSession picks up the recorded session if its pull request is still
// open (or none was opened yet); a merged or closed one ends it.
func (k *Kernel) resumeSession(ctx context.Context) {
	b, pr := k.recordedSession()
	if b == "" {
		return
	}
	if pr > 0 {
		f, err := k.buildForge()
		if err != nil {
			return
		}
		open, err := f.FindPR(ctx, b)
		if err != nil || open == nil {
			return // merged or closed (or unknown): a new session
		}
	}
	k.pr.resumed = b
}

// EndSession forgets the root's recorded PR session: the next change
// starts a new branch and pull request. It returns the branch ended.
func (k *Kernel) EndSession() string {
	b, _ := k.recordedSession()
	if b != "" {
		_ = os.Remove(k.sessionFile())
	}
	k.prMu.Lock()
	k.pr.session, k.pr.resumed = "", ""
	k.prMu.Unlock()
	return b
}

// prCredentials fails before anything is pushed when the pull-request host
// needs a token and none is set, naming the variable to set.
func (k *Kernel) prCredentials() error {
	g := k.cfg.Git
	if k.opts.forge != nil || g.Provider != "github" || Secret(k.environ(), g.TokenEnv) != "" {
		return nil
	}
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf(
		"write_strategy pr with provider github needs a GitHub token: set the environment variable %s (named by git.token_env); nothing was pushed", g.TokenEnv)}
}

// SessionBranch is the PR branch of this session, or the one the last
// session on this root used.
func (k *Kernel) SessionBranch() string {
	k.prMu.Lock()
	defer k.prMu.Unlock()
	if k.pr.session != "" {
		return k.pr.session
	}
	b, _ := k.recordedSession()
	return b
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
	if err := k.prCredentials(); err != nil {
		return nil, err
	}
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
		if branch == k.pr.session {
			k.rememberSessionBranch(branch, pr.Number)
		}
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
