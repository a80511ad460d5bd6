package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/tgp-go/tgp/kernel"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/sandbox/analysis"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/forgetools"
)

// progress prints clone/fetch progress: rewritten in place on a terminal,
// one plain line each otherwise. A transfer's counters (a line ending in
// "\r") are for a terminal only: in a log they would be noise.
func (a *app) progress() kernel.Option {
	tty := false
	if f, ok := a.stderr.(*os.File); ok {
		tty = isatty.IsTerminal(f.Fd())
	}
	return kernel.WithProgress(func(line string) {
		if counter, ok := strings.CutSuffix(line, "\r"); ok {
			if tty {
				fmt.Fprintf(a.stderr, "\r\033[K%s", counter)
			}
			return
		}
		if tty {
			fmt.Fprintf(a.stderr, "\r\033[K%s", line)
			if !strings.Contains(line, "%") {
				fmt.Fprintln(a.stderr)
			}
			return
		}
		fmt.Fprintln(a.stderr, line)
	})
}

// warningsOnly prints the warnings among the progress lines (a forged
// ticket refused while this process pushed) on stderr, for commands whose
// progress is otherwise quiet: tgp call keeps stdout to its JSON object.
func (a *app) warningsOnly() kernel.Option {
	return kernel.WithProgress(func(line string) {
		if strings.HasPrefix(line, "warning: ") {
			fmt.Fprintln(a.stderr, "tgp: "+line)
		}
	})
}

func newBootCmd(a *app) *cobra.Command {
	return statusCommand(a, "boot", "Hydrate the root from the remote (clone or fetch) and show the status")
}

func newStatusCmd(a *app) *cobra.Command {
	return statusCommand(a, "status", "Show remote, branch, head, tool count and pending pushes (boots first)")
}

// statusCommand builds boot and status: both hydrate, then report.
func statusCommand(a *app, use, short string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: fmt.Sprintf("  tgp %s\n  tgp %s --json", use, use),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.showStatus(cmd.Context(), true, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func (a *app) showStatus(ctx context.Context, boot, asJSON bool) error {
	if err := a.requireProject(); err != nil {
		return err
	}
	k, err := kernel.New(ctx, append(a.kernelOptions(), a.progress())...)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("%w\nhint: `tgp init` writes a commented tgp.config.yaml", err)}
	}
	defer k.Shutdown(ctx)
	if boot {
		if err := k.Boot(ctx); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("%w\nhint: check git.remote and the token variable named by git.token_env", err)}
		}
		a.identityNotice(k)
	}
	st, err := k.Status(ctx)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if asJSON {
		return writeJSON(a.stdout, st)
	}
	remote := st.Remote
	if remote == "" {
		remote = "(none: the root is used as it is)"
	}
	head := st.Head
	if len(head) > 12 {
		head = head[:12]
	}
	fmt.Fprintf(a.stdout, "root:     %s\nremote:   %s\nbranch:   %s\nhead:     %s\ntools:    %d\npending:  %d unpushed commit(s)\nstrategy: %s\n",
		st.Root, remote, orDash(st.Branch), orDash(head), st.Tools, st.Pending, st.Strategy)
	for _, c := range st.PendingCommits {
		fmt.Fprintf(a.stdout, "  pending: %s\n", c)
	}
	printUnlanded(a.stdout, st.Unlanded, st.JournalError, time.Now())
	if !st.Refresh.LastCheck.IsZero() {
		fresh := "up to date"
		switch {
		case st.Refresh.Error != "":
			fresh = "check failed: " + st.Refresh.Error
		case st.Refresh.Behind:
			fresh = "behind (local edits on paths the remote changed)"
		}
		fmt.Fprintf(a.stdout, "checked:  %s (%s)\n", st.Refresh.LastCheck.Format(time.RFC3339), fresh)
	}
	if n := len(st.UnverifiedCarries); n > 0 {
		fmt.Fprintf(a.stdout, "unverified carry refs: %d on the remote without the fleet's proof (git.carry_key_env); never landed, remove them if nobody knows them:\n", n)
		for _, c := range st.UnverifiedCarries {
			fmt.Fprintf(a.stdout, "  unverified: %s\n", c)
		}
	}
	if len(st.Uncommitted) > 0 {
		fmt.Fprintf(a.stdout, "uncommitted: %s (committed with the next change)\n", strings.Join(st.Uncommitted, ", "))
	}
	if st.Hydration != "" {
		fmt.Fprintf(a.stdout, "boot:     %s\n", st.Hydration)
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(a.stdout, "warning:  %s\n", w)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortCommit is a commit's first 7 digits, "-" for none.
func shortCommit(c string) string {
	if len(c) < 7 {
		return orDash(c)
	}
	return c[:7]
}

func newToolsCmd(a *app) *cobra.Command {
	var asJSON bool
	var limit int
	var to string
	var force bool
	cmd := &cobra.Command{
		Use:   "tools [list|find QUERY|history PATH|revert PATH --to REF]",
		Short: "List the kernel's tools, or the agent tools in the registry, find one, or show and restore its versions",
		Long: "`tgp tools` lists every kernel tool with its description, JSON Schema and annotations.\n" +
			"`tgp tools list` lists the agent tools of the registry (meta.json), the last commit that changed each\n" +
			"(commit, as `git log -1 -- PATH` finds it; abbreviated in text, whole in --json) and who signed it\n" +
			"(signed_by, with sandbox.trusted_signers); `tgp tools find QUERY` ranks them.\n" +
			"`tgp tools history PATH` lists the commits that changed a tool: author, date, signed or not.\n" +
			"`tgp tools revert PATH --to REF` restores the tool's content at REF as a new commit, pushed like any write,\n" +
			"once check_tool accepts it (--force: even when it finds errors).",
		Example: "  tgp tools --json\n  tgp tools list\n  tgp tools find \"add numbers\"\n" +
			"  tgp tools history tools/math/add.ts\n  tgp tools revert tools/math/add.ts --to HEAD~1",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return a.listKernelTools(cmd.Context(), asJSON)
			}
			switch args[0] {
			case "list":
				return a.listRegistry(cmd.Context(), "", asJSON, limit)
			case "find":
				if len(args) < 2 {
					return usageError("tools find needs a QUERY")
				}
				return a.listRegistry(cmd.Context(), strings.Join(args[1:], " "), asJSON, limit)
			case "history":
				if len(args) != 2 {
					return usageError("tools history needs one PATH")
				}
				n := 0
				if cmd.Flags().Changed("limit") {
					n = limit
				}
				return a.toolHistory(cmd.Context(), args[1], n, asJSON)
			case "revert":
				if len(args) != 2 || to == "" {
					return usageError("tools revert needs one PATH and --to REF")
				}
				return a.revertTool(cmd.Context(), args[1], to, force, asJSON)
			}
			return usageError("unknown tools subcommand %q: use list, find, history or revert", args[0])
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&limit, "limit", 10, "maximum results for find (history: all unless given)")
	cmd.Flags().StringVar(&to, "to", "", "revert: the commit, branch or tag whose version to restore")
	cmd.Flags().BoolVar(&force, "force", false, "revert: restore the version even if check_tool finds errors in it")
	return cmd
}

func (a *app) listKernelTools(ctx context.Context, asJSON bool) error {
	k, err := a.openKernel(ctx, false)
	if err != nil {
		return err
	}
	defer k.Shutdown(ctx)
	list := k.Tools()
	if asJSON {
		defs := make([]tools.Definition, len(list))
		for i, t := range list {
			defs[i] = t.Definition()
		}
		return writeJSON(a.stdout, defs)
	}
	for _, t := range list {
		mode := "write"
		if t.Annotations.ReadOnly {
			mode = "read"
		}
		fmt.Fprintf(a.stdout, "%-14s %-5s %-6s %s\n", t.Name, mode, t.Annotations.Risk, firstLine(t.Description))
	}
	return nil
}

func (a *app) listRegistry(ctx context.Context, query string, asJSON bool, limit int) error {
	k, err := a.openKernel(ctx, true)
	if err != nil {
		return err
	}
	defer k.Shutdown(ctx)
	type row struct {
		Path        string  `json:"path"`
		Name        string  `json:"name"`
		Description string  `json:"description"`
		Score       float64 `json:"score,omitempty"`
		Commit      string  `json:"commit"`
		SignedBy    string  `json:"signed_by"`
	}
	var rows []row
	if query == "" {
		for _, e := range k.Registry().Entries() {
			rows = append(rows, row{Path: e.Path, Name: e.Name, Description: e.Description,
				Commit: k.ToolCommit(ctx, e.Path), SignedBy: k.SignedBy(ctx, e.Path)})
		}
	} else {
		for _, m := range k.Registry().Find(query, limit) {
			rows = append(rows, row{Path: m.Path, Name: m.Entry.Name, Description: m.Entry.Description, Score: m.Score,
				Commit: k.ToolCommit(ctx, m.Path), SignedBy: k.SignedBy(ctx, m.Path)})
		}
	}
	if asJSON {
		if rows == nil {
			rows = []row{}
		}
		return writeJSON(a.stdout, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(a.stdout, "no tools")
		return nil
	}
	signed := k.Config().Sandbox.TrustedSigners != ""
	for _, r := range rows {
		if signed {
			fmt.Fprintf(a.stdout, "%-40s %-7s %-24s %s\n", r.Path, shortCommit(r.Commit), orDash(r.SignedBy), r.Description)
			continue
		}
		fmt.Fprintf(a.stdout, "%-40s %-7s %s\n", r.Path, shortCommit(r.Commit), r.Description)
	}
	return nil
}

// toolHistory prints tool_history: one commit a line, newest first.
func (a *app) toolHistory(ctx context.Context, path string, limit int, asJSON bool) error {
	k, err := a.openKernel(ctx, true)
	if err != nil {
		return err
	}
	defer k.Shutdown(ctx)
	list, err := k.ToolHistory(ctx, path, limit)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if asJSON {
		return writeJSON(a.stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintf(a.stdout, "%s: no commits\n", path)
		return nil
	}
	trusting := k.Config().Sandbox.TrustedSigners != ""
	for _, v := range list {
		sig := "unsigned"
		switch {
		case v.SignedBy != "":
			sig = "signed by " + v.SignedBy
		case v.Signed && trusting:
			sig = "signed, untrusted"
		case v.Signed:
			sig = "signed"
		}
		subject := v.Subject
		if v.Deleted {
			subject += " (deleted)"
		}
		fmt.Fprintf(a.stdout, "%s %s %-30s %-24s %s\n", v.Commit[:7], v.Date.UTC().Format("2006-01-02 15:04"), v.Author, sig, subject)
	}
	return nil
}

// revertTool runs revert_tool and prints the new commit.
func (a *app) revertTool(ctx context.Context, path, ref string, force, asJSON bool) error {
	k, err := a.openKernel(ctx, true)
	if err != nil {
		return err
	}
	defer k.Shutdown(ctx)
	revert := k.RevertTool
	if force {
		revert = k.RevertToolForce
	}
	res, err := revert(ctx, path, ref)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if asJSON {
		return writeJSON(a.stdout, res)
	}
	per := res.Persisted
	switch {
	case per == nil:
		fmt.Fprintf(a.stdout, "%s restored from %s\n", path, res.From[:7])
	case per.Commit != "":
		fmt.Fprintf(a.stdout, "%s restored from %s in commit %s", path, res.From[:7], per.Commit[:min(7, len(per.Commit))])
		if per.Note != "" {
			fmt.Fprintf(a.stdout, " (%s)", per.Note)
		}
		fmt.Fprintln(a.stdout)
	default:
		fmt.Fprintf(a.stdout, "%s restored from %s: %s\n", path, res.From[:7], per.Note)
	}
	for _, d := range append(res.Errors, res.Warnings...) {
		fmt.Fprintln(a.stderr, d.String())
	}
	return nil
}

func newCheckCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "check [PATH...]",
		Short:   "Run check_tool on tools (all tools under tools/ by default); exit 1 if any is invalid",
		Example: "  tgp check\n  tgp check tools/math/add.ts --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			k, err := a.openKernel(ctx, true)
			if err != nil {
				return err
			}
			defer k.Shutdown(ctx)
			paths := args
			if len(paths) == 0 {
				if paths, err = registry.ToolPaths(k.FS()); err != nil {
					return &exitError{code: 1, err: err}
				}
			}
			results := map[string]analysis.Report{}
			invalid := 0
			for _, p := range paths {
				raw, _ := json.Marshal(map[string]string{"path": p})
				res, err := k.Call(ctx, "check_tool", raw)
				if err != nil {
					// The tool's error names the path (read tools/x.ts: ...).
					return &exitError{code: 1, err: err}
				}
				rep, _ := forgetools.ReportOf(res)
				results[p] = rep
				if !rep.Valid {
					invalid++
				}
				if !asJSON {
					printReport(a.stdout, p, rep)
				}
			}
			if asJSON {
				if err := writeJSON(a.stdout, results); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(a.stdout, "%d tool(s) checked, %d invalid\n", len(paths), invalid)
			}
			if invalid > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reports as JSON")
	return cmd
}

func printReport(w io.Writer, p string, rep analysis.Report) {
	status := "ok"
	if !rep.Valid {
		status = "INVALID"
	}
	fmt.Fprintf(w, "%s: %s\n", p, status)
	for _, f := range append(append([]analysis.Finding{}, rep.Errors...), rep.Warnings...) {
		fmt.Fprintf(w, "  %s:%d:%d %s [%s] %s\n", f.Path, f.Line, f.Column, f.Severity, f.Rule, f.Message)
	}
}

func newExecCmd(a *app) *cobra.Command {
	var argsJSON, ref string
	cmd := &cobra.Command{
		Use:     "exec PATH",
		Short:   "Run an agent tool in the sandbox (exec_tool); exit 1 if it fails",
		Example: "  tgp exec tools/math/add.ts --args '{\"x\":1,\"y\":2}'\n  tgp exec tools/math/add.ts --ref HEAD~1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var toolArgs any
			if argsJSON != "" {
				if err := json.Unmarshal([]byte(argsJSON), &toolArgs); err != nil {
					return usageError("--args is not JSON: %v", err)
				}
			}
			k, err := a.openKernel(ctx, true)
			if err != nil {
				return err
			}
			defer k.Shutdown(ctx)
			call := map[string]any{"path": args[0], "args": toolArgs}
			if ref != "" {
				call["ref"] = ref
			}
			raw, _ := json.Marshal(call)
			res, err := k.Call(ctx, "exec_tool", raw)
			if err != nil {
				_ = writeCallError(a.stdout, "exec_tool", tools.Classify(err, nil))
				return &exitError{code: 1}
			}
			out := forgetools.OutcomeOf(res)
			if err := writeJSON(a.stdout, out); err != nil {
				return err
			}
			if !out.Success {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args", "", "tool arguments as JSON")
	cmd.Flags().StringVar(&ref, "ref", "", "run the tool as it was at this commit, branch or tag")
	return cmd
}

func newPRCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "pr",
		Short: "Show the open pull request (merge request on GitLab) of this root's PR-mode session",
		Long: "Prints the open pull request of the session's branch as JSON (number, url, head, base, state,\n" +
			"provider and term: the host's own word, \"merge request\" on GitLab).",
		Example: "  tgp pr",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			k, err := a.openKernel(ctx, false)
			if err != nil {
				return err
			}
			defer k.Shutdown(ctx)
			pr, branch, err := k.SessionPR(ctx)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if branch == "" {
				fmt.Fprintln(a.stdout, "no PR-mode session on this root (git.write_strategy: pr)")
				return nil
			}
			if pr == nil {
				fmt.Fprintf(a.stdout, "branch %s has no open %s\n", branch, k.PRTerm())
				return nil
			}
			return writeJSON(a.stdout, pr)
		},
	}
}

func newSessionCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Manage this root's pull-request session (git.write_strategy: pr)",
		Long: "With git.write_strategy pr, consecutive `tgp call`s on a root add their commits to one branch\n" +
			"and one pull request: the session recorded in the root. It ends when its PR is merged or\n" +
			"closed, or with `tgp session end`; the next change then starts a new branch and PR.",
		Example: "  tgp session end",
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "end",
		Short:   "End the recorded session: the next change opens a new branch and pull request",
		Example: "  tgp session end",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			k, err := a.openKernel(ctx, false)
			if err != nil {
				return err
			}
			defer k.Shutdown(ctx)
			if b := k.EndSession(); b != "" {
				fmt.Fprintf(a.stdout, "session %s ended; its pull request stays as it is\n", b)
				return nil
			}
			fmt.Fprintln(a.stdout, "no session recorded on this root")
			return nil
		},
	})
	return cmd
}

// printUnlanded is `tgp status`'s journal section: the entries of the
// remote's branch not landed yet, from every machine (none: nothing).
func printUnlanded(w io.Writer, entries []kernel.JournalPending, journalErr string, now time.Time) {
	if journalErr != "" {
		fmt.Fprintf(w, "journal:  unreadable: %s\n", journalErr)
	}
	if len(entries) == 0 {
		return
	}
	fmt.Fprintf(w, "journal:  %d entr%s not landed yet\n", len(entries), map[bool]string{true: "y", false: "ies"}[len(entries) == 1])
	for _, e := range entries {
		line := fmt.Sprintf("  not landed: #%d %s old, %s, %.7s..%.7s", e.ID, now.Sub(e.Created).Round(time.Second), e.Root, e.Base, e.Head)
		if e.Message != "" {
			line += fmt.Sprintf(" %q", e.Message)
		}
		if e.Author != "" {
			line += " by " + e.Author
		}
		fmt.Fprintln(w, line)
	}
}
