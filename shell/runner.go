package shell

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/tgp-go/tgp/shell/scope"
)

// TrustedPath is the PATH commands are looked up in and children get,
// whatever the command line sets: a program copied into the root cannot
// stand in for an allowed command.
const TrustedPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ExecSubcommand is the first argument that makes a program the Landlock
// helper (see [ServeExecIfRequested]).
const ExecSubcommand = "__shellexec"

// Approver is asked before a dangerous command runs; commands are the
// command lines (argv joined) that need approval. ErrNoApprover (wrapped
// or not) says there was no one to ask.
type Approver func(ctx context.Context, commands []string) (bool, error)

// ErrNoApprover is what an Approver returns when it has no one to ask:
// the command is refused as it is without an Approver.
var ErrNoApprover = errors.New("shell: no approver")

// Runner runs command lines in one root under one scope. It is safe for
// concurrent use.
type Runner struct {
	root      string // absolute, symlinks resolved
	scopes    atomic.Pointer[Scopes]
	helper    []string
	secrets   map[string]bool
	approve   Approver
	landlock  bool
	abi       int
	noLLWhy   string
	baseEnv   []string
	budget    int64
	maxBytes  int
	maxLines  int
	killGrace time.Duration
	warm      int
	pool      *helperPool
}

// Option configures a Runner.
type Option func(*Runner)

// WithHelper sets the argv that starts the Landlock helper (default: this
// executable with [ExecSubcommand], which this package's init serves).
// Another program must serve [ExecSubcommand] as [ServeExecIfRequested]
// does.
func WithHelper(argv ...string) Option {
	return func(r *Runner) { r.helper = append([]string(nil), argv...) }
}

// WithSecretEnv names environment variables that must never reach a child
// (the values of git.token_env, sql.dsn_env, serve.token_env), whatever
// the command line exports.
func WithSecretEnv(names ...string) Option {
	return func(r *Runner) {
		for _, n := range names {
			if n != "" {
				r.secrets[n] = true
			}
		}
	}
}

// WithApprover sets who approves dangerous commands; without one they are
// refused with an *ApprovalError.
func WithApprover(a Approver) Option { return func(r *Runner) { r.approve = a } }

// WithLandlock turns the Landlock ruleset on (the default, where the
// kernel supports it) or off.
func WithLandlock(on bool) Option { return func(r *Runner) { r.landlock = on } }

// WithEnv adds variables every command line starts with (LANG, TZ...).
// Secrets and loader variables are dropped all the same.
func WithEnv(env ...string) Option {
	return func(r *Runner) { r.baseEnv = append(r.baseEnv, env...) }
}

// WithCommandBudget caps how many commands (builtins and function calls
// included) one command line may run; a fork bomb of shell functions
// ends there (default 10000).
func WithCommandBudget(n int) Option { return func(r *Runner) { r.budget = int64(n) } }

// WithWarmHelpers keeps n Landlock helpers started ahead of need
// (default 2; 0: start one per command). Close the Runner to stop them.
func WithWarmHelpers(n int) Option { return func(r *Runner) { r.warm = n } }

// WithOutputCaps sets the per-stream caps (default 8 KiB or 200 lines).
func WithOutputCaps(maxBytes, maxLines int) Option {
	return func(r *Runner) { r.maxBytes, r.maxLines = maxBytes, maxLines }
}

// New makes a Runner for root (an existing directory) with the scopes of
// cfg.
func New(root string, cfg Config, opts ...Option) (*Runner, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("shell: root %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("shell: root %s: %w", root, err)
	}
	if info, err := os.Stat(real); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("shell: root %s: not a directory", root)
	}
	sc, err := NewScopes(cfg)
	if err != nil {
		return nil, err
	}
	r := &Runner{root: real, secrets: map[string]bool{}, landlock: true, budget: 10000,
		maxBytes: DefaultMaxBytes, maxLines: DefaultMaxLines, killGrace: 250 * time.Millisecond, warm: 2}
	r.scopes.Store(sc)
	for _, o := range opts {
		o(r)
	}
	if len(r.helper) == 0 {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		r.helper = []string{exe, ExecSubcommand}
	}
	if r.landlock {
		r.abi, r.noLLWhy = landlockABI()
		if r.abi == 0 {
			r.landlock = false
		}
	} else {
		r.noLLWhy = "Landlock turned off by the host"
	}
	if r.landlock && r.warm > 0 {
		r.pool = newHelperPool(r, r.warm)
	}
	return r, nil
}

// Close stops the warm helpers. The Runner still works afterwards,
// starting a helper per command.
func (r *Runner) Close() error {
	if r.pool != nil {
		r.pool.close()
	}
	return nil
}

// Root is the runner's root directory (absolute, symlinks resolved).
func (r *Runner) Root() string { return r.root }

// Scopes returns the validated scopes.
func (r *Runner) Scopes() *Scopes { return r.scopes.Load() }

// SetConfig replaces the scopes for the command lines started from now on
// (a host's "add to scope"); lines already running keep theirs.
func (r *Runner) SetConfig(cfg Config) error {
	sc, err := NewScopes(cfg)
	if err != nil {
		return err
	}
	r.scopes.Store(sc)
	return nil
}

// Isolation says how external programs are confined.
type Isolation struct {
	// Mode is "landlock" (a kernel-enforced file-system and network scope,
	// plus the rest) or "process" (own process group and scrubbed
	// environment only).
	Mode        string `json:"mode"`
	LandlockABI int    `json:"landlock_abi,omitempty"`
	Note        string `json:"note"`
}

// Isolation reports what applies to this runner's children.
func (r *Runner) Isolation() Isolation {
	if r.landlock {
		net := "cannot open TCP connections"
		if r.abi < 4 {
			net = "can still use the network (Landlock ABI < 4 has no network rules)"
		}
		return Isolation{Mode: "landlock", LandlockABI: r.abi,
			Note: "children run in their own process group with a scrubbed environment under a Landlock ruleset: they read system directories and shell.paths.read, write only shell.paths.write inside the root, and " + net}
	}
	return Isolation{Mode: "process", Note: "no Landlock (" + r.noLLWhy + "): children run in their own process group with a scrubbed environment; the scopes are checked on every command, argument and redirection, and changes outside the write scope are reported and not committed"}
}

// Request is one command line to run.
type Request struct {
	Command string
	// Workdir is relative to the root ("" or "." for the root).
	Workdir string
	Timeout time.Duration
}

type preapprovedKey struct{}

// Preapproved marks ctx: the host already approved the whole command line
// (the tool call's approval named it), so dangerous commands in it run
// without asking the Approver again.
func Preapproved(ctx context.Context) context.Context {
	return context.WithValue(ctx, preapprovedKey{}, true)
}

func isPreapproved(ctx context.Context) bool { v, _ := ctx.Value(preapprovedKey{}).(bool); return v }

// Result is what a command line did. A non-zero exit is a result, not an
// error.
type Result struct {
	ExitCode  int       `json:"exit_code"`
	Stdout    string    `json:"stdout"`
	Stderr    string    `json:"stderr"`
	Truncated bool      `json:"truncated"`
	Duration  int64     `json:"duration_ms"`
	Changed   []string  `json:"changed"`
	Refused   []string  `json:"out_of_scope_changes,omitempty"`
	Warnings  []string  `json:"warnings,omitempty"`
	Isolation Isolation `json:"isolation"`
}

// ErrSyntax matches command lines that do not parse.
var ErrSyntax = errors.New("shell: syntax error")

// SyntaxError is a command line that does not parse.
type SyntaxError struct{ Err error }

func (e *SyntaxError) Error() string { return "command line does not parse: " + e.Err.Error() }

// Is makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// Unwrap returns the parser's error.
func (e *SyntaxError) Unwrap() error { return e.Err }

// TimeoutError is a command line stopped by its timeout; Result holds
// what it printed and changed until then. It matches
// context.DeadlineExceeded.
type TimeoutError struct {
	Timeout time.Duration
	Result  *Result
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the command line ran past its %v timeout and was killed with its whole process group", e.Timeout)
}

// Unwrap makes errors.Is(err, context.DeadlineExceeded) true.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// ErrBudget matches command lines stopped for running too many commands.
var ErrBudget = errors.New("shell: command budget exceeded")

// Run runs one command line. Scope violations are *Violation errors,
// refused dangerous commands *ApprovalError, a timeout *TimeoutError; the
// changes a command made are in Result.Changed (inside the write scope)
// and Result.Refused (outside it) whatever happened.
func (r *Runner) Run(ctx context.Context, req Request) (*Result, error) {
	start := time.Now()
	sc, err := r.scopesFor(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := r.workdir(sc, req.Workdir)
	if err != nil {
		return nil, err
	}
	file, err := syntax.NewParser().Parse(strings.NewReader(req.Command), "")
	if err != nil {
		return nil, &SyntaxError{Err: err}
	}
	x := r.newRun(ctx, sc, nil)
	defer x.close()
	if err := x.precheck(file, dir); err != nil {
		return nil, err
	}
	before, err := r.snapshot()
	if err != nil {
		return nil, fmt.Errorf("shell: scan %s: %w", r.root, err)
	}
	x.snap = before
	stdout := newCapWriter(r.maxBytes, r.maxLines)
	stderr := newCapWriter(r.maxBytes, r.maxLines)
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	runCtx, cancel := context.WithTimeout(x.ctx, timeout)
	defer cancel()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	runErr := x.interpret(runCtx, file, dir, devnull, stdout, stderr, nil)
	// Background jobs end with the line, as its processes do.
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded)
	cancel()
	x.killAll()
	res := &Result{Stdout: stdout.String(), Stderr: stderr.String(), Isolation: r.Isolation()}
	res.Truncated = stdout.truncated() || stderr.truncated()
	after, serr := r.snapshot()
	if serr == nil {
		res.Changed, res.Refused = r.diff(sc, before, after)
	}
	res.Warnings = x.takeWarnings()
	res.Duration = time.Since(start).Milliseconds()
	if v := x.failure(); v != nil {
		return res, v
	}
	if timedOut && ctx.Err() == nil {
		res.ExitCode = 124
		return res, &TimeoutError{Timeout: timeout, Result: res}
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("shell: %w", ctx.Err())
	}
	code, err := exitCode(runErr)
	if err != nil {
		return res, fmt.Errorf("shell: %w", err)
	}
	res.ExitCode = code
	return res, nil
}

// workdir resolves an agent's working directory: relative to the root,
// symlinks resolved, inside the root, an existing directory (seed 004's
// explicit, relative and symlinked directories).
func (r *Runner) workdir(sc *Scopes, wd string) (string, error) {
	if wd == "" {
		wd = "."
	}
	p := wd
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.root, p)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("shell: workdir %s: %w", wd, err)
		}
		return "", fmt.Errorf("shell: workdir %s: %w", wd, err)
	}
	rel, ok := r.rel(real)
	if !ok {
		return "", &Violation{Reason: ReasonDirNotInScope, Directory: wd, RequiredScope: ScopeRead, AllowedPatterns: sc.Allowed(ScopeRead),
			Message: fmt.Sprintf("workdir %s resolves to %s, outside the root; use a directory inside the root", wd, real)}
	}
	if sc.Denied(rel) {
		return "", &Violation{Reason: ReasonDirNotInScope, Directory: scope.Display(rel), RequiredScope: ScopeRead, AllowedPatterns: sc.Allowed(ScopeRead),
			Message: fmt.Sprintf("workdir %s is denied (shell.paths.deny or .git)", scope.Display(rel))}
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("shell: workdir %s: %w", wd, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("shell: workdir %s: not a directory", wd)
	}
	return real, nil
}

// rel maps an absolute, resolved path to the root-relative form; ok is
// false outside the root.
func (r *Runner) rel(abs string) (string, bool) {
	if abs == r.root {
		return "", true
	}
	if strings.HasPrefix(abs, r.root+string(filepath.Separator)) {
		return filepath.ToSlash(abs[len(r.root)+1:]), true
	}
	return "", false
}

// resolve maps p (relative to dir) to an absolute path with every existing
// symlink resolved (a missing tail is kept as written).
func resolve(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	var tail []string
	cur := p
	for {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{real}, tail...)...)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		tail = append([]string{filepath.Base(cur)}, tail...)
		cur = parent
	}
}

// ---- snapshot: what changed ----

type fileState struct {
	mode  os.FileMode
	size  int64
	mtime int64
	ctime int64
	ino   uint64
}

type snapshot struct {
	files  map[string]fileState // files and symlinks, root-relative
	dirs   []string             // directories, root-relative, sorted ("" first)
	hasGit map[string]bool      // directories holding a .git (not scanned)
}

// snapshot walks the root (not .git) recording what git would see.
func (r *Runner) snapshot() (*snapshot, error) {
	s := &snapshot{files: map[string]fileState{}, dirs: []string{""}, hasGit: map[string]bool{}}
	err := filepath.WalkDir(r.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if p == r.root {
				return err
			}
			return nil // vanished or unreadable: not ours to report
		}
		if p == r.root {
			return nil
		}
		rel := filepath.ToSlash(p[len(r.root)+1:])
		if scope.IsGitPath(d.Name()) {
			dir := filepath.ToSlash(filepath.Dir(rel))
			if dir == "." {
				dir = ""
			}
			s.hasGit[dir] = true
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			s.dirs = append(s.dirs, rel)
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		s.files[rel] = stateOf(info)
		return nil
	})
	sort.Strings(s.dirs)
	return s, err
}

// diff lists changed paths (added, modified, deleted): those the write
// scope covers, and the others.
func (r *Runner) diff(sc *Scopes, before, after *snapshot) (changed, refused []string) {
	seen := map[string]bool{}
	add := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		if sc.Covers(p, ScopeWrite) {
			changed = append(changed, p)
		} else {
			refused = append(refused, p)
		}
	}
	for p, a := range after.files {
		if b, ok := before.files[p]; !ok || b != a {
			add(p)
		}
	}
	for p := range before.files {
		if _, ok := after.files[p]; !ok {
			add(p)
		}
	}
	sort.Strings(changed)
	sort.Strings(refused)
	if changed == nil {
		changed = []string{}
	}
	return changed, refused
}

// ---- one run's state ----

type run struct {
	r      *Runner
	sc     *Scopes // the runner's scopes when the line started, widened by its Grant
	ctx    context.Context
	cancel context.CancelFunc
	tmp    string
	tty    *os.File // the PTY slave of a session, nil otherwise
	// snap is the scan the Landlock grants are computed from (once).
	snap        *snapshot
	read, write *grantSet

	preApproved bool

	tmpOnce sync.Once
	tmpMade bool
	tmpErr  error

	mu       sync.Mutex
	fail     error
	approved map[string]bool
	once     map[string]int // dangerous commands a Grant lets run, and how many times more
	pgids    map[int]bool
	warnings []string
	calls    int64
}

func (r *Runner) newRun(ctx context.Context, sc *Scopes, tty *os.File) *run {
	c, cancel := context.WithCancel(ctx)
	var b [12]byte
	_, _ = rand.Read(b[:])
	tmp := filepath.Join(os.TempDir(), "tgp-shell-"+hex.EncodeToString(b[:]))
	once := map[string]int{}
	if g, ok := scope.GrantOf(ctx); ok {
		for _, name := range g.Once {
			once[name]++
		}
	}
	return &run{r: r, sc: sc, ctx: c, cancel: cancel, tmp: tmp, tty: tty, approved: map[string]bool{}, once: once,
		pgids: map[int]bool{}, preApproved: isPreapproved(ctx)}
}

// ensureTmp makes the run's private temporary directory (HOME and TMPDIR
// of its children) before the first child starts: a line of builtins
// never needs it.
func (x *run) ensureTmp() error {
	x.tmpOnce.Do(func() {
		if err := os.Mkdir(x.tmp, 0o700); err != nil {
			x.tmpErr = fmt.Errorf("shell: temporary directory %s: %w", x.tmp, err)
			return
		}
		x.mu.Lock()
		x.tmpMade = true
		x.mu.Unlock()
	})
	return x.tmpErr
}

func (x *run) close() {
	x.killAll()
	x.cancel()
	x.mu.Lock()
	made := x.tmpMade
	x.mu.Unlock()
	if made {
		_ = os.RemoveAll(x.tmp)
	}
}

// stop records the first violation and stops the whole command line.
func (x *run) stop(err error) error {
	x.mu.Lock()
	if x.fail == nil {
		x.fail = err
	}
	x.mu.Unlock()
	x.cancel()
	return err
}

func (x *run) failure() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.fail
}

func (x *run) warn(format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	w := fmt.Sprintf(format, args...)
	for _, have := range x.warnings {
		if have == w {
			return
		}
	}
	x.warnings = append(x.warnings, w)
}

func (x *run) takeWarnings() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.warnings
}

// step counts one command against the budget.
func (x *run) step() error {
	x.mu.Lock()
	x.calls++
	over := x.calls > x.r.budget
	x.mu.Unlock()
	if over {
		return x.stop(fmt.Errorf("%w: the command line ran more than %d commands (a runaway loop or fork bomb?); it was stopped", ErrBudget, x.r.budget))
	}
	return nil
}
