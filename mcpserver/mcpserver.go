// Package mcpserver exposes a tools.Set over the Model Context Protocol with
// the official Go SDK (github.com/modelcontextprotocol/go-sdk): every tool
// with its JSON Schema and annotations (readOnlyHint, destructiveHint,
// idempotentHint), results as text plus structured content, tool failures as
// isError results the model can read and correct, and the kernel's system
// prompt as an MCP prompt.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	// SystemPrompt is published as the prompt PromptName when non-empty.
	SystemPrompt string
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
	s := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, nil)
	for _, t := range Select(list, o) {
		s.AddTool(Definition(t), handler(t.Name, c))
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

// Select applies the read-only and name filters.
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
	return &mcp.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: t.InputSchema,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    t.Annotations.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Annotations.Idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
}

func handler(name string, c Caller) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		res, err := c.Call(ctx, name, args)
		if err != nil {
			te := tools.Classify(err, nil)
			body, _ := json.Marshal(map[string]any{"ok": false, "tool": name, "error": te})
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}},
				StructuredContent: map[string]any{"error": te}}, nil
		}
		structured := map[string]any{"result": res.Value, "truncated": res.Truncated}
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

// HTTPHandler serves the server over streamable HTTP. Stateless mode keeps
// no session between requests (for serverless hosts).
func HTTPHandler(s *mcp.Server, stateless bool) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
}
