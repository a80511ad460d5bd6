package sandbox

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/vfs"
)

// vfsAdapter is the FS a kernel gives the sandbox: the jailed VFS.
type vfsAdapter struct{ f *vfs.FS }

func (a vfsAdapter) ReadFile(p string) ([]byte, error) { return a.f.ReadFile(p) }
func (a vfsAdapter) WriteFile(p string, b []byte) error {
	return a.f.WriteFile(p, b, 0o644)
}
func (a vfsAdapter) ListFiles(dir string) ([]string, error) {
	var out []string
	err := a.f.Walk(dir, func(rel string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func newFS(t testing.TB, files map[string]string) vfsAdapter {
	t.Helper()
	f := vfs.NewMemory()
	for p, c := range files {
		if err := f.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return vfsAdapter{f}
}

func exec(t testing.TB, r *Runner, fsys FS, path string, args any) *Outcome {
	t.Helper()
	out, err := r.Exec(context.Background(), Request{Path: path, Args: args, FS: fsys})
	if err != nil {
		t.Fatalf("host error: %v", err)
	}
	return out
}

const fibTool = `/** Fibonacci. */
export default function fib(args: { n: number }): number {
  const f = (n: number): number => (n < 2 ? n : f(n - 1) + f(n - 2));
  return f(args.n);
}
`

func TestTGPPlanCases(t *testing.T) {
	// No case here is about time: a loaded machine may take seconds.
	r := New(WithTimeout(time.Minute), WithAllowedImports(StdModule))
	fsys := newFS(t, map[string]string{
		"tools/math/fib.ts": fibTool,
		"tools/lib/math.ts": "export function double(n: number) { return n * 2; }\nexport const PI = 3.14;\n",
		"tools/calc.ts":     "const { double, PI } = require('./lib/math');\nexport default function (args: { val: number }) { return double(args.val) + PI; }\n",
		"data.json":         `{"secret": 42}`,
		"tools/reader.ts":   "export default async function () { const content = await tgp.read_file('data.json'); return JSON.parse(content); }\n",
		"tools/std.ts":      "import { sum, slugify } from '@tgp/std';\nexport default () => ({ s: sum([1, 2, 3]), g: slugify('Hello World!') });\n",
	})
	if out := exec(t, r, fsys, "tools/math/fib.ts", map[string]any{"n": 10}); !out.Success || out.Result != float64(55) {
		t.Fatalf("fib: %+v", out)
	}
	if out := exec(t, r, fsys, "tools/calc.ts", map[string]any{"val": 10}); !out.Success || out.Result != 23.14 {
		t.Fatalf("calc: %+v %+v", out, out.Error)
	}
	out := exec(t, r, fsys, "tools/reader.ts", nil)
	if m, ok := out.Result.(map[string]any); !out.Success || !ok || m["secret"] != float64(42) {
		t.Fatalf("reader: %+v %+v", out, out.Error)
	}
	out = exec(t, r, fsys, "tools/std.ts", nil)
	if m, ok := out.Result.(map[string]any); !ok || m["s"] != float64(6) || m["g"] != "hello-world" {
		t.Fatalf("std: %+v %+v", out, out.Error)
	}
}

func TestSyntaxErrorReportsLine(t *testing.T) {
	r := New()
	fsys := newFS(t, map[string]string{"tools/bad.ts": "export default function () {\n  const x = ;\n}\n"})
	out := exec(t, r, fsys, "tools/bad.ts", nil)
	if out.Success || out.Error.Kind != KindCompile || out.Error.Line != 2 || !strings.Contains(out.Error.Message, "tools/bad.ts:2:") {
		t.Fatalf("%+v", out.Error)
	}
}

func TestRuntimeErrorHasTSPosition(t *testing.T) {
	r := New()
	src := "interface A { x: number }\n\nexport default function (a: A) {\n  const y: number = 1;\n  throw new Error('boom ' + y);\n}\n"
	out := exec(t, r, newFS(t, map[string]string{"tools/t.ts": src}), "tools/t.ts", nil)
	if out.Success || out.Error.Kind != KindRuntime || out.Error.Message != "Error: boom 1" {
		t.Fatalf("%+v", out.Error)
	}
	if out.Error.Path != "tools/t.ts" || out.Error.Line != 5 {
		t.Fatalf("position %s:%d:%d, want tools/t.ts:5 (stack %s)", out.Error.Path, out.Error.Line, out.Error.Column, out.Error.Stack)
	}
}

func TestLogsCaptured(t *testing.T) {
	r := New(WithMaxLogBytes(64))
	out := exec(t, r, newFS(t, map[string]string{"tools/l.ts": "export default () => { console.log('a', 1, {b: 2}); console.warn('w'); tgp.log('t'); for (let i = 0; i < 100; i++) console.log('spam spam spam'); return 1; }"}), "tools/l.ts", nil)
	if !out.Success || out.Logs[0] != `a 1 {"b":2}` || out.Logs[1] != "[warn] w" || out.Logs[2] != "t" || out.Logs[len(out.Logs)-1] != "... [logs truncated]" {
		t.Fatalf("%q", out.Logs)
	}
}

// hostile tools: each must be contained, and the runner must answer the
// next call normally.
func TestHostileTools(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) }))
	defer srv.Close()
	// Only the cases that must time out, or may end any way (memory
	// bombs, regex DoS), get 300 ms (Request.Timeout); the rest, and the
	// calls after each, run with a timeout a loaded machine does not
	// reach: setting 2,000 timers, or fib(10) after a hostile tool, took
	// longer than 300 ms under -race there.
	r := New(WithMemoryLimitMB(64), WithAllowedFetchURLs(srv.URL+"/ok"), WithWriteDirs("tools", "data"), WithTimeout(time.Minute))
	cases := []struct{ name, src, kind string }{
		{"infinite loop", "export default () => { while (true) {} }", KindTimeout},
		{"loop in finally", "export default () => { try { while(true){} } finally { while(true){} } }", KindTimeout},
		{"catch swallowing", "export default () => { for(;;) { try { while(true){} } catch (e) {} } }", KindTimeout},
		{"loop after await", "export default async () => { await Promise.resolve(1); while (true) {} }", KindTimeout},
		{"loop after timer", "export default async () => { await new Promise(r => setTimeout(r, 1)); for(;;){} }", KindTimeout},
		{"never settles", "export default () => new Promise(() => {})", KindRuntime},
		{"memory bomb array", "export default () => { const a: string[] = []; for (let i = 0; ; i++) a.push('x'.repeat(1 << 20) + i); }", ""},
		{"memory bomb string", "export default () => { let s = 'x'; for (;;) s = s + s; }", ""},
		{"repeat amplifier", "export default () => 'x'.repeat(2 ** 28).length", KindMemoryLimit},
		{"padStart amplifier", "export default () => ''.padStart(2 ** 30).length", KindMemoryLimit},
		{"Array(n) amplifier", "export default () => new Array(2 ** 30).fill(0).length", KindResourceLimit},
		{"fill amplifier", "export default () => { const a: number[] = []; a.length = 2 ** 30; return a.fill(1).length; }", KindResourceLimit},
		{"regex DoS", "export default () => /^(a+)+$(?!x)/.test('a'.repeat(40) + 'b')", ""},
		{"unbounded recursion", "export default function f(): number { return f() + 1; }", KindStackOverflow},
		{"eval", "export default () => eval('1+1')", KindSecurity},
		{"Function ctor", "export default () => Function('return this')()", KindSecurity},
		{"constructor escape", "export default () => (function(){}).constructor('return this')()", KindSecurity},
		{"async constructor escape", "export default () => (async function(){}).constructor('return 1')()", KindSecurity},
		{"generator constructor escape", "export default () => (function*(){}).constructor('yield 1')().next()", KindSecurity},
		{"process.env", "export default () => process.env.HOME", KindRuntime},
		{"require fs", "export default () => require('fs').readFileSync('/etc/passwd', 'utf8')", KindModuleNotFound},
		{"require child_process", "export default () => require('child_process')", KindModuleNotFound},
		{"read outside the root", "export default () => tgp.read_file('../../etc/passwd')", KindSecurity},
		{"write outside allowed dirs", "export default () => tgp.write_file('meta.json', '{}')", KindSecurity},
		{"fetch not allowed", "export default async () => (await tgp.fetch('http://evil.example.com/')).status", KindSecurity},
		{"require escape", "export default () => require('../../../etc/passwd')", KindSecurity},
		{"prototype pollution stays inside", "export default () => { (Object.prototype as any).polluted = 1; return 1; }", "ok"},
		{"globalThis poking", "export default () => typeof (globalThis as any).process + typeof (globalThis as any).require", "ok"},
		{"cyclic result", "export default () => { const a: any = {}; a.self = a; return a; }", KindNotSerializable},
		{"function result", "export default () => ({ f: () => 1 })", KindNotSerializable},
		{"bigint result", "export default () => ({ n: 10n })", KindNotSerializable},
		{"timer flood", "export default () => { for (let i = 0; i < 2000; i++) setTimeout(() => {}, 100000); }", KindRuntime},
		{"unhandled rejection", "export default () => { Promise.reject(new Error('lost')); return 1; }", KindUnhandledRejected},
	}
	before := runtime.NumGoroutine()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := Request{Path: "tools/h.ts", FS: newFS(t, map[string]string{"tools/h.ts": c.src})}
			if c.kind == KindTimeout || c.kind == "" {
				req.Timeout = 300 * time.Millisecond
			}
			out, err := r.Exec(context.Background(), req)
			if err != nil {
				t.Fatalf("host error: %v", err)
			}
			switch c.kind {
			case "ok":
				if !out.Success {
					t.Fatalf("%+v", out.Error)
				}
			case "":
				if out.Success {
					t.Fatalf("hostile tool succeeded: %+v", out)
				}
			default:
				if out.Success || out.Error.Kind != c.kind {
					t.Fatalf("want %s, got success=%v %+v", c.kind, out.Success, out.Error)
				}
			}
			// The runner that ran it answers the next call (with a
			// timeout a loaded machine does not reach: the question is
			// whether it answers, not how fast).
			ok, err := r.Exec(context.Background(), Request{Path: "tools/f.ts", Args: map[string]any{"n": 10},
				FS: newFS(t, map[string]string{"tools/f.ts": fibTool}), Timeout: time.Minute})
			if err != nil || ok.Result != float64(55) {
				t.Fatalf("runner broken after %s: %+v %v", c.name, ok, err)
			}
		})
	}
	// The pollution of one run is not seen by the next: fresh runtimes.
	out := exec(t, r, newFS(t, map[string]string{"tools/p.ts": "export default () => ({} as any).polluted === undefined"}), "tools/p.ts", nil)
	if out.Result != true {
		t.Fatal("prototype pollution leaked across runs")
	}
	runtime.GC()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Fatalf("goroutines leaked: %d before, %d after", before, n)
	}
}

func TestFetchAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "yes")
		w.Write([]byte(`{"n": 7}`))
	}))
	defer srv.Close()
	r := New(WithAllowedFetchURLs(srv.URL + "/api/"))
	src := "export default async () => { const r = await tgp.fetch('" + srv.URL + "/api/x'); const j = await r.json(); return { s: r.status, n: j.n, h: r.headers['x-test'] }; }"
	out := exec(t, r, newFS(t, map[string]string{"tools/f.ts": src}), "tools/f.ts", nil)
	m, _ := out.Result.(map[string]any)
	if !out.Success || m["s"] != float64(200) || m["n"] != float64(7) || m["h"] != "yes" {
		t.Fatalf("%+v %+v", out, out.Error)
	}
}

func TestWriteFileAllowedDir(t *testing.T) {
	r := New(WithWriteDirs("data"))
	fsys := newFS(t, map[string]string{"tools/w.ts": "export default () => { tgp.write_file('data/out.txt', 'hi'); return tgp.list_files('data'); }"})
	out := exec(t, r, fsys, "tools/w.ts", nil)
	if !out.Success || len(out.Result.([]any)) != 1 {
		t.Fatalf("%+v %+v", out, out.Error)
	}
	if b, _ := fsys.ReadFile("data/out.txt"); string(b) != "hi" {
		t.Fatal("not written")
	}
}

func TestRequireCyclesAndCache(t *testing.T) {
	r := New()
	fsys := newFS(t, map[string]string{
		"tools/a.ts":       "import { fromA } from './b';\nexport const name = 'a';\nexport default () => fromA() + '|' + require('./c/index').c;",
		"tools/b.ts":       "import { name } from './a';\nexport const fromA = () => 'b saw ' + name;",
		"tools/c/index.ts": "export const c = 'c';",
	})
	out := exec(t, r, fsys, "tools/a.ts", nil)
	if !out.Success || out.Result != "b saw a|c" {
		t.Fatalf("%+v %+v", out, out.Error)
	}
	// A changed file is recompiled.
	_ = fsys.WriteFile("tools/c/index.ts", []byte("export const c = 'C2';"))
	if out := exec(t, r, fsys, "tools/a.ts", nil); out.Result != "b saw a|C2" {
		t.Fatalf("stale cache: %+v", out)
	}
}

func TestSeededRandom(t *testing.T) {
	fsys := newFS(t, map[string]string{"tools/r.ts": "export default () => Math.random()"})
	a := exec(t, New(WithRandSeed(1)), fsys, "tools/r.ts", nil).Result
	b := exec(t, New(WithRandSeed(1)), fsys, "tools/r.ts", nil).Result
	if a != b {
		t.Fatalf("seeded random differs: %v %v", a, b)
	}
}

func TestConcurrentRunsIsolated(t *testing.T) {
	// The loops are stopped by their 3 s (Request.Timeout); fib(15), a
	// few ms alone, has the runner's minute: beside eight spinning loops,
	// on a 2-core machine loaded by others, 3 s were not always enough.
	r := New(WithTimeout(time.Minute))
	fsys := newFS(t, map[string]string{"tools/f.ts": fibTool, "tools/loop.ts": "export default () => { for(;;){} }"})
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if out := exec(t, r, fsys, "tools/f.ts", map[string]any{"n": 15}); out.Result != float64(610) {
				errs <- "fib wrong"
			}
		}()
		go func() {
			defer wg.Done()
			out, err := r.Exec(context.Background(), Request{Path: "tools/loop.ts", FS: fsys, Timeout: 3 * time.Second})
			if err != nil || out.Error == nil || out.Error.Kind != KindTimeout {
				errs <- "loop not stopped"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestMemoryLimitStopsAllocationLoop(t *testing.T) {
	// A timeout a loaded machine does not reach (20 s was, at load 50):
	// the loop ends by itself, so only the memory limit can fail it.
	r := New(WithTimeout(2*time.Minute), WithMemoryLimitMB(32))
	// Tries to hold 100 MB; the watchdog must stop it well before.
	src := "export default () => { const a: string[] = []; for (let i = 0; i < 100; i++) a.push('x'.repeat(1 << 20) + i); return a.length; }"
	out := exec(t, r, newFS(t, map[string]string{"tools/m.ts": src}), "tools/m.ts", nil)
	if out.Success || out.Error.Kind != KindMemoryLimit {
		t.Fatalf("want memory_limit, got %+v %+v", out, out.Error)
	}
}

func TestNodeModulesBundled(t *testing.T) {
	r := New(WithAllowedImports("padder", "esm-math", "missing-pkg"))
	fsys := newFS(t, map[string]string{
		// a CommonJS package with a dependency and a relative require
		"node_modules/padder/package.json":   `{"name":"padder","main":"lib/main.js"}`,
		"node_modules/padder/lib/main.js":    "const rep = require('./rep'); const up = require('upper'); module.exports = (s, n) => up(rep('.', n) + s);",
		"node_modules/padder/lib/rep.js":     "module.exports = (c, n) => Array.from({length: n}, () => c).join('');",
		"node_modules/upper/package.json":    `{"name":"upper"}`,
		"node_modules/upper/index.js":        "module.exports = (s) => s.toUpperCase();",
		"node_modules/esm-math/package.json": `{"name":"esm-math","module":"index.mjs"}`,
		"node_modules/esm-math/index.mjs":    "export function square(x) { return x * x; }",
		"tools/uses.ts":                      "import pad from 'padder';\nimport { square } from 'esm-math';\nexport default () => pad('ab', 2) + square(3);\n",
		"tools/missing.ts":                   "export default () => require('missing-pkg');\n",
		"tools/notallowed.ts":                "export default () => require('upper');\n",
	})
	if out := exec(t, r, fsys, "tools/uses.ts", nil); !out.Success || out.Result != "..AB9" {
		t.Fatalf("%+v %+v", out, out.Error)
	}
	if out := exec(t, r, fsys, "tools/missing.ts", nil); out.Success || out.Error.Kind != KindModuleNotFound || !strings.Contains(out.Error.Message, "not installed") {
		t.Fatalf("%+v", out.Error)
	}
	if out := exec(t, r, fsys, "tools/notallowed.ts", nil); out.Success || out.Error.Kind != KindModuleNotFound || !strings.Contains(out.Error.Message, "allowed_imports") {
		t.Fatalf("%+v", out.Error)
	}
}

// Invalid UTF-8 made esbuild loop forever (found by FuzzAnalyze); it is a
// compile error at the bad byte now.
func TestInvalidUTF8IsACompileError(t *testing.T) {
	out := exec(t, New(), newFS(t, map[string]string{"tools/u.ts": "export default () => 1;\nconst s = \"\xe0\xc0\xc0\";\n"}), "tools/u.ts", nil)
	if out.Success || out.Error.Kind != KindCompile || out.Error.Line != 2 || !strings.Contains(out.Error.Message, "UTF-8") {
		t.Fatalf("%+v", out.Error)
	}
}
