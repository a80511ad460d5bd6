package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// fence is one fenced block of the README: its info string and body.
type fence struct{ lang, body string }

// firstScreen returns the fenced blocks of the README before its
// reference ("## Using it"): what a newcomer copies and pastes.
func firstScreen(t *testing.T) []fence {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if i := strings.Index(text, "\n## Using it"); i >= 0 {
		text = text[:i]
	} else {
		t.Fatal("README has no '## Using it' section")
	}
	var out []fence
	for _, m := range regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```").FindAllStringSubmatch(text, -1) {
		out = append(out, fence{lang: m[1], body: m[2]})
	}
	return out
}

// TestReadmeQuickStart runs the README's first screen as a newcomer would,
// from nothing: the install block (with the binary built from this
// checkout standing in for `go install ...@latest`), the quick start in a
// fresh HOME with no git identity, then both MCP client configurations,
// stdio and HTTP, each calling find_tools and finding the tool the quick
// start made. The tool example must pass check_tool.
func TestReadmeQuickStart(t *testing.T) {
	gittest.RequireGit(t)
	blocks := firstScreen(t)
	var sh, js, ts []string
	for _, b := range blocks {
		switch b.lang {
		case "sh":
			sh = append(sh, b.body)
		case "json":
			js = append(js, b.body)
		case "ts":
			ts = append(ts, b.body)
		}
	}
	if len(sh) != 3 || len(js) != 2 || len(ts) != 1 {
		t.Fatalf("first screen: %d sh, %d json, %d ts blocks; the test expects install, quick start, serve --http; stdio and HTTP configs; one tool", len(sh), len(js), len(ts))
	}
	if strings.TrimSpace(sh[0]) != "go install github.com/tgp-go/tgp/cmd/tgp@latest" {
		t.Fatalf("install block: %q", sh[0])
	}
	if mk, _ := os.ReadFile(filepath.Join("..", "..", "Makefile")); !regexp.MustCompile(`(?m)^install:`).Match(mk) {
		t.Fatal("the README names make install; the Makefile has no install target")
	}
	home := t.TempDir()
	path := filepath.Dir(tgpBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	env := []string{"HOME=" + home, "PATH=" + path, "GIT_CONFIG_NOSYSTEM=1"}
	bash := func(script string) string {
		t.Helper()
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = home, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s\n%v\n%s", script, err, out)
		}
		return string(out)
	}
	out := bash(sh[1])
	if !strings.Contains(out, `"success":true`) || !strings.Contains(out, `"result":3`) {
		t.Fatalf("quick start output:\n%s", out)
	}
	if got := gittest.Git(t, filepath.Join(home, "toolbox.git"), "log", "--all", "--format=%s"); !strings.Contains(got, "tools/add.ts") {
		t.Fatalf("the quick start's tool is not on the remote: %q", got)
	}
	// The tool example is a valid tool.
	raw, _ := json.Marshal(map[string]string{"path": "tools/sale.ts", "content": ts[0]})
	bash("cd ~/agent && tgp call write_file '" + strings.ReplaceAll(string(raw), "'", `'\''`) + "' >/dev/null && tgp check tools/sale.ts")

	findAdd := func(cs *mcp.ClientSession) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "add two numbers"}})
		if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "tools/add.ts") {
			t.Fatalf("find_tools: %v %+v", err, res)
		}
	}
	// stdio: the mcpServers block, with the reader's home for /home/you.
	var stdio struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
			URL     string   `json:"url"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(js[0], "/home/you", home)), &stdio); err != nil {
		t.Fatalf("stdio config: %v\n%s", err, js[0])
	}
	srv := stdio.MCPServers["tgp"]
	bin, err := exec.LookPath(filepath.Join(filepath.Dir(tgpBin), srv.Command))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, srv.Args...)
	cmd.Dir, cmd.Env = "/", env // clients start servers elsewhere
	cs := mcpSession(t, &mcp.CommandTransport{Command: cmd})
	findAdd(cs)

	// HTTP: the serve command (on a free port) and the url block.
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	serve := strings.ReplaceAll(strings.TrimSpace(sh[2]), "8080", port)
	if !strings.HasPrefix(serve, "tgp serve --http") {
		t.Fatalf("serve block: %q", sh[2])
	}
	hc := exec.Command("bash", "-c", "exec "+serve)
	hc.Dir, hc.Env = "/", env
	stderr, _ := hc.StderrPipe()
	if err := hc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = hc.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- hc.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = hc.Process.Kill()
		}
	})
	sc := bufio.NewScanner(stderr)
	for listening := false; !listening; {
		if !sc.Scan() {
			t.Fatal("tgp serve --http exited before listening")
		}
		listening = strings.Contains(sc.Text(), "serving MCP on http://"+addr+"/mcp")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	var httpCfg struct {
		MCPServers map[string]struct {
			URL string `json:"url"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(js[1], "8080", port)), &httpCfg); err != nil {
		t.Fatalf("HTTP config: %v\n%s", err, js[1])
	}
	url := httpCfg.MCPServers["tgp"].URL
	if !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("HTTP url %q lacks the /mcp path", url)
	}
	findAdd(mcpSession(t, &mcp.StreamableClientTransport{Endpoint: url}))
}

// The README's first command is go install ...@latest; where the module
// proxy cannot serve it, the install section says what to do instead:
// clone, then make install (a target the Makefile has).
func TestReadmeInstallFallback(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start, end := strings.Index(text, "\n## Install"), strings.Index(text, "\n## Quick start")
	if start < 0 || end < start {
		t.Fatal("README has no Install section before the quick start")
	}
	install := text[start:end]
	for _, want := range []string{"module proxy", "git clone https://github.com/tgp-go/tgp", "make install"} {
		if !strings.Contains(install, want) {
			t.Errorf("the Install section does not say %q", want)
		}
	}
	if mk, _ := os.ReadFile(filepath.Join("..", "..", "Makefile")); !regexp.MustCompile(`(?m)^install:`).Match(mk) {
		t.Fatal("the README names make install; the Makefile has no install target")
	}
}
