package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

type lookupArg struct {
	ID   int    `json:"id"`
	Note string `json:"note,omitempty"`
}

type user struct {
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Admin bool     `json:"admin,omitempty"`
}

func hostFuncs(t *testing.T, calls *[]string) []HostFunc {
	t.Helper()
	lookup, err := NewHostFunc("lookup_user", func(ctx context.Context, a lookupArg) (user, error) {
		*calls = append(*calls, "lookup")
		if ctx.Err() != nil {
			return user{}, ctx.Err()
		}
		if a.ID != 7 {
			return user{}, errors.New("no user with id " + json.Number(itoa(a.ID)).String())
		}
		return user{Name: "ada", Tags: []string{"x"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	crash, err := NewHostFunc("crash", func(ctx context.Context, a struct{}) (int, error) { panic("host bug") })
	if err != nil {
		t.Fatal(err)
	}
	return []HostFunc{lookup, crash}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A host function registered with NewHostFunc is tgp.<name> in both
// isolation modes, with the same outcomes: JSON in and out checked
// against its Go types, the host's error (and a host panic) an exception
// with the message, an unregistered name refused by name.
func TestHostFuncBothModes(t *testing.T) {
	tools := map[string]string{
		"ok": `export default () => tgp.lookup_user({ id: 7 });`,
		"host error": `export default () => {
  try { tgp.lookup_user({ id: 8 }); } catch (e) { return 'caught: ' + e.message; }
  return 'no throw';
}`,
		"bad field": `export default () => tgp.lookup_user({ id: 7, name: 'x' });`,
		"bad type":  `export default () => tgp.lookup_user({ id: 'seven' });`,
		"panic":     `export default () => { try { tgp.crash({}); } catch (e) { return String(e.message); } };`,
		"unknown":   `export default () => tgp.exec_shell('ls');`,
		"uncaught":  `export default () => tgp.lookup_user({ id: 1 });`,
		"not tgp":   `export default () => ({} as any).lookup();`,
	}
	var calls []string
	fs := hostFuncs(t, &calls)
	runners := map[string]*Runner{
		"inproc":  New(WithTimeout(10*time.Second), WithHostFuncs(fs...)),
		"process": processRunner(t, WithTimeout(10*time.Second), WithHostFuncs(fs...)),
	}
	want := map[string]string{
		"ok":         `"result":{"name":"ada","tags":["x"]}`,
		"host error": `"result":"caught: tgp.lookup_user: no user with id 8"`,
		"bad field":  `GoError: tgp.lookup_user: the argument does not fit { id: number; note?: string }: unknown field \"name\"`,
		"bad type":   `id: expected number, got string`,
		"panic":      `"result":"tgp.crash: host function panicked: host bug"`,
		"unknown":    `"message":"TypeError: tgp.exec_shell is not a function of this sandbox: the host registered no such host function (host functions: crash, lookup_user)"`,
		"uncaught":   `"kind":"runtime_error","message":"GoError: tgp.lookup_user: no user with id 1"`,
		"not tgp":    `"message":"TypeError: Object has no member 'lookup'"`,
	}
	got := map[string]map[string]string{}
	for mode, r := range runners {
		got[mode] = map[string]string{}
		for name, src := range tools {
			out, err := r.Exec(context.Background(), Request{Path: "tools/t.ts", Source: []byte(src)})
			if err != nil {
				t.Fatalf("%s %s: %v", mode, name, err)
			}
			out.DurationMS = 0
			if out.Error != nil {
				out.Error.Stack = ""
			}
			b, _ := json.Marshal(out)
			got[mode][name] = string(b)
			if !strings.Contains(string(b), want[name]) {
				t.Errorf("%s %s: %s, want %s", mode, name, b, want[name])
			}
		}
	}
	for name := range tools {
		if got["inproc"][name] != got["process"][name] {
			t.Errorf("%s differs:\ninproc:  %s\nprocess: %s", name, got["inproc"][name], got["process"][name])
		}
	}
	if !strings.Contains(got["inproc"]["unknown"], `"success":false`) {
		t.Fatalf("unknown: %s", got["inproc"]["unknown"])
	}
}

// A worker asking for a function the kernel did not register is refused
// by the parent, whatever the worker claims.
func TestHostFuncParentRefusesUnknown(t *testing.T) {
	var calls []string
	r := New(WithHostFuncs(hostFuncs(t, &calls)...))
	rep := serveCall(context.Background(), r, nil, Request{}, &frame{Op: "host_func", Func: "exec_shell", Arg: json.RawMessage(`"ls"`)})
	if !strings.Contains(rep.Err, "tgp.exec_shell is not a host function of this kernel (registered: crash, lookup_user)") {
		t.Fatalf("reply: %+v", rep)
	}
}

func TestHostFuncNamesAndTypes(t *testing.T) {
	for _, bad := range []string{"", "fetch", "exec_sql", "a-b", "1x", "a.b"} {
		if _, err := NewHostFunc(bad, func(context.Context, int) (int, error) { return 0, nil }); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	f, _ := NewHostFunc("ok", func(context.Context, int) (int, error) { return 0, nil })
	r := New(WithHostFuncs(f, f))
	if _, err := r.Exec(context.Background(), Request{Path: "t.ts", Source: []byte("export default () => 1;")}); err == nil {
		t.Fatal("a name registered twice was taken")
	}
	type inner struct {
		At time.Time `json:"at"`
	}
	type rec struct {
		inner
		N     *int              `json:"n"`
		M     map[string]bool   `json:"m,omitempty"`
		Raw   json.RawMessage   `json:"raw"`
		Odd   string            `json:"odd-name"`
		Skip  int               `json:"-"`
		Bytes []byte            `json:"bytes"`
		List  [][]float64       `json:"list"`
		Any   any               `json:"any"`
		Next  *rec              `json:"next"`
		Arr   [2]string         `json:"arr"`
		Deep  map[string][]user `json:"deep"`
	}
	h, _ := NewHostFunc("typed", func(context.Context, rec) ([]user, error) { return nil, nil })
	wantArg := `{ at: string; n: number | null; m?: Record<string, boolean> | null; raw: unknown; "odd-name": string; bytes: string; ` +
		`list: (number[] | null)[] | null; any: unknown; next: unknown | null; arr: string[]; deep: Record<string, ({ name: string; tags: string[] | null; admin?: boolean })[] | null> | null }`
	if h.ArgType != wantArg {
		t.Fatalf("arg type:\n%s\nwant\n%s", h.ArgType, wantArg)
	}
	if h.ResultType != `({ name: string; tags: string[] | null; admin?: boolean })[] | null` {
		t.Fatalf("result type %s", h.ResultType)
	}
	d := Declarations([]HostFunc{h, f})
	if !strings.Contains(d, "  ok(arg: number): number;\n") || strings.Index(d, "ok(") > strings.Index(d, "typed(") {
		t.Fatalf("declarations:\n%s", d)
	}
}
