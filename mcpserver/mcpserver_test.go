package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/tools"
)

type echoArgs struct {
	Text string `json:"text"`
}

func testSet(t *testing.T) *tools.Set {
	t.Helper()
	set := tools.NewSet()
	err := set.Add(
		tools.Define(tools.Spec[echoArgs]{Name: "echo", Description: "echo text",
			Annotations: tools.Annotations{ReadOnly: true, Idempotent: true, Risk: tools.RiskLow},
			Run: func(ctx context.Context, a echoArgs) (tools.Result, error) {
				return tools.Result{Value: map[string]any{"echo": a.Text}}, nil
			}}),
		tools.Define(tools.Spec[echoArgs]{Name: "wipe", Description: "destroy",
			Annotations: tools.Annotations{Destructive: true, Risk: tools.RiskHigh},
			Run: func(ctx context.Context, a echoArgs) (tools.Result, error) {
				return tools.Result{Value: "wiped " + a.Text}, nil
			}}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func connect(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestToolsAnnotationsAndCalls(t *testing.T) {
	set := testSet(t)
	s, err := New(set.List(), set, Options{SystemPrompt: "be good"})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lt.Tools) != 2 {
		t.Fatalf("tools %d", len(lt.Tools))
	}
	for _, tl := range lt.Tools {
		if tl.Name == "wipe" && (tl.Annotations == nil || tl.Annotations.DestructiveHint == nil || !*tl.Annotations.DestructiveHint || tl.Annotations.ReadOnlyHint) {
			t.Fatalf("wipe annotations %+v", tl.Annotations)
		}
		if tl.Name == "echo" && (!tl.Annotations.ReadOnlyHint || !tl.Annotations.IdempotentHint) {
			t.Fatalf("echo annotations %+v", tl.Annotations)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Content[0].(*mcp.TextContent).Text != `{"echo":"hi"}` {
		t.Fatalf("call result %+v", res)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if string(sc) != `{"result":{"echo":"hi"},"truncated":false}` {
		t.Fatalf("structured %s", sc)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"bogus": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"kind":"bad_args"`) {
		t.Fatalf("bad args not an isError result: %+v", res.Content[0])
	}
	if res.StructuredContent != nil {
		// echo declares an outputSchema; {"error": ...} does not match it
		// and clients that validate would throw instead of reading it.
		t.Fatalf("an error result carries structuredContent %v", res.StructuredContent)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: PromptName})
	if err != nil {
		t.Fatal(err)
	}
	if p.Messages[0].Content.(*mcp.TextContent).Text != "be good" {
		t.Fatal("prompt text")
	}
}

func TestFilters(t *testing.T) {
	set := testSet(t)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{ReadOnly: true}, "echo"},
		{Options{Include: []string{"w*"}}, "wipe"},
		{Options{Exclude: []string{"echo"}}, "wipe"},
		{Options{}, "echo,wipe"},
	} {
		var names []string
		for _, tl := range Select(set.List(), c.o) {
			names = append(names, tl.Name)
		}
		if strings.Join(names, ",") != c.want {
			t.Fatalf("%+v: %v", c.o, names)
		}
	}
	if _, err := New(set.List(), set, Options{Include: []string{"["}}); err == nil {
		t.Fatal("bad glob accepted")
	}
}

func TestStreamableHTTPStateless(t *testing.T) {
	set := testSet(t)
	s, err := New(set.List(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HTTPHandler(s, HTTPOptions{Stateless: true}))
	defer srv.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wipe", Arguments: map[string]any{"text": "db"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content[0].(*mcp.TextContent).Text != "wiped db" {
		t.Fatalf("%+v", res.Content[0])
	}
}

// bearer adds a token to every request of an MCP client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func TestHTTPGuard(t *testing.T) {
	set := testSet(t)
	s, err := New(set.List(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HTTPHandler(s, HTTPOptions{Token: "s3cret-token", MaxBodyBytes: 2048,
		AllowedOrigins: []string{"https://app.example.com"}}))
	defer srv.Close()
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(body string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	cases := []struct {
		name string
		body string
		hdr  map[string]string
		want int
	}{
		{"no token", initBody, nil, http.StatusUnauthorized},
		{"wrong token", initBody, map[string]string{"Authorization": "Bearer s3cret-tokeX"}, http.StatusUnauthorized},
		{"token without scheme", initBody, map[string]string{"Authorization": "s3cret-token"}, http.StatusUnauthorized},
		{"evil origin", initBody, map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "http://evil.example.com"}, http.StatusForbidden},
		{"evil origin, no token", initBody, map[string]string{"Origin": "http://evil.example.com"}, http.StatusForbidden},
		{"lookalike origin", initBody, map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "http://127.0.0.1.evil.com"}, http.StatusForbidden},
		{"token with a suffix", initBody, map[string]string{"Authorization": "Bearer s3cret-token-and-more"}, http.StatusUnauthorized},
		{"token prefix", initBody, map[string]string{"Authorization": "Bearer s3cret"}, http.StatusUnauthorized},
		{"basic scheme", initBody, map[string]string{"Authorization": "Basic s3cret-token"}, http.StatusUnauthorized},
		{"empty bearer", initBody, map[string]string{"Authorization": "Bearer "}, http.StatusUnauthorized},
		{"null origin", initBody, map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "null"}, http.StatusForbidden},
		{"allowed origin on another port", initBody, map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "https://app.example.com:8443"}, http.StatusForbidden},
		{"allowed origin over http", initBody, map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "http://app.example.com"}, http.StatusForbidden},
		{"rebinding host", initBody, map[string]string{"Authorization": "Bearer s3cret-token", "Host": "evil.example.com"}, http.StatusForbidden},
		{"oversized body, no token", `{"x":"` + strings.Repeat("a", 4096) + `"}`, nil, http.StatusUnauthorized},
		{"oversized body", `{"x":"` + strings.Repeat("a", 4096) + `"}`, map[string]string{"Authorization": "Bearer s3cret-token"}, http.StatusRequestEntityTooLarge},
		{"right token", initBody, map[string]string{"Authorization": "Bearer s3cret-token"}, http.StatusOK},
		{"lower-case scheme", initBody, map[string]string{"Authorization": "bearer s3cret-token"}, http.StatusOK},
		{"right token, loopback origin", initBody, map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "http://localhost:3000"}, http.StatusOK},
		{"right token, allowed origin", initBody, map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "https://app.example.com"}, http.StatusOK},
	}
	for _, c := range cases {
		res := post(c.body, c.hdr)
		if res.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, res.StatusCode, c.want)
		}
		if c.want == http.StatusUnauthorized && !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q", c.name, res.Header.Get("WWW-Authenticate"))
		}
		if strings.Contains(res.Header.Get("WWW-Authenticate")+res.Status, "s3cret") {
			t.Errorf("%s: the token leaks into the response", c.name)
		}
	}
	// The official client gets through with the token.
	ctx := context.Background()
	client := &http.Client{Transport: bearer{token: "s3cret-token", next: http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// The toolset filters select on tools.Tool.Toolset as github-mcp-server's
// --toolsets do: the kernel's core tools come with any selection.
func TestToolsetFilters(t *testing.T) {
	mk := func(name, ts string, ro bool) *tools.Tool {
		return &tools.Tool{Name: name, Toolset: ts, Annotations: tools.Annotations{ReadOnly: ro}}
	}
	list := []*tools.Tool{mk("find_tools", "core", true), mk("git_log", "git", true), mk("git_commit", "git", false),
		mk("read_file", "files", true), mk("shell", "shell", false)}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Toolsets: []string{"files", "git"}}, "find_tools,git_log,git_commit,read_file"},
		{Options{Toolsets: []string{"git"}, ReadOnly: true}, "find_tools,git_log"},
		{Options{Toolsets: []string{"all"}, ExcludeToolsets: []string{"shell", "core"}}, "git_log,git_commit,read_file"},
		{Options{ExcludeToolsets: []string{"git"}, Exclude: []string{"read_*"}}, "find_tools,shell"},
	} {
		var names []string
		for _, tl := range Select(list, c.o) {
			names = append(names, tl.Name)
		}
		if strings.Join(names, ",") != c.want {
			t.Errorf("%+v: %v, want %s", c.o, names, c.want)
		}
	}
	if err := checkToolsets(list, Options{Toolsets: []string{"sql"}}); err == nil || !strings.Contains(err.Error(), "core, files, git, shell") {
		t.Fatalf("unknown toolset: %v", err)
	}
}
