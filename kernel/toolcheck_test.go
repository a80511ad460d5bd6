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

// A tool with a syntax error never reaches the shared remote: write_file
// refuses it with check_tool's diagnostics (compile_error) and the remote
// is unchanged; force: true writes it anyway; warnings (jsdoc) come back
// in the result of a write that goes through.
func TestBrokenToolIsNotPushed(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/seed.ts": "/** Seed. */\nexport default () => 1;\n"})
	k := bootKernel(t, remote, false)
	before := gittest.Git(t, remote, "rev-parse", "main")
	broken := "/** Broken. */\nexport default (a: { x: number }) => { return a.x +; };\n"
	raw, _ := json.Marshal(map[string]any{"path": "tools/broken.ts", "content": broken})
	_, err := k.Call(context.Background(), "write_file", raw)
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.KindCompileError || !strings.Contains(te.Message, "tools/broken.ts:2:") ||
		!strings.Contains(te.Message, "[syntax]") || !strings.Contains(te.Message, "force: true") {
		t.Fatalf("write_file of a broken tool: %v", err)
	}
	if after := gittest.Git(t, remote, "rev-parse", "main"); after != before {
		t.Fatalf("the remote moved: %s -> %s", before, after)
	}
	if _, err := k.FS().Stat("tools/broken.ts"); err == nil {
		t.Fatal("the broken tool is in the root")
	}
	// patch_file that breaks a good tool is refused the same way.
	raw, _ = json.Marshal(map[string]any{"path": "tools/seed.ts", "old_string": "=> 1", "new_string": "=> eval('1')"})
	if _, err := k.Call(context.Background(), "patch_file", raw); !errors.As(err, &te) || te.Kind != tools.KindCompileError || !strings.Contains(te.Message, "no-eval") {
		t.Fatalf("patch_file: %v", err)
	}

	w := call(t, k, "write_file", map[string]any{"path": "tools/nodoc.ts", "content": "export default () => 1;\n"}).Value.(tools.WriteResult)
	if len(w.Warnings) == 0 || w.Warnings[0].Rule != "jsdoc" || len(w.Errors) != 0 || !w.Persisted.Persisted {
		t.Fatalf("warnings did not ride along: %+v", w)
	}
	w = call(t, k, "write_file", map[string]any{"path": "tools/broken.ts", "content": broken, "force": true}).Value.(tools.WriteResult)
	if len(w.Errors) == 0 || !w.Persisted.Persisted {
		t.Fatalf("force: %+v", w)
	}
	if got := gittest.Git(t, remote, "show", "main:tools/broken.ts"); got != broken {
		t.Fatalf("forced tool on the remote: %q", got)
	}
}
