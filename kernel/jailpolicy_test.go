package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// TestOneJailPolicy: the sandbox bridge refuses exactly what the file
// tools refuse (tools/../meta.json climbs; .git is unreachable; outside
// the root), in both isolation modes, as a security_violation recognised
// by type, not by the words of the message.
func TestOneJailPolicy(t *testing.T) {
	refused := []string{"tools/../meta.json", ".git/config", "../outside.txt", "/etc/passwd", "data/../../x"}
	for _, isolation := range []string{sandbox.IsolationInProc, sandbox.IsolationProcess} {
		t.Run(isolation, func(t *testing.T) {
			remote := gittest.BareRemote(t)
			opts := []Option{WithEnviron([]string{}), WithSetting("git.remote", remote), WithMemoryFS(),
				WithSetting("git.author.name", "A"), WithSetting("git.author.email", "a@x"),
				WithSetting("sandbox.isolation", isolation)}
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
			call(t, k, "write_file", map[string]string{"path": "tools/peek.ts", "content": "/** Peek. */\n" +
				"export default (a: { p: string, w: boolean }) => a.w ? tgp.write_file(a.p, 'x') : tgp.read_file(a.p);\n"})
			for _, p := range refused {
				raw, _ := json.Marshal(map[string]string{"path": p})
				_, ferr := k.Call(context.Background(), "read_file", raw)
				if !errors.Is(ferr, fs.ErrPermission) || !errors.Is(ferr, vfs.ErrViolation) {
					t.Fatalf("read_file %q: %v (want a sandbox violation matching fs.ErrPermission)", p, ferr)
				}
				for _, write := range []bool{false, true} {
					out := call(t, k, "exec_tool", map[string]any{"path": "tools/peek.ts", "args": map[string]any{"p": p, "w": write}}).Value.(*sandbox.Outcome)
					if out.Success || out.Error == nil || out.Error.Kind != sandbox.KindSecurity {
						b, _ := json.Marshal(out)
						t.Fatalf("bridge %q (write=%v): the file tools refuse it, the bridge gave %s", p, write, b)
					}
				}
			}
			// What the file tools allow, the bridge allows.
			out := call(t, k, "exec_tool", map[string]any{"path": "tools/peek.ts", "args": map[string]any{"p": "tools/./peek.ts", "w": false}}).Value.(*sandbox.Outcome)
			if !out.Success || !strings.Contains(out.Result.(string), "Peek") {
				t.Fatalf("bridge read of an allowed path: %+v", out)
			}
		})
	}
}

// TestViolationErrorsMatchOneContract: every layer's refusal matches
// fs.ErrPermission and vfs.ErrViolation through errors.Is.
func TestViolationErrorsMatchOneContract(t *testing.T) {
	fsys, err := vfs.NewOS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, verr := fsys.Resolve("../x")
	_, terr := tools.AgentPath(fsys, true, "path", "a/../b")
	_, gerr := tools.AgentPath(fsys, false, "path", ".git/HEAD")
	for name, e := range map[string]error{"vfs": verr, "tools ..": terr, "tools .git": gerr} {
		if e == nil || !errors.Is(e, fs.ErrPermission) || !errors.Is(e, vfs.ErrViolation) {
			t.Fatalf("%s: %v does not match the violation contract", name, e)
		}
	}
}
