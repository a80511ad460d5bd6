package tools

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// OpenAITool is the Chat Completions / Responses function-tool JSON.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function part of an OpenAI tool.
type OpenAIFunction struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	Parameters  *jsonschema.Schema `json:"parameters"`
	Strict      bool               `json:"strict,omitempty"`
}

// AnthropicTool is the Messages API tool JSON.
type AnthropicTool struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	InputSchema *jsonschema.Schema `json:"input_schema"`
}

// Definition is the neutral JSON form `tgp tools --json` prints.
type Definition struct {
	Name        string             `json:"name"`
	Title       string             `json:"title"`
	Description string             `json:"description"`
	InputSchema *jsonschema.Schema `json:"input_schema"`
	// OutputSchema is the schema of the result, for tools whose result
	// is an object (not text).
	OutputSchema *jsonschema.Schema `json:"output_schema,omitempty"`
	// ExtraSchema is the schema of the structured fields some text tools
	// give beside their text (MCP structuredContent).
	ExtraSchema *jsonschema.Schema `json:"extra_schema,omitempty"`
	Annotations Annotations        `json:"annotations"`
}

// Definition returns the neutral definition of t.
func (t *Tool) Definition() Definition {
	return Definition{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
		OutputSchema: t.OutputSchema, ExtraSchema: t.ExtraSchema, Annotations: t.Annotations}
}

// OpenAI exports tools as OpenAI function tools.
func OpenAI(ts []*Tool) []OpenAITool {
	out := make([]OpenAITool, 0, len(ts))
	for _, t := range ts {
		out = append(out, OpenAITool{Type: "function", Function: OpenAIFunction{
			Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
	}
	return out
}

// Anthropic exports tools as Anthropic tool definitions.
func Anthropic(ts []*Tool) []AnthropicTool {
	out := make([]AnthropicTool, 0, len(ts))
	for _, t := range ts {
		out = append(out, AnthropicTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	return out
}

// ModelText is what a model reads back from one call, the same for every
// adapter (MCP, the Anthropic and OpenAI SDK adapters): a string result
// as it is, any other result as JSON, and a failure as the `tgp call`
// failure object `{"ok":false,"tool":...,"error":{...}}` with isError set,
// so the model sees the kind and the message it can act on.
func ModelText(name string, res Result, err error) (text string, isError bool) {
	if err != nil {
		body, _ := json.Marshal(map[string]any{"ok": false, "tool": name, "error": Classify(err, nil)})
		return string(body), true
	}
	text, ok := res.Value.(string)
	if !ok {
		b, merr := json.Marshal(res.Value)
		if merr != nil {
			body, _ := json.Marshal(map[string]any{"ok": false, "tool": name,
				"error": Errorf(KindInternal, "result is not JSON: %v", merr)})
			return string(body), true
		}
		text = string(b)
	}
	if res.Stale != "" {
		// The model should know the answer may be behind the remote.
		text += "\n\n[stale: " + res.Stale + "]"
	}
	return text, false
}
