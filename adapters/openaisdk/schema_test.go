package openaisdk

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/tgp-go/tgp/kernel"
	_ "github.com/tgp-go/tgp/kernel/all" // every toolset
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

func kernelTools(t *testing.T) *kernel.Kernel {
	t.Helper()
	k, err := kernel.New(context.Background(), kernel.WithEnviron([]string{}), kernel.WithMemoryFS(), kernel.WithSetting("sql.driver", "sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k
}

// snapshot compares v, as the SDK marshals it onto the wire, with a golden
// file (like kernel/testdata/tools.golden.json).
func snapshot(t *testing.T, name string, v any) {
	t.Helper()
	wire, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(wire, &generic); err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(generic, "", "  ")
	got = append(got, '\n')
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s changed; review and run `go test ./adapters/openaisdk -run Snapshot -update`", name)
	}
}

// TestToolSchemasSnapshot keeps both APIs' tool definitions of every
// kernel tool in golden files.
func TestToolSchemasSnapshot(t *testing.T) {
	k := kernelTools(t)
	chat := Tools(k.Tools())
	if len(chat) != len(k.Tools()) || len(chat) < 20 {
		t.Fatalf("%d definitions for %d tools", len(chat), len(k.Tools()))
	}
	snapshot(t, "chat_tools.golden.json", chat)
	snapshot(t, "response_tools.golden.json", ResponseTools(k.Tools()))
}

// TestWireSchemaIsTheToolSchema: the parameters the SDK sends are the
// kernel's schema, keyword for keyword.
func TestWireSchemaIsTheToolSchema(t *testing.T) {
	k := kernelTools(t)
	norm := func(raw []byte) string {
		var v any
		_ = json.Unmarshal(raw, &v)
		b, _ := json.Marshal(v)
		return string(b)
	}
	resp := ResponseTools(k.Tools())
	for i, d := range Tools(k.Tools()) {
		tl := k.Tools()[i]
		own, _ := json.Marshal(tl.InputSchema)
		var chat struct {
			Type     string `json:"type"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		wire, _ := json.Marshal(d)
		if err := json.Unmarshal(wire, &chat); err != nil {
			t.Fatal(err)
		}
		if chat.Type != "function" || chat.Function.Name != tl.Name || norm(chat.Function.Parameters) != norm(own) {
			t.Fatalf("%s: chat wire %s", tl.Name, wire)
		}
		var r struct {
			Type       string          `json:"type"`
			Name       string          `json:"name"`
			Strict     bool            `json:"strict"`
			Parameters json.RawMessage `json:"parameters"`
		}
		wire, _ = json.Marshal(resp[i])
		if err := json.Unmarshal(wire, &r); err != nil {
			t.Fatal(err)
		}
		if r.Type != "function" || r.Name != tl.Name || r.Strict || norm(r.Parameters) != norm(own) {
			t.Fatalf("%s: responses wire %s", tl.Name, wire)
		}
	}
}
