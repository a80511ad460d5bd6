package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/tgp-go/tgp/kernel"
	"github.com/tgp-go/tgp/mcpserver"
	"github.com/tgp-go/tgp/tools"
)

func newServeCmd(a *app) *cobra.Command {
	var (
		addr       string
		stateless  bool
		readOnly   bool
		tokenEnv   string
		allowOpen  bool
		origins    []string
		include    []string
		toolsets   []string
		noToolsets []string
		exclude    []string
		listenedCB = func(string) {}
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve every kernel tool over MCP (stdio, or streamable HTTP with --http)",
		Long: "Serve the kernel's tools over the Model Context Protocol. With no flags it speaks MCP on\n" +
			"stdin/stdout; with --http ADDR it serves streamable HTTP at http://ADDR/mcp (--stateless for\n" +
			"serverless hosts). The system prompt is published as the prompt \"tgp_system\".",
		Example: "  tgp serve\n  tgp serve --http 127.0.0.1:8080 --stateless\n  tgp serve --read-only --exclude-tools 'git_*'\n  tgp serve --toolsets files,git",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			tel, err := a.setupTelemetry(ctx)
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("telemetry: %w", err)}
			}
			defer func() {
				if err := tel.close(); err != nil {
					fmt.Fprintf(a.stderr, "tgp: telemetry: %v\n", err)
				}
			}()
			// A long-lived server logs (stderr) what its refreshes pull in
			// from other agents, and its boot's progress.
			opts := append(tel.opts, a.progress())
			if tokenEnv != "" {
				// The flag names a secret's variable, as serve.token_env
				// does: the configuration must know it is not a setting
				// (TGP_SERVE_TOKEN is not serve.token).
				opts = append(opts, kernel.WithSetting("serve.token_env", tokenEnv))
			}
			k, err := a.openKernel(ctx, false, opts...)
			if err != nil {
				return err
			}
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := k.Shutdown(sctx); err != nil {
					fmt.Fprintf(a.stderr, "tgp: shutdown: %v\n", err)
				}
			}()
			// The HTTP guard is checked before the boot so a refused start
			// clones nothing.
			cfg := k.Config().Serve
			var token string
			if addr != "" {
				if tokenEnv == "" {
					tokenEnv = cfg.TokenEnv
				}
				token = kernel.Secret(a.environ, tokenEnv)
				if tokenEnv != "" && token == "" {
					return usageError("--token-env %s: the variable is not set or empty", tokenEnv)
				}
				if host, _, err := net.SplitHostPort(addr); err != nil {
					return usageError("--http %q: %v", addr, err)
				} else if !mcpserver.IsLoopbackHost(host) && token == "" {
					if !allowOpen {
						return usageError("refusing to serve %s without a token: it is not a loopback address; set --token-env NAME (or serve.token_env), or pass --allow-unauthenticated", addr)
					}
					fmt.Fprintf(a.stderr, "tgp: warning: serving %s without a token (--allow-unauthenticated): anyone who can reach it can write files and run tools\n", addr)
				}
			} else if tokenEnv != "" || allowOpen || len(origins) > 0 || stateless {
				return usageError("--token-env, --allow-unauthenticated, --allowed-origins and --stateless need --http ADDR")
			}
			if err := k.Boot(ctx); err != nil {
				return &exitError{code: 1, err: err}
			}
			a.identityNotice(k)
			if g := k.Config().Git; g.JournalAck == "journal" && g.Journal != "" {
				// No writer waits for its own entry to land: this server
				// pushes the fleet's waiting entries when nobody else does,
				// and once more as it stops.
				stop := startDrain(ctx, k.DrainJournal, journalDrainEvery, func(err error) {
					fmt.Fprintf(a.stderr, "tgp: journal: %v\n", err)
				})
				defer stop()
			}
			s, err := mcpserver.New(k.Tools(), k, mcpserver.Options{
				Name: "tgp", Version: version(), ReadOnly: readOnly,
				Include: splitList(include), Exclude: splitList(exclude), SystemPrompt: k.SystemPrompt(),
				Toolsets: splitList(toolsets), ExcludeToolsets: splitList(noToolsets),
				Toolbox: k,
			})
			if err != nil {
				return usageError("%v", err)
			}
			if addr == "" {
				if err := s.Run(ctx, mcpserver.StdioTransport(a.stdin, a.stdout, 30*time.Second)); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
					return &exitError{code: 1, err: err}
				}
				return nil
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("listen %s: %w", addr, err)}
			}
			mux := http.NewServeMux()
			mux.Handle("/mcp", mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{
				Stateless: stateless, Token: token,
				AllowedOrigins:     append(splitList(origins), cfg.AllowedOrigins...),
				MaxBodyBytes:       cfg.MaxBodyBytes,
				SessionIdleTimeout: cfg.SessionIdleTimeout,
			}))
			srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(a.stderr, "tgp: serving MCP on http://%s/mcp\n", ln.Addr())
			listenedCB(ln.Addr().String())
			go func() {
				<-ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = srv.Shutdown(sctx)
			}()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return &exitError{code: 1, err: err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on ADDR (host:port) instead of stdio")
	cmd.Flags().BoolVar(&stateless, "stateless", false, "with --http: keep no session state between requests")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "expose only read-only tools")
	cmd.Flags().StringVar(&tokenEnv, "token-env", "", "with --http: every request must carry 'Authorization: Bearer <token>', the token read from this environment variable (default serve.token_env)")
	cmd.Flags().BoolVar(&allowOpen, "allow-unauthenticated", false, "with --http: serve a non-loopback address without a token")
	cmd.Flags().StringSliceVar(&origins, "allowed-origins", nil, "with --http: origins allowed besides loopback ones (scheme://host[:port]; adds to serve.allowed_origins)")
	cmd.Flags().StringSliceVar(&toolsets, "toolsets", nil, "expose only these toolsets (files, git, sandbox, shell, or all; comma separated): the kernel's find_tools and request_scope_expansion come with any")
	cmd.Flags().StringSliceVar(&noToolsets, "exclude-toolsets", nil, "hide these toolsets (core: find_tools and request_scope_expansion)")
	cmd.Flags().StringSliceVar(&include, "tools", nil, "expose only these tools (names or globs, comma separated)")
	cmd.Flags().StringSliceVar(&exclude, "exclude-tools", nil, "hide these tools (names or globs)")
	return cmd
}

// journalDrainEvery is how often `tgp serve` with git.journal_ack:
// journal looks for journal entries waiting to land: one query when none
// waits, and the push budget paces the pushes.
const journalDrainEvery = 3 * time.Second

// startDrain calls drain every interval until ctx ends or stop is called;
// stop then drains once more (within 10 s) and returns when the last
// drain has. A failed drain is reported and tried again at the next tick.
func startDrain(ctx context.Context, drain func(context.Context) (int, error), every time.Duration, report func(error)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := drain(ctx); err != nil && ctx.Err() == nil {
					report(err)
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
		fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer fcancel()
		if _, err := drain(fctx); err != nil {
			report(err)
		}
	}
}

func splitList(in []string) []string {
	var out []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func newSchemaCmd(a *app) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     "schema",
		Short:   "Print every tool's definition as OpenAI, Anthropic or MCP tool JSON",
		Example: "  tgp schema --format openai > tools.json\n  tgp schema --format anthropic",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := a.openKernel(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer k.Shutdown(cmd.Context())
			list := k.Tools()
			switch format {
			case "openai":
				return writeJSON(a.stdout, tools.OpenAI(list))
			case "anthropic":
				return writeJSON(a.stdout, tools.Anthropic(list))
			case "mcp":
				defs := make([]*mcp.Tool, len(list))
				for i, t := range list {
					defs[i] = mcpserver.Definition(t)
				}
				return writeJSON(a.stdout, defs)
			default:
				return usageError("--format must be openai, anthropic or mcp, got %q", format)
			}
		},
	}
	cmd.Flags().StringVar(&format, "format", "openai", "openai | anthropic | mcp")
	return cmd
}
