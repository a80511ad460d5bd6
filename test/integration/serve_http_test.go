package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// authTransport sends a bearer token with every request.
type authTransport struct{ token string }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+a.token)
	return http.DefaultTransport.RoundTrip(r)
}

// startServe runs tgp serve with args and waits until it listens.
func startServe(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(tgpBin, append([]string{"serve"}, args...)...)
	cmd.Env = env
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "serving MCP") {
			return
		}
	}
	t.Fatal("tgp serve exited before listening")
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeHTTPToken drives the built binary over HTTP with the official
// MCP client: with a token configured, requests without it (or with a
// wrong one, or from a foreign Origin) are refused and the right one gets
// the tools; without a token a non-loopback address is refused at start.
func TestServeHTTPToken(t *testing.T) {
	remote := gittest.BareRemote(t)
	addr := freeAddr(t)
	env := append(kernelEnv(remote), "MY_MCP_TOKEN=tok-0123456789")
	startServe(t, env, "--http", addr, "--token-env", "MY_MCP_TOKEN", "--root", t.TempDir())
	url := "http://" + addr + "/mcp"
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	if cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil); err == nil {
		cs.Close()
		t.Fatal("connected without a token")
	}
	if cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: authTransport{"wrong"}}}, nil); err == nil {
		cs.Close()
		t.Fatal("connected with a wrong token")
	}
	for _, auth := range []string{"", "Bearer wrong", "Bearer tok-012345678", "Basic tok-0123456789"} {
		if code, challenge := rawStatus(t, url, auth, "", initRequest); code != http.StatusUnauthorized || !strings.HasPrefix(challenge, "Bearer") {
			t.Fatalf("Authorization %q: %d, WWW-Authenticate %q", auth, code, challenge)
		}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: authTransport{"tok-0123456789"}}}, nil)
	if err != nil {
		t.Fatalf("connect with the token: %v", err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) == 0 {
		t.Fatalf("tools/list: %v", err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer tok-0123456789")
	req.Header.Set("Origin", "http://evil.example.com")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("evil Origin: %d", res.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodPost, url, strings.NewReader(strings.Repeat("x", 5<<20)))
	req.Header.Set("Authorization", "Bearer tok-0123456789")
	req.Header.Set("Content-Type", "application/json")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d", res.StatusCode)
	}

	// No token, every interface: refused with a usage error.
	cmd := exec.Command(tgpBin, "serve", "--http", "0.0.0.0:0", "--root", t.TempDir())
	cmd.Env = kernelEnv(remote)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "--token-env") {
		t.Fatalf("non-loopback without a token: %v\n%s", err, out)
	}
}

const initRequest = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// rawStatus posts body with the given Authorization and Origin (when not
// empty) and returns the status and the WWW-Authenticate challenge.
func rawStatus(t *testing.T, url, auth, origin, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("WWW-Authenticate")
}

// TestServeHTTPLoopbackNoToken: without a token a loopback server serves
// the official client, and still refuses a foreign Origin and an oversized
// body.
func TestServeHTTPLoopbackNoToken(t *testing.T) {
	remote := gittest.BareRemote(t)
	addr := freeAddr(t)
	startServe(t, kernelEnv(remote), "--http", addr, "--root", t.TempDir())
	url := "http://" + addr + "/mcp"
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "git_status", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("git_status: %v %+v", err, res)
	}
	if code, _ := rawStatus(t, url, "", "http://localhost:5173", initRequest); code != http.StatusOK {
		t.Fatalf("loopback Origin: %d", code)
	}
	if code, _ := rawStatus(t, url, "", "http://evil.example.com", initRequest); code != http.StatusForbidden {
		t.Fatalf("evil Origin: %d", code)
	}
	if code, _ := rawStatus(t, url, "", "", `{"x":"`+strings.Repeat("a", 5<<20)+`"}`); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d", code)
	}
}

// TestServeStdioAnswersBeforeEOF pipes initialize and tools/list at once
// and closes stdin: both must be answered before tgp serve exits.
func TestServeStdioAnswersBeforeEOF(t *testing.T) {
	remote := gittest.BareRemote(t)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	cmd := exec.Command(tgpBin, "serve", "--root", t.TempDir())
	cmd.Env = kernelEnv(remote)
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tgp serve: %v", err)
	}
	ids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Result == nil {
			t.Fatalf("not a result: %q", line)
		}
		ids[string(m.ID)] = true
	}
	if !ids["1"] || !ids["2"] {
		t.Fatalf("answers for %v, want 1 and 2:\n%s", ids, out)
	}
}
