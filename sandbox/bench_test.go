package sandbox

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

const trivialTool = "/** Echo. */\nexport default (a: { x: number }) => ({ y: a.x });\n"

// BenchmarkTrivialCold compiles (esbuild + goja) and runs: a new runner per
// iteration, so the program cache is always empty.
func BenchmarkTrivialCold(b *testing.B) {
	fsys := newFS(b, map[string]string{"tools/t.ts": trivialTool})
	for i := 0; i < b.N; i++ {
		r := New()
		if out, _ := r.Exec(context.Background(), Request{Path: "tools/t.ts", Args: map[string]any{"x": i}, FS: fsys}); !out.Success {
			b.Fatal(out.Error)
		}
	}
}

// BenchmarkTrivialWarm runs a cached program in a fresh runtime.
func BenchmarkTrivialWarm(b *testing.B) {
	fsys := newFS(b, map[string]string{"tools/t.ts": trivialTool})
	r := New()
	for i := 0; i < b.N; i++ {
		if out, _ := r.Exec(context.Background(), Request{Path: "tools/t.ts", Args: map[string]any{"x": i}, FS: fsys}); !out.Success {
			b.Fatal(out.Error)
		}
	}
}

func BenchmarkFib25(b *testing.B) {
	fsys := newFS(b, map[string]string{"tools/fib.ts": fibTool})
	r := New()
	for i := 0; i < b.N; i++ {
		if out, _ := r.Exec(context.Background(), Request{Path: "tools/fib.ts", Args: map[string]any{"n": 25}, FS: fsys}); out.Result != float64(75025) {
			b.Fatal(out.Error)
		}
	}
}

func BenchmarkRequireThree(b *testing.B) {
	fsys := newFS(b, map[string]string{
		"tools/lib/a.ts": "export const a = (x: number) => x + 1;",
		"tools/lib/b.ts": "export const b = (x: number) => x * 2;",
		"tools/lib/c.ts": "export const c = (x: number) => x - 3;",
		"tools/main.ts":  "import { a } from './lib/a';\nimport { b } from './lib/b';\nimport { c } from './lib/c';\nexport default (p: { x: number }) => c(b(a(p.x)));\n",
	})
	r := New()
	for i := 0; i < b.N; i++ {
		if out, _ := r.Exec(context.Background(), Request{Path: "tools/main.ts", Args: map[string]any{"x": 1}, FS: fsys}); out.Result != float64(1) {
			b.Fatal(out.Error, out.Result)
		}
	}
}

func BenchmarkConcurrent8(b *testing.B) {
	fsys := newFS(b, map[string]string{"tools/t.ts": trivialTool})
	r := New()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for j := 0; j < 8; j++ {
			wg.Add(1)
			go func(j int) {
				defer wg.Done()
				if out, _ := r.Exec(context.Background(), Request{Path: "tools/t.ts", Args: map[string]any{"x": j}, FS: fsys}); !out.Success {
					errs <- fmt.Errorf("%v", out.Error)
				}
			}(j)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarmExecByIsolation is the warm exec latency of both isolation
// modes side by side (a cached program; in process mode a warm worker and
// one bridge call, which is what most tools make).
func BenchmarkWarmExecByIsolation(b *testing.B) {
	for _, mode := range []string{IsolationInProc, IsolationProcess} {
		for _, tc := range []struct{ name, src string }{
			{"trivial", trivialTool},
			{"read_file", "export default async (a: { x: number }) => (await tgp.read_file('tools/t.ts')).length + a.x;\n"},
		} {
			b.Run(mode+"/"+tc.name, func(b *testing.B) {
				var r *Runner
				if mode == IsolationProcess {
					r = processRunner(b)
				} else {
					r = New()
				}
				fsys := newFS(b, map[string]string{"tools/t.ts": tc.src})
				ctx := context.Background()
				if out, _ := r.Exec(ctx, Request{Path: "tools/t.ts", Args: map[string]any{"x": 1}, FS: fsys}); !out.Success {
					b.Fatal(out.Error)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if out, _ := r.Exec(ctx, Request{Path: "tools/t.ts", Args: map[string]any{"x": i}, FS: fsys}); !out.Success {
						b.Fatal(out.Error)
					}
				}
			})
		}
	}
}
