package kernel

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/sandbox/analysis"
	"github.com/tgp-go/tgp/toolbox"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/forgetools"
)

// newRunner builds the sandbox from the configuration.
func (k *Kernel) newRunner() *sandbox.Runner {
	sc := k.cfg.Sandbox
	opts := []sandbox.Option{
		sandbox.WithTimeout(sc.Timeout),
		sandbox.WithMemoryLimitMB(sc.MemoryMB),
		sandbox.WithAllowedImports(sc.AllowedImports...),
		sandbox.WithAllowedFetchURLs(sc.AllowedFetchURLs...),
		sandbox.WithWriteDirs(k.cfg.FS.AllowedDirs...),
	}
	if dir := sc.ModulesDir; dir != "" {
		if !filepath.IsAbs(dir) && k.opts.baseDir != "" {
			dir = filepath.Join(k.opts.baseDir, dir)
		}
		opts = append(opts, sandbox.WithModulesDir(dir))
	}
	if k.opts.httpClient != nil {
		opts = append(opts, sandbox.WithHTTPClient(k.opts.httpClient))
	}
	opts = append(opts, sandbox.WithHostFuncs(k.opts.hostFuncs...), sandbox.WithRequirePermissions(sc.RequirePermissions))
	if len(sc.Secrets) > 0 {
		specs := map[string]sandbox.SecretSpec{}
		for name, s := range sc.Secrets {
			specs[name] = sandbox.SecretSpec{Env: s.Env, URLs: s.URLs}
		}
		// Values are read from the kernel's environment when a fetch
		// needs one, never before and never into a worker.
		opts = append(opts, sandbox.WithSecrets(specs, func(name string) (string, bool) {
			v := Secret(k.environ(), name)
			return v, v != ""
		}))
	}
	if sc.Isolation == sandbox.IsolationProcess {
		opts = append(opts, sandbox.WithIsolation(sandbox.IsolationProcess), sandbox.WithWorkers(sc.Workers))
		if len(sc.WorkerCommand) > 0 {
			opts = append(opts, sandbox.WithWorkerCommand(sc.WorkerCommand))
		}
	}
	return sandbox.New(opts...)
}

// WithSandboxFunc makes fn callable from the tools the kernel runs, as
// tgp.<name>(arg) (the TypeScript original's sandboxAPI): the argument
// crosses as JSON decoded into A (unknown fields and wrong types are the
// tool's exception, naming the field), the result R as JSON, in both
// sandbox isolation modes (in process isolation fn still runs here, in
// the kernel: the worker calls it over its pipe). An error fn returns
// reaches the tool as an exception with its message; a panic too. The
// function is declared in tools/tgp-env.d.ts with types made from A and
// R (Scaffold, tgp init). A name that is not an identifier, or one of the
// sandbox's own (read_file, fetch, exec_sql...), or given twice, makes New
// fail.
func WithSandboxFunc[A, R any](name string, fn func(ctx context.Context, arg A) (R, error)) Option {
	f, err := sandbox.NewHostFunc(name, fn)
	return func(o *options) {
		if err != nil {
			o.errs = append(o.errs, fmt.Errorf("kernel.WithSandboxFunc: %w", err))
			return
		}
		for _, have := range o.hostFuncs {
			if have.Name == name {
				o.errs = append(o.errs, fmt.Errorf("kernel.WithSandboxFunc: %q given twice", name))
				return
			}
		}
		o.hostFuncs = append(o.hostFuncs, f)
	}
}

func (k *Kernel) checkConfig() analysis.Config {
	rules := map[string]analysis.Severity{}
	for id, sev := range k.cfg.Sandbox.Check.Rules {
		rules[id] = analysis.Severity(sev)
	}
	secrets := make([]string, 0, len(k.cfg.Sandbox.Secrets))
	for name := range k.cfg.Sandbox.Secrets {
		secrets = append(secrets, name)
	}
	return analysis.Config{AllowedImports: k.cfg.Sandbox.AllowedImports, Rules: rules, RequirePermissions: k.cfg.Sandbox.RequirePermissions,
		FetchURLs: k.cfg.Sandbox.AllowedFetchURLs, Secrets: secrets, Configured: true}
}

func (k *Kernel) forgeTools() []*tools.Tool {
	k.runner = k.newRunner()
	runner := k.runner
	k.closers = append(k.closers, func(context.Context) error { return runner.Close() })
	cfg := forgetools.Config{
		Runner:      k.runner,
		SandboxFS:   k.box.SandboxFS(),
		Persist:     k.box,
		SQLReadOnly: k.cfg.SQL.ReadOnly,
		Check:       k.checkConfig(),
		Versions:    boxVersions{k.box},
	}
	if k.sql != nil {
		cfg.SQL = k.sql
	}
	return forgetools.New(k.view, cfg)
}

// boxVersions is the toolbox as forgetools.Versions: the toolbox's
// CodeAt returns its own interface (it names no sandbox type), which has
// sandbox.FS's methods.
type boxVersions struct{ *toolbox.Box }

func (v boxVersions) CodeAt(ctx context.Context, ref string) (sandbox.FS, string, error) {
	fs, commit, err := v.Box.CodeAt(ctx, ref)
	if fs == nil {
		return nil, commit, err
	}
	return fs, commit, err
}
