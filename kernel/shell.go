package kernel

import (
	"errors"

	"github.com/tgp-go/tgp/kernel/toolset"
	"github.com/tgp-go/tgp/shell/scope"
)

// ShellConfig is the shell: section: which commands the shell tools may
// run and where (seed 004's bash_tools scopes).
type ShellConfig struct {
	Categories ShellCategories `koanf:"categories"`
	// Deny lists commands refused before anything else.
	Deny  []string   `koanf:"deny"`
	Paths ShellPaths `koanf:"paths"`
}

// ShellCategories sort the allowed commands.
type ShellCategories struct {
	ReadOnly  []string `koanf:"read_only"`
	SafeWrite []string `koanf:"safe_write"`
	Dangerous []string `koanf:"dangerous"`
}

// ShellPaths are globs relative to the root; deny wins, write implies
// read, .git is always denied.
type ShellPaths struct {
	Read  []string `koanf:"read"`
	Write []string `koanf:"write"`
	Deny  []string `koanf:"deny"`
}

func (c ShellConfig) scopes() scope.Config {
	return scope.Config{
		Categories: scope.Categories{ReadOnly: c.Categories.ReadOnly, SafeWrite: c.Categories.SafeWrite, Dangerous: c.Categories.Dangerous},
		Deny:       c.Deny,
		Paths:      scope.Paths{Read: c.Paths.Read, Write: c.Paths.Write, Deny: c.Paths.Deny},
	}
}

// validate checks the section; the error names the key (shell.…).
func (c ShellConfig) validate() error {
	_, err := scope.NewScopes(c.scopes())
	var ce *scope.ConfigError
	if errors.As(err, &ce) {
		return &ConfigError{Key: "shell." + ce.Key, Problem: ce.Problem}
	}
	return err
}

func withShellDefaults(m map[string]any) map[string]any {
	d := scope.DefaultConfig()
	list := func(l []string) []any {
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	m["shell.categories.read_only"] = list(d.Categories.ReadOnly)
	m["shell.categories.safe_write"] = list(d.Categories.SafeWrite)
	m["shell.categories.dangerous"] = list(d.Categories.Dangerous)
	m["shell.deny"] = list(d.Deny)
	m["shell.paths.read"] = list(d.Paths.Read)
	m["shell.paths.write"] = list(d.Paths.Write)
	m["shell.paths.deny"] = list(d.Paths.Deny)
	return m
}

// openShell is toolset.Env.Shell: open makes the shell under the
// current scopes, under the lock add_to_scope widens them with, and the
// runner it returns is widened with them from then on.
func (k *Kernel) openShell(open func(scope.Config) (toolset.Scoper, error)) error {
	k.scope.mu.Lock()
	defer k.scope.mu.Unlock()
	r, err := open(k.cfg.Shell.scopes())
	if err != nil {
		return err
	}
	k.scope.runner = r
	return nil
}
