package tools

import (
	"context"
	"fmt"
)

// ScopeToolName is the tool agents call to ask for a wider shell scope.
const ScopeToolName = "request_scope_expansion"

// ScopeArgs are request_scope_expansion's arguments: a command, or a
// path pattern with the scope it needs.
type ScopeArgs struct {
	Command  string `json:"command,omitempty" jsonschema:"a command name the shell refused (command_not_allowed, or a dangerous command that needs approval); give command or pattern"`
	Category string `json:"category,omitempty" default:"\"safe_write\"" enum:"read_only,safe_write,dangerous" jsonschema:"for a command in no category: the list it would join (read_only needs the read scope, safe_write the write scope, dangerous also the user's approval each time)"`
	Pattern  string `json:"pattern,omitempty" jsonschema:"a path glob relative to the root (as in shell.paths: ** any depth) for a directory_not_in_scope or path_not_in_scope refusal; give command or pattern"`
	Scope    string `json:"scope,omitempty" enum:"read,write" jsonschema:"the scope the pattern needs (the refusal's required_scope); required with pattern"`
	Reason   string `json:"reason" minLength:"1" jsonschema:"why the task needs it, in one or two sentences the user will read"`
}

// ScopeOutcome is request_scope_expansion's result.
type ScopeOutcome struct {
	// Decision is allow_once, add_to_scope, deny or already_in_scope.
	Decision   string `json:"decision"`
	Key        string `json:"key"`
	Command    string `json:"command,omitempty"`
	Category   string `json:"category,omitempty"`
	Pattern    string `json:"pattern,omitempty"`
	Scope      string `json:"scope,omitempty"`
	ConfigFile string `json:"config_file,omitempty"`
	Message    string `json:"message"`
}

// ScopeTool is request_scope_expansion; expand asks the host and applies
// its decision (the kernel's).
func ScopeTool(expand func(ctx context.Context, a ScopeArgs) (ScopeOutcome, error)) *Tool {
	return Define(Spec[ScopeArgs]{
		Name: ScopeToolName,
		Description: "Ask the user to widen the shell's scope after a refusal: {command} for a command that is not allowed " +
			"(or a dangerous one that needs approval), or {pattern, scope: read|write} for a directory or path out of scope, " +
			"always with a reason. The user allows it once (your next call only; a dangerous command then runs once), adds it to " +
			"the configuration for good, or denies it. Returns {decision, key, message}; a denial is final for this request: do " +
			"not ask again. Fails with approval_required (needs_approval) when nobody can be asked.",
		Annotations: Annotations{Risk: RiskLow},
		Summary: func(a ScopeArgs) string {
			if a.Command != "" {
				return fmt.Sprintf("allow command %s (%s): %s", a.Command, a.Category, a.Reason)
			}
			return fmt.Sprintf("allow %s access to %s: %s", a.Scope, a.Pattern, a.Reason)
		},
		Validate: func(a ScopeArgs) error {
			switch {
			case a.Command != "" && a.Pattern != "":
				return BadArg("command", "give command or pattern, not both")
			case a.Command == "" && a.Pattern == "":
				return BadArg("command", "give command (a command name) or pattern (a path glob, with scope)")
			case a.Pattern != "" && a.Scope == "":
				return BadArg("scope", "scope (read or write) is required with pattern: use the refusal's required_scope")
			case a.Command != "" && a.Scope != "":
				return BadArg("scope", "scope goes with pattern; a command's list is category")
			}
			for _, r := range a.Command {
				if r == ' ' || r == '\t' || r == '\n' {
					return BadArg("command", "command is one command name (as the refusal's command field gives it), not a command line")
				}
			}
			return nil
		},
		Run: func(ctx context.Context, a ScopeArgs) (Result, error) {
			out, err := expand(ctx, a)
			if err != nil {
				return Result{}, err
			}
			return Result{Value: out}, nil
		},
	})
}
