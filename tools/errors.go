package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/tgp-go/tgp/vfs"
)

// Kind classifies a tool failure. The set is closed: hosts, the CLI and MCP
// clients switch on it (the `tgp call` contract).
type Kind string

// The error kinds of the `tgp call` contract.
const (
	KindBadArgs          Kind = "bad_args"
	KindNotFound         Kind = "not_found"
	KindSandboxViolation Kind = "sandbox_violation"
	KindConflict         Kind = "conflict"
	KindTimeout          Kind = "timeout"
	KindCancelled        Kind = "cancelled"
	KindApprovalRequired Kind = "approval_required"
	KindExecutionFailed  Kind = "execution_failed"
	KindInternal         Kind = "internal"
	// KindCompileError refuses a write of an agent tool that check_tool
	// finds errors in: nothing was written (force overrides it).
	KindCompileError Kind = "compile_error"
	// KindUntrustedTool refuses to check or run an agent tool whose last
	// change is not a commit signed by a key sandbox.trusted_signers
	// lists for its committer.
	KindUntrustedTool Kind = "untrusted_tool"
)

// Error is the typed error every tool call returns. Message is written for the
// model: short, and saying what to do next where there is something to do.
type Error struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
	// Field names the argument at fault for bad_args errors.
	Field string `json:"field,omitempty"`
	// Details carries structured extras (conflict paths, approval summary...).
	Details map[string]any `json:"details,omitempty"`
	Err     error          `json:"-"`
}

func (e *Error) Error() string {
	if e.Field != "" && e.Kind == KindBadArgs {
		return fmt.Sprintf("%s: %s", e.Kind, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, &Error{Kind: k}) match on the kind alone, and
// makes a sandbox_violation match vfs.ErrViolation and fs.ErrPermission,
// the one contract every layer recognises a refused path by.
func (e *Error) Is(target error) bool {
	if e.Kind == KindSandboxViolation && (target == vfs.ErrViolation || target == fs.ErrPermission) {
		return true
	}
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Kind == e.Kind
}

// Errorf builds an *Error of the given kind.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// BadArg is a bad_args error naming the field at fault.
func BadArg(field, format string, args ...any) *Error {
	return &Error{Kind: KindBadArgs, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Wrap gives err the kind and message prefix, keeping it for errors.Is/As.
func Wrap(kind Kind, err error, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if err != nil {
		msg = msg + ": " + err.Error()
	}
	return &Error{Kind: kind, Message: msg, Err: err}
}

// KindOf reports the kind an error maps to; see [Classify].
func KindOf(err error) Kind { return Classify(err, nil).Kind }

// Classifier maps errors of other packages (the jail, the git backend, the
// sandbox) to a kind; it returns "" for errors it does not know.
type Classifier func(error) Kind

// Classify turns any error into an *Error. An *Error anywhere in the chain
// wins; then the classifiers; then the standard library's sentinels; anything
// else is execution_failed with the error's own text.
func Classify(err error, classifiers []Classifier) *Error {
	if err == nil {
		return nil
	}
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	for _, c := range classifiers {
		if k := c(err); k != "" {
			return &Error{Kind: k, Message: err.Error(), Err: err}
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Message: err.Error(), Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Kind: KindCancelled, Message: err.Error(), Err: err}
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Kind: KindNotFound, Message: err.Error(), Err: err}
	}
	return &Error{Kind: KindExecutionFailed, Message: err.Error(), Err: err}
}
