package kernel

import (
	"context"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/sandbox/analysis"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// sandboxFS is the jailed VFS as the sandbox's FS: tools reach files only
// through the jail, and never .git. exec_tool records and persists what a
// run writes (tools.ForgeConfig.Persist).
type sandboxFS struct {
	fs          *vfs.FS
	blockUpward bool
}

// path applies the file tools' own policy (tools.AgentPath): one jail
// for every way an agent names a path.
func (s sandboxFS) path(p string) (string, error) {
	return tools.AgentPath(s.fs, s.blockUpward, "path", p)
}

func (s sandboxFS) ReadFile(p string) ([]byte, error) {
	rel, err := s.path(p)
	if err != nil {
		return nil, err
	}
	return s.fs.ReadFile(rel)
}

func (s sandboxFS) WriteFile(p string, data []byte) error {
	rel, err := s.path(p)
	if err != nil {
		return err
	}
	return s.fs.WriteFile(rel, data, 0o644)
}

func (s sandboxFS) ListFiles(dir string) ([]string, error) {
	if dir != "" && dir != "." {
		rel, err := s.path(dir)
		if err != nil {
			return nil, err
		}
		dir = rel
	}
	var out []string
	err := s.fs.Walk(dir, func(rel string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && (info.Name() == ".git" || info.Name() == "node_modules") {
			return fs.SkipDir
		}
		if !info.IsDir() {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

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
	cfg := tools.ForgeConfig{
		Runner:      k.runner,
		SandboxFS:   sandboxFS{fs: k.fs, blockUpward: k.cfg.FS.BlockUpwardTraversal},
		Persist:     k,
		SQLReadOnly: k.cfg.SQL.ReadOnly,
		Check:       k.checkConfig(),
	}
	if k.sql != nil {
		cfg.SQL = k.sql
	}
	return tools.ForgeTools(k.fs, cfg)
}
