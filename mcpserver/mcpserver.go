// Package mcpserver exposes a tools.Set over the Model Context Protocol with
// the official Go SDK (github.com/modelcontextprotocol/go-sdk): every tool
// with its JSON Schema and annotations (readOnlyHint, destructiveHint,
// idempotentHint), results as text plus structured content, tool failures as
// isError results the model can read and correct, and the kernel's system
// prompt as an MCP prompt. A call that needs the user's approval (a scope
// expansion, approval.policy, a dangerous shell command) asks the client's
// user through elicitation when the client can be asked (elicit.go).
package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tgp-go/tgp/tools"
)

// PromptName is the name of the system prompt.
const PromptName = "tgp_system"

// Options select what the server exposes.
type Options struct {
	Name, Version string
	// ReadOnly exposes only read-only tools.
	ReadOnly bool
	// Include, when non-empty, exposes only tools matching one of these
	// names or globs; Exclude removes matches.
	Include, Exclude []string
	// Toolsets, when non-empty, exposes only the tools of these toolsets
	// (tools.Tool.Toolset: files, git, sandbox, shell...; "all" is every
	// one), as github-mcp-server's --toolsets do; the kernel's own tools
	// (toolset "core": find_tools, request_scope_expansion) come with any
	// selection. ExcludeToolsets removes toolsets, core included. Both
	// combine with ReadOnly and the name filters; a name no tool carries
	// makes New fail.
	Toolsets, ExcludeToolsets []string
	// SystemPrompt is published as the prompt PromptName when non-empty.
	SystemPrompt string
	// Toolbox, when set, is published as resources: tgp://meta.json and
	// tgp://tools/{path} for every agent tool, kept in step with the
	// registry (notifications/resources/list_changed when a refresh
	// brings other agents' tools).
	Toolbox Toolbox
}

// Caller runs a tool call; *tools.Set and the kernel implement it.
type Caller interface {
	Call(ctx context.Context, name string, args json.RawMessage) (tools.Result, error)
}

// New builds an MCP server for the tools in list, calling them through c.
func New(list []*tools.Tool, c Caller, o Options) (*mcp.Server, error) {
	if o.Name == "" {
		o.Name = "tgp"
	}
	if o.Version == "" {
		o.Version = "devel"
	}
	for _, g := range append(append([]string{}, o.Include...), o.Exclude...) {
		if _, err := path.Match(g, "x"); err != nil {
			return nil, fmt.Errorf("mcpserver: bad tool filter %q: %w", g, err)
		}
	}
	if err := checkToolsets(list, o); err != nil {
		return nil, err
	}
	s := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, nil)
	srv := &server{stateKey: make([]byte, 32)}
	if _, err := rand.Read(srv.stateKey); err != nil {
		return nil, fmt.Errorf("mcpserver: state key: %w", err)
	}
	for _, t := range Select(list, o) {
		s.AddTool(Definition(t), srv.handler(t.Name, c))
	}
	if o.Toolbox != nil {
		publishResources(s, o.Toolbox)
	}
	if o.SystemPrompt != "" {
		prompt := o.SystemPrompt
		s.AddPrompt(&mcp.Prompt{Name: PromptName, Description: "The TGP protocol and the 8 coding standards for agents forging tools."},
			func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Description: "TGP system prompt",
					Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}}}, nil
			})
	}
	return s, nil
}

// coreToolset is the kernel's own tools' toolset (toolset.Core).
const coreToolset = "core"

// checkToolsets refuses a toolset name no tool of list carries.
func checkToolsets(list []*tools.Tool, o Options) error {
	known := map[string]bool{"all": true, coreToolset: true}
	for _, t := range list {
		if t.Toolset != "" {
			known[t.Toolset] = true
		}
	}
	for _, n := range append(append([]string{}, o.Toolsets...), o.ExcludeToolsets...) {
		if !known[n] {
			names := make([]string, 0, len(known))
			for k := range known {
				names = append(names, k)
			}
			sort.Strings(names)
			return fmt.Errorf("mcpserver: no toolset %q (this kernel has: %s)", n, strings.Join(names, ", "))
		}
	}
	return nil
}

// inToolsets says whether t's toolset is selected by o.
func inToolsets(t *tools.Tool, o Options) bool {
	if slices.Contains(o.ExcludeToolsets, t.Toolset) && t.Toolset != "" {
		return false
	}
	if len(o.Toolsets) == 0 || slices.Contains(o.Toolsets, "all") {
		return true
	}
	return t.Toolset == coreToolset || (t.Toolset != "" && slices.Contains(o.Toolsets, t.Toolset))
}

// Select applies the read-only, toolset and name filters.
func Select(list []*tools.Tool, o Options) []*tools.Tool {
	match := func(globs []string, name string) bool {
		for _, g := range globs {
			if ok, _ := path.Match(g, name); ok {
				return true
			}
		}
		return false
	}
	var out []*tools.Tool
	for _, t := range list {
		if o.ReadOnly && !t.Annotations.ReadOnly {
			continue
		}
		if !inToolsets(t, o) {
			continue
		}
		if len(o.Include) > 0 && !match(o.Include, t.Name) {
			continue
		}
		if match(o.Exclude, t.Name) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Definition is the MCP tool definition of t.
func Definition(t *tools.Tool) *mcp.Tool {
	destructive := t.Annotations.Destructive
	openWorld := false
	def := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    t.Annotations.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Annotations.Idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
	if out := OutputSchema(t); out != nil {
		def.OutputSchema = out
	}
	return def
}

// OutputSchema is the schema of t's structuredContent, nil for a tool
// that declared neither an output nor structured extras. Every result is
// {"result": R, "truncated": bool, "stale"?: string}: R is the tool's
// output schema, or a string for a text tool with extras (git_status's
// entries), whose fields sit beside result. Extras are not required: a
// truncated or timed-out text comes without them.
func OutputSchema(t *tools.Tool) *jsonschema.Schema {
	if t.OutputSchema == nil && t.ExtraSchema == nil {
		return nil
	}
	result := t.OutputSchema
	if result == nil {
		result = &jsonschema.Schema{Type: "string"}
	}
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"result":    result,
		"truncated": {Type: "boolean"},
		"stale":     {Type: "string", Description: "set when the answer may be behind the remote, and why"},
	}, Required: []string{"result", "truncated"}}
	if t.ExtraSchema != nil {
		for k, p := range t.ExtraSchema.Properties {
			if _, taken := s.Properties[k]; !taken {
				s.Properties[k] = p
			}
		}
	}
	return s
}

// server is what the handlers share: the key that signs the state a
// client echoes between the rounds of a call that asked its user.
type server struct {
	stateKey []byte
}

func (s *server) handler(name string, c Caller) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
			ctx = traceParent(ctx, req.Params.Meta)
		}
		ctx, a, err := s.callContext(ctx, req)
		if err != nil {
			return nil, err
		}
		res, err := c.Call(ctx, name, args)
		if err != nil {
			if ir := s.inputRequired(a); ir != nil {
				// The call stopped to ask its user (and changed nothing):
				// the client asks and calls again with the answer.
				return ir, nil
			}
			return errorResult(name, tools.Classify(err, nil)), nil
		}
		structured := map[string]any{"result": res.Value, "truncated": res.Truncated}
		if res.TruncatedReason != "" {
			structured["truncated_reason"] = res.TruncatedReason
		}
		if res.Stale != "" {
			structured["stale"] = res.Stale
		}
		if res.Extra != nil {
			var extra map[string]any
			if b, err := json.Marshal(res.Extra); err == nil && json.Unmarshal(b, &extra) == nil {
				for k, v := range extra {
					if _, taken := structured[k]; !taken {
						structured[k] = v
					}
				}
			}
		}
		text, ok := res.Value.(string)
		if !ok {
			b, err := json.Marshal(res.Value)
			if err != nil {
				return nil, fmt.Errorf("tool %s: result is not JSON: %w", name, err)
			}
			text = string(b)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured}, nil
	}
}

// errorResult is a failed call as MCP clients read it: isError with the
// error as JSON text, and no structuredContent. A tool's outputSchema
// describes its results, not its errors, and clients that validate
// structuredContent whenever it is present (the official TypeScript SDK
// does, error or not: 1.32.2 throws -32602 on {"error": ...}) would
// never show the model why the call failed. The specification asks that
// structuredContent, when present, conform to the outputSchema, and puts
// a failed call's explanation in content with isError.
func errorResult(name string, te *tools.Error) *mcp.CallToolResult {
	body, _ := json.Marshal(map[string]any{"ok": false, "tool": name, "error": te})
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}
}

// traceParent makes the W3C trace context a client sent in the request's
// _meta (traceparent, tracestate: how MCP clients propagate a trace) the
// parent of the call's spans, unless ctx already has a span (a host
// calling in process).
func traceParent(ctx context.Context, meta mcp.Meta) context.Context {
	if trace.SpanContextFromContext(ctx).IsValid() || meta == nil {
		return ctx
	}
	tp, _ := meta["traceparent"].(string)
	if tp == "" {
		return ctx
	}
	carrier := propagation.MapCarrier{"traceparent": tp}
	if ts, ok := meta["tracestate"].(string); ok {
		carrier["tracestate"] = ts
	}
	return propagation.TraceContext{}.Extract(ctx, carrier)
}

// HTTPOptions guard the streamable HTTP transport. The MCP specification
// requires servers to validate Origin; a token keeps the network out.
type HTTPOptions struct {
	Stateless bool
	// Token, when set, must arrive as "Authorization: Bearer <token>".
	Token string
	// AllowedOrigins pass the Origin check besides loopback origins
	// (scheme://host[:port], compared exactly).
	AllowedOrigins []string
	// MaxBodyBytes bounds a request body (default 4 MiB); more is 413.
	MaxBodyBytes int64
	// SessionIdleTimeout closes sessions with no request for this long
	// (0: never).
	SessionIdleTimeout time.Duration
}

// HTTPHandler serves s over streamable HTTP behind the guard: an Origin
// that is neither loopback nor allowed is 403, a missing or wrong token 401
// (with WWW-Authenticate), an oversized body 413. The SDK's own check stays
// on behind it: a loopback listener answers a non-loopback Host with 403
// (DNS rebinding).
func HTTPHandler(s *mcp.Server, o HTTPOptions) http.Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 4 << 20
	}
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: o.Stateless, SessionTimeout: o.SessionIdleTimeout})
	allowed := map[string]bool{}
	for _, a := range o.AllowedOrigins {
		allowed[strings.TrimSuffix(strings.ToLower(a), "/")] = true
	}
	want := sha256.Sum256([]byte(o.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, allowed) {
			http.Error(w, "Forbidden: origin not allowed", http.StatusForbidden)
			return
		}
		if o.Token != "" {
			// The scheme is case-insensitive (RFC 7235); hashing first
			// keeps the compare constant-time in the token's length too.
			scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
			if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
				challenge := `Bearer realm="tgp"`
				if r.Header.Get("Authorization") != "" {
					challenge += `, error="invalid_token"`
				}
				w.Header().Set("WWW-Authenticate", challenge)
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
		}
		if r.Body != nil && r.Body != http.NoBody {
			if r.ContentLength > o.MaxBodyBytes {
				http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, o.MaxBodyBytes+1))
			if err != nil {
				http.Error(w, "Bad Request", http.StatusBadRequest)
				return
			}
			if int64(len(body)) > o.MaxBodyBytes {
				http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		inner.ServeHTTP(w, r.WithContext(traceParentHeader(r)))
	})
}

// traceParentHeader is the request's context with the W3C trace context
// of its traceparent and tracestate headers (how HTTP clients and
// gateways propagate a trace) as the remote parent of the call's spans.
// A call's own _meta.traceparent is not looked at then (traceParent).
func traceParentHeader(r *http.Request) context.Context {
	ctx := r.Context()
	if r.Header.Get("traceparent") == "" || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
}

// originAllowed accepts loopback origins and the configured ones.
func originAllowed(origin string, allowed map[string]bool) bool {
	if allowed[strings.TrimSuffix(strings.ToLower(origin), "/")] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return IsLoopbackHost(u.Hostname())
}

// IsLoopbackHost reports whether a host name or address is loopback.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
