package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/tgp-go/tgp/internal/telemetry"
	"github.com/tgp-go/tgp/shell/scope"
)

// interpret runs a parsed command line with every handler pointing back
// at this run's checks.
func (x *run) interpret(ctx context.Context, file *syntax.File, dir string, in io.Reader, out, errw io.Writer, env []string, params ...string) error {
	if env == nil {
		env = x.baseEnv()
	}
	opts := []interp.RunnerOption{
		interp.Env(expand.ListEnviron(env...)),
		interp.Dir(dir),
		interp.StdIO(in, out, errw),
		interp.CallHandler(func(ctx context.Context, args []string) (out []string, err error) {
			defer x.recover(&err)
			return x.call(ctx, args)
		}),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, args []string) (err error) {
				defer x.recover(&err)
				ctx, span := commandSpan(ctx, args)
				defer func() { endCommandSpan(span, err) }()
				return x.exec(ctx, args)
			}
		}),
		interp.OpenHandler(func(ctx context.Context, p string, flag int, perm os.FileMode) (f io.ReadWriteCloser, err error) {
			defer x.recover(&err)
			return x.open(ctx, p, flag, perm)
		}),
		interp.ReadDirHandler2(func(ctx context.Context, p string) (d []fs.DirEntry, err error) {
			defer x.recover(&err)
			return x.readDir(ctx, p)
		}),
		interp.StatHandler(func(ctx context.Context, name string, follow bool) (fi fs.FileInfo, err error) {
			defer x.recover(&err)
			return x.stat(ctx, name, follow)
		}),
	}
	if len(params) > 0 {
		opts = append(opts, interp.Params(params...))
	}
	runner, err := interp.New(opts...)
	if err != nil {
		return err
	}
	return runner.Run(ctx, file)
}

// commandSpan starts the span of one command the line runs, named by
// the command's name alone: its arguments may hold secrets and are never
// recorded.
func commandSpan(ctx context.Context, args []string) (context.Context, trace.Span) {
	name := ""
	if len(args) > 0 {
		name = filepath.Base(args[0])
	}
	return telemetry.Start(ctx, "tgp.shell.command", attribute.String("process.executable.name", name))
}

// endCommandSpan records the command's exit code (a non-zero exit is an
// outcome, not a span error; a refusal or a kill is).
func endCommandSpan(span trace.Span, err error) {
	var status interp.ExitStatus
	switch {
	case err == nil:
		span.SetAttributes(attribute.Int("process.exit.code", 0))
	case errors.As(err, &status):
		span.SetAttributes(attribute.Int("process.exit.code", int(status)))
		err = nil
	default:
		span.SetAttributes(telemetry.ErrorType("refused_or_killed"))
	}
	telemetry.End(span, err)
}

// recover turns a panic in a handler (they run on the interpreter's
// goroutines, where no caller could catch it) into an error that stops
// the line.
func (x *run) recover(err *error) {
	if r := recover(); r != nil {
		*err = x.stop(fmt.Errorf("shell: internal error: %v", r))
	}
}

// baseEnv is what a command line starts with: no variable of the kernel's
// own environment but the host's WithEnv ones (secrets dropped).
func (x *run) baseEnv() []string {
	env := []string{"PATH=" + TrustedPath, "HOME=" + x.tmp, "TMPDIR=" + x.tmp, "LANG=C.UTF-8"}
	if x.tty != nil {
		env = append(env, "TERM=xterm-256color")
	} else {
		env = append(env, "TERM=dumb")
	}
	for _, kv := range x.r.baseEnv {
		name, _, _ := strings.Cut(kv, "=")
		if !x.r.dropVar(name) {
			env = append(env, kv)
		}
	}
	return env
}

// dropVar: secrets, loader and shell start-up variables never reach a
// child (PATH, HOME and TMPDIR are set by the runner).
func (r *Runner) dropVar(name string) bool {
	if r.secrets[name] || strings.HasPrefix(name, "LD_") {
		return true
	}
	switch name {
	case "PATH", "HOME", "TMPDIR", "GCONV_PATH", "LOCPATH", "NLSPATH", "BASH_ENV", "ENV", "IFS", "SHELLOPTS", "BASHOPTS", "PS4":
		return true
	}
	return false
}

// childEnv is a child's environment: the command line's exported
// variables minus the dropped ones, with the runner's PATH, HOME, TMPDIR.
func (x *run) childEnv(env expand.Environ) []string {
	out := []string{"PATH=" + TrustedPath, "HOME=" + x.tmp, "TMPDIR=" + x.tmp}
	env.Each(func(name string, vr expand.Variable) bool {
		if vr.Exported && vr.Kind == expand.String && !x.r.dropVar(name) {
			out = append(out, name+"="+vr.Str)
		}
		return true
	})
	return out
}

// call sees every simple command, builtins and functions included: the
// budget that ends fork bombs of shell functions.
func (x *run) call(ctx context.Context, args []string) ([]string, error) {
	if err := x.step(); err != nil {
		return nil, err
	}
	return args, nil
}

// exec sees every external command after expansion.
func (x *run) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	p, err := x.check(ctx, hc.Dir, args, 0)
	if err != nil {
		return x.stop(err)
	}
	if p.script != nil {
		return x.nested(ctx, hc, p)
	}
	if p.path == "" {
		fmt.Fprintf(hc.Stderr, "%s: command not found\n", args[0])
		return interp.ExitStatus(127)
	}
	return x.spawn(ctx, hc, p.path, args)
}

// nested runs sh -c / bash -c / sh FILE in this interpreter, with the
// same checks, never in a real shell.
func (x *run) nested(ctx context.Context, hc interp.HandlerContext, p plan) error {
	var env []string
	hc.Env.Each(func(name string, vr expand.Variable) bool {
		if vr.Exported && vr.Kind == expand.String {
			env = append(env, name+"="+vr.Str)
		}
		return true
	})
	params := append(append([]string{}, p.opts...), "--")
	if len(p.params) > 1 {
		params = append(params, p.params[1:]...) // $1...; $0 stays the interpreter's
	}
	err := x.interpret(ctx, p.script, hc.Dir, hc.Stdin, hc.Stdout, hc.Stderr, env, params...)
	if f := x.failure(); f != nil {
		return f
	}
	var st interp.ExitStatus
	if errors.As(err, &st) {
		return st
	}
	return err
}

// spawn starts one external program: workdir inside the root (checked),
// scrubbed environment, own process group killed when the command ends or
// the line is cancelled, and under Landlock through the helper.
func (x *run) spawn(ctx context.Context, hc interp.HandlerContext, path string, args []string) error {
	if err := x.ensureTmp(); err != nil {
		return x.stop(err)
	}
	ownTerminal := x.tty != nil && hc.Stdin == io.Reader(x.tty)
	if x.r.landlock && x.r.pool != nil && !ownTerminal {
		if err, ok := x.spawnWarm(ctx, hc, path, args); ok {
			return err
		}
	}
	var cmd *exec.Cmd
	var hsr, hsw *os.File
	if x.r.landlock {
		spec, err := json.Marshal(x.spec())
		if err != nil {
			return x.stop(err)
		}
		argv := append(append(append([]string{}, x.r.helper[1:]...), string(spec), path), args...)
		cmd = exec.CommandContext(ctx, x.r.helper[0], argv...)
		if hsr, hsw, err = os.Pipe(); err != nil {
			return x.stop(err)
		}
		cmd.ExtraFiles = []*os.File{hsw}
	} else {
		cmd = exec.CommandContext(ctx, path)
		cmd.Args = args
	}
	cmd.Env = x.childEnv(hc.Env)
	cmd.Dir = hc.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = hc.Stdin, hc.Stdout, hc.Stderr
	// Own process group; a session's foreground command owns the
	// terminal (^C reaches it).
	cmd.SysProcAttr = procAttr(ownTerminal)
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = x.r.killGrace
	err := cmd.Start()
	if hsw != nil {
		_ = hsw.Close()
	}
	if err != nil {
		if hsr != nil {
			_ = hsr.Close()
		}
		fmt.Fprintf(hc.Stderr, "%s: %v\n", args[0], err)
		return interp.ExitStatus(126)
	}
	pid := cmd.Process.Pid
	x.track(pid, true)
	var hs string
	if hsr != nil {
		b, _ := io.ReadAll(io.LimitReader(hsr, 4096))
		_ = hsr.Close()
		hs = strings.TrimSpace(string(b))
	}
	werr := cmd.Wait()
	// Nothing a command started outlives it.
	_ = killGroup(pid)
	x.track(pid, false)
	if x.r.landlock && !strings.HasPrefix(hs, "ok ") && ctx.Err() == nil {
		if strings.HasPrefix(hs, "error ") {
			return x.stop(fmt.Errorf("shell: the Landlock helper refused to run %s: %s", args[0], strings.TrimPrefix(hs, "error ")))
		}
		return x.stop(fmt.Errorf("shell: the Landlock helper %q did not answer (shell.WithHelper must name a program that serves `__shellexec` as shell.ServeExecIfRequested does; the tgp binary and any program linking package shell do): %v", x.r.helper[0], werr))
	}
	var ee *exec.ExitError
	switch {
	case werr == nil, errors.Is(werr, exec.ErrWaitDelay):
		return nil
	case errors.As(werr, &ee):
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return interp.ExitStatus(128 + int(st.Signal()))
		}
		return interp.ExitStatus(ee.ExitCode())
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return werr
}

func (x *run) track(pid int, on bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if on {
		x.pgids[pid] = true
	} else {
		delete(x.pgids, pid)
	}
}

// killAll kills every process group still running (timeout, cancel, end).
func (x *run) killAll() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for pid := range x.pgids {
		_ = killGroup(pid)
	}
}

// ---- file handlers ----

var devices = map[string]bool{"/dev/null": true, "/dev/zero": true, "/dev/urandom": true, "/dev/random": true, "/dev/full": true}

// open checks every redirection (and source/.) against the path scopes
// before the file is opened, then opens it beneath the root.
func (x *run) open(ctx context.Context, p string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	sc := ScopeRead
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) != 0 {
		sc = ScopeWrite
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(hc.Dir, p)
	}
	abs = filepath.Clean(abs)
	if devices[abs] {
		return os.OpenFile(abs, flag, perm)
	}
	real := resolve(hc.Dir, p)
	rel, ok := x.r.rel(real)
	if !ok {
		return nil, x.stop(&Violation{Reason: ReasonPathNotScope, Command: "redirection", Path: abs, RequiredScope: sc, AllowedPatterns: x.sc.Allowed(sc),
			Message: fmt.Sprintf("redirection to %s leaves the root; redirect to a path inside the root", p)})
	}
	if err := x.sc.CheckPath("redirection", rel, sc); err != nil {
		return nil, x.stop(err)
	}
	if flag&os.O_CREATE != 0 && rel != "" {
		// Like write_file, a redirection creates missing parent
		// directories (inside the write scope, checked above).
		parent := filepath.Dir(filepath.Join(x.r.root, filepath.FromSlash(rel)))
		if _, err := os.Lstat(parent); errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return nil, err
			}
		}
	}
	f, realOpened, err := openBeneath(x.r.root, lexicalOrReal(rel), flag, perm)
	if err != nil {
		return nil, err
	}
	if r2, ok := x.r.rel(realOpened); !ok || x.sc.CheckPath("redirection", r2, sc) != nil {
		_ = f.Close()
		return nil, x.stop(&Violation{Reason: ReasonPathNotScope, Command: "redirection", Path: scope.Display(r2), RequiredScope: sc, AllowedPatterns: x.sc.Allowed(sc),
			Message: fmt.Sprintf("redirection %s resolved to %s, outside the %s scope", p, realOpened, sc)})
	}
	return f, nil
}

func lexicalOrReal(real string) string {
	if real == "" {
		return "."
	}
	return real
}

// openFallback opens without openat2: the path was checked after
// resolving its symlinks; the result is re-checked by the caller.
func openFallback(root, rel string, flag int, perm os.FileMode) (*os.File, string, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	f, err := os.OpenFile(p, flag, perm)
	if err != nil {
		return nil, "", err
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		_ = f.Close()
		return nil, "", err
	}
	return f, real, nil
}

// readDir serves globbing inside the read scope only: names outside the
// root are not listed.
func (x *run) readDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	real := resolve(interp.HandlerCtx(ctx).Dir, p)
	rel, ok := x.r.rel(real)
	if !ok || !x.sc.Covers(rel, ScopeRead) {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: fs.ErrPermission}
	}
	return os.ReadDir(real)
}

// stat serves test -e/-f/-d, cd and globbing: the root and system
// directories only.
func (x *run) stat(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
	abs := name
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(interp.HandlerCtx(ctx).Dir, name)
	}
	real := resolve(filepath.Dir(filepath.Clean(abs)), filepath.Base(abs))
	if follow {
		real = resolve(filepath.Clean(abs), ".")
	}
	if rel, ok := x.r.rel(real); !(ok && !x.sc.Denied(rel)) && !underSystem(real) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	if follow {
		return os.Stat(abs)
	}
	return os.Lstat(abs)
}

// exitCode maps the interpreter's error to an exit status.
func exitCode(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	var st interp.ExitStatus
	if errors.As(err, &st) {
		return int(st), nil
	}
	return 0, err
}
