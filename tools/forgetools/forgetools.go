package forgetools

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/sandbox/analysis"
	"github.com/tgp-go/tgp/tools"
)

// SQLSession is one tool run's database transaction: begun lazily on the
// first statement, committed or rolled back by exec_tool.
type SQLSession interface {
	sandbox.SQL
	Commit() error
	Rollback() error
	// Truncated reports whether a result was capped.
	Truncated() bool
}

// SQLProvider opens a session per run; nil when no database is configured.
type SQLProvider interface {
	Session(readOnly bool) SQLSession
}

// Runner executes agent tools; *sandbox.Runner implements it.
type Runner interface {
	Exec(ctx context.Context, req sandbox.Request) (*sandbox.Outcome, error)
}

// Config wires check_tool, exec_tool, find_tools and exec_sql.
type Config struct {
	Runner    Runner
	SandboxFS sandbox.FS
	// Persist commits the files a tool wrote through tgp.write_file when
	// its exec_tool call ends, as the file tools' writes are (nil: they
	// stay in the root only).
	Persist tools.Persister
	SQL     SQLProvider
	// SQLReadOnly is the configured default (sql.read_only).
	SQLReadOnly bool
	Check       analysis.Config
	// Versions gives exec_tool its ref, the trust checks
	// (sandbox.trusted_signers) and tool_history and revert_tool (nil:
	// none of them).
	Versions Versions
}

// New returns check_tool and exec_tool, and exec_sql when a
// database is configured.
func New(fsys tools.FileSystem, cfg Config) []*tools.Tool {
	ft := &forge{fs: fsys, persist: cfg.Persist}
	out := []*tools.Tool{checkTool(ft, cfg), execTool(ft, cfg)}
	if cfg.Versions != nil {
		out = append(out, historyTool(ft, cfg.Versions), revertTool(ft, cfg, cfg.Versions))
	}
	if cfg.SQL != nil {
		out = append(out, execSQLTool(cfg))
	}
	return out
}

// forge is what check_tool and exec_tool share: the root and how a
// change in it is persisted.
type forge struct {
	fs      tools.FileSystem
	persist tools.Persister
}

// agentPath checks an agent-supplied path as the file tools do.
func (ft *forge) agentPath(field, p string) (string, error) {
	return tools.AgentPath(ft.fs, false, field, p)
}

type checkArgs struct {
	Path string `json:"path" jsonschema:"tool file under tools/, e.g. tools/math/add.ts"`
}

func checkTool(ft *forge, cfg Config) *tools.Tool {
	return tools.Define(tools.Spec[checkArgs]{
		Name: "check_tool", Output: analysis.Report{},
		Facts: tools.Facts{ReadsToolbox: true},
		Description: "Validate an agent tool: compile the TypeScript and apply the protocol's static rules " +
			"(no any, no eval or Function, no process, no hardcoded secrets, no magic numbers, allowed requires only). " +
			"Returns {valid, errors[], warnings[]} with TS line:column positions.",
		Annotations: tools.Annotations{ReadOnly: true, Idempotent: true, Risk: tools.RiskLow},
		Summary:     func(a checkArgs) string { return "check " + a.Path },
		Run: func(ctx context.Context, a checkArgs) (tools.Result, error) {
			p, err := ft.agentPath("path", a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			src, err := ft.fs.ReadFile(p)
			if err != nil {
				return tools.Result{}, err
			}
			if err := checkTrust(ctx, cfg.Versions, ft.fs.ReadFile, "", p, src); err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Value: analysis.Analyze(p, src, cfg.Check)}, nil
		},
	})
}

type execArgs struct {
	Path     string         `json:"path" jsonschema:"tool file to run, e.g. tools/math/add.ts"`
	Args     map[string]any `json:"args,omitempty" jsonschema:"arguments passed to the tool's default export (a JSON object)"`
	ReadOnly *bool          `json:"read_only,omitempty" jsonschema:"run the tool's database work in a read-only transaction"`
	Ref      string         `json:"ref,omitempty" jsonschema:"run the tool as it was at this commit, branch or tag (its imports too); empty: as it is now"`
}

func execTool(ft *forge, cfg Config) *tools.Tool {
	return tools.Define(tools.Spec[execArgs]{
		Name: "exec_tool", Output: &sandbox.Outcome{},
		Facts: tools.Facts{ReadsToolbox: true, Persists: true},
		Description: "Run an agent tool in the sandbox with args. Returns {success, result, logs, error?, duration_ms}; " +
			"database work runs in one transaction, committed only if the tool succeeds.",
		Annotations: tools.Annotations{Risk: tools.RiskMedium},
		Summary: func(a execArgs) string {
			if a.Ref != "" {
				return "run " + a.Path + " at " + a.Ref
			}
			return "run " + a.Path
		},
		Run: func(ctx context.Context, a execArgs) (tools.Result, error) {
			if cfg.Runner == nil {
				return tools.Result{}, tools.Errorf(tools.KindExecutionFailed, "the sandbox is not configured")
			}
			p, err := ft.agentPath("path", a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			code, err := ft.code(ctx, cfg, a.Ref)
			if err != nil {
				return tools.Result{}, err
			}
			src, rerr := code.read(p)
			if rerr != nil && a.Ref != "" {
				return tools.Result{}, tools.Wrap(tools.KindNotFound, rerr, "%s at %s", p, a.Ref)
			}
			if rerr == nil {
				if err := checkTrust(ctx, cfg.Versions, code.read, a.Ref, p, src); err != nil {
					return tools.Result{}, err
				}
			}
			// args are checked against the parameter type the tool
			// declares (the schema check_tool reports): a wrong type is
			// bad_args naming the field, not a run that coerces "1" + 2.
			sqlRead := false
			if rerr == nil {
				// A tool that declares sql: "read" gets a read-only
				// session, whatever the call asks: the database refuses
				// its writes (the sandbox refuses a writable session).
				// The declaration is read from the source that runs (at
				// ref, when one is given).
				if perms, _ := sandbox.ParsePermissions(p, src); perms != nil && perms.SQL == sandbox.SQLRead {
					sqlRead = true
				}
				if ps, ok := analysis.ParamsOf(string(src)); ok {
					var args any
					if a.Args != nil {
						args = map[string]any(a.Args)
					}
					if aerr := ps.Check(args, a.Args != nil); aerr != nil {
						return tools.Result{}, tools.BadArg(aerr.Field, "%s (the tool's parameter type; check_tool shows it as args_schema)", aerr.Error())
					}
				}
			}
			// The call's own view of the FS records what the tool writes, so
			// that this call, and no other, persists it.
			rec := &writeRecorder{FS: code.fs}
			req := sandbox.Request{Path: p}
			if code.fs != nil {
				req.FS = rec
			}
			var guard *trustGuard
			if cfg.Versions != nil && cfg.Versions.Trusting() && rerr == nil {
				// What was checked is what runs; what it loads is
				// checked as it is loaded.
				req.Source = src
				if req.FS != nil {
					guard = &trustGuard{FS: req.FS, ctx: ctx, v: cfg.Versions, ref: a.Ref}
					req.FS = guard
				}
			}
			if a.Args != nil {
				req.Args = a.Args // omitted stays undefined in the tool, as before
			}
			var sess SQLSession
			if cfg.SQL != nil {
				ro := cfg.SQLReadOnly
				if a.ReadOnly != nil {
					ro = *a.ReadOnly
				}
				sess = cfg.SQL.Session(ro || sqlRead)
				req.SQL = sess
			}
			out, err := cfg.Runner.Exec(ctx, req)
			if guard != nil && err == nil && guard.err() != nil && out != nil && !out.Success {
				err = guard.err()
			}
			// Files the tool wrote are in the root even when it failed
			// afterwards: they are persisted either way.
			if paths := rec.written(ft); len(paths) > 0 {
				per, perr := tools.Commit(context.WithoutCancel(ctx), ft.persist, "exec_tool", paths, "forge: exec_tool wrote "+strings.Join(paths, ", "))
				if perr != nil {
					per = &tools.Persisted{Persisted: false, Note: "the files the tool wrote are in the root but were not persisted: " + perr.Error()}
				}
				if out != nil {
					out.Persisted = per
				}
			}
			if sess != nil {
				if err == nil && out != nil && out.Success && ctx.Err() == nil {
					if cerr := sess.Commit(); cerr != nil {
						out.Success = false
						out.Error = &sandbox.ExecError{Kind: "sql_error", Message: "commit failed: " + cerr.Error()}
					}
				} else if rerr := sess.Rollback(); rerr != nil && err == nil {
					err = fmt.Errorf("rollback: %w", rerr)
				}
			}
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Value: out}, nil
		},
	})
}

// writeRecorder is one exec_tool call's sandbox FS: it passes everything
// to the shared FS and remembers which files the tool wrote.
type writeRecorder struct {
	sandbox.FS
	mu    sync.Mutex
	paths map[string]bool
}

func (w *writeRecorder) WriteFile(p string, data []byte) error {
	if err := w.FS.WriteFile(p, data); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.paths == nil {
		w.paths = map[string]bool{}
	}
	w.paths[p] = true
	return nil
}

// written returns the written files as root-relative paths, sorted.
func (w *writeRecorder) written(ft *forge) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	for p := range w.paths {
		if rel, err := ft.agentPath("path", p); err == nil {
			seen[rel] = true
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// SQLResult is the shape of exec_sql's result, for its output schema: a
// query's rows (and whether they were cut), or a statement's counts.
type SQLResult struct {
	Rows         []map[string]any `json:"rows,omitempty"`
	Truncated    bool             `json:"truncated,omitempty"`
	RowsAffected int64            `json:"rows_affected,omitempty"`
	LastInsertID *int64           `json:"last_insert_id,omitempty"`
}

type sqlArgs struct {
	SQL      string `json:"sql" minLength:"1" jsonschema:"one SQL statement with ? placeholders"`
	Params   []any  `json:"params,omitempty" jsonschema:"values for the ? placeholders"`
	ReadOnly *bool  `json:"read_only,omitempty" jsonschema:"refuse writes"`
}

func execSQLTool(cfg Config) *tools.Tool {
	return tools.Define(tools.Spec[sqlArgs]{
		Name: "exec_sql", Output: SQLResult{},
		Description: "Run one parameterised SQL statement (use ? placeholders and params). Queries return rows as objects; " +
			"statements return {rows_affected, last_insert_id}.",
		Annotations: tools.Annotations{Risk: tools.RiskMedium},
		Summary:     func(a sqlArgs) string { return "run SQL: " + tools.FirstWords(a.SQL, 12) },
		Run: func(ctx context.Context, a sqlArgs) (tools.Result, error) {
			ro := cfg.SQLReadOnly
			if a.ReadOnly != nil {
				ro = *a.ReadOnly
			}
			sess := cfg.SQL.Session(ro)
			res, err := sess.Exec(ctx, a.SQL, a.Params)
			if err != nil {
				_ = sess.Rollback()
				return tools.Result{}, tools.Wrap(tools.KindExecutionFailed, err, "exec_sql")
			}
			if err := sess.Commit(); err != nil {
				return tools.Result{}, tools.Wrap(tools.KindExecutionFailed, err, "exec_sql commit")
			}
			if rows, ok := res.([]map[string]any); ok {
				return tools.Result{Value: map[string]any{"rows": rows, "truncated": sess.Truncated()}, Truncated: sess.Truncated()}, nil
			}
			return tools.Result{Value: res}, nil
		},
	})
}

// OutcomeOf is exec_tool's value typed: the run's outcome, nil for another
// tool's result. A tool that ran and failed (it threw, timed out, passed
// its memory limit) is not a call error: the call returns err == nil and
// an Outcome with Success false; Outcome.Err gives that failure as an
// error.
func OutcomeOf(r tools.Result) *sandbox.Outcome {
	o, _ := r.Value.(*sandbox.Outcome)
	return o
}

// ReportOf is check_tool's value typed; ok is false for another tool's
// result.
func ReportOf(r tools.Result) (rep analysis.Report, ok bool) {
	rep, ok = r.Value.(analysis.Report)
	return rep, ok
}
