package replay

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, s *Server, path string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var anthropicHdr = map[string]string{"X-Api-Key": "k", "Anthropic-Version": "2023-06-01"}

const useTurn = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"add","input":{}},{"type":"tool_use","id":"toolu_2","name":"add","input":{}}]}`

// TestAnthropicRefusesWhatTheAPIRefuses: the replay is only worth its
// green if a loop that drops a tool result, invents an id or forgets the
// credentials is refused, as the API refuses it.
func TestAnthropicRefusesWhatTheAPIRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		hdr  map[string]string
		body string
		want string
	}{
		{"no key", map[string]string{"Anthropic-Version": "2023-06-01"}, `{}`, "authentication_error"},
		{"no version", map[string]string{"X-Api-Key": "k"}, `{}`, "anthropic-version"},
		{"no max_tokens", anthropicHdr, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens"},
		{"bad tool name", anthropicHdr, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"a b","input_schema":{"type":"object"}}]}`, "tools.0.custom.name"},
		{"schema not object", anthropicHdr, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"a","input_schema":{"type":"string"}}]}`, `type \"object\"`},
		{"missing result", anthropicHdr, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"},` + useTurn +
			`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}]}`, "toolu_2"},
		{"unknown id", anthropicHdr, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"},` + useTurn +
			`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"},{"type":"tool_result","tool_use_id":"toolu_2","content":"x"},{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}]}`, "toolu_9"},
		{"unanswered last turn", anthropicHdr, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"},` + useTurn + `]}`, "without `tool_result`"},
	} {
		s := Start(Anthropic, []Step{{Response: []byte(`{}`)}})
		code, body := post(t, s, "/v1/messages", c.hdr, c.body)
		s.Close()
		if code < 400 || !strings.Contains(body, c.want) || s.Err() == nil {
			t.Errorf("%s: %d %s (want a refusal naming %q)", c.name, code, body, c.want)
		}
	}
	// The same conversation, answered properly, passes and yields the
	// results' text.
	s := Start(Anthropic, []Step{{ResultsContain: []string{"x1", "x2"}, Response: []byte(`{"ok":1}`)}})
	defer s.Close()
	code, body := post(t, s, "/v1/messages", anthropicHdr, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"},`+useTurn+
		`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x1"},{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"x2"}]}]}]}`)
	if code != 200 || body != `{"ok":1}` || s.Err() != nil {
		t.Fatalf("%d %s %v", code, body, s.Err())
	}
}

func TestOpenAIChatRefusesWhatTheAPIRefuses(t *testing.T) {
	hdr := map[string]string{"Authorization": "Bearer k"}
	calls := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"add","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"add","arguments":"{}"}}]}`
	for _, c := range []struct {
		name string
		hdr  map[string]string
		body string
		want string
	}{
		{"no key", nil, `{}`, "authentication_error"},
		{"no model", hdr, `{"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{"missing tool message", hdr, `{"model":"m","messages":[{"role":"user","content":"hi"},` + calls + `,{"role":"tool","tool_call_id":"call_1","content":"x"},{"role":"user","content":"go on"}]}`, "call_2"},
		{"stray tool message", hdr, `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"call_1","content":"x"}]}`, "role 'tool'"},
		{"bad parameters", hdr, `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"array"}}}]}`, `type \"object\"`},
	} {
		s := Start(OpenAIChat, []Step{{Response: []byte(`{}`)}})
		code, body := post(t, s, "/v1/chat/completions", c.hdr, c.body)
		s.Close()
		if code < 400 || !strings.Contains(body, c.want) || s.Err() == nil {
			t.Errorf("%s: %d %s (want a refusal naming %q)", c.name, code, body, c.want)
		}
	}
	s := Start(OpenAIChat, []Step{{ResultsContain: []string{"r1", "r2"}, Response: []byte(`{"ok":1}`)}})
	defer s.Close()
	code, body := post(t, s, "/v1/chat/completions", hdr, `{"model":"m","messages":[{"role":"user","content":"hi"},`+calls+
		`,{"role":"tool","tool_call_id":"call_1","content":"r1"},{"role":"tool","tool_call_id":"call_2","content":"r2"}]}`)
	if code != 200 || s.Err() != nil {
		t.Fatalf("%d %s %v", code, body, s.Err())
	}
}

// TestResultsMustHoldTheKernelsAnswers: a step whose expected tool result
// is absent fails the replay (the loop stopped using the kernel).
func TestResultsMustHoldTheKernelsAnswers(t *testing.T) {
	s := Start(OpenAIChat, []Step{{ResultsContain: []string{`"sum":5`}, Response: []byte(`{}`)}})
	defer s.Close()
	code, _ := post(t, s, "/v1/chat/completions", map[string]string{"Authorization": "Bearer k"},
		`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"add","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"{\"sum\":4}"}]}`)
	if code == 200 || s.Err() == nil {
		t.Fatal("a wrong tool result passed")
	}
}
