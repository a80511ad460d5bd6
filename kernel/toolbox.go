package kernel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tgp-go/tgp/forge"
	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/sandbox/hostapi"
	"github.com/tgp-go/tgp/toolbox"
	"github.com/tgp-go/tgp/trust"
)

// toolboxConfig is the toolbox's part of the configuration: the
// repository, the write strategy, the pull-request host and the remote
// checks. The forge is made here, once; a configuration that cannot make
// one is reported where a pull request needs it, as before.
func (k *Kernel) toolboxConfig() toolbox.Config {
	g := k.cfg.Git
	remote := g.Remote
	if remote != "" && !strings.Contains(remote, "://") && !filepath.IsAbs(remote) && k.opts.baseDir != "" {
		if _, err := os.Stat(filepath.Join(k.opts.baseDir, remote)); err == nil {
			remote = filepath.Join(k.opts.baseDir, remote)
		}
	}
	provider, _ := g.ResolvedProvider()   // an unresolvable one failed Validate
	pushes, reads, _ := g.RemoteBudgets() // likewise
	tc := toolbox.Config{
		Git: gitbackend.Config{
			Remote: remote, Branch: g.Branch, Depth: g.Depth,
			Token:           Secret(k.opts.environ, g.TokenEnv),
			CarryKey:        carryKey(k.opts.environ, g.CarryKeyEnv),
			TokenUser:       tokenUser(provider),
			Author:          gitbackend.Identity{Name: g.Author.Name, Email: g.Author.Email},
			SigningKey:      k.signingKey(),
			Retry:           gitbackend.RetryConfig{Deadline: g.Retry.Deadline, MaxAttempts: g.Retry.MaxAttempts, BaseDelay: g.Retry.BaseDelay, NoCarry: !g.Retry.Carry},
			LockDir:         g.MachineLockDir(k.environ()),
			DeferReplays:    g.DeferReplays,
			PushesPerMinute: pushes,
			Journal:         k.journal,
			// A journal that cannot be reached makes writes push
			// directly: they then return landed, whatever this says.
			JournalAckDurable: g.JournalAck == "journal",
			ReadsPerSecond:    reads,
			Progress:          k.opts.progress,
			Environ:           k.environ(),
		},
		Strategy: g.WriteStrategy,
		PR: toolbox.PRConfig{
			Per:      g.PR.Per,
			Session:  k.opts.session,
			Resume:   k.opts.resumeSession,
			TokenEnv: g.TokenEnv,
		},
		BlockUpwardTraversal: k.cfg.FS.BlockUpwardTraversal,
		Checker:              k.checker,
		OnRefresh:            k.opts.refreshHooks,
		SandboxDecls:         hostapi.Declarations(k.opts.hostFuncs),
		TrustedSigners:       k.signers,
	}
	k.prForge, k.prForgeErr = k.buildForge(provider)
	tc.PR.OpenerErr = k.prForgeErr
	if k.prForge != nil {
		tc.PR.Opener = prOpener{k.prForge}
	}
	p := provider
	if k.opts.forge == nil && hasForge(provider) {
		tc.PR.Provider = provider
		if Secret(k.environ(), g.TokenEnv) == "" {
			tc.PR.MissingTokenEnv = g.TokenEnv
		}
	} else if d, ok := k.prForge.(forge.Describer); ok {
		p = d.Provider()
	}
	tc.PR.Host, tc.PR.Term = forge.HostName(p), forge.Term(p)
	every, off, err := g.RefreshEvery()
	tc.RefreshEvery, tc.RefreshOff = every, off || err != nil
	return tc
}

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

// buildForge makes the forge of the (resolved) provider: the repository
// path from git.repo or the remote URL (subgroups kept for GitLab), the
// API root from git.api_url or, for a self-hosted instance, the remote's
// host. Each retry the host forces is reported through WithProgress.
func (k *Kernel) buildForge(provider string) (forge.Forge, error) {
	if k.opts.forge != nil {
		return k.opts.forge, nil
	}
	g := k.cfg.Git
	if !hasForge(provider) {
		return forge.None{Reason: fmt.Sprintf("provider %q has no pull-request API; the branch was pushed, open the PR on your host", provider)}, nil
	}
	// The forge needs the remote's host and path only: its errors quote
	// what they are given, and the URL may carry a password.
	remote := gitbackend.RedactURL(g.Remote)
	repo := g.Repo
	if repo == "" {
		repo = remote
	}
	path, err := forge.RepoPath(repo)
	if err != nil {
		return nil, &ConfigError{Key: "git.repo", Problem: err.Error() + " (want owner/name, or group/sub/project on GitLab)"}
	}
	var opts []forge.Option
	api := g.APIURL
	if api == "" {
		api = forge.APIURLFor(provider, remote)
	}
	if api != "" {
		opts = append(opts, forge.WithAPIURL(api))
	}
	if k.opts.httpClient != nil {
		opts = append(opts, forge.WithHTTPClient(k.opts.httpClient))
	}
	if progress := k.opts.progress; progress != nil {
		host := forge.HostName(provider)
		opts = append(opts, forge.WithRetryReport(func(r forge.Retry) { progress(host + ": " + r.String()) }))
	}
	f, err := forge.New(provider, path, Secret(k.environ(), g.TokenEnv), opts...)
	if err != nil {
		return nil, &ConfigError{Key: "git.api_url", Problem: err.Error()}
	}
	return f, nil
}

// PRTerm is the pull-request host's word for a pull request ("merge
// request" on GitLab).
func (k *Kernel) PRTerm() string { return k.box.PRTerm() }

// EndSession forgets the root's recorded PR session: the next change
// starts a new branch and pull request. It returns the branch ended.
func (k *Kernel) EndSession() string { return k.box.EndSession() }

// SessionBranch is the PR branch of this session, or the one the last
// session on this root used.
func (k *Kernel) SessionBranch() string { return k.box.SessionBranch() }

// SessionPR finds the open PR of the session's branch.
func (k *Kernel) SessionPR(ctx context.Context) (*forge.PR, string, error) {
	branch := k.box.SessionBranch()
	if branch == "" {
		return nil, "", nil
	}
	f := k.prForge
	if err := k.prForgeErr; err != nil {
		return nil, branch, err
	}
	if f == nil {
		f = forge.None{Reason: "no pull-request host configured; the branch was pushed, open the PR on your host"}
	}
	pr, err := f.FindPR(ctx, branch)
	return pr, branch, err
}

// RefreshEvent reports a refresh that brought in what other agents
// pushed (WithRefreshHook).
type RefreshEvent = toolbox.RefreshEvent

// RefreshStatus is the freshness part of Status.
type RefreshStatus = toolbox.RefreshStatus

// WithRefreshHook receives every refresh that moved the root or was
// blocked by local edits.
func WithRefreshHook(h func(RefreshEvent)) Option {
	return func(o *options) { o.refreshHooks = append(o.refreshHooks, h) }
}

// Refresh asks the remote whether its branch moved and, if it did, brings
// the root up to it and rebuilds the registry (toolbox.Box.Refresh). It is
// what calls that read the toolbox do on their own every
// git.refresh_interval.
func (k *Kernel) Refresh(ctx context.Context) error { return k.box.Refresh(k.ctx(ctx)) }

// carryKey is the fleet's carry secret from the variable name names (nil
// when empty: the repository then leaves and lands no carries on a
// network remote).
func carryKey(environ []string, name string) []byte {
	if v := Secret(environ, name); v != "" {
		return []byte(v)
	}
	return nil
}

// signingKey is git.signing_key, a relative path read from the config
// file's directory (WithBaseDir) when the key is there.
func (k *Kernel) signingKey() string {
	p := k.cfg.Git.SigningKey
	if p != "" && !filepath.IsAbs(p) && !strings.HasPrefix(p, "~") && k.opts.baseDir != "" {
		if _, err := os.Stat(filepath.Join(k.opts.baseDir, p)); err == nil {
			p = filepath.Join(k.opts.baseDir, p)
		}
	}
	return p
}

// checkSigningKey reads git.signing_key once at New, so a missing,
// encrypted or malformed key is a configuration error naming the key
// rather than a failure of the first commit.
func (k *Kernel) checkSigningKey() error {
	if k.cfg.Git.SigningKey == "" {
		return nil
	}
	if _, err := gitbackend.ResolveSigner(k.signingKey(), nil, k.environ()); err != nil {
		return &ConfigError{Key: "git.signing_key", Problem: err.Error()}
	}
	return nil
}

// trustedSignersPath is sandbox.trusted_signers, a relative path read
// from the config file's directory (WithBaseDir) when the file is there.
func (k *Kernel) trustedSignersPath() string {
	p := k.cfg.Sandbox.TrustedSigners
	if p != "" && !filepath.IsAbs(p) && k.opts.baseDir != "" {
		if _, err := os.Stat(filepath.Join(k.opts.baseDir, p)); err == nil {
			p = filepath.Join(k.opts.baseDir, p)
		}
	}
	return p
}

// loadTrustedSigners reads sandbox.trusted_signers once at New: a
// missing or malformed file is a configuration error naming the key (and
// the line), never a kernel that runs every tool.
func (k *Kernel) loadTrustedSigners() error {
	p := k.trustedSignersPath()
	if p == "" {
		return nil
	}
	a, err := trust.LoadAllowedSigners(p)
	if err != nil {
		return &ConfigError{Key: "sandbox.trusted_signers", Problem: err.Error()}
	}
	k.signers = a
	return nil
}
