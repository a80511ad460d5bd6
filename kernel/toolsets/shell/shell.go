// Package shell is the shell toolset: shell, exec_command and write_stdin
// on the scoped shell (mvdan/sh, Landlock, PTY sessions), under the
// configuration's shell: scopes. It links mvdan/sh and the shell's
// re-exec helper; a host that does not import it links neither.
package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tgp-go/tgp/kernel/toolset"
	"github.com/tgp-go/tgp/shell"
	"github.com/tgp-go/tgp/shell/scope"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/shelltools"
)

// Name is the toolset's name.
const Name = "shell"

// Toolset is the shell tools.
func Toolset() toolset.Toolset {
	return toolset.Toolset{
		Name:        Name,
		Description: "command lines in the root under the shell: scopes: shell, exec_command, write_stdin",
		Build:       build,
	}
}

// shellEnv are the kernel's variables a command line may see: locale and
// time zone, nothing else.
var shellEnv = []string{"LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ"}

// build makes shell, exec_command and write_stdin. The runner is made on
// first use (the root exists once booted); on a memory root the tools
// answer that a disk root is needed. Sessions die with the kernel.
func build(_ context.Context, env *toolset.Env) ([]*tools.Tool, error) {
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
		if env.Raw.InMemory() || env.Raw.Root() == "" {
			return nil, nil, errors.New("this kernel's root is in memory (kernel.WithMemoryFS), and commands need real files; give the kernel a root_dir on disk")
		}
		var vars []string
		for _, kv := range env.Environment() {
			name, _, _ := strings.Cut(kv, "=")
			for _, keep := range shellEnv {
				if name == keep {
					vars = append(vars, kv)
				}
			}
		}
		opts := []shell.Option{
			shell.WithSecretEnv(env.SecretEnvs...),
			shell.WithEnv(vars...),
			// Asked through the tool set: the host's approver, or the one
			// the call carries (an MCP client's elicitation).
			shell.WithApprover(func(ctx context.Context, commands []string) (bool, error) {
				args, _ := json.Marshal(map[string]any{"commands": commands})
				d, err := env.Set.Ask(ctx, tools.ApprovalRequest{Tool: "shell", Risk: tools.RiskHigh,
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
		var r *shell.Runner
		err := env.Shell(func(sc scope.Config) (toolset.Scoper, error) {
			var err error
			r, err = shell.New(env.Raw.Root(), sc, opts...)
			if err != nil {
				return nil, err
			}
			return r, nil
		})
		if err != nil {
			return nil, nil, err
		}
		runner, sessions = r, shell.NewSessions(r)
		return runner, sessions, nil
	}
	env.OnClose(func(context.Context) error {
		mu.Lock()
		r, s := runner, sessions
		mu.Unlock()
		if s != nil {
			return errors.Join(s.Close(), r.Close())
		}
		return nil
	})
	return shelltools.New(shelltools.Config{Open: open, Persist: env.Box}), nil
}
