package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/tools"
)

// scriptedHost answers approval requests from a script and records them.
type scriptedHost struct {
	mu     sync.Mutex
	asked  []tools.ApprovalRequest
	events []tools.Event
	answer func(tools.ApprovalRequest) tools.Decision
}

func (h *scriptedHost) approver(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, req)
	return h.answer(req), nil
}

func (h *scriptedHost) hook(e tools.Event) {
	if e.Type != tools.EventApproval {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *scriptedHost) options() []Option {
	return []Option{WithApprover(h.approver), WithEventHook(h.hook)}
}

func expand(t *testing.T, k *Kernel, ctx context.Context, args map[string]any) (tools.ScopeOutcome, *tools.Error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := k.Call(ctx, tools.ScopeToolName, raw)
	if err != nil {
		var te *tools.Error
		if !errors.As(err, &te) {
			t.Fatalf("untyped error %v", err)
		}
		return tools.ScopeOutcome{}, te
	}
	return res.Value.(tools.ScopeOutcome), nil
}

// configOutsideRoot writes the commented default configuration next to
// (not inside) a root.
func configOutsideRoot(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tgp.config.yaml")
	if err := os.WriteFile(p, []byte(ConfigTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Allow once: the refused command runs in the session's next call, and
// only then; every decision is an event the host sees.
func TestScopeExpansionAllowOnce(t *testing.T) {
	h := &scriptedHost{answer: func(tools.ApprovalRequest) tools.Decision { return tools.DecisionAllowOnce }}
	cfg := configOutsideRoot(t)
	k, _ := diskKernel(t, append(h.options(), WithConfigFile(cfg))...)
	wantReason(t, "before", "id -u", second(shellCall(t, k, "id -u", ".")), "command_not_allowed")
	out, te := expand(t, k, context.Background(), map[string]any{"command": "id", "category": "read_only", "reason": "print the uid"})
	if te != nil || out.Decision != "allow_once" || out.Key != "shell.categories.read_only" {
		t.Fatalf("expand: %+v %+v", out, te)
	}
	if len(h.asked) != 1 {
		t.Fatalf("asked %d times", len(h.asked))
	}
	req := h.asked[0]
	if req.Scope == nil || req.Scope.Command != "id" || req.Scope.Reason != "print the uid" || req.Scope.ConfigFile == "" ||
		!slices.Equal(req.Choices, []tools.Decision{tools.DecisionAllowOnce, tools.DecisionAddToScope, tools.DecisionDeny}) {
		t.Fatalf("request: %+v %+v", req, req.Scope)
	}
	if res, te := shellCall(t, k, "id -u", "."); te != nil || res.ExitCode != 0 {
		t.Fatalf("next call: %+v %+v", te, res)
	}
	wantReason(t, "after", "id -u", second(shellCall(t, k, "id -u", ".")), "command_not_allowed")
	// The grant is for the next call, whatever it is.
	if _, te := expand(t, k, context.Background(), map[string]any{"command": "id", "category": "read_only", "reason": "again"}); te != nil {
		t.Fatal(te)
	}
	if _, err := k.Call(context.Background(), "list_dir", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	wantReason(t, "after another call", "id -u", second(shellCall(t, k, "id -u", ".")), "command_not_allowed")
	if len(h.events) != 2 || h.events[0].Decision != tools.DecisionAllowOnce || h.events[0].Scope == nil || h.events[0].Tool != tools.ScopeToolName {
		t.Fatalf("events: %+v", h.events)
	}
	// The configuration file was not touched.
	if b, _ := os.ReadFile(cfg); string(b) != ConfigTemplate {
		t.Fatal("allow once edited the configuration")
	}
}

func second[A, B any](_ A, b B) B { return b }

// Sessions do not share what was allowed once.
func TestScopeExpansionPerSession(t *testing.T) {
	h := &scriptedHost{answer: func(tools.ApprovalRequest) tools.Decision { return tools.DecisionAllowOnce }}
	k, _ := diskKernel(t, h.options()...)
	a := tools.ContextWithSession(context.Background(), "a")
	b := tools.ContextWithSession(context.Background(), "b")
	if _, te := expand(t, k, a, map[string]any{"command": "id", "category": "read_only", "reason": "uid"}); te != nil {
		t.Fatal(te)
	}
	raw := json.RawMessage(`{"command":"id -u"}`)
	if _, err := k.Call(b, "shell", raw); err == nil {
		t.Fatal("session b used session a's grant")
	}
	if _, err := k.Call(a, "shell", raw); err != nil {
		t.Fatalf("session a: %v", err)
	}
	// Without a configuration file add_to_scope is not offered.
	if h.asked[0].Offers(tools.DecisionAddToScope) || h.asked[0].Scope.Note == "" {
		t.Fatalf("choices without a file: %+v", h.asked[0])
	}
}

// Add to scope writes the command into its category in the configuration
// file, keeping the comments, and holds for every later call and kernel.
func TestScopeExpansionAddToScope(t *testing.T) {
	h := &scriptedHost{answer: func(tools.ApprovalRequest) tools.Decision { return tools.DecisionAddToScope }}
	cfg := configOutsideRoot(t)
	k, root := diskKernel(t, append(h.options(), WithConfigFile(cfg))...)
	out, te := expand(t, k, context.Background(), map[string]any{"command": "id", "category": "read_only", "reason": "uid"})
	if te != nil || out.Decision != "add_to_scope" || out.ConfigFile == "" {
		t.Fatalf("expand: %+v %+v", out, te)
	}
	for i := 0; i < 2; i++ {
		if res, te := shellCall(t, k, "id -u", "."); te != nil || res.ExitCode != 0 {
			t.Fatalf("call %d after add: %+v", i, te)
		}
	}
	data, _ := os.ReadFile(cfg)
	before := strings.Split(ConfigTemplate, "\n")
	after := strings.Split(string(data), "\n")
	if len(after) != len(before) {
		t.Fatalf("lines %d → %d", len(before), len(after))
	}
	changed := 0
	for i := range before {
		if before[i] != after[i] {
			changed++
			if !strings.Contains(after[i], "read_only:") || !strings.HasSuffix(after[i], ", id]") {
				t.Fatalf("changed line %q", after[i])
			}
		}
	}
	if changed != 1 {
		t.Fatalf("%d lines changed", changed)
	}
	if c := k.Config().Shell.Categories.ReadOnly; !slices.Contains(c, "id") {
		t.Fatalf("live config: %v", c)
	}
	k2, err := New(context.Background(), WithEnviron([]string{}), WithRoot(root), WithConfigFile(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(k2.Config().Shell.Categories.ReadOnly, "id") {
		t.Fatal("a new kernel does not see the added command")
	}
	// A pattern goes to shell.paths.<scope>.
	if _, te := expand(t, k, context.Background(), map[string]any{"pattern": "notes/**", "scope": "write", "reason": "notes"}); te != nil {
		t.Fatal(te)
	}
	if w := k.Config().Shell.Paths.Write; !slices.Contains(w, "notes/**") {
		t.Fatalf("paths.write: %v", w)
	}
	data, _ = os.ReadFile(cfg)
	if !strings.Contains(string(data), `write: ["**", "notes/**"]`) {
		t.Fatalf("file:\n%s", data)
	}
}

// A dangerous command stays dangerous: add to scope is not offered, and
// allowed once it runs once (the second rm of the line is asked about and
// refused).
func TestScopeExpansionDangerousRunsOnce(t *testing.T) {
	h := &scriptedHost{answer: func(r tools.ApprovalRequest) tools.Decision {
		if r.Tool == tools.ScopeToolName {
			return tools.DecisionAllowOnce
		}
		return tools.DecisionDeny
	}}
	k, root := diskKernel(t, append(h.options(), WithConfigFile(configOutsideRoot(t)))...)
	if err := os.WriteFile(filepath.Join(root, "notes/m.txt"), []byte("m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, te := expand(t, k, context.Background(), map[string]any{"command": "rm", "reason": "clean up"})
	if te != nil || out.Decision != "allow_once" || out.Key != "shell.categories.dangerous" {
		t.Fatalf("expand rm: %+v %+v", out, te)
	}
	if h.asked[0].Offers(tools.DecisionAddToScope) || !h.asked[0].Scope.Dangerous {
		t.Fatalf("dangerous request: %+v", h.asked[0])
	}
	_, te = shellCall(t, k, "for f in notes/n.txt notes/m.txt; do rm $f; done", ".")
	if te == nil || te.Kind != tools.KindApprovalRequired {
		t.Fatalf("second rm: %+v", te)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/n.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the allowed rm did not run")
	}
	if _, err := os.Stat(filepath.Join(root, "notes/m.txt")); err != nil {
		t.Fatal("the second rm ran")
	}
	// The host was asked about the second one (and said no).
	if len(h.asked) != 2 || h.asked[1].Tool != "shell" || !strings.Contains(h.asked[1].Summary, "rm notes/m.txt") {
		t.Fatalf("asked: %+v", h.asked)
	}
}

// Nobody to ask: approval_required (needs_approval). A denied command is
// refused without asking; so is a pattern into .git.
func TestScopeExpansionRefusals(t *testing.T) {
	k, _ := diskKernel(t)
	_, te := expand(t, k, context.Background(), map[string]any{"command": "id", "reason": "uid"})
	if te == nil || te.Kind != tools.KindApprovalRequired || te.Details["reason"] != "needs_approval" || !strings.Contains(te.Message, "needs_approval") {
		t.Fatalf("no approver: %+v", te)
	}
	h := &scriptedHost{answer: func(tools.ApprovalRequest) tools.Decision { return tools.DecisionAllowOnce }}
	k, root := diskKernel(t, h.options()...)
	if _, te := expand(t, k, context.Background(), map[string]any{"command": "curl", "reason": "download"}); te == nil || te.Kind != tools.KindSandboxViolation {
		t.Fatalf("denied command: %+v", te)
	}
	if _, te := expand(t, k, context.Background(), map[string]any{"pattern": ".git/**", "scope": "read", "reason": "x"}); te == nil || te.Kind != tools.KindBadArgs {
		t.Fatalf(".git pattern: %+v", te)
	}
	for _, bad := range []map[string]any{
		{"reason": "nothing"},
		{"command": "id", "pattern": "x", "scope": "read", "reason": "both"},
		{"pattern": "x", "reason": "no scope"},
		{"command": "id -u", "reason": "a line"},
		{"command": "id"},
	} {
		if _, te := expand(t, k, context.Background(), bad); te == nil || te.Kind != tools.KindBadArgs {
			t.Fatalf("%v: %+v", bad, te)
		}
	}
	if out, te := expand(t, k, context.Background(), map[string]any{"command": "ls", "reason": "list"}); te != nil || out.Decision != "already_in_scope" {
		t.Fatalf("listed command: %+v %+v", out, te)
	}
	if len(h.asked) != 0 {
		t.Fatalf("asked for refusals: %+v", h.asked)
	}
	// A configuration file inside the agents' root is never edited for
	// them.
	inside := filepath.Join(root, "tgp.config.yaml")
	if err := os.WriteFile(inside, []byte(ConfigTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	k, _ = diskKernel(t, append(h.options(), WithConfigFile(inside), WithRoot(root))...)
	if _, te := expand(t, k, context.Background(), map[string]any{"command": "id", "reason": "uid"}); te != nil {
		t.Fatal(te)
	}
	if last := h.asked[len(h.asked)-1]; last.Offers(tools.DecisionAddToScope) || !strings.Contains(last.Scope.Note, "inside the agents' root") {
		t.Fatalf("file inside the root: %+v", last.Scope)
	}
	// An approver answering a choice it was not offered refuses.
	h.answer = func(tools.ApprovalRequest) tools.Decision { return tools.DecisionAddToScope }
	if _, te := expand(t, k, context.Background(), map[string]any{"command": "id", "reason": "uid"}); te == nil || te.Kind != tools.KindApprovalRequired {
		t.Fatalf("unoffered answer: %+v", te)
	}
}
