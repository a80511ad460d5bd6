package shell

import (
	"context"

	"github.com/tgp-go/tgp/shell/scope"
)

// The scopes are shell/scope's (no interpreter linked): a kernel and its
// request_scope_expansion check and widen them without the shell.
type (
	Config        = scope.Config
	Categories    = scope.Categories
	Paths         = scope.Paths
	Category      = scope.Category
	Scope         = scope.Scope
	Violation     = scope.Violation
	ApprovalError = scope.ApprovalError
	Scopes        = scope.Scopes
	ConfigError   = scope.ConfigError
	Grant         = scope.Grant
)

// Categories, scopes and refusal reasons (shell/scope's).
const (
	ReadOnly            = scope.ReadOnly
	SafeWrite           = scope.SafeWrite
	Dangerous           = scope.Dangerous
	ScopeRead           = scope.ScopeRead
	ScopeWrite          = scope.ScopeWrite
	ReasonDenied        = scope.ReasonDenied
	ReasonNotAllowed    = scope.ReasonNotAllowed
	ReasonDirNotInScope = scope.ReasonDirNotInScope
	ReasonPathNotScope  = scope.ReasonPathNotScope
)

// Errors matched with errors.Is (shell/scope's).
var (
	ErrViolation = scope.ErrViolation
	ErrApproval  = scope.ErrApproval
)

// DefaultConfig is scope.DefaultConfig.
func DefaultConfig() Config { return scope.DefaultConfig() }

// NewScopes is scope.NewScopes.
func NewScopes(cfg Config) (*Scopes, error) { return scope.NewScopes(cfg) }

// CheckGlob is scope.CheckGlob.
func CheckGlob(key, pattern string) (string, error) { return scope.CheckGlob(key, pattern) }

// WithGrant is scope.WithGrant.
func WithGrant(ctx context.Context, g Grant) context.Context { return scope.WithGrant(ctx, g) }
