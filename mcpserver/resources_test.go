package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
)

// fakeToolbox is a registry whose tools a test changes, as a refresh
// that brings other agents' tools would.
type fakeToolbox struct {
	mu        sync.Mutex
	files     map[string]string
	refreshes int
}

func (f *fakeToolbox) ToolEntries() []registry.Entry {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []registry.Entry
	for p, src := range f.files {
		out = append(out, registry.Entry{Path: p, Name: strings.TrimSuffix(p[strings.LastIndex(p, "/")+1:], ".ts"),
			Description: "tool " + p, Hash: fmt.Sprint(len(src))})
	}
	return out
}

func (f *fakeToolbox) ReadToolboxFile(p string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p == registry.FileName {
		return []byte(`{"tools":{}}`), nil
	}
	src, ok := f.files[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return []byte(src), nil
}

func (f *fakeToolbox) MaybeRefresh(context.Context) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshes++
	return ""
}

func (f *fakeToolbox) set(p, src string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if src == "" {
		delete(f.files, p)
		return
	}
	f.files[p] = src
}

// TestResourcesFollowTheRegistry: the toolbox is listed and read as
// resources; a tool that appears after a refresh (here: the fake
// registry changes, then the client lists) is announced with
// notifications/resources/list_changed; one that disappears is removed;
// nothing outside meta.json and tools/ is readable.
func TestResourcesFollowTheRegistry(t *testing.T) {
	tb := &fakeToolbox{files: map[string]string{"tools/a.ts": "export default () => 1;\n"}}
	set := testSet(t)
	s, err := New(set.List(), set, Options{Toolbox: tb})
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 10)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	uris := func() []string {
		t.Helper()
		lr, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range lr.Resources {
			out = append(out, r.URI)
		}
		return out
	}
	if got := strings.Join(uris(), " "); got != "tgp://meta.json tgp://tools/a.ts" {
		t.Fatalf("resources: %s", got)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tgp://tools/a.ts"})
	if err != nil || rr.Contents[0].Text != "export default () => 1;\n" || rr.Contents[0].MIMEType != "text/typescript" {
		t.Fatalf("read: %v %+v", err, rr)
	}
	for _, uri := range []string{"tgp://tgp.config.yaml", "tgp://tools/../tgp.config.yaml", "tgp://tools/missing.ts", "file:///etc/passwd"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Fatalf("%s was readable", uri)
		}
	}
	drain := func() {
		for {
			select {
			case <-changed:
			case <-time.After(100 * time.Millisecond):
				return
			}
		}
	}
	drain()
	tb.set("tools/other/b.ts", "export default () => 2;\n")
	before := tb.refreshes
	if got := strings.Join(uris(), " "); !strings.Contains(got, "tgp://tools/other/b.ts") {
		t.Fatalf("after the refresh: %s", got)
	}
	if tb.refreshes == before {
		t.Fatal("resources/list did not ask for a refresh")
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/list_changed after a new tool")
	}
	tb.set("tools/a.ts", "")
	// A tool call re-syncs too (it may have refreshed or forged).
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/list_changed after a tool was deleted")
	}
	if got := strings.Join(uris(), " "); strings.Contains(got, "tgp://tools/a.ts") {
		t.Fatalf("deleted tool still listed: %s", got)
	}
}

type statusArgs struct{}

type statusExtra struct {
	Entries []string `json:"entries"`
	Branch  string   `json:"branch,omitempty"`
}

type objectOut struct {
	N int `json:"n"`
}

// TestOutputSchemaAndStructuredContent: an object tool's outputSchema
// wraps its result schema; a text tool with extras keeps its text and
// puts the extras beside it; every tool has a title; and what is sent
// validates against what is declared.
func TestOutputSchemaAndStructuredContent(t *testing.T) {
	set := tools.NewSet()
	if err := set.Add(
		tools.Define(tools.Spec[statusArgs]{Name: "git_status", Description: "status", Extra: statusExtra{},
			Run: func(context.Context, statusArgs) (tools.Result, error) {
				return tools.Result{Value: "## main\n", Extra: statusExtra{Entries: []string{"a"}, Branch: "main"}}, nil
			}}),
		tools.Define(tools.Spec[statusArgs]{Name: "count_sql", Description: "count", Output: objectOut{},
			Run: func(context.Context, statusArgs) (tools.Result, error) {
				return tools.Result{Value: objectOut{N: 3}}, nil
			}}),
		tools.Define(tools.Spec[statusArgs]{Name: "plain", Description: "text",
			Run: func(context.Context, statusArgs) (tools.Result, error) { return tools.Result{Value: "x"}, nil }}),
	); err != nil {
		t.Fatal(err)
	}
	s, err := New(set.List(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	schemas := map[string]any{}
	for _, tl := range lt.Tools {
		titles[tl.Name] = tl.Title
		schemas[tl.Name] = tl.OutputSchema
	}
	if titles["git_status"] != "Git status" || titles["count_sql"] != "Count SQL" || titles["plain"] != "Plain" {
		t.Fatalf("titles %v", titles)
	}
	if schemas["plain"] != nil {
		t.Fatalf("a text tool without extras declares %v", schemas["plain"])
	}
	for _, name := range []string{"git_status", "count_sql"} {
		raw, _ := json.Marshal(schemas[name])
		var sch jsonschema.Schema
		if err := json.Unmarshal(raw, &sch); err != nil || sch.Type != "object" {
			t.Fatalf("%s: outputSchema %s", name, raw)
		}
		rs, err := sch.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		sc, _ := json.Marshal(res.StructuredContent)
		var v any
		_ = json.Unmarshal(sc, &v)
		if err := rs.Validate(v); err != nil {
			t.Fatalf("%s: %s does not validate against %s: %v", name, sc, raw, err)
		}
		switch name {
		case "git_status":
			if string(sc) != `{"branch":"main","entries":["a"],"result":"## main\n","truncated":false}` || res.Content[0].(*mcp.TextContent).Text != "## main\n" {
				t.Fatalf("git_status: %s", sc)
			}
		case "count_sql":
			if string(sc) != `{"result":{"n":3},"truncated":false}` {
				t.Fatalf("count_sql: %s", sc)
			}
			// A result that breaks the declared schema is caught by it.
			var bad any
			_ = json.Unmarshal([]byte(`{"result":{"n":"three"},"truncated":false}`), &bad)
			if rs.Validate(bad) == nil {
				t.Fatal("the schema accepts a wrong result")
			}
		}
	}
}

// spanCaller records the span context each call runs under.
type spanCaller struct {
	got trace.SpanContext
}

func (c *spanCaller) Call(ctx context.Context, name string, args json.RawMessage) (tools.Result, error) {
	c.got = trace.SpanContextFromContext(ctx)
	return tools.Result{Value: "ok"}, nil
}

// TestTraceParentFromMeta: a client's _meta.traceparent becomes the
// parent of the kernel's spans for that call.
func TestTraceParentFromMeta(t *testing.T) {
	set := testSet(t)
	c := &spanCaller{}
	s, err := New(set.List(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"},
		Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	if c.got.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || c.got.SpanID().String() != "00f067aa0ba902b7" || !c.got.IsRemote() {
		t.Fatalf("span context %+v", c.got)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	if c.got.IsValid() {
		t.Fatalf("a call without _meta got a parent: %+v", c.got)
	}
}

// traceHeader sets a traceparent header on every request of an MCP
// client, as an instrumented HTTP client or gateway does.
type traceHeader struct {
	parent string
	next   http.RoundTripper
}

func (h traceHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("traceparent", h.parent)
	return h.next.RoundTrip(r)
}

// TestTraceParentFromHTTPHeader: over streamable HTTP, the request's
// traceparent header becomes the parent of the kernel's spans, in
// stateful and stateless sessions; a request without it gets none.
func TestTraceParentFromHTTPHeader(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		set := testSet(t)
		c := &spanCaller{}
		s, err := New(set.List(), c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(HTTPHandler(s, HTTPOptions{Stateless: stateless}))
		ctx := context.Background()
		call := func(rt http.RoundTripper) trace.SpanContext {
			t.Helper()
			c.got = trace.SpanContext{}
			tr := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: rt}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
				t.Fatal(err)
			}
			return c.got
		}
		got := call(traceHeader{parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", next: http.DefaultTransport})
		if got.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || got.SpanID().String() != "00f067aa0ba902b7" || !got.IsRemote() {
			t.Fatalf("stateless=%v: span context %+v", stateless, got)
		}
		if got := call(http.DefaultTransport); got.IsValid() {
			t.Fatalf("stateless=%v: a request without traceparent got a parent: %+v", stateless, got)
		}
		srv.Close()
	}
}
