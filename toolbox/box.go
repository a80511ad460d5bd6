package toolbox

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/trust"
	"github.com/tgp-go/tgp/vfs"
)

// Write strategies (git.write_strategy).
const (
	// Direct commits every change on the branch and pushes it, replaying
	// it on the remote's new head when another agent pushed first.
	Direct = "direct"
	// PullRequest commits changes on a tgp/… branch, pushes it and opens
	// or updates a pull request.
	PullRequest = "pr"
)

// Config is what a Box is built from. The kernel fills it from its
// configuration; nothing in it is read from the environment here.
type Config struct {
	// Git configures the repository: remote (a relative local path is
	// taken as given), branch, depth, token, author, retry, progress,
	// environment.
	Git gitbackend.Config
	// Strategy is Direct (the default when empty) or PullRequest.
	Strategy string
	PR       PRConfig
	// BlockUpwardTraversal is the jail's fs.block_upward_traversal, for
	// the sandbox bridge's paths (SandboxFS).
	BlockUpwardTraversal bool
	// Checker gives the check_tool results a pull request's description
	// lists (nil: the tools are listed unchecked).
	Checker ToolChecker
	// RefreshEvery is how old the last remote check may get before a read
	// checks again (git.refresh_interval); RefreshOff checks at Open only.
	RefreshEvery time.Duration
	RefreshOff   bool
	// OnRefresh receive every refresh that moved the root or was blocked
	// by local edits.
	OnRefresh []func(RefreshEvent)
	// SandboxDecls are TypeScript members Scaffold adds to the tgp object
	// in tools/tgp-env.d.ts: the host functions (hostfunc.Declarations).
	SandboxDecls string
	// TrustedSigners, when set (sandbox.trusted_signers), are the keys
	// whose signed commits may carry code that runs (CheckTrust).
	TrustedSigners *trust.AllowedSigners
}

// PRConfig configures the pull-request strategy.
type PRConfig struct {
	// Per is "session" (one branch and pull request per session, the
	// default) or "tool" (one per tool).
	Per string
	// Opener opens the pull requests (nil: no host; the branch is pushed
	// and the note says so); OpenerErr, when set, is why none could be
	// made from the configuration (returned where one is needed).
	Opener    PROpener
	OpenerErr error
	// MissingTokenEnv, when set, names the empty variable the forge needs
	// a token from: a change then fails before anything is pushed.
	MissingTokenEnv string
	// Provider is the host's kind (github, gitlab, bitbucket, gitea,
	// forgejo; empty: none configured), Host its display name (GitLab),
	// Term its word for a pull request ("merge request"; empty: "pull
	// request") and TokenEnv the variable its token came from, for the
	// messages a refused token gives.
	Provider string
	Host     string
	Term     string
	TokenEnv string
	// Session names the session: boxes given the same name add their
	// commits to one branch (tgp/session-<name>) and pull request.
	Session string
	// Resume continues the session the last box on this root recorded
	// (in .git) while its pull request is open.
	Resume bool
}

// Box is one root's toolbox. Its methods are safe for concurrent use once
// Open returned.
type Box struct {
	cfg Config
	fs  *vfs.FS
	cat *catalog

	repo      atomic.Pointer[gitbackend.Repo]
	opened    atomic.Bool
	hydration *gitbackend.HydrateResult
	branch    string

	// uncommitted are paths a persist wrote to the root but could not
	// commit (it failed before the commit existed). The next persist
	// commits them with its own change, so meta.json never reaches the
	// remote without the tools it lists.
	uncommittedMu sync.Mutex
	uncommitted   map[string]bool

	// refresh tracks the remote checks of a long-lived box.
	refresh refresher

	prMu sync.Mutex
	pr   prState

	// prov is the tools' history and signatures (trust.go).
	prov provenance
}

// New builds the Box of the root fsys. It touches neither the disk nor the
// remote: Open does.
func New(fsys *vfs.FS, cfg Config) *Box {
	if cfg.Strategy == "" {
		cfg.Strategy = Direct
	}
	return &Box{
		cfg:    cfg,
		fs:     fsys,
		cat:    &catalog{fs: fsys},
		branch: cfg.Git.Branch,
		pr:     prState{branches: map[string]string{}, tools: map[string]bool{}, prs: map[string]*PR{}},
	}
}

// Open opens (or, with a remote, creates) the root's repository, brings it
// up to the remote (clone or fetch and fast-forward), loads the registry
// and finds what an earlier process left uncommitted. Without a remote and
// without a repository the root is used as it is.
func (b *Box) Open(ctx context.Context) error {
	if err := b.openRepo(ctx); err != nil {
		return err
	}
	if repo := b.Repo(); repo != nil {
		res, err := repo.Hydrate(ctx)
		if err != nil {
			return err
		}
		b.hydration = res
		b.refresh.mu.Lock()
		b.refresh.last = time.Now() // Open asked the remote
		b.refresh.mu.Unlock()
		if b.branch == "" {
			b.branch = res.Branch // the remote's default branch, now known
		}
	}
	if err := b.cat.load(b.indexHashes()); err != nil {
		return err
	}
	b.recoverUncommitted(ctx)
	if b.cfg.PR.Resume && b.cfg.Strategy == PullRequest && b.Repo() != nil {
		b.resumeSession(ctx)
	}
	b.opened.Store(true)
	return nil
}

// openRepo opens the repository with the catalog as its hook.
func (b *Box) openRepo(ctx context.Context) error {
	if old := b.repo.Swap(nil); old != nil {
		_ = old.Close() // an earlier Open that failed after opening it
	}
	opts := []gitbackend.Option{gitbackend.WithHook(b.cat)}
	if !b.fs.InMemory() {
		opts = append(opts, gitbackend.WithLockFile(gitbackend.LockFilePath(b.fs.Root())))
	}
	repo, err := gitbackend.Open(ctx, b.fs.Billy(), b.cfg.Git, opts...)
	if errors.Is(err, gitbackend.ErrNoRepository) {
		return nil // a plain directory: the box works on it as it is
	}
	if err != nil {
		return err
	}
	b.repo.Store(repo)
	return nil
}

// Close writes what is still in memory and releases the repository.
func (b *Box) Close(ctx context.Context) error {
	repo := b.repo.Load()
	if repo == nil {
		return nil
	}
	return errors.Join(repo.Flush(ctx), repo.Close())
}

// FS is the root.
func (b *Box) FS() *vfs.FS { return b.fs }

// Repo is the root's repository, nil before Open and when the root is a
// plain directory.
func (b *Box) Repo() *gitbackend.Repo { return b.repo.Load() }

// Branch is the branch the root follows: the configured one, else the
// remote's default once Open asked it ("" before).
func (b *Box) Branch() string { return b.branch }

// Strategy is the write strategy (Direct or PullRequest).
func (b *Box) Strategy() string { return b.cfg.Strategy }

// Registry is the current tool registry (nil before Open).
func (b *Box) Registry() *registry.Registry { return b.cat.current() }

// Find ranks the registry's tools (find_tools); nothing before Open.
func (b *Box) Find(query string, limit int) []registry.Match {
	if r := b.cat.current(); r != nil {
		return r.Find(query, limit)
	}
	return nil
}

// Status is the toolbox's part of `tgp status`.
type Status struct {
	Tools     int
	Hydration string
	// Branch, Head and Pending (unpushed commits) come from the
	// repository; empty without one.
	Branch  string
	Head    string
	Pending int
	// PendingCommits lists the unpushed commits ("abc1234 subject").
	PendingCommits []string
	// Unlanded lists the journal's entries not landed yet; JournalError
	// says why the journal could not be read.
	Unlanded     []gitbackend.JournalPending
	JournalError string
	// Uncommitted are paths written to the root whose commit failed.
	Uncommitted []string
	Refresh     RefreshStatus
	// UnverifiedCarries are the refs under refs/tgp/carry/ on the remote
	// that no push lands or deletes (gitbackend.Repo.UnverifiedCarries):
	// "<ref> <commit>: <why>".
	UnverifiedCarries []string
	// Warnings come from the repository (refused machine-queue tickets).
	Warnings []string
}

// Status reports the registry, the repository and the remote checks.
func (b *Box) Status(ctx context.Context) (Status, error) {
	var st Status
	if r := b.Registry(); r != nil {
		st.Tools = r.Len()
	}
	if b.hydration != nil {
		st.Hydration = b.hydration.Action
	}
	if repo := b.Repo(); repo != nil {
		rs, err := repo.Status(ctx)
		if err != nil {
			return st, err
		}
		st.Branch, st.Head, st.Pending, st.PendingCommits = rs.Branch, rs.Head, rs.Ahead, rs.PendingCommits
		st.Unlanded, st.JournalError = rs.Unlanded, rs.JournalError
		st.Warnings = rs.Warnings
	}
	st.Uncommitted = b.uncommittedPaths()
	st.Refresh = b.RefreshStatus()
	if repo := b.Repo(); repo != nil && st.Hydration != "offline" && st.Refresh.Error == "" {
		// Not when the remote did not answer the boot or the last check:
		// the status would wait on it again for nothing.
		st.UnverifiedCarries = unverifiedCarries(ctx, repo)
	}
	return st, nil
}

// unverifiedCarries asks the remote for the carry refs nobody lands,
// best effort: a remote that does not answer within a few seconds leaves
// the list empty rather than the status waiting on it.
func unverifiedCarries(ctx context.Context, repo *gitbackend.Repo) []string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := repo.UnverifiedCarries(ctx)
	if err != nil {
		return nil
	}
	return list
}
