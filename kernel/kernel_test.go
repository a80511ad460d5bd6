package kernel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
)

func bootKernel(t *testing.T, remote string, memory bool, extra ...Option) *Kernel {
	t.Helper()
	opts := []Option{
		WithEnviron([]string{}),
		WithSetting("git.remote", remote),
		WithSetting("git.author.name", "Agent"),
		WithSetting("git.author.email", "agent@example.com"),
		WithSetting("git.retry.base_delay", "2ms"),
		WithSetting("git.retry.max_attempts", 50),
		// No test booted here is about the sandbox's timeout (those set
		// their own): a tool loading zod under -race on a loaded machine
		// took more than the default 5 s.
		WithSetting("sandbox.timeout", "1m"),
	}
	if memory {
		opts = append(opts, WithMemoryFS())
	} else {
		opts = append(opts, WithRoot(t.TempDir()))
	}
	k, err := New(context.Background(), append(opts, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k
}

func call(t *testing.T, k *Kernel, name string, args any) tools.Result {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := k.Call(context.Background(), name, raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestForgeAndReuseAcrossKernels(t *testing.T) {
	remote := gittest.BareRemote(t)
	a := bootKernel(t, remote, true)
	res := call(t, a, "write_file", map[string]string{"path": "tools/math/add.ts",
		"content": "/** Add two numbers. */\nexport default (a: number, b: number) => a + b;\n"})
	w := res.Value.(tools.WriteResult)
	if !w.Persisted.Persisted || len(w.Persisted.Commit) != 40 {
		t.Fatalf("not persisted: %+v", w.Persisted)
	}
	// meta.json went to the remote with the tool, in the same commit.
	files := gittest.Git(t, remote, "show", "--name-only", "--format=%s", "main")
	if files != "forge: tools/math/add.ts\n\nmeta.json\ntools/math/add.ts\n" {
		t.Fatalf("commit content:\n%s", files)
	}
	var meta struct {
		Tools map[string]registry.Entry `json:"tools"`
	}
	if err := json.Unmarshal([]byte(gittest.Git(t, remote, "show", "main:meta.json")), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Tools["tools/math/add.ts"].Description != "Add two numbers." {
		t.Fatalf("meta.json %+v", meta)
	}
	b := bootKernel(t, remote, false)
	found := call(t, b, "find_tools", map[string]any{"query": "add numbers"}).Value.([]tools.FoundTool)
	if len(found) != 1 || found[0].Path != "tools/math/add.ts" {
		t.Fatalf("b does not find a's tool: %+v", found)
	}
	st, err := b.Status(context.Background())
	if err != nil || st.Tools != 1 || st.Branch != "main" || st.Pending != 0 || st.Head == "" {
		t.Fatalf("status %+v %v", st, err)
	}
}

func TestCheckAndExecThroughKernel(t *testing.T) {
	remote := gittest.BareRemote(t)
	k := bootKernel(t, remote, true)
	call(t, k, "write_file", map[string]string{"path": "tools/lib/math.ts", "content": "/** Math helpers. */\nexport function double(n: number) { return n * 2; }\nexport const PI = 3.14;\nexport default double;\n"})
	call(t, k, "write_file", map[string]string{"path": "tools/calc.ts", "content": "/** Doubles and adds pi. */\nconst { double, PI } = require('./lib/math');\nexport default function (args: { val: number }) { return double(args.val) + PI; }\n"})
	rep := call(t, k, "check_tool", map[string]string{"path": "tools/calc.ts"}).Value
	raw, _ := json.Marshal(rep)
	if !strings.HasPrefix(string(raw), `{"valid":true`) {
		t.Fatalf("check_tool: %s", raw)
	}
	out := call(t, k, "exec_tool", map[string]any{"path": "tools/calc.ts", "args": map[string]any{"val": 10}}).Value
	raw, _ = json.Marshal(out)
	if !strings.Contains(string(raw), `"success":true,"result":23.14`) {
		t.Fatalf("exec_tool: %s", raw)
	}
	call(t, k, "write_file", map[string]string{"path": "tools/peek.ts", "content": "/** Peek. */\nexport default () => tgp.read_file('.git/config');\n"})
	out = call(t, k, "exec_tool", map[string]any{"path": "tools/peek.ts"}).Value
	raw, _ = json.Marshal(out)
	if !strings.Contains(string(raw), `"success":false`) || !strings.Contains(string(raw), "security_violation") {
		t.Fatalf(".git reachable from a tool: %s", raw)
	}
	call(t, k, "write_file", map[string]any{"path": "tools/bad.ts", "content": "export default (x: any) => eval(x);\n", "force": true})
	rep = call(t, k, "check_tool", map[string]string{"path": "tools/bad.ts"}).Value
	raw, _ = json.Marshal(rep)
	if !strings.Contains(string(raw), `"valid":false`) || !strings.Contains(string(raw), `"rule":"no-any"`) || !strings.Contains(string(raw), `"rule":"no-eval"`) {
		t.Fatalf("check_tool bad: %s", raw)
	}
}
