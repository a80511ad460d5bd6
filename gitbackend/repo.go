package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/gofrs/flock"
	"go.opentelemetry.io/otel/attribute"

	"github.com/tgp-go/tgp/internal/gitformat/packfile"
	"github.com/tgp-go/tgp/internal/telemetry"
)

// Identity is a commit author or committer.
type Identity struct{ Name, Email string }

// RetryConfig bounds the push/replay loop.
type RetryConfig struct {
	// Deadline bounds a push (every attempt, and the wait for this
	// machine's turn); a push not done by then leaves its commits pending
	// and says which. Zero: 2 minutes.
	Deadline time.Duration
	// BaseDelay is the first backoff step between attempts.
	BaseDelay time.Duration
	// MaxAttempts, when positive, also bounds a pull-request branch's
	// push attempts; direct pushes are bounded by Deadline only.
	MaxAttempts int
	// NoCarry turns carrying off (carry.go): a push that loses leaves
	// nothing on the remote for the winner to land.
	NoCarry bool
}

// Config says which remote branch the root mirrors and how to commit.
type Config struct {
	Remote string
	// Branch is the remote branch the root mirrors. Empty follows the
	// remote's HEAD like git clone (main for an empty remote whose HEAD
	// cannot be read).
	Branch string
	Depth  int
	// Token is the HTTP(S) password (basic auth); the kernel reads it from
	// the environment.
	Token string
	// TokenUser is the basic-auth user name sent with Token; empty sends
	// x-access-token (GitHub's). Hosts that read it: Bitbucket wants
	// x-token-auth with an access token, GitLab documents oauth2.
	TokenUser string
	// Author signs commits; empty falls back to the environment and then
	// the repository's user.name / user.email.
	Author Identity
	// SigningKey is the path of an unencrypted SSH private key that signs
	// every commit (signing.go); empty: git's commit.gpgsign,
	// gpg.format=ssh and user.signingkey, else unsigned.
	SigningKey string
	Retry      RetryConfig
	// LockDir is where the processes of this machine that push to one
	// network remote take turns and batch their commits (machine.go);
	// empty: each process pushes on its own.
	LockDir string
	// CarryKey is the fleet's secret that proves a carry (carryproof.go;
	// the kernel reads it from the variable git.carry_key_env names).
	// Empty: a network remote gets no carries, left or landed.
	CarryKey []byte
	// DeferReplays lets the root take a replay its persist pushed to a
	// local remote when something next needs the root, not at once
	// (pending.go): under a burst of writes the next persist folds it into
	// its own commit.
	DeferReplays bool
	// PushesPerMinute keeps this machine's pushes to the remote within a
	// budget: no push starts that would make more than this many in any
	// window of BudgetWindow (0: no budget). Writes wait in the batch
	// meanwhile, so one push carries every write waiting on the machine.
	PushesPerMinute int
	// ReadsPerSecond likewise bounds the sessions that only read (fetches,
	// tip checks), per second (0: no budget).
	ReadsPerSecond int
	// BudgetWindow is the push budget's window (0: a minute); tests
	// shorten it.
	BudgetWindow time.Duration
	// Journal, when set, records every write to a network remote in a
	// database shared by the machines pushing to it, and one elected
	// pusher pushes them in batches within the fleet's push budget
	// (journal.go).
	Journal Journal
	// JournalAckDurable makes a write through the Journal return as soon
	// as its entry is recorded (PersistResult.Unlanded, JournalID): the
	// entry lands with the next push any process of the fleet leads (a
	// writer that waits for its landing, a boot or refresh of this root,
	// DrainJournal). Boots and refreshes still wait for their landing.
	JournalAckDurable bool
	// Progress receives clone/fetch progress lines. A line ending in
	// "\r" is a counter the next line replaces (a pack being received:
	// objects and bytes): a terminal rewrites it in place, a log can
	// drop it.
	Progress func(string)
	// Environ is consulted for the commit identity (GIT_AUTHOR_*,
	// GIT_COMMITTER_*, HOME and the GIT_CONFIG_* variables; nil:
	// os.Environ()).
	Environ []string
	// urlAuth is what credentials Open took out of Remote make
	// (remoteurl.go); Token, when set, wins over it.
	urlAuth transport.AuthMethod
}

// auth is the basic auth sent to an HTTP(S) remote: Token as the
// password, TokenUser (or x-access-token) as the user.
func (c Config) auth() transport.AuthMethod {
	if c.Token == "" && c.urlAuth != nil {
		return c.urlAuth
	}
	if c.TokenUser == "" || c.Token == "" {
		return basicAuth(c.Token)
	}
	return &githttp.BasicAuth{Username: c.TokenUser, Password: c.Token}
}

// Hook regenerates derived files after a replay put other agents' changes
// into the worktree (the kernel rebuilds meta.json); it returns the paths
// it wrote.
type Hook interface {
	Regenerate(ctx context.Context) ([]string, error)
}

// IncrementalHook is a Hook that can regenerate from the paths a replay
// changed in the worktree instead of reading every file again.
type IncrementalHook interface {
	Hook
	RegenerateChanged(ctx context.Context, changed []string) ([]string, error)
}

// TreeHook is a Hook that derives its files from a replay's merged tree
// instead of the worktree. A replay then touches neither the worktree nor
// the index until the push is done: Persist brings the root to the
// replayed commit once the remote's lock is released, so the writers
// queued on that lock wait for no file of this root to be written.
type TreeHook interface {
	Hook
	// DeriveFromTree is told the paths the replay changed since the last
	// call (or since the commit the root is at) and reads the merged tree
	// through t; it returns the derived files' new content (path to
	// bytes; none: nothing to commit). ok false means it cannot (its
	// state is not up to date): the replay then checks the tree out and
	// calls Regenerate.
	DeriveFromTree(ctx context.Context, changed []string, t TreeReader) (files map[string][]byte, ok bool, err error)
}

// BranchHook is a Hook that also derives its files for PersistBranch,
// which commits on a branch the root is not on (the pull-request
// strategy): other roots may have committed there, so the root's own
// derived files, made for the base branch, would drop what they added.
type BranchHook interface {
	Hook
	// DeriveOnBranch is told the paths a commit on the branch changes
	// and reads that commit's tree through t, whose derived files are
	// still the branch tip's; it returns their new content. ok false
	// means it cannot (the tip's derived files are missing or unreadable):
	// the root's own are committed. It must not change the hook's state,
	// which follows the root.
	DeriveOnBranch(ctx context.Context, changed []string, t TreeReader) (files map[string][]byte, ok bool, err error)
}

// TreeReader reads a tree a replay or PersistBranch made.
type TreeReader interface {
	// ReadFile returns what a checkout would write for p, a regular file
	// (ok false: p is absent, or not a regular file).
	ReadFile(p string) (data []byte, ok bool, err error)
	// Exists reports whether p is in the tree.
	Exists(p string) (bool, error)
}

// Repo is one root's repository. All methods are safe for concurrent use.
type Repo struct {
	wt     billy.Filesystem
	cfg    Config
	repo   *git.Repository
	store  *filesystem.Storage
	remote remoteStore
	// noCarry is set once the remote refused a push that deleted carries.
	noCarry atomic.Bool
	// pushes and reads are the machine's budgets with the remote (nil:
	// none; budget.go).
	pushes budget
	reads  budget
	// beforePush, set by a journal's pusher, records the commits a push
	// is about to land (journal.go); journalNotes are what the journal
	// made of the last persist (a fallback to a direct push).
	beforePush   func(items []*batchItem) error
	journalNotes []string
	// acking is set while a persist pushes: only a write may return
	// before it lands (Config.JournalAckDurable); journalAcked is the
	// entry it returned on (0: none).
	acking       bool
	journalAcked int64
	sem          chan struct{}
	flock        *flock.Flock
	hook         Hook
	sleep        func(context.Context, time.Duration) error
	jitter       func(time.Duration) time.Duration
	progress     io.Writer
	// notes are repairs made while opening (a broken .git), reported by
	// the next Hydrate.
	notes []string
	// dot is the .git directory; ov holds the objects of the persist in
	// progress (nil between persists); packer encodes their packs.
	dot    billy.Filesystem
	ov     *overlay
	packer packfile.Encoder
	// packsWritten counts the packs flushed, to look for packs to merge
	// every few of them.
	packsWritten int
	// batch queues the changes of concurrent persists (group commit).
	batch persistBatch
	// idx caches the decoded index between persists (index.go).
	idx indexCache
	// graph is the commit-graph as last read (graph.go).
	graph graphCache
	// lastPush is how long the last push to a network remote took (read
	// under the lock; it paces this machine's pushes, machine.go).
	lastPush time.Duration
	// lastCycle is how long the last attempt that fetched took, from the
	// fetch to the push's answer: what a machine that lost a race needs
	// to land.
	lastCycle time.Duration
	// stopAt, in tests, stops a persist at a named point as if the
	// process had died there (stopped).
	stopAt func(point string) bool
	// lazy are the files of HEAD replays left unwritten (lazy.go).
	lazy lazyFiles
	// pending is a pushed replay the root has not taken yet (pending.go);
	// mayDefer is set while a persist's push may leave one.
	pending  atomic.Pointer[pendingReplay]
	mayDefer bool
	// sigs are the signatures of the persist in progress (Signatures).
	sigs *sigMemo
	// eolOnce reads core.autocrlf and core.eol (eolSettings).
	eolOnce           sync.Once
	autocrlf, coreEOL string
	// logOnce reads core.logAllRefUpdates (logMode).
	logOnce sync.Once
	logAll  string
}

// Option configures Open.
type Option func(*Repo)

// WithLockFile makes operations also take an OS file lock, for roots on
// disk shared by several processes.
func WithLockFile(path string) Option { return func(r *Repo) { r.flock = flock.New(path) } }

// WithHook sets the regeneration hook.
func WithHook(h Hook) Option { return func(r *Repo) { r.hook = h } }

// ErrNoRepository: the root has no repository and no remote to clone.
var ErrNoRepository = errors.New("not a git repository")

// Open opens the repository in wt (creating it when a remote is
// configured and wt has none). It does not touch the remote: call Hydrate.
func Open(ctx context.Context, wt billy.Filesystem, cfg Config, opts ...Option) (*Repo, error) {
	if cfg.Remote != "" {
		// A URL that can never work fails here, once, with its cause;
		// credentials in it become auth and go no further.
		if err := checkRemoteURL(cfg.Remote); err != nil {
			return nil, fmt.Errorf("open %s: %w", wt.Root(), err)
		}
		cfg.Remote, cfg.urlAuth = stripCredentials(cfg.Remote)
	}
	if cfg.Retry.MaxAttempts <= 0 {
		cfg.Retry.MaxAttempts = 8
	}
	if cfg.Retry.Deadline <= 0 {
		cfg.Retry.Deadline = 2 * time.Minute
	}
	if cfg.Retry.BaseDelay <= 0 {
		cfg.Retry.BaseDelay = 20 * time.Millisecond
	}
	r := &Repo{wt: wt, cfg: cfg, sem: make(chan struct{}, 1), sleep: sleepCtx, jitter: fullJitterDelay}
	for _, o := range opts {
		o(r)
	}
	if _, local := isLocalRemote(cfg.Remote); !local && cfg.Remote != "" {
		// A local remote is this machine's disk: no host to spare.
		if b := newRateBudget(cfg.PushesPerMinute, cfg.BudgetWindow, cfg.LockDir, cfg.Remote, "push"); b != nil {
			r.pushes = b
			if cfg.Journal != nil {
				r.pushes = &journalBudget{j: cfg.Journal, remote: redact(cfg.Remote), n: b.n, window: b.window, fallback: b}
			}
		}
		if b := newRateBudget(cfg.ReadsPerSecond, time.Second, cfg.LockDir, cfg.Remote, "read"); b != nil {
			r.reads = b
			if cfg.Journal != nil {
				// The host's read limit is the fleet's, as its push
				// budget is: every machine's fetches count in one log.
				r.reads = &journalBudget{j: cfg.Journal, remote: redact(cfg.Remote) + " (reads)", n: b.n, window: b.window, fallback: b}
			}
		}
	}
	if cfg.Progress != nil {
		r.progress = progressWriter(cfg.Progress)
	}
	if _, ok := osPathOf(wt, "."); ok {
		// Another process may have left files unwritten: looked for
		// at the first call that needs the root whole.
		r.lazy.n.Store(lazyUnknown)
	}
	if err := r.lock(ctx); err != nil {
		return nil, err
	}
	defer r.unlock()
	if err := r.openStore(); err != nil {
		return nil, err
	}
	if cfg.Remote != "" {
		// A process that died mid-clone or mid-write may have left the
		// .git half-made; make it usable before go-git reads it.
		r.notes = r.repairGitDir()
	}
	if _, err := wt.Stat(".git/HEAD"); err == nil {
		r.repo, err = git.Open(r.gitStorage(), wt)
		if err != nil && cfg.Remote != "" {
			// Unreadable (a garbled config, say): keep the data aside and
			// start afresh; Hydrate clones and reports it.
			aside, aerr := r.setAsideBroken()
			if aerr != nil {
				return nil, fmt.Errorf("open repository %s: %w (setting it aside: %v)", wt.Root(), err, aerr)
			}
			r.notes = append(r.notes, fmt.Sprintf("re-cloned: the repository could not be opened (%v); the old repository data is in %s", err, aside))
			err = nil
		}
		if err != nil {
			return nil, fmt.Errorf("open repository %s: %w", wt.Root(), err)
		}
	} else if cfg.Remote != "" {
		r.repo, err = git.InitWithOptions(r.gitStorage(), wt, git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(r.defaultBranch())})
		if err != nil {
			return nil, fmt.Errorf("init repository %s: %w", wt.Root(), err)
		}
	} else {
		return nil, ErrNoRepository
	}
	if cfg.Remote != "" {
		if err := r.setRemote(); err != nil {
			return nil, err
		}
	}
	if _, ok := r.remote.(*netRemote); ok && cfg.LockDir != "" {
		// Registered at boot: the id this root's machine-queue tickets
		// carry, and the leader checks (ticketcheck.go).
		r.rootIDLocked()
	}
	return r, nil
}

// openStore (re)opens the object and ref storage of wt/.git.
//
// On a root on disk whose .git is a directory, the store works on that
// directory directly: the jail resolves every path component of every
// operation (five lstat calls to read one ref), and .git holds only what
// go-git and this package write there (an agent's paths never reach it:
// the jail refuses them, a checkout refuses trees naming it).
func (r *Repo) openStore() error {
	var dot billy.Filesystem
	if full, ok := osPathOf(r.wt, ".git"); ok {
		if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
			dot = osfs.New(full)
		}
	}
	if dot == nil {
		var err error
		if dot, err = r.wt.Chroot(".git"); err != nil {
			return fmt.Errorf("open %s/.git: %w", r.wt.Root(), err)
		}
	}
	// Keep pack files open: otherwise go-git opens (and the jail
	// resolves) the pack for every object read. Close releases them.
	r.dot = dot
	r.store = filesystem.NewStorageWithOptions(&storeFS{Filesystem: dot}, cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true, MaxOpenDescriptors: 64})
	return nil
}

// defaultBranch is the branch to name before the remote has been asked
// which one it follows.
func (r *Repo) defaultBranch() string {
	if r.cfg.Branch != "" {
		return r.cfg.Branch
	}
	return "main"
}

func (r *Repo) setRemote() error {
	cfg, err := r.repo.Config()
	if err != nil {
		return err
	}
	if rc, ok := cfg.Remotes["origin"]; !ok || len(rc.URLs) == 0 || rc.URLs[0] != r.cfg.Remote {
		cfg.Remotes["origin"] = &config.RemoteConfig{Name: "origin", URLs: []string{r.cfg.Remote},
			Fetch: []config.RefSpec{config.RefSpec("+refs/heads/*:refs/remotes/origin/*")}}
		if r.cfg.Branch != "" {
			cfg.Branches[r.cfg.Branch] = &config.Branch{Name: r.cfg.Branch, Remote: "origin", Merge: plumbing.NewBranchReferenceName(r.cfg.Branch)}
		}
		if err := r.repo.SetConfig(cfg); err != nil {
			return fmt.Errorf("configure remote: %w", err)
		}
	}
	if p, ok := isLocalRemote(r.cfg.Remote); ok {
		lr, err := newLocalRemote(p, r.store)
		if err != nil {
			return err
		}
		r.remote = lr
	} else {
		r.remote = r.newNetRemote(r.repo)
	}
	return nil
}

// Close releases the open pack files. The Repo must not be used after.
func (r *Repo) Close() error {
	if err := r.lockOnly(context.Background()); err != nil {
		return err
	}
	defer r.unlock()
	// The root takes the replay its last persist pushed (if that fails,
	// the root stays at its own commit, which the remote has recreated).
	serr := r.settle(context.Background())
	// Files a replay left unwritten stay so (skip-worktree entries git
	// finds nothing wrong with): the next Repo on the root writes them at
	// its first call that reads the root. Materialize first leaves the
	// root whole.
	r.idx.packs.close()
	return errors.Join(serr, r.store.Close())
}

// Git returns the go-git repository. Use it only inside Do.
func (r *Repo) Git() *git.Repository { return r.repo }

// Worktree returns the worktree filesystem.
func (r *Repo) Worktree() billy.Filesystem { return r.wt }

// Do runs fn holding the repository's locks (in process and, on disk,
// across processes).
func (r *Repo) Do(ctx context.Context, fn func(*git.Repository) error) error {
	if err := r.lock(ctx); err != nil {
		return err
	}
	defer r.unlock()
	// fn may read any file of the root (the git tools do).
	if err := r.materializeLocked(ctx, nil); err != nil {
		return err
	}
	return fn(r.repo)
}

// Read runs fn holding the repository's locks, as Do does, without
// writing the files replays left unwritten first: for callers that read
// objects (commits, trees, blobs) and never the worktree, such as the
// trust checks before every exec_tool.
func (r *Repo) Read(ctx context.Context, fn func(*git.Repository) error) error {
	if err := r.lock(ctx); err != nil {
		return err
	}
	defer r.unlock()
	return fn(r.repo)
}

func (r *Repo) lock(ctx context.Context) error {
	if err := r.lockOnly(ctx); err != nil {
		return err
	}
	// Whatever takes the lock (but a persist, which folds it into its
	// commit) finds the root at the replay its last persist pushed.
	if err := r.settle(ctx); err != nil {
		r.unlock()
		return err
	}
	return nil
}

// lockOnly is lock without taking a pending replay.
func (r *Repo) lockOnly(ctx context.Context) error {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	return r.lockFile(ctx)
}

// lockFile takes the cross-process lock of an on-disk root, the
// in-process one being held; on failure it releases both.
func (r *Repo) lockFile(ctx context.Context) error {
	if r.flock != nil {
		_ = os.MkdirAll(filepath.Dir(r.flock.Path()), 0o755)
		ok, err := r.flock.TryLockContext(ctx, 5*time.Millisecond)
		if err != nil || !ok {
			<-r.sem
			if err == nil {
				err = ctx.Err()
			}
			return fmt.Errorf("lock %s: %w", r.flock.Path(), err)
		}
	}
	return nil
}

func (r *Repo) unlock() {
	if r.flock != nil {
		_ = r.flock.Unlock()
	}
	<-r.sem
}

// HydrateResult says what Hydrate did.
type HydrateResult struct {
	Action string // "cloned", "fetched", "up-to-date", "empty-remote", "local"
	Head   string
	Pushed int // local commits found unpushed and pushed (crash recovery)
	// Branch is the branch the root is on (the remote's HEAD when
	// git.branch was not configured).
	Branch string
	// Notes are one-line reports of repairs boot made (a half-made .git
	// re-cloned, a stale lock removed, ...), for the kernel to show.
	Notes []string
	// Pending lists the local commits boot could not push ("abc1234
	// subject"): they wait for the next persist; boot does not fail.
	Pending []string
}

// Hydrate brings the root up to the remote branch: clone into an empty
// root, fast-forward an existing one, and push commits a crashed process
// left unpushed.
func (r *Repo) Hydrate(ctx context.Context) (*HydrateResult, error) {
	if err := r.lock(ctx); err != nil {
		return nil, err
	}
	defer r.unlock()
	if err := r.materializeLocked(ctx, nil); err != nil {
		return nil, err
	}
	res, err := r.hydrate(ctx)
	if res != nil {
		for _, n := range res.Notes {
			r.progressf("%s", n)
		}
	}
	if err == nil && res != nil && res.Action != "cloned" {
		// What a fetch brought, and what pushes since the last extension
		// left out, join the commit-graph.
		if b, berr := r.branch(); berr == nil {
			r.extendGraphNoting(r.trackingTip(b))
		}
	}
	return res, err
}

func (r *Repo) hydrate(ctx context.Context) (*HydrateResult, error) {
	if r.remote == nil {
		h, _ := r.head()
		return &HydrateResult{Action: "local", Head: h.String()}, nil
	}
	branch, err := r.branch()
	if err != nil {
		return nil, err
	}
	head, err := r.head()
	if err != nil {
		return nil, err
	}
	known := r.trackingTip(branch)
	if head.IsZero() && known.IsZero() {
		// Nothing local: a clone (into a staging directory, moved into
		// place only when complete).
		cctx, span := telemetry.Start(ctx, "git.clone", attribute.Int("tgp.git.depth", r.cfg.Depth))
		res, err := r.cloneFresh(cctx)
		// A remote that did not answer (a daemon at its connection limit,
		// a dropped link) is tried again for a while: the clone left the
		// root as it was.
		deadline := time.Now().Add(min(r.cfg.Retry.Deadline, pendingBudget))
		for attempt := 1; err != nil && transientNetErr(err) && cctx.Err() == nil; attempt++ {
			d := r.jitter(expDelay(r.cfg.Retry.BaseDelay, attempt, 2*time.Second))
			if time.Now().Add(d).After(deadline) || r.sleep(cctx, d) != nil {
				break
			}
			res, err = r.cloneFresh(cctx)
		}
		telemetry.End(span, err)
		if res != nil {
			res.Notes = append(r.notes, res.Notes...)
			r.notes = nil
		}
		return res, err
	}
	if !head.IsZero() {
		c, err := object.GetCommit(r.store, head)
		if err == nil {
			_, err = c.Tree()
		}
		if err != nil {
			// The branch names a commit whose objects are gone: nothing
			// local can be recovered; put the broken .git aside and clone.
			res, err := r.recloneBroken(ctx, fmt.Sprintf("HEAD commit %s is unreadable (%v)", short(head), err))
			if res != nil {
				res.Notes = append(r.notes, res.Notes...)
				r.notes = nil
			}
			return res, err
		}
	}
	if head == known && r.atJournalTip(ctx, branch, head) {
		// The journal's pusher recorded this root's commit as the
		// remote's tip when it last pushed: every write of the fleet goes
		// through it, so the fetch would find nothing new. A read saved
		// for every warm boot of the fleet.
		res := &HydrateResult{Action: "up-to-date", Head: head.String(), Branch: branch, Notes: r.notes}
		r.notes = nil
		r.progressf("%s is at the journal's last landed tip %s: not fetched", branch, short(head))
		return res, nil
	}
	r.progressf("fetching %s from %s", branch, redact(r.cfg.Remote))
	fctx, span := telemetry.Start(ctx, "git.fetch")
	tip, err := r.fetchRetrying(fctx, branch, min(r.cfg.Retry.Deadline, pendingBudget))
	telemetry.End(span, err)
	res := &HydrateResult{Branch: branch, Notes: r.notes}
	r.notes = nil
	if err != nil {
		if permanentRemoteErr(err) || ctx.Err() != nil {
			return nil, r.wrapRemoteErr("fetch", err)
		}
		// The root has a commit to work from: a remote that does not
		// answer does not stop the agent. The next refresh or persist
		// reaches it again; local commits wait there, listed.
		res.Action, res.Head = "offline", head.String()
		if head != known {
			res.Pending = r.pendingList(known, head)
		}
		res.Notes = append(res.Notes, fmt.Sprintf("the remote could not be reached (%v): working on the root as it is (may be stale); the next refresh or persist reaches it again", r.wrapRemoteErr("fetch", err)))
		return res, nil
	}
	switch {
	case tip.IsZero() && head.IsZero():
		res.Action = "empty-remote"
		return res, nil
	case head == known || head.IsZero():
		// No local commits: move to the remote tip.
		if head == tip {
			res.Action, res.Head = "up-to-date", tip.String()
			return res, r.setTracking(branch, tip)
		}
		if err := r.moveTo(ctx, branch, head, tip); err != nil {
			return nil, err
		}
		res.Action, res.Head = "fetched", tip.String()
		r.progressf("%s %s at %s", res.Action, branch, short(tip))
		return res, nil
	default:
		// Local commits the remote does not have: push (replaying on the
		// remote tip if it moved). Nothing acknowledged is ever dropped.
		n, pending, err := r.pushPending(ctx, branch, tip)
		if err != nil {
			return nil, err
		}
		newHead, err := r.head()
		if err != nil {
			return nil, err
		}
		res.Action, res.Head, res.Pushed, res.Pending = "fetched", newHead.String(), n, pending
		if len(pending) > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%d local commit(s) not pushed yet (another writer was ahead; the next persist pushes them): %s", len(pending), strings.Join(pending, "; ")))
		}
		return res, nil
	}
}

// moveTo points the branch at target and updates worktree and index for
// the paths that differ from the current head.
func (r *Repo) moveTo(ctx context.Context, branch string, from, to plumbing.Hash) (err error) {
	ctx, span := telemetry.Start(ctx, "git.checkout")
	defer func() { telemetry.End(span, err) }()
	fromTree, err := r.treeOf(from)
	if err != nil {
		return err
	}
	toTree, err := r.treeOf(to)
	if err != nil {
		return err
	}
	changes, err := treeDiff(ctx, r.store, fromTree, toTree)
	if err != nil {
		return err
	}
	smudgeAll(changes, r.checkoutSmudgerFor(r.store, toTree))
	// The index through the Repo's cache, which reads every index git
	// writes (version 4, split).
	if err := applyChanges(r.gitStorage(), r.wt, changes, &lazyCheckout{files: &r.lazy}); err != nil {
		return err
	}
	if err := r.store.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch))); err != nil {
		return err
	}
	// A move to the remote's tip is git pull's fast-forward.
	if err := r.moveBranch(branch, to, "pull: Fast-forward"); err != nil {
		return err
	}
	return r.setTracking(branch, to)
}

func (r *Repo) treeOf(commit plumbing.Hash) (plumbing.Hash, error) {
	if commit.IsZero() {
		return plumbing.ZeroHash, nil
	}
	c, err := object.GetCommit(r.objs(), commit)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read commit %s: %w", commit, err)
	}
	return c.TreeHash, nil
}

// objs is where objects are read and written: the persist's overlay while
// one runs, else the store.
func (r *Repo) objs() storage.Storer {
	if r.ov != nil {
		return r.ov
	}
	return r.store
}

// branch is the branch HEAD is on.
func (r *Repo) branch() (string, error) {
	ref, err := r.store.Reference(plumbing.HEAD)
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	if ref.Type() != plumbing.SymbolicReference {
		return "", fmt.Errorf("HEAD is detached; check out a branch (e.g. %s) to persist changes", r.defaultBranch())
	}
	return ref.Target().Short(), nil
}

// head is the commit HEAD's branch points at (zero when unborn).
func (r *Repo) head() (plumbing.Hash, error) {
	ref, err := r.store.Reference(plumbing.HEAD)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if ref.Type() == plumbing.HashReference {
		return ref.Hash(), nil
	}
	b, err := r.store.Reference(ref.Target())
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return b.Hash(), nil
}

func (r *Repo) trackingTip(branch string) plumbing.Hash {
	ref, err := r.store.Reference(plumbing.NewRemoteReferenceName("origin", branch))
	if err != nil {
		return plumbing.ZeroHash
	}
	return ref.Hash()
}

func (r *Repo) setTracking(branch string, h plumbing.Hash) error {
	name := plumbing.NewRemoteReferenceName("origin", branch)
	if h.IsZero() {
		err := r.store.RemoveReference(name)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return nil
		}
		return err
	}
	if err := r.store.SetReference(plumbing.NewHashReference(name, h)); err != nil {
		return err
	}
	// The commits the remote branch brought join the commit-graph.
	r.graphMoved(h)
	return nil
}

func (r *Repo) progressf(format string, args ...any) {
	if r.cfg.Progress != nil {
		r.cfg.Progress(fmt.Sprintf(format, args...))
	}
}

func (r *Repo) wrapRemoteErr(op string, err error) error {
	return fmt.Errorf("%s %s: %w", op, redact(r.cfg.Remote), err)
}

// progressWriter turns go-git's sideband progress into lines.
func progressWriter(f func(string)) io.Writer { return &lineWriter{f: f} }

type lineWriter struct {
	f   func(string)
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexAny(string(w.buf), "\r\n")
		if i < 0 {
			return len(p), nil
		}
		if line := strings.TrimSpace(string(w.buf[:i])); line != "" {
			w.f(line)
		}
		w.buf = w.buf[i+1:]
	}
}

// LockFilePath is where the kernel keeps the cross-process lock of an
// on-disk root.
func LockFilePath(root string) string { return filepath.Join(root, ".git", "tgp.lock") }

// RepoStatus summarises the repository for `tgp status`.
type RepoStatus struct {
	Branch string
	Head   string
	Remote string
	// Ahead counts local commits not yet on the remote; PendingCommits
	// lists them ("abc1234 subject", oldest first).
	Ahead          int
	PendingCommits []string
	// Unlanded lists the journal's entries for the branch that have not
	// landed yet, from every machine; JournalError says why the journal
	// could not be read.
	Unlanded     []JournalPending
	JournalError string
	// Warnings are what the user should know of: machine-queue tickets
	// refused in the last day (forged, see ticketcheck.go).
	Warnings []string
}

// Status reads the branch, head and unpushed commit count.
func (r *Repo) Status(ctx context.Context) (RepoStatus, error) {
	if err := r.lock(ctx); err != nil {
		return RepoStatus{}, err
	}
	defer r.unlock()
	st := RepoStatus{Remote: redact(r.cfg.Remote)}
	st.Branch, _ = r.branch()
	st.Warnings = r.queueWarnings(st.Branch, time.Now())
	head, err := r.head()
	if err != nil {
		return st, err
	}
	if !head.IsZero() {
		st.Head = head.String()
	}
	if r.remote != nil && !head.IsZero() {
		base := r.trackingTip(st.Branch)
		local, err := r.localCommits(base, head)
		if err == nil {
			st.Ahead = len(local)
			if st.Ahead > 0 {
				st.PendingCommits = r.pendingList(base, head)
			}
		}
	}
	if r.cfg.Journal != nil && r.remote != nil && st.Branch != "" {
		if st.Unlanded, err = r.unlanded(ctx, st.Branch); err != nil {
			st.JournalError = err.Error()
		}
	}
	return st, nil
}
