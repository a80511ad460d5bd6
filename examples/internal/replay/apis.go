package replay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
)

// apiError is a refusal worded as the real API words it (capitals and
// full stops included, hence not fmt.Errorf).
type apiError string

func (e apiError) Error() string { return string(e) }

func refuse(format string, args ...any) error { return apiError(fmt.Sprintf(format, args...)) }

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// checkSchema refuses what both APIs refuse in a tool's schema: a root
// that is not an object schema.
func checkSchema(name string, schema map[string]any) error {
	if schema == nil || schema["type"] != "object" {
		return refuse("tools.%s: input schema must have type \"object\"", name)
	}
	return nil
}

// Anthropic is the Messages API (POST /v1/messages).
var Anthropic = API{
	Path: "/v1/messages",
	Authorized: func(r *http.Request) bool {
		return r.Header.Get("X-Api-Key") != "" || strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ")
	},
	ErrorBody: func(kind, message string) []byte {
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": kind, "message": message}})
		return b
	},
	Check: checkAnthropic,
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	Text      string          `json:"text"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (m anthropicMessage) blocks() []anthropicBlock {
	var bs []anthropicBlock
	if json.Unmarshal(m.Content, &bs) != nil {
		return nil // a plain string: no tool blocks
	}
	return bs
}

func checkAnthropic(r *http.Request, body []byte) ([]string, error) {
	if r.Header.Get("Anthropic-Version") == "" {
		return nil, refuse("anthropic-version: header is required")
	}
	var req struct {
		Model     string             `json:"model"`
		MaxTokens int                `json:"max_tokens"`
		Messages  []anthropicMessage `json:"messages"`
		Tools     []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, refuse("invalid JSON body: %v", err)
	}
	switch {
	case req.Model == "":
		return nil, refuse("model: Field required")
	case req.MaxTokens < 1:
		return nil, refuse("max_tokens: Field required")
	case len(req.Messages) == 0:
		return nil, refuse("messages: at least one message is required")
	case req.Messages[0].Role != "user":
		return nil, refuse("messages: first message must use the \"user\" role")
	}
	seen := map[string]bool{}
	for i, t := range req.Tools {
		if !toolName.MatchString(t.Name) {
			return nil, refuse("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i)
		}
		if seen[t.Name] {
			return nil, refuse("tools: Tool names must be unique.")
		}
		seen[t.Name] = true
		if err := checkSchema(t.Name, t.InputSchema); err != nil {
			return nil, err
		}
	}
	var results []string
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, refuse("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		var uses []string
		if i > 0 && req.Messages[i-1].Role == "assistant" {
			for _, b := range req.Messages[i-1].blocks() {
				if b.Type == "tool_use" {
					uses = append(uses, b.ID)
				}
			}
		}
		answered := map[string]bool{}
		results = results[:0]
		for _, b := range m.blocks() {
			if b.Type != "tool_result" {
				continue
			}
			if m.Role != "user" || !contains(uses, b.ToolUseID) {
				return nil, refuse("messages.%d.content: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, b.ToolUseID)
			}
			answered[b.ToolUseID] = true
			results = append(results, resultText(b.Content))
		}
		var missing []string
		for _, id := range uses {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return nil, refuse("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
		}
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role == "assistant" {
		for _, b := range last.blocks() {
			if b.Type == "tool_use" {
				return nil, refuse("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s", len(req.Messages)-1, b.ID)
			}
		}
	}
	return results, nil
}

// resultText is a tool_result's content: a string or text blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []anthropicBlock
	_ = json.Unmarshal(raw, &bs)
	var parts []string
	for _, b := range bs {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// OpenAIChat is the Chat Completions API (POST /v1/chat/completions).
var OpenAIChat = API{
	Path: "/v1/chat/completions",
	Authorized: func(r *http.Request) bool {
		return strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") && len(r.Header.Get("Authorization")) > len("Bearer ")
	},
	ErrorBody: func(kind, message string) []byte {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": kind, "param": nil, "code": nil}})
		return b
	},
	Check: checkOpenAIChat,
}

func checkOpenAIChat(r *http.Request, body []byte) ([]string, error) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, refuse("We could not parse the JSON body of your request. (%v)", err)
	}
	if req.Model == "" {
		return nil, refuse("you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return nil, refuse("[] is too short - 'messages'")
	}
	for i, t := range req.Tools {
		if t.Type != "function" && t.Type != "custom" {
			return nil, refuse("Invalid value: '%s'. Supported values are: 'function' and 'custom'. (tools[%d].type)", t.Type, i)
		}
		if !toolName.MatchString(t.Function.Name) {
			return nil, refuse("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i)
		}
		if err := checkSchema(t.Function.Name, t.Function.Parameters); err != nil {
			return nil, err
		}
	}
	var results []string
	var open map[string]bool // tool calls of the last assistant message not yet answered
	for i, m := range req.Messages {
		if m.Role == "tool" {
			if open == nil || !open[m.ToolCallID] {
				return nil, refuse("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages[%d])", i)
			}
			delete(open, m.ToolCallID)
			var s string
			if json.Unmarshal(m.Content, &s) != nil {
				return nil, refuse("messages[%d].content: a tool message's content must be a string here", i)
			}
			results = append(results, s)
			continue
		}
		if len(open) > 0 {
			var ids []string
			for id := range open {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			return nil, refuse("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(ids, ", "))
		}
		open, results = nil, nil
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				if !json.Valid([]byte(c.Function.Arguments)) {
					return nil, refuse("messages[%d].tool_calls: arguments must be JSON", i)
				}
				open[c.ID] = true
			}
		}
	}
	if len(open) > 0 {
		return nil, refuse("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.")
	}
	return results, nil
}
