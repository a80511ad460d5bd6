package kernel

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/tools"
)

// sqlKernel boots a kernel on SQLite (file) or the test PostgreSQL with a
// users table holding Alice and Bob.
func sqlKernel(t testing.TB, driver string, opts ...Option) *Kernel {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "db.sqlite")
	if driver == "postgres" {
		if pgDSN == "" {
			t.Skip("PostgreSQL not available (make test sets it up)")
		}
		dsn = pgDSN
	}
	k, err := New(context.Background(), append([]Option{WithEnviron([]string{"TGP_SQL_DSN=" + dsn}), WithRoot(t.TempDir()),
		WithSetting("sql.driver", driver), WithSetting("sandbox.timeout", "1s")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	for _, q := range []string{"DROP TABLE IF EXISTS users", "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)",
		"INSERT INTO users (id, name) VALUES (1, 'Alice')", "INSERT INTO users (id, name) VALUES (2, 'Bob')"} {
		raw, _ := json.Marshal(map[string]any{"sql": q})
		if _, err := k.Call(context.Background(), "exec_sql", raw); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return k
}

func runTool(t testing.TB, k *Kernel, path, src string, args any) *sandbox.Outcome {
	t.Helper()
	if err := k.FS().WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"path": path, "args": args})
	res, err := k.Call(context.Background(), "exec_tool", raw)
	if err != nil {
		t.Fatal(err)
	}
	return res.Value.(*sandbox.Outcome)
}

func names(t *testing.T, k *Kernel) string {
	t.Helper()
	res, err := k.Call(context.Background(), "exec_sql", json.RawMessage(`{"sql":"SELECT name FROM users ORDER BY name"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.Value.(map[string]any)["rows"].([]map[string]any) {
		out = append(out, r["name"].(string))
	}
	return strings.Join(out, ",")
}

func TestSQLIntegration(t *testing.T) {
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			k := sqlKernel(t, driver)
			out := runTool(t, k, "tools/users.ts", "/** Lists users. */\nexport default async function () {\n  return await tgp.exec_sql('SELECT name FROM users ORDER BY name', []);\n}\n", nil)
			raw, _ := json.Marshal(out.Result)
			if !out.Success || string(raw) != `[{"name":"Alice"},{"name":"Bob"}]` {
				t.Fatalf("select: %s %+v", raw, out.Error)
			}
			out = runTool(t, k, "tools/throw.ts", "/** Inserts then throws. */\nexport default async function () {\n  await tgp.exec_sql(\"INSERT INTO users (id, name) VALUES (3, 'Charlie')\", []);\n  throw new Error('oops');\n}\n", nil)
			if out.Success || names(t, k) != "Alice,Bob" {
				t.Fatalf("insert+throw not rolled back: %+v, table %s", out, names(t, k))
			}
			out = runTool(t, k, "tools/loop.ts", "/** Inserts then loops. */\nexport default function () {\n  tgp.exec_sql(\"INSERT INTO users (id, name) VALUES (4, 'Dave')\", []);\n  while (true) {}\n}\n", nil)
			if out.Success || out.Error.Kind != sandbox.KindTimeout || names(t, k) != "Alice,Bob" {
				t.Fatalf("insert+loop not rolled back: %+v, table %s", out.Error, names(t, k))
			}
			out = runTool(t, k, "tools/add.ts", "/** Adds a user. */\nexport default function (a: { id: number; name: string }) {\n  return tgp.exec_sql('INSERT INTO users (id, name) VALUES (?, ?)', [a.id, a.name]);\n}\n", map[string]any{"id": 5, "name": "Erin"})
			if !out.Success || names(t, k) != "Alice,Bob,Erin" {
				t.Fatalf("insert+success not committed: %+v, table %s", out.Error, names(t, k))
			}
			// read_only refuses writes.
			raw, _ = json.Marshal(map[string]any{"path": "tools/add.ts", "args": map[string]any{"id": 6, "name": "Frank"}, "read_only": true})
			res, err := k.Call(context.Background(), "exec_tool", raw)
			if err != nil || res.Value.(*sandbox.Outcome).Success || names(t, k) != "Alice,Bob,Erin" {
				t.Fatalf("read_only run wrote: %v %+v", err, res.Value)
			}
		})
	}
}

func TestSQLConcurrentRunsIsolated(t *testing.T) {
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			k := sqlKernel(t, driver, WithSetting("sandbox.timeout", "30s"))
			// The writer inserts, says so, and holds its transaction open
			// until the test has looked through another run: a handshake,
			// not a sleep, so a slow machine cannot reorder the two.
			writerSrc := `/** Slow insert. */
export default async function () {
  await tgp.exec_sql("INSERT INTO users (id, name) VALUES (7, 'Ghost')", []);
  tgp.write_file('data/inserted', 'y');
  for (let i = 0; i < 1000; i++) {
    try { await tgp.read_file('data/release'); return 'done'; } catch (e) {}
    await new Promise((r) => setTimeout(r, 20));
  }
  return 'never released';
}
`
			if err := k.FS().WriteFile("tools/slow.ts", []byte(writerSrc), 0o644); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Add(1)
			var writer *sandbox.Outcome
			go func() {
				defer wg.Done()
				res, err := k.Call(context.Background(), "exec_tool", json.RawMessage(`{"path":"tools/slow.ts"}`))
				if err == nil {
					writer = res.Value.(*sandbox.Outcome)
				}
			}()
			for i := 0; ; i++ {
				if _, err := k.FS().Stat("data/inserted"); err == nil {
					break
				}
				if i > 2000 {
					t.Fatal("the writer never inserted")
				}
				time.Sleep(10 * time.Millisecond)
			}
			reader := runTool(t, k, "tools/peek.ts", "/** Peek. */\nexport default () => tgp.exec_sql(\"SELECT name FROM users WHERE name = 'Ghost'\", []);\n", nil)
			if err := k.FS().WriteFile("data/release", []byte("y"), 0o644); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			raw, _ := json.Marshal(reader.Result)
			if !reader.Success || string(raw) != "[]" {
				t.Fatalf("reader saw uncommitted rows: %s %+v", raw, reader.Error)
			}
			if writer == nil || !writer.Success || writer.Result != "done" || !strings.Contains(names(t, k), "Ghost") {
				t.Fatalf("writer: %+v", writer)
			}
		})
	}
}

func TestHostSuppliedDB(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE kv (k TEXT, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	k, err := New(context.Background(), WithEnviron([]string{}), WithRoot(t.TempDir()), WithDB(db, "sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := k.Call(context.Background(), "exec_sql", json.RawMessage(`{"sql":"INSERT INTO kv VALUES (?, ?)","params":["a","1"]}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.Value)
	if !strings.Contains(string(raw), `"rows_affected":1`) {
		t.Fatalf("%s", raw)
	}
	_ = k.Shutdown(context.Background())
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM kv").Scan(&n); err != nil || n != 1 {
		t.Fatalf("host db closed or row missing: %d %v", n, err)
	}
	_, err = k.Call(context.Background(), "exec_sql", json.RawMessage(`{"sql":"SELEC nonsense"}`))
	if tools.KindOf(err) != tools.KindExecutionFailed {
		t.Fatalf("%v", err)
	}
}

func BenchmarkExecToolIndexedSelect(b *testing.B) {
	for _, driver := range []string{"sqlite", "postgres"} {
		b.Run(driver, func(b *testing.B) {
			k := sqlKernel(b, driver)
			if err := k.FS().WriteFile("tools/get.ts", []byte("/** Get a user. */\nexport default (a: { id: number }) => tgp.exec_sql('SELECT name FROM users WHERE id = ?', [a.id]);\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			args := json.RawMessage(`{"path":"tools/get.ts","args":{"id":1}}`)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				res, err := k.Call(context.Background(), "exec_tool", args)
				if err != nil || !res.Value.(*sandbox.Outcome).Success {
					b.Fatal(err, res.Value)
				}
				lat = append(lat, time.Since(start))
			}
			b.ReportMetric(float64(p50(lat).Microseconds()), "p50-µs")
		})
	}
}

func p50(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration{}, d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
