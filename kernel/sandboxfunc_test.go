package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/sandbox"
)

type orderArg struct {
	Customer string `json:"customer"`
	Limit    int    `json:"limit,omitempty"`
}

type order struct {
	ID    int     `json:"id"`
	Total float64 `json:"total"`
}

// A Go host function is tgp.<name> for the kernel's tools in both
// isolation modes (in process isolation it still runs in the kernel's
// process, with the call's context), its host error reaches the tool as
// an exception with the message, and tgp-env.d.ts declares it with its
// types.
func TestSandboxFuncBothModes(t *testing.T) {
	pid := os.Getpid()
	tool := "/** Orders. */\nexport default (a: { who: string }) => {\n" +
		"  try { return { orders: tgp.orders({ customer: a.who, limit: 2 }) }; }\n" +
		"  catch (e) { return { error: (e as Error).message }; }\n};\n"
	for _, isolation := range []string{sandbox.IsolationInProc, sandbox.IsolationProcess} {
		t.Run(isolation, func(t *testing.T) {
			var seen []string
			ctxOK := false
			orders := WithSandboxFunc("orders", func(ctx context.Context, a orderArg) ([]order, error) {
				if os.Getpid() != pid {
					return nil, errors.New("not in the kernel's process")
				}
				_, ctxOK = ctx.Deadline() // the run's timeout reaches the host
				seen = append(seen, a.Customer)
				if a.Customer == "nobody" {
					return nil, fmt.Errorf("no customer %q", a.Customer)
				}
				return []order{{ID: 1, Total: 9.5}, {ID: 2, Total: 3}}[:a.Limit], nil
			})
			root := t.TempDir()
			opts := []Option{WithEnviron([]string{}), WithSetting("git.remote", gittest.BareRemote(t)), WithRoot(root),
				WithSetting("git.author.name", "A"), WithSetting("git.author.email", "a@x"),
				WithSetting("sandbox.isolation", isolation), orders}
			if isolation == sandbox.IsolationProcess {
				opts = append(opts, WithSetting("sandbox.worker_command", []any{os.Args[0], sandbox.WorkerSubcommand}))
			}
			k, err := New(context.Background(), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.Boot(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
			call(t, k, "write_file", map[string]string{"path": "tools/orders.ts", "content": tool})
			// In this order: the host records the calls it saw.
			for _, c := range [][2]string{
				{"ada", `{"orders":[{"id":1,"total":9.5},{"id":2,"total":3}]}`},
				{"nobody", `{"error":"tgp.orders: no customer \"nobody\""}`},
			} {
				who, want := c[0], c[1]
				out := call(t, k, "exec_tool", map[string]any{"path": "tools/orders.ts", "args": map[string]any{"who": who}}).Value.(*sandbox.Outcome)
				b, _ := json.Marshal(out.Result)
				if !out.Success || string(b) != want {
					t.Fatalf("%s: %s (%+v)", who, b, out.Error)
				}
			}
			if strings.Join(seen, ",") != "ada,nobody" || !ctxOK {
				t.Fatalf("host saw %v (deadline %v)", seen, ctxOK)
			}
			// Declared for editors with the function's types.
			if _, err := k.Scaffold(); err != nil {
				t.Fatal(err)
			}
			dts, err := os.ReadFile(filepath.Join(root, "tools", "tgp-env.d.ts"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(dts), "  orders(arg: { customer: string; limit?: number }): ({ id: number; total: number })[] | null;\n};") {
				t.Fatalf("tgp-env.d.ts:\n%s", dts)
			}
			if res := api.Transform(string(dts), api.TransformOptions{Loader: api.LoaderTS}); len(res.Errors) > 0 {
				t.Fatalf("tgp-env.d.ts does not parse: %v", res.Errors[0].Text)
			}
		})
	}
}

// Names the sandbox owns, and a name given twice, are refused by New.
func TestSandboxFuncRefusedNames(t *testing.T) {
	fn := func(context.Context, int) (int, error) { return 0, nil }
	for _, opts := range [][]Option{
		{WithSandboxFunc("exec_sql", fn)},
		{WithSandboxFunc("two words", fn)},
		{WithSandboxFunc("f", fn), WithSandboxFunc("f", fn)},
	} {
		if _, err := New(context.Background(), append([]Option{WithEnviron([]string{}), WithMemoryFS()}, opts...)...); err == nil || !strings.Contains(err.Error(), "WithSandboxFunc") {
			t.Fatalf("accepted: %v", err)
		}
	}
}
