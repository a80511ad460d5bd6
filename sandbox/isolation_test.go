package sandbox

import (
	"testing"
	"time"
)

func TestProcessSmoke(t *testing.T) {
	r := processRunner(t, WithTimeout(2*time.Second), WithWriteDirs("data"))
	fsys := newFS(t, map[string]string{
		"tools/math/fib.ts": fibTool,
		"data.json":         `{"secret": 42}`,
		"tools/reader.ts":   "export default async function () { const content = await tgp.read_file('data.json'); tgp.write_file('data/x.txt', 'hi'); console.log('hey'); return [JSON.parse(content), tgp.list_files('data')]; }\n",
	})
	out := exec(t, r, fsys, "tools/math/fib.ts", map[string]any{"n": 10})
	if !out.Success || out.Result != float64(55) {
		t.Fatalf("%+v %+v", out, out.Error)
	}
	out = exec(t, r, fsys, "tools/reader.ts", nil)
	t.Logf("%+v %+v", out, out.Error)
	out = exec(t, r, newFS(t, map[string]string{"tools/h.ts": "export default () => new Float64Array(2e8).length"}), "tools/h.ts", nil)
	t.Logf("%+v %+v", out, out.Error)
	out = exec(t, r, newFS(t, map[string]string{"tools/h.ts": "export default () => { let s = 'x'; for (;;) s = s + s; }"}), "tools/h.ts", nil)
	t.Logf("%+v %+v", out, out.Error)
	out = exec(t, r, newFS(t, map[string]string{"tools/h.ts": "export default () => { for (;;) {} }"}), "tools/h.ts", nil)
	t.Logf("%+v %+v", out, out.Error)
	out = exec(t, r, fsys, "tools/math/fib.ts", map[string]any{"n": 10})
	t.Logf("%+v %+v", out, out.Error)
}
