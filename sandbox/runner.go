package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"go.opentelemetry.io/otel/attribute"

	"github.com/tgp-go/tgp/internal/telemetry"
	"github.com/tgp-go/tgp/sandbox/hostapi"
)

// FS is what tools reach through tgp.read_file and friends, and where
// require finds other tools. The kernel passes a jailed VFS.
type FS interface {
	ReadFile(path string) ([]byte, error)
	// ListFiles lists files below dir recursively, sorted, as slash paths
	// relative to the root.
	ListFiles(dir string) ([]string, error)
	WriteFile(path string, data []byte) error
}

// SQL runs one statement for tgp.exec_sql.
type SQL interface {
	Exec(ctx context.Context, query string, params []any) (any, error)
}

// Runner compiles and runs tools. It is safe for concurrent use; each Exec
// gets its own Runtime.
type Runner struct {
	timeout     time.Duration
	memLimit    uint64
	imports     map[string]bool
	modulesDir  string
	fetchURLs   []string
	writeDirs   []string
	httpClient  *http.Client
	seed        *int64
	maxLogBytes int
	maxStack    int
	maxFetch    int64
	cache       *programCache
	bundles     sync.Map // package bundle key → *Compiled
	lockdown    *goja.Program

	hostFuncs map[string]HostFunc
	hostErr   error

	// secrets are the brokered secrets (WithSecrets); lookupEnv reads
	// their values, in this process only.
	secrets      map[string]SecretSpec
	lookupEnv    func(string) (string, bool)
	requirePerms bool

	isolation    string
	workerArgv   []string
	workerEnv    []string
	workers      int
	addrHeadroom uint64
	pool         *pool // process isolation only

	// boundGoMemory: a worker, alone in its process, also bounds what
	// its Go runtime holds (free pages included) by the run's budget.
	boundGoMemory bool
}

// Option configures a Runner.
type Option func(*Runner)

// WithTimeout sets the default wall-clock limit per run (default 5s).
func WithTimeout(d time.Duration) Option { return func(r *Runner) { r.timeout = d } }

// WithMemoryLimitMB sets the heap-growth limit per run (default 128).
func WithMemoryLimitMB(mb int) Option {
	return func(r *Runner) { r.memLimit = uint64(mb) << 20 }
}

// WithAllowedImports lists the bare module names require accepts.
func WithAllowedImports(names ...string) Option {
	return func(r *Runner) {
		for _, n := range names {
			r.imports[n] = true
		}
	}
}

// WithModulesDir names a host directory laid out like node_modules (a
// package per subdirectory) that allowed packages missing from the
// toolbox's node_modules/ are bundled from. The host controls it; tools
// only read the packages they may import.
func WithModulesDir(dir string) Option { return func(r *Runner) { r.modulesDir = dir } }

// WithAllowedFetchURLs lists the URL prefixes tgp.fetch may reach.
func WithAllowedFetchURLs(prefixes ...string) Option {
	return func(r *Runner) { r.fetchURLs = append(r.fetchURLs, prefixes...) }
}

// WithWriteDirs lists the directories tgp.write_file may write under.
func WithWriteDirs(dirs ...string) Option {
	return func(r *Runner) { r.writeDirs = append(r.writeDirs, dirs...) }
}

// WithHTTPClient sets the client tgp.fetch uses.
func WithHTTPClient(c *http.Client) Option { return func(r *Runner) { r.httpClient = c } }

// WithRandSeed makes Math.random deterministic (for tests).
func WithRandSeed(seed int64) Option { return func(r *Runner) { r.seed = &seed } }

// WithMaxLogBytes caps the captured logs per run (default 64 KiB).
func WithMaxLogBytes(n int) Option { return func(r *Runner) { r.maxLogBytes = n } }

// WithCacheSize sets how many compiled programs are kept (default 512).
func WithCacheSize(n int) Option { return func(r *Runner) { r.cache = newProgramCache(n) } }

// WithMaxCallStack sets the maximum JS call depth (default 1024).
func WithMaxCallStack(n int) Option { return func(r *Runner) { r.maxStack = n } }

var regexpOnce sync.Once

// New builds a Runner.
func New(opts ...Option) *Runner {
	r := &Runner{
		timeout:     5 * time.Second,
		memLimit:    128 << 20,
		imports:     map[string]bool{},
		httpClient:  &http.Client{Timeout: 30 * time.Second},
		maxLogBytes: 64 << 10,
		maxStack:    1024,
		maxFetch:    4 << 20,
		cache:       newProgramCache(512),
	}
	for _, o := range opts {
		o(r)
	}
	// goja runs backtracking regexes on regexp2, whose native matcher the
	// interrupt cannot stop; its timeout is a package variable read when a
	// regex is compiled, so it is set once, before any runtime exists.
	regexpOnce.Do(func() { regexp2.DefaultMatchTimeout = time.Second })
	r.lockdown = goja.MustCompile("lockdown.js", lockdownJS, true)
	if r.isolation == IsolationProcess {
		r.pool = newPool(r)
		// A Runner nobody closes (a kernel dropped without Shutdown)
		// still stops its workers once it is garbage.
		runtime.AddCleanup(r, func(p *pool) { p.close() }, r.pool)
	}
	return r
}

// Request is one tool run.
type Request struct {
	Path string
	// Source, when set, is the tool's code; else it is read from FS.
	Source []byte
	Args   any
	FS     FS
	SQL    SQL
	// Timeout overrides the runner's default when > 0.
	Timeout time.Duration

	// policy is set by a worker: the host read the permissions and made
	// the placeholders.
	policy *runPolicy
}

// Outcome is exec_tool's result (hostapi's: a host reads it without
// linking the sandbox).
type Outcome = hostapi.Outcome

// ExecError describes why a run failed (hostapi's).
type ExecError = hostapi.ExecError

// Error kinds of a failed run.
const (
	KindTimeout           = hostapi.KindTimeout
	KindMemoryLimit       = hostapi.KindMemoryLimit
	KindStackOverflow     = hostapi.KindStackOverflow
	KindRuntime           = hostapi.KindRuntime
	KindCompile           = hostapi.KindCompile
	KindSecurity          = hostapi.KindSecurity
	KindModuleNotFound    = hostapi.KindModuleNotFound
	KindNotSerializable   = hostapi.KindNotSerializable
	KindCancelled         = hostapi.KindCancelled
	KindResourceLimit     = hostapi.KindResourceLimit
	KindUnhandledRejected = hostapi.KindUnhandledRejected
)

// interruption values handed to Runtime.Interrupt.
type interruption struct{ kind, msg string }

// Exec runs a tool. Tool failures (timeouts, limits, throws) are in the
// Outcome; the error is for host-side failures only.
func (r *Runner) Exec(ctx context.Context, req Request) (out *Outcome, err error) {
	ctx, span := telemetry.Start(ctx, "tgp.sandbox.exec", attribute.String("tgp.tool.path", req.Path),
		attribute.Bool("tgp.sandbox.process", r.pool != nil))
	defer func() {
		if out != nil {
			span.SetAttributes(attribute.Bool("tgp.sandbox.success", out.Success), attribute.Float64("tgp.sandbox.duration_ms", out.DurationMS))
			if out.Error != nil {
				span.SetAttributes(telemetry.ErrorType(out.Error.Kind))
			}
		}
		if r.pool != nil {
			// Known once a worker exited: the largest peak so far.
			if rss := r.pool.peakRSS.Load(); rss > 0 {
				span.SetAttributes(attribute.Int64("tgp.sandbox.worker_peak_rss_kib", rss))
			}
		}
		if err != nil {
			span.SetAttributes(telemetry.ErrorType("internal"))
		}
		telemetry.End(span, err)
	}()
	return r.exec(ctx, req)
}

func (r *Runner) exec(ctx context.Context, req Request) (*Outcome, error) {
	start := time.Now()
	out := &Outcome{Logs: []string{}}
	finish := func(e *ExecError) (*Outcome, error) {
		out.Error = e
		out.Success = e == nil
		out.DurationMS = float64(time.Since(start).Microseconds()) / 1000
		return out, nil
	}
	if r.hostErr != nil {
		return nil, r.hostErr
	}
	src := req.Source
	if src == nil {
		if req.FS == nil {
			return nil, errors.New("sandbox: no source and no FS")
		}
		b, err := req.FS.ReadFile(req.Path)
		if err != nil {
			// The FS's error names the path already (read tools/x.ts:
			// ...): say it once.
			reason := err.Error()
			var pe *fs.PathError
			if errors.As(err, &pe) {
				reason = pe.Err.Error()
			}
			return finish(&ExecError{Kind: KindModuleNotFound, Message: fmt.Sprintf("cannot read %s: %s", req.Path, reason), Path: req.Path})
		}
		src = b
	}
	timeout := r.timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	if err := ctx.Err(); err != nil {
		// A call already cancelled does not start: the watchdog might
		// otherwise lose the race to a tool that finishes at once.
		return finish(&ExecError{Kind: KindCancelled, Message: "execution stopped before it started: " + err.Error()})
	}
	comp, err := r.Compile(req.Path, src)
	if err != nil {
		var ce *CompileError
		if errors.As(err, &ce) {
			return finish(&ExecError{Kind: KindCompile, Message: ce.Error(), Path: ce.Path, Line: ce.Line, Column: ce.Column})
		}
		return nil, err
	}
	pol := req.policy
	if pol == nil {
		// The host's side (in process, or the parent of a worker): the
		// tool's permissions are read here, before any of its code runs.
		if pe := comp.permsErr; pe != nil {
			e := &ExecError{Kind: KindCompile, Message: pe.Error(), Path: req.Path}
			var perr *PermissionsError
			if errors.As(pe, &perr) {
				e.Line, e.Column = perr.Line, perr.Column
			}
			return finish(e)
		}
		if comp.perms == nil && r.requirePerms {
			return finish(&ExecError{Kind: KindPermissionDenied, Path: req.Path,
				Message: fmt.Sprintf("%s exports no permissions and sandbox.require_permissions is on: add `export const permissions = { fetch: [...], secrets: [...], sql: \"none\", write: [...] }`", req.Path)})
		}
		pol = r.newRunPolicy(comp.perms)
		if pol.perms != nil && req.SQL != nil {
			req.SQL = permSQL{inner: req.SQL, mode: pol.perms.SQL}
		}
		req.policy = pol
	}
	if r.pool != nil {
		out, err := r.pool.exec(ctx, r, req, src, timeout)
		if err != nil {
			return nil, err
		}
		out.DurationMS = float64(time.Since(start).Microseconds()) / 1000
		out.Success = out.Error == nil
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ex := newExecution(ctx, r, req, out)
	defer ex.close()
	res, eerr := ex.run(comp)
	if eerr != nil {
		return finish(eerr)
	}
	out.Result = res
	return finish(nil)
}

// securityError is thrown into JS as an Error named SecurityViolation.
func securityMessage(format string, args ...any) string {
	return "Security Violation: " + fmt.Sprintf(format, args...)
}
