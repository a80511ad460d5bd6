package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// A line that is not JSON gets JSON-RPC's parse error (-32700, id null)
// and the session goes on: the requests after it are answered.
func TestStdioParseErrorKeepsSession(t *testing.T) {
	s, err := New(testSet(t).List(), testSet(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := initBody + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		"hello, is this thing on?\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"` + "\n" + // cut short
		"\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"after"}}}` + "\n"
	var out syncBuffer
	err = s.Run(context.Background(), StdioTransport(strings.NewReader(in), &out, time.Minute))
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("run: %v", err)
	}
	parseErrors := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line not JSON: %q", line)
		}
		if m.Error != nil && m.Error.Code == -32700 {
			if string(m.ID) != "null" {
				t.Errorf("parse error id %s, want null", m.ID)
			}
			parseErrors++
		}
	}
	if parseErrors != 2 {
		t.Errorf("%d parse errors, want 2:\n%s", parseErrors, out.String())
	}
	ids := answered(t, out.String())
	if !ids["1"] || !ids["3"] {
		t.Fatalf("requests around the bad lines not answered:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "after") {
		t.Fatalf("the call after the bad lines did not run:\n%s", out.String())
	}
}
