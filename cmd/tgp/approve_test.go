package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/kernel"
	"github.com/tgp-go/tgp/tools"
)

// `tgp call` with no terminal refuses an approval unless --approve names
// the decision; what is allowed once holds for the next tgp call on the
// root only; add_to_scope edits the configuration file.
func TestCallApproveScopeExpansion(t *testing.T) {
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	cfg := filepath.Join(t.TempDir(), "tgp.config.yaml")
	if err := os.WriteFile(cfg, []byte(kernel.ConfigTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(args ...string) (int, callResult) {
		t.Helper()
		code, out, _ := tgp(t, "", append(args, "--root", root, "--config", cfg)...)
		return code, decodeCall(t, out)
	}
	shellID := func() (int, callResult) { return call("call", "shell", `{"command":"id -u"}`) }
	expand := `{"command":"id","category":"read_only","reason":"print the uid"}`
	if code, r := shellID(); code != 1 || r.Error.Kind != "sandbox_violation" {
		t.Fatalf("before: %d %+v", code, r.Error)
	}
	code, r := call("call", "request_scope_expansion", expand)
	if code != 1 || r.Error.Kind != "approval_required" || !strings.Contains(r.Error.Message, "needs_approval") || !strings.Contains(r.Error.Message, "--approve") {
		t.Fatalf("no terminal: %d %+v", code, r.Error)
	}
	if code, _ := shellID(); code != 1 {
		t.Fatal("a refused expansion allowed the command")
	}
	if code, r := call("call", "request_scope_expansion", expand, "--approve", "allow_once"); code != 0 || !strings.Contains(string(r.Result), `"decision":"allow_once"`) {
		t.Fatalf("allow once: %d %s %+v", code, r.Result, r.Error)
	}
	if code, r := shellID(); code != 0 || !strings.Contains(string(r.Result), `"exit_code":0`) {
		t.Fatalf("next call: %d %s %+v", code, r.Result, r.Error)
	}
	if code, r := shellID(); code != 1 || r.Error.Kind != "sandbox_violation" {
		t.Fatalf("the call after: %d %+v", code, r.Error)
	}
	if code, _, _ := tgp(t, "", "call", "request_scope_expansion", expand, "--approve", "maybe", "--root", root, "--config", cfg); code != 2 {
		t.Fatalf("--approve maybe: exit %d", code)
	}
	if code, r := call("call", "request_scope_expansion", expand, "--approve", "add_to_scope"); code != 0 || !strings.Contains(string(r.Result), `"decision":"add_to_scope"`) {
		t.Fatalf("add to scope: %d %s %+v", code, r.Result, r.Error)
	}
	for i := 0; i < 2; i++ {
		if code, r := shellID(); code != 0 {
			t.Fatalf("after add %d: %+v", i, r.Error)
		}
	}
	data, _ := os.ReadFile(cfg)
	if !strings.Contains(string(data), ", uname, id]") || !strings.Contains(string(data), "# Need paths.read (or paths.write)") {
		t.Fatalf("config:\n%s", data)
	}
	// A dangerous command with nobody to ask says how to answer.
	if code, r := call("call", "shell", `{"command":"rm x"}`); code != 1 || r.Error.Kind != "approval_required" || !strings.Contains(r.Error.Message, "--approve allow_once|deny") {
		t.Fatalf("rm with no terminal: %d %+v", code, r.Error)
	}
	// A dangerous command is never added for good.
	if code, r := call("call", "request_scope_expansion", `{"command":"rm","reason":"x"}`, "--approve", "add_to_scope"); code != 1 || r.Error.Kind != "approval_required" || !strings.Contains(r.Error.Message, "allow_once|deny") {
		t.Fatalf("rm add_to_scope: %d %+v", code, r.Error)
	}
}

// The terminal question takes a choice's number or name; end of input is
// deny.
func TestAskOnTerminal(t *testing.T) {
	req := tools.ApprovalRequest{Tool: tools.ScopeToolName, Choices: []tools.Decision{tools.DecisionAllowOnce, tools.DecisionAddToScope, tools.DecisionDeny},
		Scope: &tools.ScopeRequest{Command: "id", Key: "shell.categories.read_only", Reason: "uid", ConfigFile: "/x/tgp.config.yaml"}}
	for in, want := range map[string]tools.Decision{"2\n": tools.DecisionAddToScope, "bogus\nallow_once\n": tools.DecisionAllowOnce, "": tools.DecisionDeny, "9\n": tools.DecisionDeny} {
		var out bytes.Buffer
		d, err := ask(&out, strings.NewReader(in), req)
		if err != nil || d != want {
			t.Fatalf("%q: %v %v", in, d, err)
		}
		if !strings.Contains(out.String(), "The agent asks for id (shell.categories.read_only)") || !strings.Contains(out.String(), "2) add_to_scope") {
			t.Fatalf("prompt:\n%s", out.String())
		}
	}
}
