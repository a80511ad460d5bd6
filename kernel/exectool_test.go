package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/forgetools"
)

// exec_tool's result is typed: Result.Outcome for Call, and ExecTool,
// whose error is the run's failure when the tool ran and failed (Call's is
// nil then, as its doc says) and a *tools.Error when the call failed.
func TestExecToolTypedResults(t *testing.T) {
	k := bootWith(t)
	ctx := context.Background()
	call(t, k, "write_file", map[string]string{"path": "tools/add.ts", "content": "/** Adds. */\nexport default (a: {x: number; y: number}) => a.x + a.y;\n"})
	call(t, k, "write_file", map[string]string{"path": "tools/boom.ts", "content": "/** Throws. */\nexport default () => { throw new Error('boom'); };\n"})

	out, err := k.ExecTool(ctx, "tools/add.ts", map[string]any{"x": 1, "y": 2})
	if err != nil || !out.Success || out.Result != float64(3) && out.Result != int64(3) {
		t.Fatalf("add: %+v %v", out, err)
	}
	out, err = k.ExecTool(ctx, "tools/boom.ts", nil)
	var ee *sandbox.ExecError
	if !errors.As(err, &ee) || ee.Kind != sandbox.KindRuntime || out == nil || out.Success {
		t.Fatalf("boom: %+v %v", out, err)
	}
	res, err := k.Call(ctx, "exec_tool", json.RawMessage(`{"path":"tools/boom.ts"}`))
	if err != nil || forgetools.OutcomeOf(res) == nil || forgetools.OutcomeOf(res).Success || !errors.As(forgetools.OutcomeOf(res).Err(), &ee) {
		t.Fatalf("Call: %+v %v", res, err)
	}
	if _, err := k.ExecTool(ctx, "../etc/passwd", nil); !errors.As(err, new(*tools.Error)) {
		t.Fatalf("a call failure is a *tools.Error: %v", err)
	}
	res, err = k.Call(ctx, "read_file", json.RawMessage(`{"path":"tools/add.ts"}`))
	if err != nil || forgetools.OutcomeOf(res) != nil {
		t.Fatalf("read_file's result has an Outcome: %+v %v", res, err)
	}
	res, err = k.Call(ctx, "check_tool", json.RawMessage(`{"path":"tools/add.ts"}`))
	if rep, ok := forgetools.ReportOf(res); err != nil || !ok || !rep.Valid {
		t.Fatalf("check_tool report: %+v %v", res, err)
	}
}

// exec_tool checks args against the tool's declared parameter type: {"x":
// "1"} to (a: {x: number, y: number}) is bad_args naming args.x, where it
// returned "12" before.
func TestExecToolChecksArgsAgainstTheTSType(t *testing.T) {
	k := bootWith(t)
	ctx := context.Background()
	call(t, k, "write_file", map[string]string{"path": "tools/add.ts", "content": "/** Adds. */\nexport default (a: {x: number; y: number}) => a.x + a.y;\n"})
	call(t, k, "write_file", map[string]string{"path": "tools/opt.ts", "content": "/** Echoes. */\nexport default (a: {v: string | null; w?: number}) => a.v;\n"})
	for _, c := range []struct{ path, args, field string }{
		{"tools/add.ts", `{"x":"1","y":2}`, "args.x"},
		{"tools/add.ts", `{"x":1}`, "args.y"},
		{"tools/add.ts", `{"x":1,"y":2,"z":3}`, "args.z"},
		{"tools/add.ts", `null`, "args"},
		{"tools/add.ts", `{"x":1,"y":2}`, ""},
		{"tools/opt.ts", `{"v":null}`, ""},
		{"tools/opt.ts", `{"v":"a","w":null}`, ""},
	} {
		res, err := k.Call(ctx, "exec_tool", json.RawMessage(`{"path":"`+c.path+`","args":`+c.args+`}`))
		var te *tools.Error
		switch {
		case c.field == "" && (err != nil || !forgetools.OutcomeOf(res).Success):
			t.Errorf("%s %s: %v %+v", c.path, c.args, err, forgetools.OutcomeOf(res))
		case c.field != "" && (!errors.As(err, &te) || te.Kind != tools.KindBadArgs || te.Field != c.field):
			t.Errorf("%s %s: %v, want bad_args on %s", c.path, c.args, err, c.field)
		}
	}
	res, err := k.Call(ctx, "check_tool", json.RawMessage(`{"path":"tools/add.ts"}`))
	if rep, _ := forgetools.ReportOf(res); err != nil || rep.ArgsSchema["type"] != "object" {
		t.Fatalf("check_tool's args_schema: %+v %v", rep, err)
	}
}
