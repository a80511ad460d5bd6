package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// fakeChecker finds an error on every line holding BROKEN and a warning
// on every line holding TODO, as check_tool would at their positions.
type fakeChecker struct{ calls []string }

func (c *fakeChecker) CheckTool(p string, src []byte) (errs, warns []tools.Diagnostic) {
	c.calls = append(c.calls, p)
	for i, line := range strings.Split(string(src), "\n") {
		if col := strings.Index(line, "BROKEN"); col >= 0 {
			errs = append(errs, tools.Diagnostic{Rule: "syntax", Severity: "error", Message: "Unexpected BROKEN", Path: p, Line: i + 1, Column: col + 1})
		}
		if col := strings.Index(line, "TODO"); col >= 0 {
			warns = append(warns, tools.Diagnostic{Rule: "jsdoc", Severity: "warning", Message: "a TODO", Path: p, Line: i + 1, Column: col + 1})
		}
	}
	return errs, warns
}

func checkedEnv(t *testing.T) (*env, *fakeChecker) {
	t.Helper()
	f := vfs.NewMemory()
	rec := &recorder{}
	chk := &fakeChecker{}
	set := tools.NewSet()
	if err := set.Add(tools.FileTools(f, rec, tools.FileToolsConfig{Checker: chk})...); err != nil {
		t.Fatal(err)
	}
	e := &env{set: set, fs: f, rec: rec}
	e.call = func(name, args string) (tools.Result, error) {
		return set.Call(context.Background(), name, json.RawMessage(args))
	}
	return e, chk
}

func args(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A tool file that check_tool finds errors in is refused by every file
// tool that writes (compile_error, the diagnostics in the message and the
// details), and nothing is written or persisted, unless force is given;
// warnings ride along in the result; other files are not checked.
func TestToolFileWritesAreChecked(t *testing.T) {
	const good = "/** Adds. */\nexport default () => 1;\n"
	const broken = "/** Adds. */\nexport default () => BROKEN;\n"
	refusals := []struct {
		name, tool, field string
		args              map[string]any
	}{
		{"write_file", "write_file", "content", map[string]any{"path": "tools/a.ts", "content": broken}},
		{"patch_file", "patch_file", "new_string", map[string]any{"path": "tools/a.ts", "old_string": "=> 1", "new_string": "=> BROKEN"}},
		{"apply_patch envelope", "apply_patch", "patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: tools/a.ts\n@@\n-export default () => 1;\n+export default () => BROKEN;\n*** Add File: notes.txt\n+hi\n*** End Patch\n"}},
		{"apply_patch add", "apply_patch", "patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: tools/new/b.ts\n+/** B. */\n+export default () => BROKEN;\n*** End Patch\n"}},
		{"apply_patch unified", "apply_patch", "patch", map[string]any{"patch": "--- a/tools/a.ts\n+++ b/tools/a.ts\n@@ -2 +2 @@\n-export default () => 1;\n+export default () => BROKEN;\n"}},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			e, _ := checkedEnv(t)
			e.write(t, "tools/a.ts", good)
			_, err := e.call(c.tool, args(t, c.args))
			wantKind(t, err, tools.KindCompileError, "Unexpected BROKEN")
			var te *tools.Error
			errors.As(err, &te)
			if te.Field != c.field || !strings.Contains(te.Message, ":2:") || !strings.Contains(te.Message, "force: true") {
				t.Fatalf("field %q message %q", te.Field, te.Message)
			}
			if errs, _ := te.Details["errors"].([]tools.Diagnostic); len(errs) != 1 || errs[0].Line != 2 {
				t.Fatalf("details %+v", te.Details)
			}
			if got := e.read(t, "tools/a.ts"); got != good {
				t.Fatalf("tools/a.ts changed: %q", got)
			}
			for _, p := range []string{"notes.txt", "tools/new/b.ts"} {
				if _, err := e.fs.Stat(p); err == nil {
					t.Fatalf("%s written", p)
				}
			}
			if len(e.rec.changes) != 0 {
				t.Fatalf("persisted %+v", e.rec.changes)
			}
			// force: written and persisted, the errors in the result.
			c.args["force"] = true
			res, err := e.call(c.tool, args(t, c.args))
			if err != nil {
				t.Fatal(err)
			}
			wr := res.Value.(tools.WriteResult)
			if len(wr.Errors) != 1 || len(e.rec.changes) != 1 || !strings.Contains(e.read(t, wr.Errors[0].Path), "BROKEN") {
				t.Fatalf("forced: %+v, persisted %+v", wr, e.rec.changes)
			}
		})
	}

	e, chk := checkedEnv(t)
	res, err := e.call("write_file", args(t, map[string]any{"path": "tools/w.ts", "content": "// TODO\nexport default () => 1;\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if wr := res.Value.(tools.WriteResult); len(wr.Warnings) != 1 || wr.Warnings[0].Line != 1 || len(wr.Errors) != 0 {
		t.Fatalf("warnings did not ride along: %+v", wr)
	}
	chk.calls = nil
	for _, p := range []string{"README.md", "tools/types.d.ts", "tools/a.test.ts", "lib/x.ts"} {
		if _, err := e.call("write_file", args(t, map[string]any{"path": p, "content": "BROKEN"})); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if len(chk.calls) != 0 {
		t.Fatalf("checked files that are not tools: %v", chk.calls)
	}
}
