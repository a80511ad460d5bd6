package openaisdk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tgp-go/tgp/tools"
)

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

func testSet(t *testing.T) *tools.Set {
	t.Helper()
	set := tools.NewSet()
	if err := set.Add(tools.Define(tools.Spec[addArgs]{Name: "add", Description: "add two numbers",
		Annotations: tools.Annotations{ReadOnly: true, Risk: tools.RiskLow},
		Run: func(ctx context.Context, a addArgs) (tools.Result, error) {
			return tools.Result{Value: map[string]int{"sum": a.A + a.B}}, nil
		}})); err != nil {
		t.Fatal(err)
	}
	return set
}

// A Chat Completions response as the API sends it: two parallel tool
// calls, the second with an argument the schema refuses.
const completion = `{
  "id": "chatcmpl-AbC123",
  "object": "chat.completion",
  "created": 1760000000,
  "model": "gpt-4.1-2025-04-14",
  "choices": [{
    "index": 0,
    "message": {
      "role": "assistant",
      "content": null,
      "refusal": null,
      "tool_calls": [
        {"id": "call_Xk1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}},
        {"id": "call_Xk2", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"c\":3}"}}
      ]
    },
    "logprobs": null,
    "finish_reason": "tool_calls"
  }],
  "usage": {"prompt_tokens": 80, "completion_tokens": 30, "total_tokens": 110}
}`

func TestRunAnswersEveryToolCall(t *testing.T) {
	var cc openai.ChatCompletion
	if err := json.Unmarshal([]byte(completion), &cc); err != nil {
		t.Fatal(err)
	}
	out := Run(context.Background(), testSet(t), cc.Choices[0].Message.ToolCalls)
	if len(out) != 2 {
		t.Fatalf("%d messages for 2 tool calls", len(out))
	}
	ok, bad := out[0].OfTool, out[1].OfTool
	if ok == nil || bad == nil {
		t.Fatalf("not tool messages: %+v", out)
	}
	if ok.ToolCallID != "call_Xk1" || ok.Content.OfString.Value != `{"sum":5}` {
		t.Fatalf("first %+v", ok)
	}
	if bad.ToolCallID != "call_Xk2" || !strings.Contains(bad.Content.OfString.Value, `"kind":"bad_args"`) {
		t.Fatalf("second %+v", bad)
	}
	wire, _ := json.Marshal(out)
	if !strings.Contains(string(wire), `"role":"tool"`) || !strings.Contains(string(wire), `"tool_call_id":"call_Xk2"`) {
		t.Fatalf("wire %s", wire)
	}
}

// A Responses API response with a function_call output item.
const response = `{
  "id": "resp_67ccd2bed1ec8190",
  "object": "response",
  "created_at": 1760000000,
  "status": "completed",
  "model": "gpt-4.1-2025-04-14",
  "output": [
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "function_call", "id": "fc_1", "call_id": "call_R1", "name": "add", "arguments": "{\"a\":40,\"b\":2}", "status": "completed"}
  ],
  "parallel_tool_calls": true,
  "tool_choice": "auto",
  "tools": [],
  "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
}`

func TestRunResponseAnswersEveryFunctionCall(t *testing.T) {
	var r responses.Response
	if err := json.Unmarshal([]byte(response), &r); err != nil {
		t.Fatal(err)
	}
	out := RunResponse(context.Background(), testSet(t), r.Output)
	if len(out) != 1 {
		t.Fatalf("%d items", len(out))
	}
	wire, _ := json.Marshal(out[0])
	for _, want := range []string{`"type":"function_call_output"`, `"call_id":"call_R1"`, `"output":"{\"sum\":42}"`} {
		if !strings.Contains(string(wire), want) {
			t.Fatalf("wire %s lacks %s", wire, want)
		}
	}
	if RunResponse(context.Background(), testSet(t), r.Output[:1]) != nil {
		t.Fatal("no function call: want nil")
	}
}
