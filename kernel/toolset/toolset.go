// Package toolset is what a named toolset is and what the kernel gives it
// to build its tools on: the jailed root, the toolbox, the tool set, the
// configuration's sections. It sits below the kernel and links no engine,
// so that the toolsets (kernel/toolsets/...) build on it without
// importing the kernel, and the kernel links only the toolsets a host
// passes (kernel.WithToolsets) or registers (kernel/all).
package toolset

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/sandbox/hostapi"
	"github.com/tgp-go/tgp/shell/scope"
	"github.com/tgp-go/tgp/toolbox"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// Core is the toolset of the kernel's own tools (find_tools,
// request_scope_expansion): always built, whatever toolsets are given.
const Core = "core"

// Toolset is a named family of tools a host passes to kernel.New
// (kernel.WithToolsets). Build runs once, in New, after the toolbox is
// made and before Boot; the tools it returns are stamped with Name
// (tools.Tool.Toolset), which the MCP server selects on.
type Toolset struct {
	Name        string
	Description string
	// Build makes the toolset's tools on env.
	Build func(ctx context.Context, env *Env) ([]*tools.Tool, error)
	// Checker, when set, is check_tool's analysis for the file tools and
	// the toolbox (a tool file that does not compile is refused before
	// it is pushed). The kernel uses the first toolset's that has one,
	// and asks for it before the toolbox is made, with the sandbox
	// section (imports, rules, permissions, fetch URLs, secrets).
	Checker func(cfg SandboxConfig) tools.ToolChecker
}

// Env is what the kernel gives a toolset's Build.
type Env struct {
	// FS is the jailed root as the tools read it: it writes the files
	// persists left unwritten before reading (the kernel's FS). Raw is
	// the same root without that (what the repository's tools use).
	FS, Raw *vfs.FS
	// Box is the toolbox: the repository, the registry, the Persister.
	Box *toolbox.Box
	// Set is the tool set being built (for Ask: the host's approver).
	Set *tools.Set
	// Memory: the root is in memory (kernel.WithMemoryFS).
	Memory bool
	// BaseDir resolves relative paths of the configuration.
	BaseDir    string
	HTTPClient *http.Client
	// Environ is the environment the kernel reads (nil: the process's).
	Environ []string
	// SecretEnvs name the variables that hold the kernel's secrets (the
	// token, the carry key, the DSN, the server's token): never passed
	// to a command.
	SecretEnvs []string
	// The configuration's sections.
	FSConfig   FSConfig
	Sandbox    SandboxConfig
	SQL        SQLConfig
	GitTools   GitToolsConfig
	Author     struct{ Name, Email string }
	SigningKey string
	// HostFuncs are kernel.WithSandboxFunc's functions.
	HostFuncs []hostapi.HostFunc
	// DB and DBDialect are kernel.WithDB's database (nil: sql.driver).
	DB        *sql.DB
	DBDialect string
	// Checker is check_tool's analysis (nil: no toolset gives one).
	Checker tools.ToolChecker
	// Shell opens the shell under the current scopes (shell:, widened by
	// request_scope_expansion's add_to_scope): open is called with them,
	// under the kernel's lock, and the Scoper it returns is widened
	// later as the configuration is.
	Shell func(open func(scope.Config) (Scoper, error)) error

	closers []func(context.Context) error
}

// Scoper is a running shell whose scopes the kernel widens.
type Scoper interface {
	SetConfig(scope.Config) error
}

// OnClose runs f at the kernel's Shutdown (last added, first run; the
// toolbox's pending writes are flushed after every toolset's closer).
func (e *Env) OnClose(f func(context.Context) error) { e.closers = append(e.closers, f) }

// Closers are the functions OnClose was given, in order.
func (e *Env) Closers() []func(context.Context) error { return e.closers }

// Secret reads the environment variable name from the kernel's
// environment ("" when unset or name is empty).
func (e *Env) Secret(name string) string { return Secret(e.Environ, name) }

// Environment is Environ, or the process's when nil.
func (e *Env) Environment() []string {
	if e.Environ != nil {
		return e.Environ
	}
	return os.Environ()
}

// Secret reads the variable name from environ (nil: the process's
// environment); "" when unset or name is empty.
func Secret(environ []string, name string) string {
	if name == "" {
		return ""
	}
	if environ == nil {
		return os.Getenv(name)
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

var (
	mu         sync.Mutex
	registered []Toolset
	journal    func(dsn string) (gitbackend.Journal, func())
)

// Register adds ts to the toolsets a kernel built without
// kernel.WithToolsets gets (kernel/all registers every one). A name
// registered twice replaces the first.
func Register(ts Toolset) {
	mu.Lock()
	defer mu.Unlock()
	registered = slices.DeleteFunc(registered, func(t Toolset) bool { return t.Name == ts.Name })
	registered = append(registered, ts)
}

// Registered lists the registered toolsets, in registration order.
func Registered() []Toolset {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(registered)
}

// RegisterJournal sets how git.journal's DSN is opened (kernel/all: the
// PostgreSQL journal). A kernel given git.journal without one fails.
func RegisterJournal(open func(dsn string) (gitbackend.Journal, func())) {
	mu.Lock()
	defer mu.Unlock()
	journal = open
}

// JournalOpener is RegisterJournal's function (nil: none).
func JournalOpener() func(dsn string) (gitbackend.Journal, func()) {
	mu.Lock()
	defer mu.Unlock()
	return journal
}
