// Package sandbox is the sandbox toolset: check_tool, exec_tool,
// tool_history, revert_tool and exec_sql on the goja sandbox
// (tools/forgetools) and the database (sqldb: SQLite or PostgreSQL), and
// check_tool's analysis for the file tools. It links goja, esbuild and
// the SQL drivers; a host that does not import it links none of them.
package sandbox

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tgp-go/tgp/kernel/toolset"
	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/sandbox/analysis"
	"github.com/tgp-go/tgp/sqldb"
	"github.com/tgp-go/tgp/toolbox"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/forgetools"
)

// Name is the toolset's name.
const Name = "sandbox"

// Toolset is the sandbox's tools and check_tool's analysis.
func Toolset() toolset.Toolset {
	return toolset.Toolset{
		Name:        Name,
		Description: "agent tools in TypeScript: check_tool, exec_tool, tool_history, revert_tool, and exec_sql on sql.driver's database",
		Build:       build,
		Checker: func(sc toolset.SandboxConfig) tools.ToolChecker {
			return forgetools.AnalysisChecker(checkConfig(sc))
		},
	}
}

// checkConfig is check_tool's analysis configured by the sandbox section.
func checkConfig(sc toolset.SandboxConfig) analysis.Config {
	rules := map[string]analysis.Severity{}
	for id, sev := range sc.Check.Rules {
		rules[id] = analysis.Severity(sev)
	}
	secrets := make([]string, 0, len(sc.Secrets))
	for name := range sc.Secrets {
		secrets = append(secrets, name)
	}
	return analysis.Config{AllowedImports: sc.AllowedImports, Rules: rules, RequirePermissions: sc.RequirePermissions,
		FetchURLs: sc.AllowedFetchURLs, Secrets: secrets, Configured: true}
}

func build(ctx context.Context, env *toolset.Env) ([]*tools.Tool, error) {
	db, err := openSQL(ctx, env)
	if err != nil {
		return nil, err
	}
	runner := newRunner(env)
	env.OnClose(func(context.Context) error { return runner.Close() })
	cfg := forgetools.Config{
		Runner:      runner,
		SandboxFS:   env.Box.SandboxFS(),
		Persist:     env.Box,
		SQLReadOnly: env.SQL.ReadOnly,
		Check:       checkConfig(env.Sandbox),
		Versions:    boxVersions{env.Box},
	}
	if db != nil {
		cfg.SQL = db
	}
	return forgetools.New(env.FS, cfg), nil
}

// newRunner builds the sandbox from the configuration.
func newRunner(env *toolset.Env) *sandbox.Runner {
	sc := env.Sandbox
	opts := []sandbox.Option{
		sandbox.WithTimeout(sc.Timeout),
		sandbox.WithMemoryLimitMB(sc.MemoryMB),
		sandbox.WithAllowedImports(sc.AllowedImports...),
		sandbox.WithAllowedFetchURLs(sc.AllowedFetchURLs...),
		sandbox.WithWriteDirs(env.FSConfig.AllowedDirs...),
	}
	if dir := sc.ModulesDir; dir != "" {
		if !filepath.IsAbs(dir) && env.BaseDir != "" {
			dir = filepath.Join(env.BaseDir, dir)
		}
		opts = append(opts, sandbox.WithModulesDir(dir))
	}
	if env.HTTPClient != nil {
		opts = append(opts, sandbox.WithHTTPClient(env.HTTPClient))
	}
	opts = append(opts, sandbox.WithHostFuncs(env.HostFuncs...), sandbox.WithRequirePermissions(sc.RequirePermissions))
	if len(sc.Secrets) > 0 {
		specs := map[string]sandbox.SecretSpec{}
		for name, s := range sc.Secrets {
			specs[name] = sandbox.SecretSpec{Env: s.Env, URLs: s.URLs}
		}
		// Values are read from the kernel's environment when a fetch
		// needs one, never before and never into a worker.
		opts = append(opts, sandbox.WithSecrets(specs, func(name string) (string, bool) {
			v := env.Secret(name)
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

type sqlProvider struct{ db *sqldb.DB }

func (p sqlProvider) Session(readOnly bool) forgetools.SQLSession { return p.db.Session(readOnly) }

// openSQL opens the configured database, if any (nil: none).
func openSQL(ctx context.Context, env *toolset.Env) (forgetools.SQLProvider, error) {
	if env.DB != nil {
		d := sqldb.SQLite
		if env.DBDialect == "postgres" {
			d = sqldb.Postgres
		}
		return sqlProvider{sqldb.Wrap(env.DB, d)}, nil
	}
	driver := env.SQL.Driver
	if driver == "" {
		return nil, nil
	}
	dsn := env.Secret(env.SQL.DSNEnv)
	if dsn == "" {
		if driver != "sqlite" {
			return nil, &toolset.ConfigError{Key: "sql.dsn_env", Problem: fmt.Sprintf("environment variable %s is empty; it must hold the %s DSN", env.SQL.DSNEnv, driver)}
		}
		if env.Raw.InMemory() {
			dsn = "file:tgp?mode=memory&cache=shared"
		} else {
			// Next to the root, not in it: the database is state, not a tool.
			dsn = filepath.Clean(env.Raw.Root()) + ".sqlite"
		}
	}
	db, err := sqldb.Open(ctx, driver, dsn)
	if err != nil {
		return nil, err
	}
	env.OnClose(func(context.Context) error { return db.Close() })
	return sqlProvider{db}, nil
}
