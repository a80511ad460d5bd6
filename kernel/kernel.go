package kernel

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/tgp-go/tgp/forge"
	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/gitident"
	"github.com/tgp-go/tgp/internal/telemetry"
	"github.com/tgp-go/tgp/kernel/toolset"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/sandbox/hostapi"
	"github.com/tgp-go/tgp/shell/scope"
	"github.com/tgp-go/tgp/toolbox"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/trust"
	"github.com/tgp-go/tgp/vfs"
)

// Kernel is one agent session's view of the shared toolbox: it loads the
// configuration and wires the toolbox (repository, registry, write
// strategy) to the tools, the sandbox and the database.
type Kernel struct {
	cfg  *Config
	opts options
	fs   *vfs.FS
	// view is fs writing, before any operation on a path, the files of
	// the root's commit that persists left unwritten there (fill): what
	// FS hands out and the file and forge tools read.
	view *vfs.FS
	box  *toolbox.Box
	// journal is git.journal's, connected on first use (nil: none).
	journal gitbackend.Journal
	set     *tools.Set
	mu      sync.Mutex
	booted  bool
	closers []func(context.Context) error

	// prForge is the pull-request host (nil: none could be made, see the
	// toolbox's OpenerErr); checker is check_tool's analysis.
	prForge    forge.Forge
	prForgeErr error
	checker    tools.ToolChecker
	// diskOnly are the tools left out because the root is in memory.
	diskOnly map[string]bool
	scope    scopeState
	tel      *telemetry.T
	// signers are sandbox.trusted_signers' keys (nil: not set).
	signers *trust.AllowedSigners
}

type options struct {
	configFile     string
	configRequired bool
	environ        []string
	overrides      map[string]any
	memory         bool
	approver       tools.Approver
	hooks          []func(tools.Event)
	refreshHooks   []func(RefreshEvent)
	progress       func(string)
	httpClient     *http.Client
	baseDir        string
	db             *sql.DB
	dbDialect      string
	forge          forge.Forge
	session        string
	resumeSession  bool
	rootGrants     bool
	hostFuncs      []hostapi.HostFunc
	toolsets       []toolset.Toolset
	toolsetsGiven  bool
	errs           []error
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	wholeRoot      bool
}

// Option configures New.
type Option func(*options)

// WithConfigFile reads a YAML configuration file; it must exist.
func WithConfigFile(path string) Option {
	return func(o *options) { o.configFile, o.configRequired = path, true }
}

// WithOptionalConfigFile reads a YAML file if it exists (the CLI's default).
func WithOptionalConfigFile(path string) Option {
	return func(o *options) { o.configFile, o.configRequired = path, false }
}

// WithEnviron replaces os.Environ() for TGP_* settings and secrets.
func WithEnviron(env []string) Option { return func(o *options) { o.environ = env } }

// WithSetting sets one configuration key (the highest-precedence layer).
func WithSetting(key string, value any) Option {
	return func(o *options) {
		if o.overrides == nil {
			o.overrides = map[string]any{}
		}
		o.overrides[key] = value
	}
}

// WithRoot sets root_dir.
func WithRoot(dir string) Option { return WithSetting("root_dir", dir) }

// WithWholeRootAtShutdown makes Shutdown write the files other agents
// pushed that persists left unwritten and no call read (see
// gitbackend.Repo.Materialize), so that the root on disk holds every file
// of its commit for whoever reads it next without a kernel (the tgp CLI
// does this). Without it they stay skip-worktree entries, written by the
// next kernel's first call that reads the root: a short-lived host whose
// root is thrown away never writes them.
func WithWholeRootAtShutdown() Option { return func(o *options) { o.wholeRoot = true } }

// WithMemoryFS keeps the root (worktree and .git) in memory: no disk at all.
func WithMemoryFS() Option { return func(o *options) { o.memory = true } }

// WithApprover sets the callback asked when the approval policy requires it.
func WithApprover(a tools.Approver) Option { return func(o *options) { o.approver = a } }

// WithEventHook receives every tool event (start, end, error, truncated).
func WithEventHook(h func(tools.Event)) Option {
	return func(o *options) { o.hooks = append(o.hooks, h) }
}

// WithProgress receives clone/fetch progress lines. A line ending in
// "\r" is a counter the next line replaces (a pack being received:
// objects and bytes): a terminal rewrites it in place, a log can drop it.
func WithProgress(f func(string)) Option { return func(o *options) { o.progress = f } }

// WithHTTPClient is used for HTTP remotes, fetch from tools and the forge.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.httpClient = c } }

// WithTracerProvider records the kernel's spans (boot, tool calls,
// persists, refreshes, sandbox runs, shell commands, SQL transactions)
// with tp instead of the global provider (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracerProvider = tp }
}

// WithMeterProvider records the kernel's metrics (persist latency and
// retries, writes landed, tool calls and errors by kind) with mp instead
// of the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.meterProvider = mp }
}

// WithToolsets builds the kernel with these toolsets only, in this
// order (kernel/toolsets/files, git, sandbox, shell: a host imports what
// it uses, and links nothing else). Without it the kernel builds the
// registered ones (toolset.Register): every one when the program imports
// kernel/all, as cmd/tgp does; none otherwise, leaving the kernel's own
// find_tools and request_scope_expansion.
func WithToolsets(ts ...toolset.Toolset) Option {
	return func(o *options) { o.toolsets, o.toolsetsGiven = append(o.toolsets, ts...), true }
}

// WithBaseDir resolves a relative root_dir against dir instead of the
// working directory (the CLI passes the config file's directory).
func WithBaseDir(dir string) Option { return func(o *options) { o.baseDir = dir } }

// New loads the configuration and builds the kernel. It touches no remote:
// call Boot to hydrate.
func New(ctx context.Context, opts ...Option) (*Kernel, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := errors.Join(o.errs...); err != nil {
		return nil, err
	}
	cfg, err := LoadConfig(LoadOptions{File: o.configFile, Required: o.configRequired, Environ: o.environ, Overrides: o.overrides})
	if err != nil {
		return nil, err
	}
	k := &Kernel{cfg: cfg, opts: o}
	if err := k.checkSigningKey(); err != nil {
		return nil, err
	}
	if err := k.loadTrustedSigners(); err != nil {
		return nil, err
	}
	// The host's providers, else the global ones: otel's globals delegate
	// to whatever SDK the host installs later, and are no-ops without.
	tp, mp := o.tracerProvider, o.meterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	k.tel = telemetry.New(tp, mp)
	if o.memory {
		k.fs = vfs.NewMemory()
	} else {
		root := o.rootPath(cfg)
		if k.fs, err = vfs.NewOS(root); err != nil {
			return nil, fmt.Errorf("kernel: root %s: %w", root, err)
		}
	}
	// The toolbox keeps the plain FS: it reads the root while the
	// repository's lock is held (a persist's hooks), where a read that
	// wrote files would wait for that lock.
	k.view = k.fs.WithFill(k.fill)
	// The toolbox first: every tool that persists, reads the registry or
	// the repository is built on it.
	if dsn := k.cfg.Git.Journal; dsn != "" {
		open := toolset.JournalOpener()
		if open == nil {
			return nil, &ConfigError{Key: "git.journal", Problem: "this program links no journal: import github.com/tgp-go/tgp/kernel/all (or register one with toolset.RegisterJournal)"}
		}
		j, closeJournal := open(dsn)
		k.journal = j
		k.closers = append(k.closers, func(context.Context) error { closeJournal(); return nil })
	}
	sets := o.toolsets
	if !o.toolsetsGiven {
		sets = toolset.Registered()
	}
	sc := cfg.Sandbox
	for _, ts := range sets {
		if ts.Checker != nil {
			k.checker = ts.Checker(sc)
			break
		}
	}
	k.box = toolbox.New(k.fs, k.toolboxConfig())
	k.set = tools.NewSet(
		tools.WithPolicy(tools.Policy(cfg.Approval.Policy)),
		tools.WithApprover(o.approver),
		tools.WithClassifier(classify),
	)
	for _, h := range o.hooks {
		tools.WithEventHook(h)(k.set)
	}
	env := k.toolsetEnv()
	for _, ts := range sets {
		if ts.Build == nil {
			continue
		}
		ts2, err := ts.Build(ctx, env)
		k.closers = append(k.closers, env.Closers()...)
		env = k.toolsetEnv()
		if err != nil {
			return nil, err
		}
		if err := k.add(ts.Name, ts2...); err != nil {
			return nil, err
		}
	}
	if err := k.add(toolset.Core, tools.ScopeTool(k.expandScope), tools.FindTool(k.box)); err != nil {
		return nil, err
	}
	// Last in, first out: the repository's pending writes are flushed
	// before the sandbox, the shell and the database close.
	k.closers = append(k.closers, k.box.Close)
	return k, nil
}

// rootPath is the root directory a configuration names: root_dir,
// relative to WithBaseDir when it is relative.
func (o *options) rootPath(cfg *Config) string {
	root := cfg.RootDir
	if !filepath.IsAbs(root) && o.baseDir != "" {
		root = filepath.Join(o.baseDir, root)
	}
	return root
}

// ConfigFor is the configuration New would load with these options
// (defaults < file < environment < options), read without building
// anything.
func ConfigFor(opts ...Option) (*Config, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return LoadConfig(LoadOptions{File: o.configFile, Required: o.configRequired, Environ: o.environ, Overrides: o.overrides})
}

// ResolveRoot is the absolute root directory New would use with these
// options ("" for WithMemoryFS), found without creating anything: a
// command line can tell "no project here" from a project whose root is
// yet to be cloned before New makes the directory.
func ResolveRoot(opts ...Option) (string, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.memory {
		return "", nil
	}
	cfg, err := LoadConfig(LoadOptions{File: o.configFile, Required: o.configRequired, Environ: o.environ, Overrides: o.overrides})
	if err != nil {
		return "", err
	}
	return filepath.Abs(o.rootPath(cfg))
}

// classify maps errors of the lower packages to tool error kinds.
func classify(err error) tools.Kind {
	switch {
	case errors.Is(err, vfs.ErrViolation):
		return tools.KindSandboxViolation
	case errors.Is(err, gitbackend.ErrConflict):
		return tools.KindConflict
	}
	return ""
}

// Config returns the effective configuration (shell: as widened by
// add_to_scope decisions since New).
func (k *Kernel) Config() Config {
	k.scope.mu.Lock()
	defer k.scope.mu.Unlock()
	return *k.cfg
}

// FS returns the kernel's jailed filesystem: the whole root of the
// commit it is at. A persist that replays on other agents' commits
// leaves their new files unwritten on disk until something reads them
// (gitbackend.Repo.Materialize); this FS writes those at or beneath a
// path before it reads, lists, walks, writes or removes it, so a host
// sees every file without asking for it. Programs reading the root's
// directory directly (not through this FS, nor a tool call) do not:
// Materialize first, or WithWholeRootAtShutdown for the root a process
// leaves behind.
func (k *Kernel) FS() *vfs.FS { return k.view }

// fill writes the files persists left unwritten at or beneath rel, a
// path inside the jail (vfs.FS.WithFill). It costs an atomic load when
// there are none.
func (k *Kernel) fill(rel string) error {
	repo := k.box.Repo()
	if repo == nil || repo.Unwritten() == 0 {
		return nil
	}
	return repo.Materialize(k.ctx(context.Background()), rel)
}

// Boot hydrates the root from the remote (clone or fetch + fast-forward)
// and loads the registry (toolbox.Box.Open). Without a remote the root is
// used as it is.
func (k *Kernel) Boot(ctx context.Context) (err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.booted {
		return nil
	}
	ctx, span := telemetry.Start(k.ctx(ctx), "tgp.boot",
		attribute.Bool("tgp.remote", k.cfg.Git.Remote != ""), attribute.String("tgp.write_strategy", k.cfg.Git.WriteStrategy))
	defer func() {
		if err != nil {
			span.SetAttributes(telemetry.ErrorType(string(tools.KindOf(err))))
		} else if reg := k.box.Registry(); reg != nil {
			span.SetAttributes(attribute.Int("tgp.tools", reg.Len()))
		}
		telemetry.End(span, err)
	}()
	if err := k.box.Open(ctx); err != nil {
		if errors.Is(err, gitbackend.ErrAuth) {
			// Say where the token comes from: the one fix there is.
			env := k.cfg.Git.TokenEnv
			if Secret(k.environ(), env) == "" {
				return fmt.Errorf("boot: %w (no token: set the environment variable %s, named by git.token_env)", err, env)
			}
			return fmt.Errorf("boot: %w (the remote refused the token in %s, named by git.token_env)", err, env)
		}
		return fmt.Errorf("boot: %w", err)
	}
	if k.cfg.Git.Branch == "" {
		k.cfg.Git.Branch = k.box.Branch() // the remote's default branch, now known
	}
	k.booted = true
	return nil
}

// Toolbox is the kernel's toolbox: the root's repository, the registry and
// the write strategy, and the tools.Persister every mutating tool uses.
func (k *Kernel) Toolbox() *toolbox.Box { return k.box }

// Repo is the root's git repository, nil when the root is a plain
// directory. Valid after Boot.
func (k *Kernel) Repo() *gitbackend.Repo { return k.box.Repo() }

// Registry returns the current tool registry (nil before Boot).
func (k *Kernel) Registry() *registry.Registry { return k.box.Registry() }

// Persist persists a change the way the mutating tools do
// (toolbox.Box.Persist); kept for hosts that call it directly.
func (k *Kernel) Persist(ctx context.Context, ch tools.Change) (*tools.Persisted, error) {
	return k.box.Persist(k.ctx(ctx), ch)
}

// DrainJournal lands git.journal's waiting entries of the remote's
// branch when no other process is pushing them: with git.journal_ack:
// journal no writer waits for its own, so `tgp serve` calls this now and
// then. It returns how many entries it landed (0: none waiting, another
// process has the pusher's turn, or no journal).
func (k *Kernel) DrainJournal(ctx context.Context) (int, error) {
	if k.journal == nil {
		return 0, nil
	}
	return k.box.DrainJournal(k.ctx(ctx))
}

// JournalPending is an entry of git.journal not landed yet.
type JournalPending = gitbackend.JournalPending

// Unlanded lists git.journal's entries for the remote's branch not
// landed yet, from every machine, oldest first: the writes acknowledged
// once durable (git.journal_ack: journal) and those whose writers still
// wait. None without a journal, or before Boot.
func (k *Kernel) Unlanded(ctx context.Context) ([]JournalPending, error) {
	r := k.box.Repo()
	if k.journal == nil || r == nil {
		return nil, nil
	}
	return r.Unlanded(k.ctx(ctx))
}

// Status reports the root, the remote and the registry.
func (k *Kernel) Status(ctx context.Context) (Status, error) {
	st := Status{Root: k.fs.Root(), Remote: gitbackend.RedactURL(k.cfg.Git.Remote), Strategy: k.cfg.Git.WriteStrategy, Booted: k.booted}
	if st.Root == "" {
		st.Root = "(memory)"
	}
	bs, err := k.box.Status(ctx)
	st.Tools, st.Hydration = bs.Tools, bs.Hydration
	if err != nil {
		return st, err
	}
	st.Branch, st.Head, st.Pending, st.PendingCommits = bs.Branch, bs.Head, bs.Pending, bs.PendingCommits
	st.Unlanded, st.JournalError = bs.Unlanded, bs.JournalError
	st.Uncommitted, st.Refresh, st.Warnings = bs.Uncommitted, bs.Refresh, bs.Warnings
	st.UnverifiedCarries = bs.UnverifiedCarries
	return st, nil
}

// CommitIdentity is who the kernel's commits name now (the author; git's
// resolution order, see gitbackend.Repo.Signatures), and whether it is
// the bot identity because nothing is configured: a host can say so once
// instead of letting commits appear as tgp-bot[bot] unannounced. ok is
// false before Boot and on a root that is no repository.
func (k *Kernel) CommitIdentity() (name, email string, bot, ok bool) {
	r := k.box.Repo()
	if r == nil {
		return "", "", false, false
	}
	a, c, err := r.Signatures(time.Now())
	if err != nil {
		return "", "", false, false
	}
	bot = a.Name == gitident.Bot.Name || a.Email == gitident.Bot.Email || c.Name == gitident.Bot.Name || c.Email == gitident.Bot.Email
	return a.Name, a.Email, bot, true
}

// Tools lists every tool, sorted by name.
func (k *Kernel) Tools() []*tools.Tool { return k.set.List() }

// Set is the kernel's tool set (for adapters such as the MCP server).
func (k *Kernel) Set() *tools.Set { return k.set }

// Call runs one tool. The error, when the call itself fails (bad
// arguments, a path outside the jail, an unknown tool, a conflict), is
// always a *tools.Error. A tool that runs and fails is a result: for
// exec_tool, forgetools.OutcomeOf(res) has Success false and its Err() the
// failure (ExecTool returns it as the error).
//
// Each call is a span "execute_tool <name>" (the GenAI semantic
// conventions' name), a child of ctx's span, with the outcome (ok or the
// error kind) and the result's size; arguments are never recorded.
func (k *Kernel) Call(ctx context.Context, name string, args json.RawMessage) (res tools.Result, err error) {
	ctx, span := telemetry.Start(k.ctx(ctx), "execute_tool "+name,
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", name))
	defer func() { k.endCall(ctx, span, name, res, err) }()
	// What the host allowed once holds for the session's next call only,
	// whatever that call is; asking for more expansions first adds up.
	if name != tools.ScopeToolName {
		if g, ok := k.takeGrant(tools.SessionFrom(ctx)); ok {
			ctx = scope.WithGrant(ctx, g)
		}
	}
	stale := ""
	t, _ := k.set.Get(name)
	if t != nil && t.Facts.ReadsToolbox {
		stale = k.box.MaybeRefresh(ctx)
	}
	if k.diskOnly[name] {
		return tools.Result{}, &tools.Error{Kind: tools.KindNotFound, Message: fmt.Sprintf(
			"%s is not available: this kernel's root is in memory (kernel.WithMemoryFS) and commands need real files; give the kernel a root_dir on disk", name)}
	}
	if err := k.materialize(ctx, t, args); err != nil {
		return tools.Result{}, tools.Wrap(tools.KindInternal, err, "write the files other agents pushed to the root")
	}
	res, err = k.set.Call(ctx, name, args)
	if err == nil && stale != "" {
		res.Stale = stale
	}
	return res, err
}

// ExecTool runs an agent tool (exec_tool, the sandbox toolset's) and
// returns its outcome typed. err is a *tools.Error when the call fails
// (a KindNotFound one when the kernel has no sandbox toolset), or the
// run's *sandbox.ExecError when the tool ran and failed (thrown, timed out,
// over its memory limit); the outcome (logs, duration) is returned in
// both cases when there is one.
func (k *Kernel) ExecTool(ctx context.Context, path string, args any) (*hostapi.Outcome, error) {
	return k.ExecToolAt(ctx, path, "", args)
}

// ExecToolAt is ExecTool running the tool as it was at ref (a commit,
// branch or tag; empty: as it is now), its imports read at the same
// commit (exec_tool's ref).
func (k *Kernel) ExecToolAt(ctx context.Context, path, ref string, args any) (*hostapi.Outcome, error) {
	a := map[string]any{"path": path, "args": args}
	if ref != "" {
		a["ref"] = ref
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return nil, &tools.Error{Kind: tools.KindBadArgs, Field: "args", Message: "args do not marshal to JSON: " + err.Error(), Err: err}
	}
	res, err := k.Call(ctx, "exec_tool", raw)
	if err != nil {
		return nil, err
	}
	out, _ := res.Value.(*hostapi.Outcome)
	return out, out.Err()
}

// materialize writes the files of the root's commit that persists left
// unwritten (other agents' new files, gitbackend.Repo.Materialize) before
// a call that may read them: the whole root, or only the path of a tool
// that reads nothing else (Facts.OnlyPath: write_file's).
func (k *Kernel) materialize(ctx context.Context, t *tools.Tool, args json.RawMessage) error {
	repo := k.box.Repo()
	if repo == nil || repo.Unwritten() == 0 {
		return nil
	}
	if t != nil && t.Facts.OnlyPath != "" {
		var a map[string]any
		if json.Unmarshal(args, &a) == nil {
			if p, ok := a[t.Facts.OnlyPath].(string); ok && p != "" {
				if rel, err := k.fs.Resolve(p); err == nil {
					return repo.Materialize(ctx, rel)
				}
			}
		}
	}
	return repo.Materialize(ctx)
}

// add adds a toolset's tools to the set, stamped with its name; on a
// root in memory it leaves out those that need real files
// (Facts.NeedsDisk) rather than list tools that always fail, and
// remembers them, for Call to say why they are missing.
func (k *Kernel) add(name string, ts ...*tools.Tool) error {
	keep := ts[:0:0]
	for _, t := range ts {
		t.Toolset = name
		if k.opts.memory && t.Facts.NeedsDisk {
			if k.diskOnly == nil {
				k.diskOnly = map[string]bool{}
			}
			k.diskOnly[t.Name] = true
			continue
		}
		keep = append(keep, t)
	}
	return k.set.Add(keep...)
}

// ctx gives ctx the kernel's telemetry, for the engines' spans.
func (k *Kernel) ctx(ctx context.Context) context.Context { return telemetry.With(ctx, k.tel) }

// endCall records a call's outcome on its span and in the metrics.
func (k *Kernel) endCall(ctx context.Context, span trace.Span, name string, res tools.Result, err error) {
	outcome := "ok"
	if err != nil {
		outcome = string(tools.KindOf(err))
		span.SetAttributes(telemetry.ErrorType(outcome))
		k.tel.ToolErrors.Add(ctx, 1, metric.WithAttributes(attribute.String("gen_ai.tool.name", name), telemetry.ErrorType(outcome)))
	} else {
		n := 0
		if s, ok := res.Value.(string); ok {
			n = len(s)
		} else if b, merr := json.Marshal(res.Value); merr == nil {
			n = len(b)
		}
		span.SetAttributes(attribute.Int("tgp.result.bytes", n), attribute.Bool("tgp.result.truncated", res.Truncated),
			attribute.Bool("tgp.result.stale", res.Stale != ""))
	}
	span.SetAttributes(attribute.String("tgp.outcome", outcome))
	k.tel.ToolCalls.Add(ctx, 1, metric.WithAttributes(attribute.String("gen_ai.tool.name", name), attribute.String("tgp.outcome", outcome)))
	telemetry.End(span, err)
}

// Shutdown flushes and closes everything; a change that could not be
// pushed is reported, never dropped silently.
func (k *Kernel) Shutdown(ctx context.Context) error {
	ctx = k.ctx(ctx)
	var errs []error
	if repo := k.box.Repo(); k.opts.wholeRoot && repo != nil && k.closers != nil {
		if err := repo.Materialize(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for i := len(k.closers) - 1; i >= 0; i-- {
		if err := k.closers[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	k.closers = nil
	return errors.Join(errs...)
}

// Scaffold creates tools/ and meta.json in the root if they are missing
// (`tgp init`), with the editor files, and returns what it created,
// relative to the root (toolbox.Box.Scaffold).
func (k *Kernel) Scaffold() ([]string, error) { return k.box.Scaffold() }

// environ is the environment the kernel reads (WithEnviron, else the
// process's).
func (k *Kernel) environ() []string {
	if k.opts.environ != nil {
		return k.opts.environ
	}
	return os.Environ()
}

// Status is what `tgp status` shows.
type Status struct {
	Root    string `json:"root"`
	Remote  string `json:"remote,omitempty"`
	Branch  string `json:"branch,omitempty"`
	Head    string `json:"head,omitempty"`
	Tools   int    `json:"tools"`
	Pending int    `json:"pending_pushes"`
	// PendingCommits lists the unpushed commits ("abc1234 subject",
	// oldest first): the next persist, refresh or boot pushes them.
	PendingCommits []string `json:"pending_commits,omitempty"`
	// Unlanded lists the entries of git.journal for the remote's branch
	// not landed yet, from every machine, oldest first; JournalError says
	// why the journal could not be read (its DSN redacted).
	Unlanded     []JournalPending `json:"unlanded,omitempty"`
	JournalError string           `json:"journal_error,omitempty"`
	// Uncommitted are paths written to the root whose commit failed;
	// they are committed with the next change.
	Uncommitted []string `json:"uncommitted,omitempty"`
	// Refresh says when the remote was last checked and whether the root
	// is behind it (git.refresh_interval).
	Refresh RefreshStatus `json:"refresh"`
	// UnverifiedCarries are refs under refs/tgp/carry/ on the remote
	// without the fleet's proof (git.carry_key_env): never landed, never
	// deleted by tgp, listed for a person to look at ("<ref> <commit>:
	// <why>").
	UnverifiedCarries []string `json:"unverified_carry_refs,omitempty"`
	Strategy          string   `json:"write_strategy"`
	Booted            bool     `json:"booted"`
	BootedIn          string   `json:"boot_time,omitempty"`
	Hydration         string   `json:"hydration,omitempty"`
	// Warnings are what the user should know of: tickets another process
	// forged in this machine's push queue, refused.
	Warnings []string `json:"warnings,omitempty"`
}

// toolsetEnv is what the kernel gives a toolset's Build.
func (k *Kernel) toolsetEnv() *toolset.Env {
	cfg := k.cfg
	env := &toolset.Env{
		FS: k.view, Raw: k.fs, Box: k.box, Set: k.set, Memory: k.opts.memory,
		BaseDir: k.opts.baseDir, HTTPClient: k.opts.httpClient, Environ: k.opts.environ,
		SecretEnvs: []string{cfg.Git.TokenEnv, cfg.Git.CarryKeyEnv, cfg.SQL.DSNEnv, cfg.Serve.TokenEnv},
		FSConfig:   cfg.FS, Sandbox: cfg.Sandbox, SQL: cfg.SQL, GitTools: cfg.Tools.Git,
		SigningKey: k.signingKey(), HostFuncs: k.opts.hostFuncs,
		DB: k.opts.db, DBDialect: k.opts.dbDialect, Checker: k.checker,
		Shell: k.openShell,
	}
	env.Author.Name, env.Author.Email = cfg.Git.Author.Name, cfg.Git.Author.Email
	return env
}
