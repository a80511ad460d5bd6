// Package anthropicsdk connects the kernel's tools to the official Anthropic
// Go SDK (github.com/anthropics/anthropic-sdk-go): [Tools] gives the tool
// definitions as the SDK's own ToolUnionParam values, and [Run] runs the
// tool_use blocks of an assistant message through the kernel and returns
// the tool_result blocks to send back in the next user message.
//
// It is a package of its own so that the kernel, and hosts that do not call
// Anthropic models, do not import the SDK.
package anthropicsdk

import (
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/tgp-go/tgp/tools"
)

// Caller runs one tool call; *kernel.Kernel and *tools.Set implement it.
type Caller interface {
	Call(ctx context.Context, name string, args json.RawMessage) (tools.Result, error)
}

// Tools returns the tools as Messages API tool definitions. The input
// schema is the tool's own (properties, required, and every other keyword
// such as additionalProperties kept as extra fields), so the model sees
// exactly what the kernel validates.
func Tools(ts []*tools.Tool) []anthropic.ToolUnionParam {
	out := make([]anthropic.ToolUnionParam, 0, len(ts))
	for _, t := range ts {
		tp := anthropic.ToolParam{
			Name:        t.Name,
			Description: anthropic.String(t.Description),
			InputSchema: inputSchema(t),
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &tp})
	}
	return out
}

// inputSchema splits the tool's JSON Schema into the SDK's fields.
func inputSchema(t *tools.Tool) anthropic.ToolInputSchemaParam {
	var m map[string]any
	raw, err := json.Marshal(t.InputSchema)
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil || m == nil {
		// A schema that does not marshal is a programming error in the
		// tool's definition; an empty object schema keeps the tool
		// callable and the kernel still validates every call.
		return anthropic.ToolInputSchemaParam{Properties: map[string]any{}}
	}
	s := anthropic.ToolInputSchemaParam{Properties: m["properties"]}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	delete(m, "properties")
	delete(m, "required")
	delete(m, "type")
	if len(m) > 0 {
		s.ExtraFields = m
	}
	return s
}

// Run runs every tool_use block in content (an assistant message's
// Content) through c, in order, and returns one tool_result block for
// each, with the same tool_use_id. A failed call is a tool_result with
// is_error set and the `tgp call` failure object as its text, so the model
// can read the error kind and correct itself. Run returns nil when content
// has no tool_use block: the model's turn is over.
//
// Calls run one after another, not in parallel: a model that writes a file
// and then checks it expects the write to have landed.
func Run(ctx context.Context, c Caller, content []anthropic.ContentBlockUnion) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, b := range content {
		if b.Type != "tool_use" {
			continue
		}
		use := b.AsToolUse()
		res, err := c.Call(ctx, use.Name, use.Input)
		text, isError := tools.ModelText(use.Name, res, err)
		out = append(out, anthropic.NewToolResultBlock(use.ID, text, isError))
	}
	return out
}
