package anthropicsdk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

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

// A Messages API response as the API sends it: text, then two tool_use
// blocks, one with an argument the schema refuses.
const response = `{
  "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-5",
  "content": [
    {"type": "text", "text": "Adding."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "add", "input": {"a": 2, "b": 3}},
    {"type": "tool_use", "id": "toolu_01B09q90qw90lq917835lq9", "name": "add", "input": {"a": 2, "c": 3}}
  ],
  "stop_reason": "tool_use",
  "stop_sequence": null,
  "usage": {"input_tokens": 120, "output_tokens": 40}
}`

func TestRunAnswersEveryToolUse(t *testing.T) {
	var msg anthropic.Message
	if err := json.Unmarshal([]byte(response), &msg); err != nil {
		t.Fatal(err)
	}
	out := Run(context.Background(), testSet(t), msg.Content)
	if len(out) != 2 {
		t.Fatalf("%d results for 2 tool_use blocks", len(out))
	}
	ok, bad := out[0].OfToolResult, out[1].OfToolResult
	if ok == nil || bad == nil {
		t.Fatalf("not tool_result blocks: %+v", out)
	}
	if ok.ToolUseID != "toolu_01A09q90qw90lq917835lq9" || ok.IsError.Value || ok.Content[0].OfText.Text != `{"sum":5}` {
		t.Fatalf("first result %+v", ok)
	}
	if bad.ToolUseID != "toolu_01B09q90qw90lq917835lq9" || !bad.IsError.Value ||
		!strings.Contains(bad.Content[0].OfText.Text, `"kind":"bad_args"`) || !strings.Contains(bad.Content[0].OfText.Text, `unknown argument \"c\"`) {
		t.Fatalf("second result %+v %s", bad, bad.Content[0].OfText.Text)
	}
	// On the wire: what the next request's user message carries.
	wire, _ := json.Marshal(anthropic.NewUserMessage(out...))
	for _, want := range []string{`"type":"tool_result"`, `"tool_use_id":"toolu_01A09q90qw90lq917835lq9"`, `"is_error":true`} {
		if !strings.Contains(string(wire), want) {
			t.Fatalf("wire %s lacks %s", wire, want)
		}
	}
}

func TestRunWithoutToolUseIsNil(t *testing.T) {
	var msg anthropic.Message
	if err := json.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`), &msg); err != nil {
		t.Fatal(err)
	}
	if out := Run(context.Background(), testSet(t), msg.Content); out != nil {
		t.Fatalf("%+v", out)
	}
}
