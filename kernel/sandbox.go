package kernel

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/sandbox/analysis"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// sandboxFS is the jailed VFS as the sandbox's FS: tools reach files only
// through the jail, and never .git. Every file a tool writes is recorded,
// so the kernel commits it when the run ends (Kernel.Call).
type sandboxFS struct {
	fs          *vfs.FS
	blockUpward bool
	written     *bridgeWrites
}

// path applies the file tools' own policy (tools.AgentPath): one jail
// for every way an agent names a path.
func (s sandboxFS) path(p string) (string, error) {
	return tools.AgentPath(s.fs, s.blockUpward, "path", p)
}

// bridgeWrites are the paths tools wrote through tgp.write_file and no
// persist has committed yet.
type bridgeWrites struct {
	mu    sync.Mutex
	paths map[string]bool
}

func (b *bridgeWrites) add(p string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.paths == nil {
		b.paths = map[string]bool{}
	}
	b.paths[p] = true
}

// take returns the recorded paths, sorted, and forgets them.
func (b *bridgeWrites) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.paths))
	for p := range b.paths {
		out = append(out, p)
	}
	b.paths = nil
	sort.Strings(out)
	return out
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
	if err := s.fs.WriteFile(rel, data, 0o644); err != nil {
		return err
	}
	if s.written != nil {
		s.written.add(rel)
	}
	return nil
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
		Runner:    k.runner,
		SandboxFS: sandboxFS{fs: k.fs, blockUpward: k.cfg.FS.BlockUpwardTraversal, written: &k.bridgeWritten},
		// Each call records its own writes (Kernel.Call persists exactly
		// those); a call from outside Kernel.Call falls back to the shared
		// record.
		SandboxFSFor: func(ctx context.Context) sandbox.FS {
			w, ok := ctx.Value(bridgeWritesKey{}).(*bridgeWrites)
			if !ok {
				w = &k.bridgeWritten
			}
			return sandboxFS{fs: k.fs, blockUpward: k.cfg.FS.BlockUpwardTraversal, written: w}
		},
		SQLReadOnly: k.cfg.SQL.ReadOnly,
		Check:       k.checkConfig(),
	}
	if k.sql != nil {
		cfg.SQL = k.sql
	}
	return tools.ForgeTools(k.fs, cfg)
}

// bridgeWritesKey carries a call's own write record in its context.
type bridgeWritesKey struct{}

// persistBridgeWrites commits and pushes the files tools wrote through the
// sandbox bridge during an exec_tool call (this call's, and any a caller
// outside Kernel.Call left), and reports it in the outcome: "every change
// is persisted" holds for a tool's own writes too.
func (k *Kernel) persistBridgeWrites(ctx context.Context, own *bridgeWrites, res *tools.Result) {
	paths := own.take()
	for _, p := range k.bridgeWritten.take() {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	if len(paths) == 0 {
		return
	}
	out, _ := res.Value.(*sandbox.Outcome)
	msg := "forge: exec_tool wrote " + strings.Join(paths, ", ")
	per, err := k.Persist(ctx, tools.Change{Tool: "exec_tool", Paths: paths, Message: msg})
	if err != nil {
		per = &tools.Persisted{Persisted: false, Note: "the files the tool wrote are in the root but were not persisted: " + err.Error()}
	}
	if out != nil {
		out.Persisted = per
	}
}
