package tools

import (
	"fmt"
	"strings"

	"github.com/tgp-go/tgp/registry"
)

// ToolChecker analyses an agent tool's new source before a file tool
// writes it: check_tool's analysis (compile, then the protocol's rules).
// The kernel gives it (FileToolsConfig.Checker), so that this package
// links neither esbuild nor goja; without one the file tools write tool
// files unchecked.
type ToolChecker interface {
	// CheckTool returns the findings for path's would-be content:
	// errors make the write fail, warnings ride along in its result.
	CheckTool(path string, src []byte) (errs, warnings []Diagnostic)
}

// Diagnostic is one finding of a ToolChecker at a TS line:column, in the
// shape of check_tool's findings.
type Diagnostic struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d %s [%s] %s", d.Path, d.Line, d.Column, d.Severity, d.Rule, d.Message)
}

// toolWrite is one file a mutating tool is about to write.
type toolWrite struct {
	path    string
	content []byte
}

// checkTools runs the checker on the agent tools among writes before
// anything is written (field names the argument that carries the
// source): a tool that does not compile, or breaks an error rule, would
// otherwise be pushed to the shared remote, where every agent of the
// fleet gets it. Errors refuse the call with compile_error unless force
// is set; then they come back with the warnings, for the result.
func (ft *fileTools) checkTools(field string, writes []toolWrite, force bool) (errs, warnings []Diagnostic, err error) {
	return checkToolWrites(ft.cfg.Checker, field, writes, force)
}

// CheckToolWrite is the file tools' check of a tool file about to be
// written, for the other tools that write one (revert_tool): when path
// is an agent tool, c's errors refuse the write with compile_error
// (field names the argument the content came from) unless force is set;
// then they come back with the warnings. A nil c checks nothing.
func CheckToolWrite(c ToolChecker, field, path string, content []byte, force bool) (errs, warnings []Diagnostic, err error) {
	return checkToolWrites(c, field, []toolWrite{{path, content}}, force)
}

func checkToolWrites(c ToolChecker, field string, writes []toolWrite, force bool) (errs, warnings []Diagnostic, err error) {
	if c == nil {
		return nil, nil, nil
	}
	var refused []string
	for _, w := range writes {
		if !registry.IsTool(w.path) {
			continue
		}
		e, wr := c.CheckTool(w.path, w.content)
		errs, warnings = append(errs, e...), append(warnings, wr...)
		if len(e) > 0 {
			refused = append(refused, w.path)
		}
	}
	if len(errs) == 0 || force {
		return errs, warnings, nil
	}
	return nil, nil, compileError(field, refused, errs, warnings)
}

// compileError is the refusal of a write whose tool files have errors:
// the first findings in the message (what a model reads), all of them in
// Details.
func compileError(field string, paths []string, errs, warnings []Diagnostic) *Error {
	const shown = 5
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d error(s) found by check_tool; nothing was written:", strings.Join(paths, ", "), len(errs))
	for i, d := range errs {
		if i == shown {
			fmt.Fprintf(&b, "\n  ... %d more (details.errors)", len(errs)-shown)
			break
		}
		b.WriteString("\n  " + d.String())
	}
	b.WriteString("\nfix the source and write it again, or pass force: true to write it as it is")
	details := map[string]any{"errors": errs}
	if len(warnings) > 0 {
		details["warnings"] = warnings
	}
	return &Error{Kind: KindCompileError, Field: field, Message: b.String(), Details: details}
}
