package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tgp-go/tgp/gitpath"
	"github.com/tgp-go/tgp/internal/atomicfile"
	"github.com/tgp-go/tgp/kernel/toolset"
	"github.com/tgp-go/tgp/shell/scope"
	"github.com/tgp-go/tgp/tools"
)

// scopeState is what request_scope_expansion changes: the shell's live
// scopes (k.cfg.Shell and the runner, once built) and the grants waiting
// for a session's next call.
type scopeState struct {
	mu     sync.Mutex
	runner toolset.Scoper
	grants map[string]scope.Grant
}

// takeGrant removes and returns what was allowed once for session: it
// holds for that session's next call only, whatever the call is.
func (k *Kernel) takeGrant(session string) (scope.Grant, bool) {
	k.scope.mu.Lock()
	defer k.scope.mu.Unlock()
	grants := k.loadGrants()
	g, ok := grants[session]
	if ok {
		delete(grants, session)
		if err := k.saveGrants(grants); err != nil {
			// A grant that cannot be spent is not used: it would hold for
			// the call after this one too.
			return scope.Grant{}, false
		}
	}
	return g, ok
}

// addGrant adds to what session's next call may do (several expansions
// asked in a row add up).
func (k *Kernel) addGrant(session string, add scope.Grant) error {
	k.scope.mu.Lock()
	defer k.scope.mu.Unlock()
	grants := k.loadGrants()
	g := grants[session]
	for name, c := range add.Commands {
		if g.Commands == nil {
			g.Commands = map[string]scope.Category{}
		}
		g.Commands[name] = c
	}
	g.Once = append(g.Once, add.Once...)
	g.Read = append(g.Read, add.Read...)
	g.Write = append(g.Write, add.Write...)
	grants[session] = g
	return k.saveGrants(grants)
}

// grantsFile is where WithRootGrants keeps the grants: in the root's .git,
// which agents cannot write, so that the next `tgp call` on the root (a
// new process) finds what was allowed once for it.
func (k *Kernel) grantsFile() string {
	if !k.opts.rootGrants || k.fs.InMemory() || k.fs.Root() == "" {
		return ""
	}
	dir := filepath.Join(k.fs.Root(), ".git")
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return ""
	}
	return filepath.Join(dir, "tgp-allow-once.json")
}

// loadGrants reads the grants (k.scope.mu held).
func (k *Kernel) loadGrants() map[string]scope.Grant {
	if f := k.grantsFile(); f != "" {
		grants := map[string]scope.Grant{}
		if b, err := os.ReadFile(f); err == nil {
			_ = json.Unmarshal(b, &grants) // unreadable: nothing was allowed
		}
		return grants
	}
	if k.scope.grants == nil {
		k.scope.grants = map[string]scope.Grant{}
	}
	return k.scope.grants
}

// saveGrants writes the grants back (k.scope.mu held).
func (k *Kernel) saveGrants(grants map[string]scope.Grant) error {
	f := k.grantsFile()
	if f == "" {
		k.scope.grants = grants
		return nil
	}
	if len(grants) == 0 {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.Marshal(grants)
	if err != nil {
		return err
	}
	return atomicfile.Write(f, b, 0)
}

// WithRootGrants keeps what a host allowed once in the root's .git
// instead of in memory, so that the next process on the root (the next
// `tgp call`) is the "next call" it holds for.
func WithRootGrants() Option { return func(o *options) { o.rootGrants = true } }

// scopeConfigFile is the configuration file add_to_scope may edit, or
// why there is none: the kernel's file must exist and lie outside the
// agents' root (an agent that could edit its own scope would have none).
func (k *Kernel) scopeConfigFile() (string, string) {
	if k.opts.configFile == "" {
		return "", "the kernel has no configuration file (tgp init writes one); the expansion can only be allowed once"
	}
	abs, err := filepath.Abs(k.opts.configFile)
	if err != nil {
		return "", "the configuration file's path cannot be resolved: " + err.Error()
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	} else {
		return "", fmt.Sprintf("the configuration file %s does not exist (tgp init writes one); the expansion can only be allowed once", k.opts.configFile)
	}
	if root := k.fs.Root(); root != "" {
		rootAbs, err := filepath.Abs(root)
		if err == nil {
			if real, err := filepath.EvalSymlinks(rootAbs); err == nil {
				rootAbs = real
			}
			if rel, err := filepath.Rel(rootAbs, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return "", fmt.Sprintf("the configuration file %s is inside the agents' root, where agents write: it is not edited for them; the expansion can only be allowed once", abs)
			}
		}
	}
	return abs, ""
}

// expandScope is request_scope_expansion: it works out what the request
// would change, asks the host, and applies the decision.
func (k *Kernel) expandScope(ctx context.Context, a tools.ScopeArgs) (tools.ScopeOutcome, error) {
	k.scope.mu.Lock()
	cur := k.cfg.Shell
	k.scope.mu.Unlock()
	req := tools.ScopeRequest{Reason: a.Reason}
	var grant scope.Grant
	var item string
	var already bool
	risk := tools.RiskMedium
	if a.Command != "" {
		name := a.Command
		item = name
		req.Command = name
		sc, err := scope.NewScopes(cur.scopes())
		if err != nil {
			return tools.ScopeOutcome{}, err
		}
		c, denied := sc.CategoryOf(name)
		switch {
		case denied:
			return tools.ScopeOutcome{}, &tools.Error{Kind: tools.KindSandboxViolation,
				Message: fmt.Sprintf("command %q is in shell.deny: no scope expansion can allow it (deny wins over every category). Do without it; only the user can take it off shell.deny in the configuration", name),
				Details: map[string]any{"reason": scope.ReasonDenied, "command": name}}
		case c == scope.Dangerous:
			// A dangerous command stays dangerous: the host can let it
			// run once, never add it for good.
			req.Category, req.Dangerous, req.Key = string(scope.Dangerous), true, "shell.categories.dangerous"
			grant.Once = []string{name}
			risk = tools.RiskHigh
		case c != "":
			req.Category, req.Key = string(c), "shell.categories."+string(c)
			already = true
		default:
			cat := scope.Category(a.Category)
			req.Category, req.Key = string(cat), "shell.categories."+string(cat)
			grant.Commands = map[string]scope.Category{name: cat}
			if cat == scope.Dangerous {
				grant.Once = []string{name}
				risk = tools.RiskHigh
			}
		}
	} else {
		p, err := scope.CheckGlob("pattern", a.Pattern)
		if err != nil {
			return tools.ScopeOutcome{}, tools.BadArg("pattern", "%v", err)
		}
		for _, seg := range strings.Split(p, "/") {
			if strings.EqualFold(seg, ".git") || gitpath.IsHFSDotGit(seg) || gitpath.IsNTFSDotGit(seg) {
				return tools.ScopeOutcome{}, tools.BadArg("pattern", "pattern %q reaches into .git, which the shell never reaches; no expansion can allow it", a.Pattern)
			}
		}
		item = p
		req.Pattern, req.Scope, req.Key = p, a.Scope, "shell.paths."+a.Scope
		list := cur.Paths.Read
		if a.Scope == "write" {
			list = cur.Paths.Write
			grant.Write = []string{p}
			risk = tools.RiskHigh
		} else {
			grant.Read = []string{p}
		}
		already = slices.Contains(list, p)
	}
	out := tools.ScopeOutcome{Key: req.Key, Command: req.Command, Category: req.Category, Pattern: req.Pattern, Scope: req.Scope}
	if already {
		out.Decision = "already_in_scope"
		out.Message = fmt.Sprintf("%s is already in %s: nothing to expand. If a command is still refused, read the refusal's reason (a directory or path out of scope is a pattern request)", item, req.Key)
		return out, nil
	}
	choices := []tools.Decision{tools.DecisionAllowOnce}
	if !req.Dangerous {
		file, note := k.scopeConfigFile()
		req.ConfigFile, req.Note = file, note
		if file != "" {
			choices = append(choices, tools.DecisionAddToScope)
		}
	} else {
		req.Note = "a dangerous command stays dangerous: allowed once, it runs once"
	}
	choices = append(choices, tools.DecisionDeny)
	summary := fmt.Sprintf("let the agent use %s (%s): %s", item, req.Key, a.Reason)
	args, _ := json.Marshal(a)
	d, err := k.set.Ask(ctx, tools.ApprovalRequest{Tool: tools.ScopeToolName, Summary: summary, Risk: risk, Args: args,
		Choices: choices, Scope: &req})
	if err != nil {
		te := &tools.Error{Kind: tools.KindApprovalRequired, Err: err,
			Details: map[string]any{"reason": "needs_approval", "key": req.Key, "choices": choices}}
		if errors.Is(err, tools.ErrNoApprover) {
			te.Message = "needs_approval: nobody can be asked to expand the scope here (" + err.Error() + "); ask the user to add " + item + " to " + req.Key + " in the configuration"
		} else {
			te.Message = "needs_approval: the scope expansion could not be approved: " + err.Error()
		}
		return out, te
	}
	out.Decision = string(d)
	switch d {
	case tools.DecisionAllowOnce:
		if err := k.addGrant(tools.SessionFrom(ctx), grant); err != nil {
			return out, tools.Wrap(tools.KindExecutionFailed, err, "record what was allowed once")
		}
		out.Message = fmt.Sprintf("allowed once: %s may be used in your next call only (any call after that one is back to the configured scope)", item)
	case tools.DecisionAddToScope:
		if err := k.addToScope(req.ConfigFile, req.Key, item); err != nil {
			return out, tools.Wrap(tools.KindExecutionFailed, err, "add %s to %s in %s", item, req.Key, req.ConfigFile)
		}
		out.ConfigFile = req.ConfigFile
		out.Message = fmt.Sprintf("added: %s is in %s from now on (written to %s)", item, req.Key, req.ConfigFile)
	default:
		out.Message = "the user refused: do not ask again for this; find another way or stop"
	}
	return out, nil
}

// addToScope writes item into the list at key of the configuration file,
// keeping the file's comments and layout, checks that the file still
// loads with the item where it belongs, then widens the running scope.
func (k *Kernel) addToScope(file, key, item string) error {
	k.scope.mu.Lock()
	defer k.scope.mu.Unlock()
	sh := k.cfg.Shell
	lists := map[string]*[]string{
		"shell.categories.read_only":  &sh.Categories.ReadOnly,
		"shell.categories.safe_write": &sh.Categories.SafeWrite,
		"shell.categories.dangerous":  &sh.Categories.Dangerous,
		"shell.paths.read":            &sh.Paths.Read,
		"shell.paths.write":           &sh.Paths.Write,
	}
	list, ok := lists[key]
	if !ok {
		return fmt.Errorf("%s is not a list a scope expansion may change", key)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := appendToList(data, key, item, *list)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if got, ok := listAt(out, key); !ok || !slices.Contains(got, item) {
		return fmt.Errorf("%s: the edit did not read back (%s)", file, key)
	}
	*list = append(slices.Clone(*list), item)
	if _, err := scope.NewScopes(sh.scopes()); err != nil {
		return err
	}
	// The whole file must still load as a configuration.
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".check.*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(out)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	if _, err := LoadConfig(LoadOptions{File: tmp.Name(), Required: true, Environ: k.environ(), Overrides: k.opts.overrides}); err != nil {
		return fmt.Errorf("the edited file would not load: %w", err)
	}
	if err := atomicfile.Write(file, out, 0); err != nil {
		return err
	}
	k.cfg.Shell = sh
	if k.scope.runner != nil {
		return k.scope.runner.SetConfig(sh.scopes())
	}
	return nil
}
