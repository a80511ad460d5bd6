package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tgp-go/tgp/shell"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/shelltools"
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

func (c ShellConfig) scopes() shell.Config {
	return shell.Config{
		Categories: shell.Categories{ReadOnly: c.Categories.ReadOnly, SafeWrite: c.Categories.SafeWrite, Dangerous: c.Categories.Dangerous},
		Deny:       c.Deny,
		Paths:      shell.Paths{Read: c.Paths.Read, Write: c.Paths.Write, Deny: c.Paths.Deny},
	}
}

// validate checks the section; the error names the key (shell.…).
func (c ShellConfig) validate() error {
	_, err := shell.NewScopes(c.scopes())
	var ce *shell.ConfigError
	if errors.As(err, &ce) {
		return &ConfigError{Key: "shell." + ce.Key, Problem: ce.Problem}
	}
	return err
}

func withShellDefaults(m map[string]any) map[string]any {
	d := shell.DefaultConfig()
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

// shellEnv are the kernel's variables a command line may see: locale and
// time zone, nothing else.
var shellEnv = []string{"LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ"}

// shellTools builds shell, exec_command and write_stdin. The runner is
// made on first use (the root exists once booted); on a memory root the
// tools answer that a disk root is needed. Sessions die with the kernel.
func (k *Kernel) shellTools() []*tools.Tool {
	var (
		mu       sync.Mutex
		runner   *shell.Runner
		sessions *shell.Sessions
	)
	open := func() (*shell.Runner, *shell.Sessions, error) {
		mu.Lock()
		defer mu.Unlock()
		if runner != nil {
			return runner, sessions, nil
		}
		if k.fs.InMemory() || k.fs.Root() == "" {
			return nil, nil, errors.New("this kernel's root is in memory (kernel.WithMemoryFS), and commands need real files; give the kernel a root_dir on disk")
		}
		var env []string
		for _, kv := range k.environ() {
			name, _, _ := strings.Cut(kv, "=")
			for _, keep := range shellEnv {
				if name == keep {
					env = append(env, kv)
				}
			}
		}
		opts := []shell.Option{
			shell.WithSecretEnv(k.cfg.Git.TokenEnv, k.cfg.Git.CarryKeyEnv, k.cfg.SQL.DSNEnv, k.cfg.Serve.TokenEnv),
			shell.WithEnv(env...),
			// Asked through the tool set: the host's approver, or the one
			// the call carries (an MCP client's elicitation).
			shell.WithApprover(func(ctx context.Context, commands []string) (bool, error) {
				args, _ := json.Marshal(map[string]any{"commands": commands})
				d, err := k.set.Ask(ctx, tools.ApprovalRequest{Tool: "shell", Risk: tools.RiskHigh,
					Summary: "run dangerous command(s): " + strings.Join(commands, "; "), Args: args, MidCall: shell.MidRun(ctx)})
				if errors.Is(err, tools.ErrNoApprover) {
					if errors.Unwrap(err) == nil {
						return false, shell.ErrNoApprover
					}
					// Wrapped: the approver says why it cannot ask
					// (tgp call with no terminal).
					return false, fmt.Errorf("%w: %v", shell.ErrNoApprover, err)
				}
				return d == tools.DecisionAllowOnce, err
			}),
		}
		k.scope.mu.Lock()
		defer k.scope.mu.Unlock()
		r, err := shell.New(k.fs.Root(), k.cfg.Shell.scopes(), opts...)
		if err != nil {
			return nil, nil, err
		}
		k.scope.runner = r
		runner, sessions = r, shell.NewSessions(r)
		return runner, sessions, nil
	}
	k.closers = append(k.closers, func(context.Context) error {
		mu.Lock()
		r, s := runner, sessions
		mu.Unlock()
		if s != nil {
			return errors.Join(s.Close(), r.Close())
		}
		return nil
	})
	return shelltools.New(shelltools.Config{Open: open, Persist: k.box})
}
