package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestEveryToolSchemaIsPlain: no tool the kernel exposes has a
// ["null", T] property type, and exec_tool refuses a stringified args
// object instead of running the tool with null.
func TestEveryToolSchemaIsPlain(t *testing.T) {
	k := bootKernel(t, gittest.BareRemote(t), true)
	for _, tl := range k.Tools() {
		b, _ := json.Marshal(tl.InputSchema)
		if strings.Contains(string(b), `"null"`) {
			t.Fatalf("%s: %s", tl.Name, b)
		}
	}
	call(t, k, "write_file", map[string]string{"path": "tools/echo.ts", "content": "/** Echo. */\nexport default (a: { x: number }) => a.x;\n"})
	_, err := k.Call(context.Background(), "exec_tool", json.RawMessage(`{"path":"tools/echo.ts","args":"{\"x\":1}"}`))
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.KindBadArgs || te.Field != "args" {
		t.Fatalf("stringified args: want bad_args on args, got %v", err)
	}
	res := call(t, k, "exec_tool", map[string]any{"path": "tools/echo.ts", "args": map[string]any{"x": 1}})
	if jsonOf(res.Value) == "" || !strings.Contains(jsonOf(res.Value), `"result":1`) {
		t.Fatalf("object args: %s", jsonOf(res.Value))
	}
}
