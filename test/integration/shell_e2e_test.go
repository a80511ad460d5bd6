package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestShellCallLandsOnTheRemote: `tgp call shell` with a
// redirection writes the file through the built binary (its hidden
// __shellexec helper applies Landlock to the children), commits and
// pushes it: the remote has notes/a.txt.
func TestShellCallLandsOnTheRemote(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "toolbox\n"})
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "root"), 0o755); err != nil { // an empty root, cloned into
		t.Fatal(err)
	}
	run := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(tgpBin, append(args, "--root", filepath.Join(dir, "root"))...)
		cmd.Dir = dir
		cmd.Env = append(kernelEnv(remote), "TGP_GIT_TOKEN=never-shown")
		out, err := cmd.Output()
		var got map[string]any
		if jerr := json.Unmarshal(out, &got); jerr != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
		return got
	}
	got := run("call", "shell", `{"command":"echo hi > notes/a.txt"}`)
	if got["ok"] != true {
		t.Fatalf("shell: %v", got)
	}
	res := got["result"].(map[string]any)
	if changed, _ := json.Marshal(res["changed"]); string(changed) != `["notes/a.txt"]` || res["persisted"] != true || res["exit_code"] != float64(0) {
		t.Fatalf("result: %v", res)
	}
	if s := gittest.Git(t, remote, "show", "main:notes/a.txt"); s != "hi\n" {
		t.Fatalf("remote has %q", s)
	}
	// The children of the binary run under its Landlock helper: an
	// allowed cat cannot read /etc/passwd, and no secret reaches them.
	got = run("call", "shell", `{"command":"echo /etc/passwd | xargs cat; printenv TGP_GIT_TOKEN; cat notes/a.txt"}`)
	res = got["result"].(map[string]any)
	iso := res["isolation"].(map[string]any)
	if iso["mode"] == "landlock" && !strings.Contains(res["stderr"].(string), "Permission denied") {
		t.Fatalf("landlock: %v", res)
	}
	if res["stdout"] != "hi\n" || strings.Contains(res["stdout"].(string), "never-shown") {
		t.Fatalf("stdout: %v", res)
	}
	// Refusals are sandbox_violation with the seed's details.
	got = run("call", "shell", `{"command":"ls | curl -d @- http://127.0.0.1:1"}`)
	e := got["error"].(map[string]any)
	if got["ok"] != false || e["kind"] != "sandbox_violation" || e["details"].(map[string]any)["reason"] != "command_denied" {
		t.Fatalf("curl: %v", got)
	}
}

// TestShellSessionsOverMCP: a PTY session started with exec_command keeps
// running between MCP calls of one `tgp serve`, takes input from
// write_stdin, and what it wrote reaches the remote.
func TestShellSessionsOverMCP(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "toolbox\n"})
	cmd := exec.Command(tgpBin, "serve", "--root", t.TempDir())
	cmd.Env = kernelEnv(remote)
	cs := mcpSession(t, &mcp.CommandTransport{Command: cmd})
	ctx := context.Background()
	callJSON := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r, ok := out["result"].(map[string]any); ok {
			return r
		}
		return out
	}
	start := callJSON("exec_command", map[string]any{"cmd": "mkdir -p notes && cat > notes/typed.txt", "yield_time_ms": 100})
	id := start["session_id"]
	if start["exited"] == true || id == nil {
		t.Fatalf("start: %v", start)
	}
	callJSON("write_stdin", map[string]any{"session_id": id, "chars": "over mcp\n", "yield_time_ms": 100})
	end := callJSON("write_stdin", map[string]any{"session_id": id, "close": true, "yield_time_ms": 5000})
	if end["exited"] != true || end["exit_code"] != float64(0) {
		t.Fatalf("close: %v", end)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := exec.Command("git", "-C", remote, "show", "main:notes/typed.txt").Output()
		if err == nil && string(out) == "over mcp\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the remote lacks notes/typed.txt: %v %q", err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
