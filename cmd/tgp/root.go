package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/tgp-go/tgp/kernel"
	"github.com/tgp-go/tgp/tools"
)

// app holds what every command shares: streams, environment and the global
// flags.
type app struct {
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	environ []string

	root   string
	config string
	// initing is set by `tgp init`, the one command that may create a
	// project.
	initing bool
}

func newRootCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tgp",
		Short: "TGP: a GitOps tool-persistence kernel for AI agents",
		Long: "tgp runs the TGP kernel from the shell: every agent tool with `tgp call`, the tool list,\n" +
			"project bootstrap, and an MCP server. Configuration: tgp.config.yaml < TGP_* environment < flags.",
		Example:       "  tgp call read_file '{\"path\":\"tools/hello.ts\"}'\n  tgp tools --json",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version as well as `tgp version`: both are what people type.
		Version: version(),
	}
	cmd.SetVersionTemplate("tgp {{.Version}}\n")
	cmd.PersistentFlags().StringVar(&a.root, "root", "", "root directory (overrides root_dir)")
	cmd.PersistentFlags().StringVar(&a.config, "config", "", "configuration file (default: tgp.config.yaml here, or in the nearest parent directory that has one)")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%v\nRun '%s --help' for usage.", err, c.CommandPath())
	})
	cmd.AddCommand(newCallCmd(a), newToolsCmd(a), newVersionCmd(a), newAgentCmd(a), newServeCmd(a), newSchemaCmd(a), newInitCmd(a),
		newBootCmd(a), newStatusCmd(a), newCheckCmd(a), newExecCmd(a), newPRCmd(a), newSessionCmd(a), newWorkerCmd(a), newShellExecCmd(a))
	return cmd
}

// kernelOptions turns the global flags into kernel options.
func (a *app) kernelOptions() []kernel.Option {
	// A root the CLI leaves on disk is whole: the files other agents
	// pushed are there for the user's editor, shell and git.
	opts := []kernel.Option{kernel.WithEnviron(a.environ), kernel.WithWholeRootAtShutdown()}
	cfg := a.config
	if cfg == "" {
		cfg = a.parentProject()
	}
	if cfg == "" {
		opts = append(opts, kernel.WithOptionalConfigFile("tgp.config.yaml"))
	} else {
		opts = append(opts, kernel.WithConfigFile(cfg), kernel.WithBaseDir(filepath.Dir(cfg)))
	}
	if a.root != "" {
		opts = append(opts, kernel.WithRoot(a.root))
	}
	return opts
}

// requireProject refuses to run a command where no project is: without
// it a command run in the wrong directory left a .tgp/ behind, and a typo
// in --root made a directory and cloned into it. A project is a
// configuration file (./tgp.config.yaml, a parent directory's, or
// --config), a remote given in
// the environment (TGP_GIT_REMOTE, as a host configured only by its
// environment sets it), or a root that exists: a fresh clone of a project
// has tgp.config.yaml and not the root (git-ignored), which boot clones.
// A --root given on the command line must exist, or a remote must be
// configured to clone into it.
// `tgp init` makes a project.
func (a *app) requireProject() error {
	if a.initing {
		return nil
	}
	if a.root != "" {
		if _, err := os.Stat(a.root); err == nil {
			return nil
		}
		// A new directory with a remote to clone: a fresh instance's root
		// (a serverless host or a test harness gives each its own).
		if cfg, err := kernel.ConfigFor(a.kernelOptions()...); err != nil || cfg.Git.Remote != "" {
			return nil // (a configuration error is kernel.New's to report)
		}
		return &exitError{code: 1, err: fmt.Errorf("not a tgp project: the root %s does not exist and no remote is configured to clone into it\nhint: check --root; `tgp init --root %s` creates a project there (or configure the remote: TGP_GIT_REMOTE, --config)", a.root, a.root)}
	}
	if a.config != "" || kernel.Secret(a.environ, "TGP_GIT_REMOTE") != "" {
		return nil
	}
	if _, err := os.Stat("tgp.config.yaml"); err == nil {
		return nil
	}
	if a.parentProject() != "" {
		return nil
	}
	root, err := kernel.ResolveRoot(a.kernelOptions()...)
	if err != nil {
		return nil // kernel.New reports the configuration error
	}
	if _, err := os.Stat(root); err == nil {
		return nil
	}
	wd, _ := os.Getwd()
	return &exitError{code: 1, err: fmt.Errorf("not a tgp project: no tgp.config.yaml in %s or a parent directory, and no root %s\nhint: run `tgp init` here (with --remote URL to share tools through git), or pass --config FILE of an existing project", wd, root)}
}

// parentProject is the tgp.config.yaml of the project a command run in
// one of its subdirectories belongs to: the nearest parent directory's,
// found upward as git finds .git. It is "" where the working directory
// has its own (used as it is), where --config or --root says what to
// use, for init (which makes a project where it is run), and where no
// parent has one.
func (a *app) parentProject() string {
	if a.config != "" || a.root != "" || a.initing {
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(wd, "tgp.config.yaml")); err == nil {
		return ""
	}
	for dir := filepath.Dir(wd); ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "tgp.config.yaml")
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// identityNoticeFile, in a root's .git, remembers that the root's user
// was told commits name the bot.
const identityNoticeFile = "tgp-identity-notice"

// identityNotice says, on stderr, when commits will name the bot because
// no identity is configured anywhere (a minimal MCP host's environment):
// once per root, where a person is watching (init, boot, status, serve):
// said by every command, it buried their output.
func (a *app) identityNotice(k *kernel.Kernel) {
	name, email, bot, ok := k.CommitIdentity()
	if !ok || !bot {
		return
	}
	var marker string
	if root := k.FS().Root(); root != "" {
		marker = filepath.Join(root, ".git", identityNoticeFile)
		if _, err := os.Stat(marker); err == nil {
			return
		}
	}
	fmt.Fprintf(a.stderr, "tgp: note: commits will be made as %s <%s>: no identity is configured "+
		"(set git.author.name and git.author.email, GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL, or git config --global user.name/user.email)\n", name, email)
	if marker != "" {
		_ = os.WriteFile(marker, []byte(name+" <"+email+">\n"), 0o644)
	}
}

// openKernel builds and boots a kernel for one command.
func (a *app) openKernel(ctx context.Context, boot bool, extra ...kernel.Option) (*kernel.Kernel, error) {
	if err := a.requireProject(); err != nil {
		return nil, err
	}
	k, err := kernel.New(ctx, append(a.kernelOptions(), extra...)...)
	if err != nil {
		return nil, &exitError{code: 1, err: fmt.Errorf("%w\nhint: check tgp.config.yaml and TGP_* variables; `tgp init` writes a commented default", err)}
	}
	if boot {
		if err := k.Boot(ctx); err != nil {
			return nil, &exitError{code: 1, err: err}
		}
	}
	return k, nil
}

// callOutput is the `tgp call` JSON contract: {"ok","tool","result","truncated"}
// on success, {"ok":false,"tool","error":{"kind","message"}} on failure.
type callOutput struct {
	OK        bool   `json:"ok"`
	Tool      string `json:"tool"`
	Result    any    `json:"result,omitempty"`
	Truncated *bool  `json:"truncated,omitempty"`
	// TruncatedReason says why the result was cut (a timeout, a cap).
	TruncatedReason string       `json:"truncated_reason,omitempty"`
	Error           *tools.Error `json:"error,omitempty"`
}

func newCallCmd(a *app) *cobra.Command {
	var session, approve string
	cmd := &cobra.Command{
		Use:   "call TOOL [JSON-ARGS]",
		Short: "Run one agent tool and print one JSON object",
		Long: "Run one agent tool. Prints {\"ok\":true,\"tool\":...,\"result\":...,\"truncated\":false} and exits 0,\n" +
			"or {\"ok\":false,\"tool\":...,\"error\":{\"kind\":...,\"message\":...}} and exits 1.\n" +
			"Error kinds: bad_args, not_found, sandbox_violation, conflict, timeout, cancelled,\n" +
			"approval_required, compile_error, untrusted_tool, execution_failed, internal. JSON-ARGS defaults to {}; '-' reads stdin.\n" +
			"With git.write_strategy pr, consecutive calls on a root continue one session (one branch, one\n" +
			"pull request) until its PR is merged or closed, or `tgp session end`; --session NAME joins a\n" +
			"named session (branch tgp/session-NAME) from any root.\n" +
			"A call that needs approval asks on the terminal (with no terminal it is refused unless --approve\n" +
			"names the decision). What request_scope_expansion allows once holds for the next tgp call on the root.",
		Example: "  tgp call list_dir '{}'\n  tgp call write_file '{\"path\":\"tools/a.ts\",\"content\":\"export default () => 1\"}'\n  echo '{}' | tgp call git_status -",
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			raw := "{}"
			if len(args) == 2 {
				raw = args[1]
			}
			if raw == "-" {
				b, err := io.ReadAll(a.stdin)
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				raw = string(b)
			}
			// Arguments that are not JSON are the invocation's fault (exit
			// 2, as every usage error), found before anything boots; stdout
			// still carries the one JSON object a caller parses.
			if !json.Valid([]byte(raw)) {
				var v any
				msg := "JSON-ARGS is not JSON"
				if err := json.Unmarshal([]byte(raw), &v); err != nil {
					msg += ": " + err.Error()
				}
				_ = writeJSON(a.stdout, callOutput{OK: false, Tool: name, Error: &tools.Error{Kind: tools.KindBadArgs, Message: msg + ` (quote the object for the shell: '{"path":"a.txt"}')`}})
				return &exitError{code: 2, err: errors.New(msg)}
			}
			ctx := a.parentFromEnv(cmd.Context())
			tel, err := a.setupTelemetry(ctx)
			if err != nil {
				return writeCallError(a.stdout, name, tools.Wrap(tools.KindInternal, err, "telemetry"))
			}
			defer func() {
				if err := tel.close(); err != nil {
					fmt.Fprintf(a.stderr, "tgp: telemetry: %v\n", err)
				}
			}()
			sessionOpt := kernel.WithResumeSession()
			if session != "" {
				sessionOpt = kernel.WithSession(session)
			}
			switch tools.Decision(approve) {
			case "", tools.DecisionAllowOnce, tools.DecisionAddToScope, tools.DecisionDeny:
			default:
				return usageError("--approve must be allow_once, add_to_scope or deny, not %q", approve)
			}
			k, err := a.openKernel(ctx, true, append(tel.opts, sessionOpt, kernel.WithApprover(a.approver(approve, len(args) == 2 && args[1] == "-")),
				kernel.WithRootGrants(), a.warningsOnly())...)
			if err != nil {
				return writeCallError(a.stdout, name, tools.Classify(err, nil))
			}
			res, callErr := k.Call(ctx, name, json.RawMessage(raw))
			if err := k.Shutdown(ctx); err != nil && callErr == nil {
				callErr = tools.Wrap(tools.KindExecutionFailed, err, "shutdown")
			}
			if callErr != nil {
				return writeCallError(a.stdout, name, tools.Classify(callErr, nil))
			}
			tr := res.Truncated
			return writeJSON(a.stdout, callOutput{OK: true, Tool: name, Result: res.Value, Truncated: &tr, TruncatedReason: res.TruncatedReason})
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "join the named pull-request session (write_strategy pr)")
	cmd.Flags().StringVar(&approve, "approve", "", "answer approval requests (request_scope_expansion, approval.policy, dangerous commands) "+
		"with this decision: allow_once, add_to_scope or deny; without it they are asked on the terminal, or refused when there is none")
	return cmd
}

func writeCallError(w io.Writer, name string, te *tools.Error) error {
	out := callOutput{OK: false, Tool: name, Error: te}
	if err := writeJSON(w, out); err != nil {
		return err
	}
	return &exitError{code: 1}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(a.stdout, "tgp %s\n", version())
			return nil
		},
	}
}
