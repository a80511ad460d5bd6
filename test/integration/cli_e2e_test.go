package integration

// End-to-end tests of the built tgp binary: tgp call, tgp serve over
// stdio and streamable HTTP driven by the official MCP client, tgp agent,
// and several kernel processes on one remote.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

var tgpBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tgp-bin-")
	if err != nil {
		panic(err)
	}
	tgpBin = filepath.Join(dir, "tgp")
	if out, err := exec.Command("go", "build", "-o", tgpBin, "github.com/tgp-go/tgp/cmd/tgp").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build tgp: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// kernelEnv configures a kernel on a remote through the environment.
func kernelEnv(remote string) []string {
	return []string{"HOME=" + os.TempDir(), "PATH=" + os.Getenv("PATH"),
		"TGP_GIT_REMOTE=" + remote, "TGP_GIT_AUTHOR_NAME=Agent", "TGP_GIT_AUTHOR_EMAIL=agent@example.com"}
}

func mcpSession(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func forgeOverMCP(t *testing.T, cs *mcp.ClientSession, remote string) {
	t.Helper()
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range lt.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"write_file", "exec_tool", "check_tool", "find_tools", "read_file"} {
		if !names[want] {
			t.Fatalf("tool %s not exposed: %v", want, names)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{
		"path": "tools/greet.ts", "content": "/** Greets someone. */\nexport default (a: { name: string }) => 'hello ' + a.name;\n"}})
	if err != nil || res.IsError {
		t.Fatalf("write_file: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "exec_tool", Arguments: map[string]any{"path": "tools/greet.ts", "args": map[string]any{"name": "mcp"}}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"result":"hello mcp"`) {
		t.Fatalf("exec_tool: %v %+v", err, res.Content)
	}
	if got := gittest.Git(t, remote, "show", "main:tools/greet.ts"); !strings.Contains(got, "Greets someone") {
		t.Fatalf("commit not on the remote: %q", got)
	}
}

func TestServeStdio(t *testing.T) {
	remote := gittest.BareRemote(t)
	cmd := exec.Command(tgpBin, "serve", "--root", t.TempDir())
	cmd.Env = kernelEnv(remote)
	cs := mcpSession(t, &mcp.CommandTransport{Command: cmd})
	forgeOverMCP(t, cs, remote)
	p, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "tgp_system"})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "8 Commandments") {
		t.Fatalf("prompt: %v", err)
	}
}

func TestServeHTTPStatelessReadOnly(t *testing.T) {
	remote := gittest.BareRemote(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, c := range []struct {
		flags    []string
		readOnly bool
	}{{[]string{"--stateless"}, false}, {[]string{"--read-only"}, true}} {
		cmd := exec.Command(tgpBin, append([]string{"serve", "--http", addr, "--root", t.TempDir()}, c.flags...)...)
		cmd.Env = kernelEnv(remote)
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stderr)
		for sc.Scan() && !strings.Contains(sc.Text(), "serving MCP") {
		}
		cs := mcpSession(t, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"})
		if c.readOnly {
			lt, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range lt.Tools {
				if !tl.Annotations.ReadOnlyHint {
					t.Fatalf("--read-only exposes %s", tl.Name)
				}
			}
		} else {
			forgeOverMCP(t, cs, remote)
		}
		cs.Close()
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatal("tgp serve did not stop on SIGINT")
		}
	}
}

func TestCLICommands(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{
		"tools/math/add.ts": "/** Adds two numbers. */\nexport default (a: { x: number; y: number }) => a.x + a.y;\n",
		"tools/bad.ts":      "export default (x: any) => eval(x);\n",
	})
	root := t.TempDir()
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(tgpBin, append(args, "--root", root)...)
		cmd.Env = kernelEnv(remote)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, out.String(), errb.String()
	}
	code, out, _ := run("boot")
	if code != 0 || !strings.Contains(out, "tools:    2") || !strings.Contains(out, "boot:     cloned") {
		t.Fatalf("boot: %d %s", code, out)
	}
	code, out, _ = run("status", "--json")
	var st map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st["branch"] != "main" || st["pending_pushes"] != float64(0) {
		t.Fatalf("status: %d %s", code, out)
	}
	code, out, _ = run("tools", "find", "add numbers", "--json")
	if code != 0 || !strings.Contains(out, `"path":"tools/math/add.ts"`) {
		t.Fatalf("find: %d %s", code, out)
	}
	code, out, _ = run("check")
	if code != 1 || !strings.Contains(out, "tools/bad.ts: INVALID") || !strings.Contains(out, "[no-any]") || !strings.Contains(out, "2 tool(s) checked, 1 invalid") {
		t.Fatalf("check: %d %s", code, out)
	}
	code, out, _ = run("check", "tools/math/add.ts")
	if code != 0 {
		t.Fatalf("check one: %d %s", code, out)
	}
	code, out, _ = run("exec", "tools/math/add.ts", "--args", `{"x":2,"y":3}`)
	if code != 0 || !strings.Contains(out, `"result":5`) {
		t.Fatalf("exec: %d %s", code, out)
	}
	code, _, errOut := run("exec", "tools/math/add.ts", "--args", "{nope")
	if code != 2 || !strings.Contains(errOut, "--args is not JSON") {
		t.Fatalf("bad args: %d %s", code, errOut)
	}
	code, out, _ = run("schema", "--format", "anthropic")
	if code != 0 || !strings.Contains(out, `"input_schema"`) {
		t.Fatalf("schema: %d", code)
	}
	code, out, _ = run("pr")
	if code != 0 || !strings.Contains(out, "no PR-mode session") {
		t.Fatalf("pr: %d %s", code, out)
	}
	code, _, errOut = run("frobnicate")
	if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
		t.Fatalf("unknown command: %d %q", code, errOut)
	}
}

func TestAgentGitActions(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "hello\n"})
	root := t.TempDir()
	agent := func(req string) map[string]any {
		t.Helper()
		cmd := exec.Command(tgpBin, "agent", "--root", root)
		cmd.Env = kernelEnv(remote)
		cmd.Stdin = strings.NewReader(req)
		out, _ := cmd.Output()
		var resp map[string]any
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("not one JSON response: %q", out)
		}
		return resp
	}
	data := func(resp map[string]any) string {
		r, _ := resp["result"].(map[string]any)
		s, _ := r["data"].(string)
		return s
	}
	resp := agent(`{"request_id":"r1","tool":"git_agent","action":"git_status","payload":{}}`)
	if resp["status"] != "success" || resp["request_id"] != "r1" || !strings.HasPrefix(data(resp), "## main...origin/main") {
		t.Fatalf("status: %v", resp)
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := data(agent(`{"request_id":"r2","action":"git_diff","payload":{"files":["README.md"]}}`)); !strings.Contains(d, "+world") {
		t.Fatalf("diff: %q", d)
	}
	if d := data(agent(`{"request_id":"r3","action":"git_add","payload":{"files":["README.md"]}}`)); d != "Staged 1 file(s)" {
		t.Fatalf("add: %q", d)
	}
	if resp = agent(`{"request_id":"r4","action":"git_commit","payload":{"message":"not conventional"}}`); resp["status"] != "error" || !strings.Contains(data(resp), "conventional") {
		t.Fatalf("non-conventional message: %v", resp)
	}
	resp = agent(`{"request_id":"r5","action":"git_commit","payload":{"message":"docs: say world"}}`)
	if resp["status"] != "success" || !strings.Contains(data(resp), "] docs: say world") {
		t.Fatalf("commit: %v", resp)
	}
	if got := gittest.Git(t, remote, "log", "-1", "--format=%s", "main"); got != "docs: say world\n" {
		t.Fatalf("commit not pushed: %q", got)
	}
	for _, limit := range []string{`"1"`, `1`} {
		if d := data(agent(`{"request_id":"r6","action":"git_log","payload":{"limit":` + limit + `}}`)); strings.Count(d, "commit ") != 1 {
			t.Fatalf("log limit %s: %q", limit, d)
		}
	}
}

func TestCallEveryGitTool(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	root := t.TempDir()
	call := func(tool, args string) map[string]any {
		t.Helper()
		cmd := exec.Command(tgpBin, "call", tool, args, "--root", root)
		cmd.Env = kernelEnv(remote)
		out, _ := cmd.Output()
		var r map[string]any
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("%s: not JSON: %q", tool, out)
		}
		if r["ok"] != true {
			t.Fatalf("%s %s: %v", tool, args, r)
		}
		return r
	}
	call("git_status", `{}`)
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := call("git_diff", `{}`); !strings.Contains(r["result"].(string), "+b") {
		t.Fatalf("%v", r)
	}
	call("git_add", `{"paths":["a.txt"]}`)
	call("git_commit", `{"type":"feat","message":"add b"}`)
	call("git_log", `{"max_count":1}`)
	call("git_show", `{}`)
	call("git_blame", `{"path":"a.txt"}`)
	call("git_branch", `{"create":"topic"}`)
	call("git_checkout", `{"branch":"topic"}`)
	call("git_checkout", `{"branch":"main"}`)
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("dirty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	call("git_stash", `{"action":"push"}`)
	call("git_stash", `{"action":"list"}`)
	call("git_stash", `{"action":"pop"}`)
	call("git_restore", `{"paths":["a.txt"]}`)
	if got := gittest.Git(t, remote, "log", "-1", "--format=%s", "main"); got != "feat: add b\n" {
		t.Fatalf("git_commit not pushed: %q", got)
	}
}
