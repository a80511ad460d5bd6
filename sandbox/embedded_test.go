package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// zodDateTool uses what agents reach for first: a zod schema (parse,
// safeParse errors, z.infer) and date-fns (format, addDays).
const zodDateTool = `import { z } from 'zod';
import { addDays, format } from 'date-fns';

const Args = z.object({ name: z.string().min(1), days: z.number().int().nonnegative() });
type Args = z.infer<typeof Args>;

/** Schedules a reminder. */
export default function (raw: unknown) {
  const bad = Args.safeParse({ name: '', days: -1 });
  const a: Args = Args.parse(raw);
  const when = addDays(new Date(Date.UTC(2024, 0, 30, 12)), a.days);
  return { who: a.name, when: format(when, 'yyyy-MM-dd'), errors: bad.success ? [] : bad.error.issues.map((i) => i.path.join('.')) };
}
`

// TestEmbeddedZodAndDateFns: with no node_modules anywhere (a memory
// root), zod and date-fns load from the binary, in both isolation modes;
// a zod parse failure is the tool's runtime error naming the field.
func TestEmbeddedZodAndDateFns(t *testing.T) {
	for _, mode := range []string{IsolationInProc, IsolationProcess} {
		t.Run(mode, func(t *testing.T) {
			// Loading both bundles under -race took more than the default
			// 5 s on a loaded machine: this test is about where they load
			// from, not about how fast.
			opts := []Option{WithAllowedImports("zod", "date-fns"), WithTimeout(time.Minute)}
			var r *Runner
			if mode == IsolationProcess {
				r = processRunner(t, opts...)
			} else {
				r = New(opts...)
			}
			fsys := newFS(t, map[string]string{"tools/remind.ts": zodDateTool})
			out := exec(t, r, fsys, "tools/remind.ts", map[string]any{"name": "ada", "days": 3})
			if !out.Success {
				t.Fatalf("%+v", out.Error)
			}
			b, _ := json.Marshal(out.Result)
			if string(b) != `{"errors":["name","days"],"when":"2024-02-02","who":"ada"}` {
				t.Fatalf("result %s", b)
			}
			out = exec(t, r, fsys, "tools/remind.ts", map[string]any{"name": "ada", "days": "soon"})
			if out.Success || out.Error == nil || !strings.Contains(out.Error.Message, "days") {
				t.Fatalf("a zod parse error must fail the run naming the field: %+v", out)
			}
		})
	}
}

// TestEmbeddedNeedsAllowing: a built-in package is still subject to
// sandbox.allowed_imports.
func TestEmbeddedNeedsAllowing(t *testing.T) {
	out := exec(t, New(), newFS(t, map[string]string{"tools/z.ts": "import { z } from 'zod';\nexport default () => z.string().parse('x');\n"}), "tools/z.ts", nil)
	if out.Success || out.Error == nil || !strings.Contains(out.Error.Message, "allowed_imports") {
		t.Fatalf("%+v", out)
	}
}

// TestEmbeddedPackagesMatchManifest: the embedded bundles are exactly the
// ones `make vendor-js` produced for the pinned versions (sha256 in the
// manifest), with a license each.
func TestEmbeddedPackagesMatchManifest(t *testing.T) {
	pkgs := EmbeddedPackages()
	names := []string{}
	for _, p := range pkgs {
		names = append(names, p.Name+"@"+p.Version)
		js, err := vendorJS.ReadFile("vendorjs/" + p.File)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(js)
		if hex.EncodeToString(sum[:]) != p.SHA256 {
			t.Fatalf("%s: embedded bundle does not match the manifest: run make vendor-js", p.Name)
		}
		if lic, err := vendorJS.ReadFile("vendorjs/" + p.Name + ".LICENSE"); err != nil || len(lic) == 0 {
			t.Fatalf("%s: no license: %v", p.Name, err)
		}
	}
	if strings.Join(names, ",") != "date-fns@3.6.0,zod@3.23.8" {
		t.Fatalf("embedded packages %v", names)
	}
}

// TestArrayWrapperKeepsSemantics: the length cap on Array(n) must not
// change what tools see of Array; it was a Proxy, on which goja's
// instanceof throws, so "x instanceof Array" (zod's parser) failed.
func TestArrayWrapperKeepsSemantics(t *testing.T) {
	src := "class X extends Array {}\nexport default () => [[] instanceof Array, Array.isArray([]), new Array(3).length, Array(3).length, " +
		"new X() instanceof X, new X() instanceof Array, [].constructor === Array, Array.of(1, 2).length, Array.from([1, 2, 3]).length, " +
		"Array.name, Array.length, (() => { try { new Array(1e9); return 'allowed'; } catch (e) { return e.name; } })(), " +
		"Array.prototype === Object.getPrototypeOf([]), typeof Array[Symbol.species]];\n"
	out := exec(t, New(), newFS(t, map[string]string{"tools/a.ts": src}), "tools/a.ts", nil)
	b, _ := json.Marshal(out.Result)
	if !out.Success || string(b) != `[true,true,3,3,true,true,true,2,3,"Array",1,"RangeError",true,"function"]` {
		t.Fatalf("%s %+v", b, out.Error)
	}
}

// BenchmarkZodExec: a zod-validating tool, cold (a new Runner: the
// embedded bundle is compiled on first require) and warm (compiled once,
// evaluated per run), beside a tool without imports.
func BenchmarkZodExec(b *testing.B) {
	fsys := newFS(b, map[string]string{"tools/remind.ts": zodDateTool, "tools/plain.ts": "/** Plain. */\nexport default (a: { name: string }) => ({ who: a.name });\n"})
	args := map[string]any{"name": "ada", "days": 3}
	b.Run("zod+date-fns/cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if out := exec(b, New(WithAllowedImports("zod", "date-fns")), fsys, "tools/remind.ts", args); !out.Success {
				b.Fatal(out.Error)
			}
		}
	})
	warm := New(WithAllowedImports("zod", "date-fns"))
	b.Run("zod+date-fns/warm", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if out := exec(b, warm, fsys, "tools/remind.ts", args); !out.Success {
				b.Fatal(out.Error)
			}
		}
	})
	b.Run("no-imports/warm", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if out := exec(b, warm, fsys, "tools/plain.ts", args); !out.Success {
				b.Fatal(out.Error)
			}
		}
	})
}

// TestModulesDir: an allowed package missing from the toolbox is bundled
// from the host's sandbox.modules_dir (in a memory root, both isolation
// modes); a path climbing out of it is refused.
func TestModulesDir(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "shout", "lib"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "shout", "package.json"), []byte(`{"name":"shout","main":"lib/index.js"}`), 0o644))
	must(os.WriteFile(filepath.Join(dir, "shout", "lib", "index.js"), []byte("exports.shout = (s) => String(s).toUpperCase() + '!';\n"), 0o644))
	for _, mode := range []string{IsolationInProc, IsolationProcess} {
		t.Run(mode, func(t *testing.T) {
			opts := []Option{WithAllowedImports("shout"), WithModulesDir(dir)}
			var r *Runner
			if mode == IsolationProcess {
				r = processRunner(t, opts...)
			} else {
				r = New(opts...)
			}
			out := exec(t, r, newFS(t, map[string]string{"tools/s.ts": "import { shout } from 'shout';\nexport default () => shout('hi');\n"}), "tools/s.ts", nil)
			if !out.Success || out.Result != "HI!" {
				t.Fatalf("%+v %+v", out.Result, out.Error)
			}
		})
	}
	if _, err := (hostModules{dir: dir}).ReadFile("node_modules/../../etc/passwd"); err == nil {
		t.Fatal("read above sandbox.modules_dir")
	}
}
