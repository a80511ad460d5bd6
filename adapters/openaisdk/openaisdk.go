// Package openaisdk connects the kernel's tools to the official OpenAI Go
// SDK (github.com/openai/openai-go), for both of its APIs:
//
//   - Chat Completions: [Tools] gives the function tools as the SDK's
//     ChatCompletionToolUnionParam values, and [Run] runs an assistant
//     message's tool calls through the kernel and returns the tool messages.
//   - Responses: [ResponseTools] and [RunResponse] do the same with the
//     Responses API's function tools, function_call items and
//     function_call_output items.
//
// It is a package of its own so that the kernel, and hosts that do not call
// OpenAI models, do not import the SDK.
package openaisdk

import (
	"context"
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tgp-go/tgp/tools"
)

// Caller runs one tool call; *kernel.Kernel and *tools.Set implement it.
type Caller interface {
	Call(ctx context.Context, name string, args json.RawMessage) (tools.Result, error)
}

// parameters is the tool's JSON Schema as the SDK's map. Strict mode is
// left off: it requires every property to be required, and the kernel's
// tools have optional arguments with defaults (the kernel validates every
// call against the schema anyway).
func parameters(t *tools.Tool) map[string]any {
	var m map[string]any
	raw, err := json.Marshal(t.InputSchema)
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil || m == nil {
		// A schema that does not marshal is a programming error in the
		// tool's definition; an empty object schema keeps the tool
		// callable and the kernel still validates every call.
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return m
}

// Tools returns the tools as Chat Completions function tools.
func Tools(ts []*tools.Tool) []openai.ChatCompletionToolUnionParam {
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(ts))
	for _, t := range ts {
		out = append(out, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(parameters(t)),
		}))
	}
	return out
}

// Run runs every function tool call of an assistant message (its
// ToolCalls) through c, in order, and returns one tool message for each,
// with the same tool_call_id. A failed call's message is the `tgp call`
// failure object (`{"ok":false,...,"error":{"kind":...}}`): Chat
// Completions has no error flag, and the model reads the kind and message
// and corrects itself. Run returns nil when there is no tool call: the
// model's turn is over.
//
// Calls run one after another even when the model asked for them in
// parallel: a model that writes a file and then checks it expects the
// write to have landed.
func Run(ctx context.Context, c Caller, calls []openai.ChatCompletionMessageToolCallUnion) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	for _, call := range calls {
		if call.Type != "function" {
			text, _ := tools.ModelText(call.Custom.Name, tools.Result{},
				tools.Errorf(tools.KindBadArgs, "only function tools are defined; call %q as a function", call.Custom.Name))
			out = append(out, openai.ToolMessage(text, call.ID))
			continue
		}
		fn := call.AsFunction().Function
		res, err := c.Call(ctx, fn.Name, json.RawMessage(fn.Arguments))
		text, _ := tools.ModelText(fn.Name, res, err)
		out = append(out, openai.ToolMessage(text, call.ID))
	}
	return out
}

// ResponseTools returns the tools as Responses API function tools.
func ResponseTools(ts []*tools.Tool) []responses.ToolUnionParam {
	out := make([]responses.ToolUnionParam, 0, len(ts))
	for _, t := range ts {
		u := responses.ToolParamOfFunction(t.Name, parameters(t), false)
		u.OfFunction.Description = openai.String(t.Description)
		out = append(out, u)
	}
	return out
}

// RunResponse runs every function_call item of a response's Output
// through c, in order, and returns one function_call_output item for each,
// with the same call_id, to send as the next request's input. It returns
// nil when the output has no function call.
func RunResponse(ctx context.Context, c Caller, output []responses.ResponseOutputItemUnion) []responses.ResponseInputItemUnionParam {
	var out []responses.ResponseInputItemUnionParam
	for _, item := range output {
		if item.Type != "function_call" {
			continue
		}
		fc := item.AsFunctionCall()
		res, err := c.Call(ctx, fc.Name, json.RawMessage(fc.Arguments))
		text, _ := tools.ModelText(fc.Name, res, err)
		in := responses.ResponseInputItemParamOfFunctionCallOutput(text)
		in.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
		out = append(out, in)
	}
	return out
}
