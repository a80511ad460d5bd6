package kernel

import (
	"context"
	"path/filepath"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/sandbox/analysis"
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
	if sc.Isolation == sandbox.IsolationProcess {
		opts = append(opts, sandbox.WithIsolation(sandbox.IsolationProcess), sandbox.WithWorkers(sc.Workers))
		if len(sc.WorkerCommand) > 0 {
			opts = append(opts, sandbox.WithWorkerCommand(sc.WorkerCommand))
		}
	}
	return sandbox.New(opts...)
}

func (k *Kernel) checkConfig() analysis.Config {
	rules := map[string]analysis.Severity{}
	for id, sev := range k.cfg.Sandbox.Check.Rules {
		rules[id] = analysis.Severity(sev)
	}
	return analysis.Config{AllowedImports: k.cfg.Sandbox.AllowedImports, Rules: rules}
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
	}
	if k.sql != nil {
		cfg.SQL = k.sql
	}
	return forgetools.New(k.fs, cfg)
}
