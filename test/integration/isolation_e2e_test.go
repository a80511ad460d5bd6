package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestExecToolProcessIsolation drives `tgp call exec_tool` with
// sandbox.isolation: process: the kernel starts `tgp __worker` processes,
// a tool's bridge writes still go through the kernel's jail and are
// pushed, a hostile allocation ends in memory_limit, a tool that outlives
// its timeout is killed, and the next call still works. (Bridge writes are
// not committed by exec_tool in either isolation mode.)
func TestExecToolProcessIsolation(t *testing.T) {
	remote := gittest.BareRemote(t)
	root := t.TempDir()
	env := append(kernelEnv(remote), "TGP_SANDBOX_ISOLATION=process", "TGP_SANDBOX_MEMORY_MB=64", "TGP_SANDBOX_TIMEOUT=2s")
	call := func(tool string, args any) map[string]any {
		t.Helper()
		raw, _ := json.Marshal(args)
		cmd := exec.Command(tgpBin, "call", tool, string(raw), "--root", root)
		cmd.Env = env
		out, _ := cmd.Output()
		var r map[string]any
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("%s: not JSON: %q", tool, out)
		}
		return r
	}
	write := func(path, content string) {
		t.Helper()
		if r := call("write_file", map[string]any{"path": path, "content": content}); r["ok"] != true {
			t.Fatalf("write_file %s: %v", path, r)
		}
	}
	write("tools/note.ts", "export default async (a: { text: string }) => { tgp.write_file('data/note.txt', a.text); return (await tgp.read_file('data/note.txt')).length; };\n")
	write("tools/escape.ts", "export default () => { tgp.write_file('.GIT/config', 'x'); return 'wrote'; };\n")
	// Buffers of 32 MB, each charged before it is made: the third passes
	// the 64 MB limit however loaded the machine is (a loop of small
	// touched buffers could meet the 2 s timeout first).
	write("tools/hog.ts", "const COUNT = 400;\nconst SIZE = 32 << 20;\nexport default () => { const k: Uint8Array[] = []; for (let i = 0; i < COUNT; i++) { k.push(new Uint8Array(SIZE)); } return k.length; };\n")
	write("tools/spin.ts", "export default () => { for (;;) {} };\n")

	r := call("exec_tool", map[string]any{"path": "tools/note.ts", "args": map[string]any{"text": "from a worker"}})
	if res, _ := r["result"].(map[string]any); r["ok"] != true || res["result"] != float64(len("from a worker")) {
		t.Fatalf("note: %v", r)
	}
	if got, err := os.ReadFile(filepath.Join(root, "data", "note.txt")); err != nil || string(got) != "from a worker" {
		t.Fatalf("bridge write: %q %v", got, err)
	}
	for _, c := range []struct{ path, kind string }{
		{"tools/escape.ts", ""}, {"tools/hog.ts", "memory_limit"}, {"tools/spin.ts", "timeout"},
	} {
		r := call("exec_tool", map[string]any{"path": c.path})
		b, _ := json.Marshal(r)
		t.Logf("%s: %s", c.path, b)
		if res, _ := r["result"].(map[string]any); r["ok"] == true && res["success"] != false {
			t.Fatalf("%s succeeded: %s", c.path, b)
		}
		if c.kind != "" && !strings.Contains(string(b), c.kind) {
			t.Fatalf("%s: want %s, got %s", c.path, c.kind, b)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".GIT", "config")); err == nil {
		t.Fatal("the escape wrote .GIT/config")
	}
	r = call("exec_tool", map[string]any{"path": "tools/note.ts", "args": map[string]any{"text": "again"}})
	if res, _ := r["result"].(map[string]any); r["ok"] != true || res["success"] != true {
		t.Fatalf("after the hostile runs: %v", r)
	}
}
