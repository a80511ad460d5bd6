package shelltools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/tgp-go/tgp/shell"
	"github.com/tgp-go/tgp/tools"
)

// Config wires shell, exec_command and write_stdin.
type Config struct {
	// Open returns the runner and the session manager, built on first use
	// (the root exists once the kernel booted). An error says why commands
	// cannot run here (a memory root); it is returned to the caller as an
	// execution_failed error.
	Open func() (*shell.Runner, *shell.Sessions, error)
	// Persist commits the files a command changed (nil: they stay in the
	// root only).
	Persist tools.Persister
}

// New returns shell, exec_command and write_stdin.
func New(cfg Config) []*tools.Tool {
	st := &shellTools{cfg: cfg}
	return []*tools.Tool{st.shellTool(), st.execCommand(), st.writeStdin()}
}

type shellTools struct {
	cfg Config
}

// tokenBytes turns max_output_tokens into bytes (about 4 bytes a token).
const tokenBytes = 4

type shellArgs struct {
	Command   string `json:"command" minLength:"1" jsonschema:"the command line (POSIX sh / bash syntax: pipes, lists, redirections, $(...)); every command it runs is checked against the shell scopes after expansion"`
	Workdir   string `json:"workdir,omitempty" default:"\".\"" jsonschema:"working directory, relative to the root"`
	TimeoutMS int    `json:"timeout_ms,omitempty" default:"60000" minimum:"1" maximum:"600000" jsonschema:"wall-clock limit; the command line and every process it started are killed at the limit"`
}

// ShellResult is shell's result: the command's exit code and capped
// output, the files it changed and what became of them.
type ShellResult struct {
	*shell.Result
	*tools.Persisted
}

// SessionResult is exec_command's and write_stdin's result.
type SessionResult struct {
	SessionID int    `json:"session_id"`
	Output    string `json:"output"`
	Exited    bool   `json:"exited"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	// Error says why an exited session's command line stopped when it was
	// not its own exit (a scope violation, a kill).
	Error     string   `json:"error,omitempty"`
	Truncated bool     `json:"truncated"`
	Changed   []string `json:"changed"`
	Refused   []string `json:"out_of_scope_changes,omitempty"`
	*tools.Persisted
}

func (st *shellTools) risk(line string) tools.Risk {
	r, _, err := st.open("shell")
	if err != nil {
		return tools.RiskMedium
	}
	c, err := shell.Classify(r.Scopes(), line)
	switch {
	case err != nil:
		return tools.RiskMedium // refused before anything runs
	case c == shell.Dangerous:
		return tools.RiskHigh
	case c == shell.ReadOnly:
		return tools.RiskLow
	}
	return tools.RiskMedium
}

func (st *shellTools) open(tool string) (*shell.Runner, *shell.Sessions, error) {
	if st.cfg.Open == nil {
		return nil, nil, tools.Errorf(tools.KindExecutionFailed, "%s needs a disk root: the shell is not configured", tool)
	}
	r, s, err := st.cfg.Open()
	if err != nil {
		return nil, nil, tools.Wrap(tools.KindExecutionFailed, err, "%s needs a disk root", tool)
	}
	return r, s, nil
}

func (st *shellTools) shellTool() *tools.Tool {
	return tools.Define(tools.Spec[shellArgs]{
		Name: "shell", Output: ShellResult{},
		Facts: tools.Facts{NeedsDisk: true, Persists: true},
		Description: "Run a command line in the root and return {exit_code, stdout, stderr, truncated, duration_ms, changed, isolation} " +
			"plus the persistence fields. Every command it runs (pipeline stages, lists, subshells, $(...), wrappers such as xargs, env, " +
			"sh -c) is checked after expansion against the shell scopes: denied and unlisted commands, directories and paths out of scope " +
			"are refused with sandbox_violation (details: reason, command, required_scope, allowed_patterns); dangerous commands (rm) need " +
			"approval. A non-zero exit is a result, not an error. Output is capped at 8 KB or 200 lines per stream ([truncated]). " +
			"Files the command changed are committed and pushed like any other write.",
		Annotations: tools.Annotations{Destructive: true, Risk: tools.RiskHigh},
		Summary:     func(a shellArgs) string { return fmt.Sprintf("run `%s` in %s", a.Command, a.Workdir) },
		Risk:        func(a shellArgs) tools.Risk { return st.risk(a.Command) },
		Run: func(ctx context.Context, a shellArgs) (tools.Result, error) {
			runner, _, err := st.open("shell")
			if err != nil {
				return tools.Result{}, err
			}
			timeout := time.Duration(a.TimeoutMS) * time.Millisecond
			res, err := runner.Run(preapproved(ctx), shell.Request{Command: a.Command, Workdir: a.Workdir, Timeout: timeout})
			var per *tools.Persisted
			if res != nil {
				per = st.persist(ctx, "shell", a.Command, res.Changed, res.Refused)
			}
			if err != nil {
				return tools.Result{}, st.toolError(err, res, per)
			}
			return tools.Result{Value: ShellResult{Result: res, Persisted: per}, Truncated: res.Truncated}, nil
		},
	})
}

// persist commits the changed files in the write scope; changes outside
// it are left uncommitted and said so.
func (st *shellTools) persist(ctx context.Context, tool, line string, changed, refused []string) *tools.Persisted {
	var per *tools.Persisted
	if len(changed) > 0 {
		msg := "forge: " + tool + ": " + tools.FirstWords(line, 10)
		var err error
		per, err = tools.Commit(context.WithoutCancel(ctx), st.cfg.Persist, tool, changed, msg)
		if err != nil {
			per = &tools.Persisted{Persisted: false, Note: "the files the command changed are in the root but were not persisted: " + err.Error()}
		}
	}
	if len(refused) > 0 {
		if per == nil {
			per = &tools.Persisted{}
		}
		note := fmt.Sprintf("%d changed path(s) outside shell.paths.write were not committed: %s", len(refused), strings.Join(refused, ", "))
		if per.Note != "" {
			note = per.Note + "; " + note
		}
		per.Note = note
	}
	return per
}

// toolError maps the shell package's errors to tool errors.
func (st *shellTools) toolError(err error, res *shell.Result, per *tools.Persisted) error {
	details := map[string]any{}
	if res != nil && (len(res.Changed) > 0 || len(res.Refused) > 0) {
		details["changed"] = res.Changed
		if len(res.Refused) > 0 {
			details["out_of_scope_changes"] = res.Refused
		}
	}
	if per != nil {
		details["persisted"] = per
	}
	var v *shell.Violation
	var ae *shell.ApprovalError
	var se *shell.SyntaxError
	var te *shell.TimeoutError
	switch {
	case errors.As(err, &v):
		details["reason"] = v.Reason
		if v.Command != "" {
			details["command"] = v.Command
		}
		if v.Directory != "" {
			details["directory"] = v.Directory
		}
		if v.Path != "" {
			details["path"] = v.Path
		}
		if v.RequiredScope != "" {
			details["required_scope"] = string(v.RequiredScope)
		}
		if v.AllowedPatterns != nil {
			details["allowed_patterns"] = v.AllowedPatterns
		}
		return &tools.Error{Kind: tools.KindSandboxViolation, Message: v.Message, Details: details, Err: err}
	case errors.As(err, &ae):
		details["commands"] = ae.Commands
		details["summary"] = strings.Join(ae.Commands, "; ")
		details["risk"] = string(tools.RiskHigh)
		return &tools.Error{Kind: tools.KindApprovalRequired, Message: ae.Message, Details: details, Err: err}
	case errors.As(err, &se):
		return &tools.Error{Kind: tools.KindBadArgs, Field: "command", Message: se.Error(), Err: err}
	case errors.As(err, &te):
		if te.Result != nil {
			details["exit_code"] = te.Result.ExitCode
			details["stdout"] = te.Result.Stdout
			details["stderr"] = te.Result.Stderr
		}
		return &tools.Error{Kind: tools.KindTimeout, Message: te.Error() + "; raise timeout_ms or narrow the command", Details: details, Err: err}
	case errors.Is(err, shell.ErrNoSession):
		return &tools.Error{Kind: tools.KindNotFound, Field: "session_id", Message: err.Error(), Err: err}
	case errors.Is(err, fs.ErrNotExist) && strings.Contains(err.Error(), "workdir"):
		return &tools.Error{Kind: tools.KindBadArgs, Field: "workdir", Message: err.Error(), Err: err}
	case errors.Is(err, context.Canceled):
		return &tools.Error{Kind: tools.KindCancelled, Message: err.Error(), Details: details, Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &tools.Error{Kind: tools.KindTimeout, Message: err.Error(), Details: details, Err: err}
	}
	if len(details) == 0 {
		details = nil
	}
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: err.Error(), Details: details, Err: err}
}

type execCommandArgs struct {
	Cmd             string `json:"cmd" minLength:"1" jsonschema:"the command line to start on a PTY (checked like shell's)"`
	Workdir         string `json:"workdir,omitempty" default:"\".\"" jsonschema:"working directory, relative to the root"`
	YieldTimeMS     int    `json:"yield_time_ms,omitempty" default:"250" minimum:"0" maximum:"30000" jsonschema:"how long to wait for output before returning (less if the command exits)"`
	MaxOutputTokens int    `json:"max_output_tokens,omitempty" default:"8000" minimum:"1" maximum:"100000" jsonschema:"cap on the output returned by this call (about 4 bytes a token); the rest waits for the next poll"`
}

func (st *shellTools) execCommand() *tools.Tool {
	return tools.Define(tools.Spec[execCommandArgs]{
		Name: "exec_command", Output: SessionResult{},
		Facts: tools.Facts{NeedsDisk: true, Persists: true},
		Description: "Start a command line on a PTY as a session that keeps running between calls; returns {session_id, output, exited, exit_code} " +
			"after yield_time_ms. Continue with write_stdin. Commands are checked against the shell scopes like shell's; sessions are capped " +
			"in number, end after an idle timeout and are killed when the kernel shuts down.",
		Annotations: tools.Annotations{Destructive: true, Risk: tools.RiskHigh},
		Summary:     func(a execCommandArgs) string { return fmt.Sprintf("start session `%s` in %s", a.Cmd, a.Workdir) },
		Risk:        func(a execCommandArgs) tools.Risk { return st.risk(a.Cmd) },
		Run: func(ctx context.Context, a execCommandArgs) (tools.Result, error) {
			_, sessions, err := st.open("exec_command")
			if err != nil {
				return tools.Result{}, err
			}
			p, err := sessions.Start(preapproved(ctx), a.Cmd, a.Workdir, time.Duration(a.YieldTimeMS)*time.Millisecond, a.MaxOutputTokens*tokenBytes)
			if err != nil {
				return tools.Result{}, st.toolError(err, nil, nil)
			}
			return st.sessionResult(ctx, "exec_command", a.Cmd, p), nil
		},
	})
}

type writeStdinArgs struct {
	SessionID       int    `json:"session_id" minimum:"1" jsonschema:"the session exec_command started"`
	Chars           string `json:"chars,omitempty" jsonschema:"characters to write (\\n for Enter, \\u0003 for Ctrl-C); empty just polls"`
	YieldTimeMS     int    `json:"yield_time_ms,omitempty" default:"250" minimum:"0" maximum:"30000" jsonschema:"how long to wait for output before returning"`
	MaxOutputTokens int    `json:"max_output_tokens,omitempty" default:"8000" minimum:"1" maximum:"100000" jsonschema:"cap on the output returned by this call (about 4 bytes a token)"`
	Close           bool   `json:"close,omitempty" default:"false" jsonschema:"send EOF and end the session (what still runs after yield_time_ms is killed)"`
}

func (st *shellTools) writeStdin() *tools.Tool {
	return tools.Define(tools.Spec[writeStdinArgs]{
		Name: "write_stdin", Output: SessionResult{},
		Facts: tools.Facts{NeedsDisk: true, Persists: true},
		Description: "Write characters to a session exec_command started (empty chars polls) and return {output, exited, exit_code}; " +
			"close: true sends EOF and ends the session.",
		Annotations: tools.Annotations{Risk: tools.RiskMedium},
		Summary: func(a writeStdinArgs) string {
			if a.Close {
				return fmt.Sprintf("end session %d", a.SessionID)
			}
			return fmt.Sprintf("write %q to session %d", a.Chars, a.SessionID)
		},
		Run: func(ctx context.Context, a writeStdinArgs) (tools.Result, error) {
			_, sessions, err := st.open("write_stdin")
			if err != nil {
				return tools.Result{}, err
			}
			p, err := sessions.Write(ctx, a.SessionID, a.Chars, a.Close, time.Duration(a.YieldTimeMS)*time.Millisecond, a.MaxOutputTokens*tokenBytes)
			if err != nil {
				return tools.Result{}, st.toolError(err, nil, nil)
			}
			return st.sessionResult(ctx, "write_stdin", fmt.Sprintf("session %d", a.SessionID), p), nil
		},
	})
}

// preapproved passes the host's approval of this call (approval.policy
// asked, with the command line in the summary) on to the shell, so that
// its dangerous commands are not asked about a second time.
func preapproved(ctx context.Context) context.Context {
	if tools.Approved(ctx) {
		return shell.Preapproved(ctx)
	}
	return ctx
}

func (st *shellTools) sessionResult(ctx context.Context, tool, line string, p *shell.Poll) tools.Result {
	out := SessionResult{SessionID: p.SessionID, Output: p.Output, Exited: p.Exited, ExitCode: p.ExitCode,
		Truncated: p.Truncated, Changed: p.Changed, Refused: p.Refused}
	if p.Err != nil {
		out.Error = st.toolError(p.Err, nil, nil).Error()
	}
	out.Persisted = st.persist(ctx, tool, line, p.Changed, p.Refused)
	return tools.Result{Value: out, Truncated: p.Truncated}
}
