package kernel

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/tgp-go/tgp/forge"
	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/tools"
	gittools "github.com/tgp-go/tgp/tools/git"
	"github.com/tgp-go/tgp/vfs"
)

// Kernel is one agent session's view of the shared toolbox.
type Kernel struct {
	cfg     *Config
	opts    options
	fs      *vfs.FS
	set     *tools.Set
	mu      sync.Mutex
	booted  bool
	closers []func(context.Context) error

	repo      *gitbackend.Repo
	hydration *gitbackend.HydrateResult

	regMu    sync.Mutex
	reg      *registry.Registry
	regStale bool

	// uncommitted are paths a persist wrote to the root but could not
	// commit (it failed before the commit existed). The next persist
	// commits them with its own change, so meta.json never reaches the
	// remote without the tools it lists.
	uncommittedMu sync.Mutex
	uncommitted   map[string]bool

	// refresh tracks the remote checks of a long-lived kernel.
	refresh refresher

	runner *sandbox.Runner
	sql    tools.SQLProvider

	prMu sync.Mutex
	pr   prState
}

// gitRepository is go-git's repository type, named for the hook signatures.
type gitRepository = git.Repository

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

// WithMemoryFS keeps the root (worktree and .git) in memory: no disk at all.
func WithMemoryFS() Option { return func(o *options) { o.memory = true } }

// WithApprover sets the callback asked when the approval policy requires it.
func WithApprover(a tools.Approver) Option { return func(o *options) { o.approver = a } }

// WithEventHook receives every tool event (start, end, error, truncated).
func WithEventHook(h func(tools.Event)) Option {
	return func(o *options) { o.hooks = append(o.hooks, h) }
}

// WithProgress receives clone/fetch progress lines.
func WithProgress(f func(string)) Option { return func(o *options) { o.progress = f } }

// WithHTTPClient is used for HTTP remotes, fetch from tools and the forge.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.httpClient = c } }

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
	cfg, err := LoadConfig(LoadOptions{File: o.configFile, Required: o.configRequired, Environ: o.environ, Overrides: o.overrides})
	if err != nil {
		return nil, err
	}
	k := &Kernel{cfg: cfg, opts: o, pr: prState{branches: map[string]string{}, tools: map[string]bool{}, prs: map[string]*forge.PR{}}}
	if o.memory {
		k.fs = vfs.NewMemory()
	} else {
		root := cfg.RootDir
		if !filepath.IsAbs(root) && o.baseDir != "" {
			root = filepath.Join(o.baseDir, root)
		}
		if k.fs, err = vfs.NewOS(root); err != nil {
			return nil, fmt.Errorf("kernel: root %s: %w", root, err)
		}
	}
	k.set = tools.NewSet(
		tools.WithPolicy(tools.Policy(cfg.Approval.Policy)),
		tools.WithApprover(o.approver),
		tools.WithClassifier(classify),
	)
	for _, h := range o.hooks {
		tools.WithEventHook(h)(k.set)
	}
	if err := k.set.Add(tools.FileTools(k.fs, k, tools.FileToolsConfig{
		BlockUpwardTraversal: cfg.FS.BlockUpwardTraversal,
	})...); err != nil {
		return nil, err
	}
	if err := k.openSQL(ctx); err != nil {
		return nil, err
	}
	if err := k.set.Add(k.forgeTools()...); err != nil {
		return nil, err
	}
	if cfg.Tools.Git.Enabled {
		if err := k.set.Add(gittools.Tools(gittools.Deps{
			FS: k.fs, Repo: k.Repo, Persister: k,
			TimeoutMS: cfg.Tools.Git.TimeoutMS, MaxBytes: cfg.Tools.Git.MaxBytes,
			Environ: k.environ(), AuthorName: cfg.Git.Author.Name, AuthorEmail: cfg.Git.Author.Email,
		})...); err != nil {
			return nil, err
		}
	}
	if err := k.set.Add(k.shellTools()...); err != nil {
		return nil, err
	}
	if err := k.set.Add(tools.FindTool(func() tools.Finder {
		if r := k.Registry(); r != nil {
			return r
		}
		return nil
	})); err != nil {
		return nil, err
	}
	return k, nil
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

// Config returns the effective configuration.
func (k *Kernel) Config() Config { return *k.cfg }

// FS returns the kernel's jailed filesystem.
func (k *Kernel) FS() *vfs.FS { return k.fs }

// Boot hydrates the root from the remote (clone or fetch + fast-forward).
// Without a remote the root is used as it is.
func (k *Kernel) Boot(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.booted {
		return nil
	}
	if err := k.openRepo(ctx); err != nil {
		return fmt.Errorf("boot: %w", err)
	}
	if k.repo != nil {
		res, err := k.repo.Hydrate(ctx)
		if err != nil {
			return fmt.Errorf("boot: %w", err)
		}
		k.hydration = res
		k.refresh.last = time.Now() // boot asked the remote
		if k.cfg.Git.Branch == "" {
			k.cfg.Git.Branch = res.Branch // the remote's default branch, now known
		}
	}
	if err := k.loadRegistry(); err != nil {
		return fmt.Errorf("boot: %w", err)
	}
	k.recoverUncommitted(ctx)
	if k.opts.resumeSession && k.cfg.Git.WriteStrategy == "pr" && k.repo != nil {
		k.resumeSession(ctx)
	}
	k.booted = true
	return nil
}

// Repo is the root's git repository, nil when the root is a plain
// directory. Valid after Boot.
func (k *Kernel) Repo() *gitbackend.Repo { return k.repo }

// Status reports the root, the remote and the registry.
func (k *Kernel) Status(ctx context.Context) (Status, error) {
	st := Status{Root: k.fs.Root(), Remote: redactURL(k.cfg.Git.Remote), Strategy: k.cfg.Git.WriteStrategy, Booted: k.booted}
	if st.Root == "" {
		st.Root = "(memory)"
	}
	if r := k.Registry(); r != nil {
		st.Tools = r.Len()
	}
	if k.hydration != nil {
		st.Hydration = k.hydration.Action
	}
	if k.repo != nil {
		rs, err := k.repo.Status(ctx)
		if err != nil {
			return st, err
		}
		st.Branch, st.Head, st.Pending = rs.Branch, rs.Head, rs.Ahead
	}
	st.Uncommitted = k.uncommittedPaths()
	st.Refresh = k.refreshStatus()
	return st, nil
}

func redactURL(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if at := strings.Index(u[i+3:], "@"); at >= 0 {
			return u[:i+3] + "***@" + u[i+3+at+1:]
		}
	}
	return u
}

// Tools lists every tool, sorted by name.
func (k *Kernel) Tools() []*tools.Tool { return k.set.List() }

// Set is the kernel's tool set (for adapters such as the MCP server).
func (k *Kernel) Set() *tools.Set { return k.set }

// Call runs one tool. The error is always a *tools.Error.
func (k *Kernel) Call(ctx context.Context, name string, args json.RawMessage) (tools.Result, error) {
	stale := k.maybeRefresh(ctx, name)
	res, err := k.set.Call(ctx, name, args)
	if err == nil && stale != "" {
		res.Stale = stale
	}
	return res, err
}

// Shutdown flushes and closes everything; a change that could not be
// pushed is reported, never dropped silently.
func (k *Kernel) Shutdown(ctx context.Context) error {
	var errs []error
	for i := len(k.closers) - 1; i >= 0; i-- {
		if err := k.closers[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	k.closers = nil
	return errors.Join(errs...)
}

// Scaffold creates tools/ and meta.json in the root if they are missing
// (`tgp init`) and returns what it created, relative to the root.
func (k *Kernel) Scaffold() ([]string, error) {
	var created []string
	if _, err := k.fs.Stat("tools"); errors.Is(err, fs.ErrNotExist) {
		if err := k.fs.MkdirAll("tools", 0o755); err != nil {
			return nil, err
		}
		created = append(created, "tools/")
	} else if err != nil {
		return nil, err
	}
	if _, err := k.fs.Stat(metaFile); errors.Is(err, fs.ErrNotExist) {
		if err := k.fs.WriteFile(metaFile, k.registryJSON(), 0o644); err != nil {
			return nil, err
		}
		created = append(created, metaFile)
	} else if err != nil {
		return nil, err
	}
	// Editor support: the sandbox's globals and @tgp/std typed, and a
	// tsconfig that checks tools/ with them (.d.ts files are not tools).
	for dst, src := range map[string]string{"tools/tgp-env.d.ts": "scaffold/tgp-env.d.ts", "tsconfig.json": "scaffold/tsconfig.json"} {
		if _, err := k.fs.Stat(dst); errors.Is(err, fs.ErrNotExist) {
			b, err := scaffoldFiles.ReadFile(src)
			if err != nil {
				return nil, err
			}
			if err := k.fs.WriteFile(dst, b, 0o644); err != nil {
				return nil, err
			}
			created = append(created, dst)
		} else if err != nil {
			return nil, err
		}
	}
	sort.Strings(created)
	k.excludeLocally("/tsconfig.json", "/tools/tgp-env.d.ts")
	return created, nil
}

// excludeLocally lists editor files in .git/info/exclude: they serve this
// checkout and stay out of git_status and of the shared toolbox unless
// someone adds them on purpose.
func (k *Kernel) excludeLocally(patterns ...string) {
	if k.fs.InMemory() || k.fs.Root() == "" {
		return
	}
	gitDir := filepath.Join(k.fs.Root(), ".git")
	if info, err := os.Stat(gitDir); err != nil || !info.IsDir() {
		return
	}
	p := filepath.Join(gitDir, "info", "exclude")
	data, _ := os.ReadFile(p)
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add strings.Builder
	for _, pat := range patterns {
		if !have[pat] {
			add.WriteString(pat + "\n")
		}
	}
	if add.Len() == 0 {
		return
	}
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		data = append(data, '\n')
	}
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.WriteFile(p, append(data, add.String()...), 0o644)
}

//go:embed scaffold/tgp-env.d.ts scaffold/tsconfig.json
var scaffoldFiles embed.FS

const metaFile = "meta.json"

// registryJSON is the registry as written to meta.json.
func (k *Kernel) registryJSON() []byte {
	if r := k.Registry(); r != nil {
		return r.Marshal()
	}
	return registry.New().Marshal()
}
