package forgetools

import (
	"context"
	"errors"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/sandbox/analysis"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/trust"
)

// codeView is where one exec_tool call reads the tool's code: the root,
// or the commit its ref names.
type codeView struct {
	// fs is the run's sandbox FS.
	fs sandbox.FS
	// read reads code to check: the root through the file tools' view
	// (which writes files persists left unwritten) or the commit.
	read func(string) ([]byte, error)
}

// code is the view of ref ("" : the root as it is).
func (ft *forge) code(ctx context.Context, cfg Config, ref string) (codeView, error) {
	if ref == "" {
		return codeView{fs: cfg.SandboxFS, read: ft.fs.ReadFile}, nil
	}
	if cfg.Versions == nil {
		return codeView{}, tools.BadArg("ref", "the toolbox has no git repository: a tool runs only as it is now")
	}
	fsys, _, err := cfg.Versions.CodeAt(ctx, ref)
	if err != nil {
		return codeView{}, err
	}
	return codeView{fs: fsys, read: fsys.ReadFile}, nil
}

type historyArgs struct {
	Path  string `json:"path" jsonschema:"tool file, e.g. tools/math/add.ts"`
	Limit int    `json:"limit,omitempty" minimum:"0" jsonschema:"at most this many commits, newest first (0: all)"`
}

func historyTool(ft *forge, v Versions) *tools.Tool {
	return tools.Define(tools.Spec[historyArgs]{
		Name: "tool_history", Output: []trust.Version{},
		Facts: tools.Facts{ReadsToolbox: true},
		Description: "List the commits that changed an agent tool, newest first: commit, author, date, subject, " +
			"whether it is signed and, with sandbox.trusted_signers, the principal that signed it (signed_by). " +
			"Run an old version with exec_tool's ref; restore one with revert_tool.",
		Annotations: tools.Annotations{ReadOnly: true, Idempotent: true, Risk: tools.RiskLow},
		Summary:     func(a historyArgs) string { return "history of " + a.Path },
		Run: func(ctx context.Context, a historyArgs) (tools.Result, error) {
			p, err := ft.agentPath("path", a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			out, err := v.ToolHistory(ctx, p, a.Limit)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Value: out}, nil
		},
	})
}

type revertArgs struct {
	Path  string `json:"path" jsonschema:"tool file, e.g. tools/math/add.ts"`
	To    string `json:"to" minLength:"1" jsonschema:"commit, branch or tag whose version of the tool to restore (tool_history lists them)"`
	Force bool   `json:"force,omitempty" default:"false" jsonschema:"restore the version even if check_tool finds errors in it"`
}

// RevertResult is revert_tool's result (tools': the kernel returns it
// without linking the sandbox).
type RevertResult = tools.RevertResult

func revertTool(ft *forge, cfg Config, v Versions) *tools.Tool {
	return tools.Define(tools.Spec[revertArgs]{
		Name: "revert_tool", Output: RevertResult{},
		Facts: tools.Facts{Persists: true},
		Description: "Restore an agent tool to its content at a commit, branch or tag, as a new commit persisted like any write " +
			"(history is never rewritten). The content is checked first, as write_file checks a tool file: " +
			"check_tool's errors (a version whose imports are no longer allowed, say) refuse the revert (compile_error) " +
			"unless force is true; warnings come back in the result.",
		Annotations: tools.Annotations{Risk: tools.RiskMedium},
		Summary:     func(a revertArgs) string { return "revert " + a.Path + " to " + a.To },
		Run: func(ctx context.Context, a revertArgs) (tools.Result, error) {
			p, err := ft.agentPath("path", a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			var errs, warns []tools.Diagnostic
			check := func(content []byte) error {
				var err error
				errs, warns, err = tools.CheckToolWrite(AnalysisChecker(cfg.Check), "to", p, content, a.Force)
				return err
			}
			per, from, err := v.RevertTool(ctx, p, a.To, check)
			if err != nil {
				// The toolbox names the ref "ref", as exec_tool's
				// argument is called; here the agent gave it as "to".
				var te *tools.Error
				if errors.As(err, &te) && te.Field == "ref" {
					te.Field = "to"
				}
				return tools.Result{}, err
			}
			return tools.Result{Value: RevertResult{Path: p, From: from, Warnings: warns, Errors: errs, Persisted: per}}, nil
		},
	})
}

// AnalysisChecker is check_tool's analysis as a tools.ToolChecker: what
// refuses a write (write_file, patch_file, apply_patch, revert_tool) of a
// tool that does not compile.
type AnalysisChecker analysis.Config

func (c AnalysisChecker) CheckTool(p string, src []byte) (errs, warnings []tools.Diagnostic) {
	rep := analysis.Analyze(p, src, analysis.Config(c))
	return diagnostics(rep.Errors), diagnostics(rep.Warnings)
}

func diagnostics(fs []analysis.Finding) []tools.Diagnostic {
	var out []tools.Diagnostic
	for _, f := range fs {
		out = append(out, tools.Diagnostic{Rule: f.Rule, Severity: string(f.Severity), Message: f.Message, Path: f.Path, Line: f.Line, Column: f.Column})
	}
	return out
}
