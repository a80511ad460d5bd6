package anthropicsdk

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/kernel"
	_ "github.com/tgp-go/tgp/kernel/all" // every toolset
)

var update = flag.Bool("update", false, "rewrite testdata/tools.golden.json")

// TestToolSchemasSnapshot keeps every kernel tool as the SDK marshals it
// onto the wire in a golden file, like kernel/testdata/tools.golden.json:
// a change to a schema or to the adapter shows up in review. Regenerate
// with `go test ./adapters/anthropicsdk -run Snapshot -update`.
func TestToolSchemasSnapshot(t *testing.T) {
	k, err := kernel.New(context.Background(), kernel.WithEnviron([]string{}), kernel.WithMemoryFS(), kernel.WithSetting("sql.driver", "sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Shutdown(context.Background())
	defs := Tools(k.Tools())
	if len(defs) != len(k.Tools()) || len(defs) < 20 {
		t.Fatalf("%d definitions for %d tools", len(defs), len(k.Tools()))
	}
	wire, err := json.Marshal(defs)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(wire, &v); err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(v, "", "  ")
	got = append(got, '\n')
	golden := filepath.Join("testdata", "tools.golden.json")
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
		t.Fatalf("Anthropic tool definitions changed; review and run `go test ./adapters/anthropicsdk -run Snapshot -update`")
	}
}

// TestWireSchemaIsTheToolSchema: what the SDK sends as input_schema is the
// kernel's schema, keyword for keyword (additionalProperties false
// included), not a lossy copy.
func TestWireSchemaIsTheToolSchema(t *testing.T) {
	k, err := kernel.New(context.Background(), kernel.WithEnviron([]string{}), kernel.WithMemoryFS(), kernel.WithSetting("sql.driver", "sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Shutdown(context.Background())
	for i, d := range Tools(k.Tools()) {
		tl := k.Tools()[i]
		wire, _ := json.Marshal(d)
		var got struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(wire, &got); err != nil {
			t.Fatal(err)
		}
		var a, b any
		own, _ := json.Marshal(tl.InputSchema)
		_ = json.Unmarshal(own, &a)
		_ = json.Unmarshal(got.InputSchema, &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if got.Name != tl.Name || string(ja) != string(jb) {
			t.Fatalf("%s: wire schema differs\nown  %s\nwire %s", tl.Name, ja, jb)
		}
	}
}

// TestCoreDoesNotImportTheSDKs: the kernel and the CLI build without the
// model SDKs; only hosts that import an adapter pay for one. The library
// speaks only the OpenTelemetry API: the SDK and the exporters are the
// host's (the CLI is a host).
func TestCoreDoesNotImportTheSDKs(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/tgp-go/tgp/kernel", "github.com/tgp-go/tgp/cmd/tgp",
		"github.com/tgp-go/tgp/mcpserver").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/anthropics/") || strings.HasPrefix(dep, "github.com/openai/") ||
			strings.HasPrefix(dep, "github.com/tgp-go/tgp/adapters/") {
			t.Fatalf("the core imports %s", dep)
		}
	}
	out, err = exec.Command("go", "list", "-deps", "github.com/tgp-go/tgp/kernel", "github.com/tgp-go/tgp/mcpserver").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk") || strings.HasPrefix(dep, "go.opentelemetry.io/otel/exporters") {
			t.Fatalf("the library imports the OpenTelemetry SDK: %s", dep)
		}
	}
}
