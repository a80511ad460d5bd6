package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParsePermissions(t *testing.T) {
	const body = "\nexport default () => 1;\n"
	cases := []struct {
		name, src string
		want      *Permissions
		err       string
	}{
		{"none", "export default () => 1;\n", nil, ""},
		{"none but the word", "// permissions are the host's\nexport default () => 'permissions';\n", nil, ""},
		{"full", `export const permissions = { fetch: ["https://api.example.com/v1/"], secrets: ["API"], sql: "read", write: ["data/reports/"] } as const;` + body,
			&Permissions{Fetch: []string{"https://api.example.com/v1/"}, Secrets: []string{"API"}, SQL: SQLRead, Write: []string{"data/reports/"}}, ""},
		{"empty grants nothing", "export const permissions = {};" + body,
			&Permissions{Fetch: []string{}, Secrets: []string{}, SQL: SQLNone, Write: []string{}}, ""},
		{"quoted keys and templates", "export const permissions = { 'sql': `write`, \"fetch\": [`http://127.0.0.1:9/`] };" + body,
			&Permissions{Fetch: []string{"http://127.0.0.1:9/"}, Secrets: []string{}, SQL: SQLWrite, Write: []string{}}, ""},
		{"local export", "const p = { sql: 'none' };\nexport { p as permissions };" + body,
			&Permissions{Fetch: []string{}, Secrets: []string{}, SQL: SQLNone, Write: []string{}}, ""},
		{"computed", "const make = () => ({ sql: 'write' });\nexport const permissions = make();" + body, nil, "object literal"},
		{"variable in a list", "const u = 'https://a.example/';\nexport const permissions = { fetch: [u] };" + body, nil, "string literals"},
		{"template with a hole", "const h = 'a';\nexport const permissions = { fetch: [`https://${h}.example/`] };" + body, nil, "string literals"},
		{"spread", "const base = {};\nexport const permissions = { ...base, sql: 'read' };" + body, nil, "plain keys"},
		{"unknown key", "export const permissions = { fetch: [], shell: ['rm'] };" + body, nil, `unknown key "shell"`},
		{"bad sql", "export const permissions = { sql: 'admin' };" + body, nil, `"none", "read" or "write"`},
		{"bad url", "export const permissions = { fetch: ['https://user@api.example.com/'] };" + body, nil, "userinfo"},
		{"bad write", "export const permissions = { write: ['../etc'] };" + body, nil, "not a directory under the root"},
		{"bad secret", "export const permissions = { secrets: ['A-B'] };" + body, nil, "not a secret name"},
		{"twice", "export const permissions = { sql: 'read', sql: 'write' };" + body, nil, "twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParsePermissions("tools/t.ts", []byte(c.src))
			if c.err != "" {
				var pe *PermissionsError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrPermissions) {
					t.Fatalf("want a PermissionsError with %q, got %v", c.err, err)
				}
				if pe.Line < 1 || pe.Column < 1 {
					t.Fatalf("no position: %+v", pe)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(c.want)
			if string(gj) != string(wj) {
				t.Fatalf("got %s, want %s", gj, wj)
			}
		})
	}
	if _, err := ParsePermissions("tools/t.ts", []byte("export const = ;")); err == nil {
		t.Fatal("a tool that does not compile must be an error")
	}
}

// eachMode runs f with a runner maker for each isolation mode.
func eachMode(t *testing.T, f func(t *testing.T, mk func(...Option) *Runner)) {
	t.Run("inproc", func(t *testing.T) { f(t, func(o ...Option) *Runner { return New(o...) }) })
	t.Run("process", func(t *testing.T) {
		if testing.Short() {
			t.Skip("starts worker processes")
		}
		f(t, func(o ...Option) *Runner { return processRunner(t, append(o, WithTimeout(time.Minute))...) })
	})
}

// hits records the paths a test server was asked for.
type hits struct {
	mu    sync.Mutex
	paths []string
	auth  []string
}

func (h *hits) add(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.paths = append(h.paths, r.URL.RequestURI())
	h.auth = append(h.auth, r.Header.Get("Authorization"))
}

func (h *hits) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.paths, h.auth = nil, nil
}

func (h *hits) seen(sub string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, p := range h.paths {
		if strings.Contains(p, sub) || strings.Contains(h.auth[i], sub) {
			return true
		}
	}
	return false
}

func kindOf(out *Outcome) string {
	if out.Error == nil {
		return ""
	}
	return out.Error.Kind
}

// TestToolLimitedToAPrefix: a tool limited to /a/ cannot fetch /b/, which
// the configuration allows, not even through a redirect; a tool without
// the export still can.
func TestToolLimitedToAPrefix(t *testing.T) {
	h := &hits{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.add(r)
		if r.URL.Path == "/a/redirect" {
			http.Redirect(w, r, "/b/target", http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("path " + r.URL.Path))
	}))
	defer srv.Close()
	limited := "export const permissions = { fetch: ['" + srv.URL + "/a/'] };\n" +
		"export default async (x: { u: string }) => (await tgp.fetch('" + srv.URL + "' + x.u)).text();\n"
	open := "export default async (x: { u: string }) => (await tgp.fetch('" + srv.URL + "' + x.u)).text();\n"
	eachMode(t, func(t *testing.T, mk func(...Option) *Runner) {
		h.reset()
		r := mk(WithAllowedFetchURLs(srv.URL + "/"))
		fsys := newFS(t, map[string]string{"tools/limited.ts": limited, "tools/open.ts": open})
		if out := exec(t, r, fsys, "tools/limited.ts", map[string]any{"u": "/a/x"}); !out.Success || out.Result != "path /a/x" {
			t.Fatalf("allowed fetch: %+v %+v", out, out.Error)
		}
		for _, u := range []string{"/b/x", "/a/../b/x", "/a%2F..%2Fb/x", "/ab"} {
			out := exec(t, r, fsys, "tools/limited.ts", map[string]any{"u": u})
			if out.Success || (kindOf(out) != KindPermissionDenied && kindOf(out) != KindSecurity) {
				t.Fatalf("%s: want a refusal, got %+v %+v", u, out, out.Error)
			}
		}
		if out := exec(t, r, fsys, "tools/limited.ts", map[string]any{"u": "/b/x"}); kindOf(out) != KindPermissionDenied ||
			!strings.Contains(out.Error.Message, "permissions.fetch") {
			t.Fatalf("want permission_denied naming permissions.fetch, got %+v", out.Error)
		}
		if out := exec(t, r, fsys, "tools/limited.ts", map[string]any{"u": "/a/redirect"}); out.Success {
			t.Fatalf("a redirect out of the tool's prefix was followed: %+v", out)
		}
		if h.seen("/b/") {
			t.Fatalf("the server was asked for /b/ on behalf of the limited tool: %v", h.paths)
		}
		if out := exec(t, r, fsys, "tools/open.ts", map[string]any{"u": "/b/x"}); !out.Success || out.Result != "path /b/x" {
			t.Fatalf("a tool without permissions keeps the configuration's policy: %+v %+v", out, out.Error)
		}
	})
}

const secretValue = "s3cr3t-VALUE/with+chars=="

// TestBrokeredSecret: the value reaches the server at the secret's URL
// and nowhere else, and never comes back into the run, even when the
// server echoes it.
func TestBrokeredSecret(t *testing.T) {
	h := &hits{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.add(r)
		auth := r.Header.Get("Authorization")
		w.Header().Set("X-Echo", auth)
		w.Header().Set("X-Echo-B64", base64.StdEncoding.EncodeToString([]byte(strings.TrimPrefix(auth, "Bearer "))))
		_, _ = w.Write([]byte("auth=" + auth + " query=" + r.URL.RawQuery + " path=" + r.URL.Path))
	}))
	defer srv.Close()
	env := map[string]string{"TEST_API_TOKEN": secretValue}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	specs := map[string]SecretSpec{
		"API":     {Env: "TEST_API_TOKEN", URLs: []string{srv.URL + "/api/"}},
		"MISSING": {Env: "TEST_UNSET_TOKEN", URLs: []string{srv.URL + "/api/"}},
	}
	perms := "export const permissions = { fetch: ['" + srv.URL + "/'], secrets: ['API', 'MISSING'] };\n"
	files := map[string]string{
		"tools/good.ts": perms + `export default async () => {
  const k = tgp.secret("API");
  const r = await tgp.fetch("` + srv.URL + `/api/echo?key=" + k, { method: "POST", headers: { Authorization: "Bearer " + k }, body: "token=" + k });
  const text = await r.text();
  tgp.log("got", text, r.headers["x-echo"], k);
  return { text, echo: r.headers["x-echo"], b64: r.headers["x-echo-b64"], k };
};
`,
		"tools/elsewhere.ts": perms + `export default async () => {
  const k = tgp.secret("API");
  try {
    await tgp.fetch("` + srv.URL + `/other/", { headers: { Authorization: "Bearer " + k } });
    return "sent";
  } catch (e) { return String(e); }
};
`,
		"tools/uncaught.ts": perms + `export default async () => (await tgp.fetch("` + srv.URL + `/other/?k=" + tgp.secret("API"))).text();
`,
		"tools/lookalike.ts": perms + `export default async () => (await tgp.fetch("` + srv.URL + `/apix/", { headers: { Authorization: tgp.secret("API") } })).text();
`,
		"tools/unlisted.ts": "export const permissions = { fetch: ['" + srv.URL + "/'] };\nexport default () => tgp.secret('API');\n",
		"tools/noperms.ts":  "export default () => tgp.secret('API');\n",
		"tools/missing.ts":  perms + "export default () => tgp.secret('MISSING');\n",
	}
	eachMode(t, func(t *testing.T, mk func(...Option) *Runner) {
		h.reset()
		r := mk(WithAllowedFetchURLs(srv.URL+"/"), WithSecrets(specs, lookup))
		fsys := newFS(t, files)
		leaks := func(out *Outcome) {
			t.Helper()
			b, _ := json.Marshal(out)
			for _, form := range []string{secretValue, base64.StdEncoding.EncodeToString([]byte(secretValue)), "s3cr3t"} {
				if strings.Contains(string(b), form) {
					t.Fatalf("the secret's value reached the outcome: %s", b)
				}
			}
		}
		out := exec(t, r, fsys, "tools/good.ts", nil)
		leaks(out)
		if !out.Success {
			t.Fatalf("%+v", out.Error)
		}
		if !h.seen("Bearer "+secretValue) || !h.seen("key="+strings.ReplaceAll(secretValue, "/", "/")) {
			t.Fatalf("the server did not get the value: %v %v", h.paths, h.auth)
		}
		res := out.Result.(map[string]any)
		k := res["k"].(string)
		if !strings.HasPrefix(k, "tgp_secret_API_") || !strings.Contains(res["text"].(string), "Bearer "+k) || res["echo"] != "Bearer "+k {
			t.Fatalf("the echo is not the placeholder: %v", res)
		}
		// A second run gets another placeholder.
		if out2 := exec(t, r, fsys, "tools/good.ts", nil); out2.Success && out2.Result.(map[string]any)["k"] == k {
			t.Fatal("the placeholder is the same in two runs")
		}

		before := len(h.paths)
		out = exec(t, r, fsys, "tools/elsewhere.ts", nil)
		leaks(out)
		if msg, _ := out.Result.(string); !out.Success || !strings.Contains(msg, "secret API") || !strings.Contains(msg, "PermissionDenied") {
			t.Fatalf("a fetch outside the secret's URLs: %+v %+v", out.Result, out.Error)
		}
		for _, tool := range []string{"tools/uncaught.ts", "tools/lookalike.ts"} {
			out = exec(t, r, fsys, tool, nil)
			leaks(out)
			if kindOf(out) != KindPermissionDenied || !strings.Contains(out.Error.Message, "API") {
				t.Fatalf("%s: want permission_denied naming API, got %+v", tool, out.Error)
			}
		}
		if len(h.paths) != before {
			t.Fatalf("a refused fetch reached the server: %v", h.paths[before:])
		}

		out = exec(t, r, fsys, "tools/unlisted.ts", nil)
		if kindOf(out) != KindPermissionDenied || !strings.Contains(out.Error.Message, "permissions.secrets") {
			t.Fatalf("an unlisted secret: %+v", out.Error)
		}
		out = exec(t, r, fsys, "tools/noperms.ts", nil)
		if kindOf(out) != KindPermissionDenied {
			t.Fatalf("a tool without permissions asked for a secret: %+v", out.Error)
		}
		out = exec(t, r, fsys, "tools/missing.ts", nil)
		if kindOf(out) != KindSecretUnavailable || !strings.Contains(out.Error.Message, "TEST_UNSET_TOKEN") {
			t.Fatalf("a secret whose variable is unset: %+v", out.Error)
		}
	})
}

// TestRequirePermissions: with the option on, a tool without the export
// does not run; one with it does.
func TestRequirePermissions(t *testing.T) {
	eachMode(t, func(t *testing.T, mk func(...Option) *Runner) {
		r := mk(WithRequirePermissions(true))
		fsys := newFS(t, map[string]string{
			"tools/bare.ts":     "export default () => 1;\n",
			"tools/declared.ts": "export const permissions = {};\nexport default () => 2;\n",
			"tools/broken.ts":   "export const permissions = { sql: 'root' };\nexport default () => 3;\n",
		})
		if out := exec(t, r, fsys, "tools/bare.ts", nil); kindOf(out) != KindPermissionDenied || !strings.Contains(out.Error.Message, "require_permissions") {
			t.Fatalf("%+v", out.Error)
		}
		if out := exec(t, r, fsys, "tools/declared.ts", nil); !out.Success || out.Result != float64(2) {
			t.Fatalf("%+v", out.Error)
		}
		if out := exec(t, r, fsys, "tools/broken.ts", nil); kindOf(out) != KindCompile || out.Error.Line != 1 {
			t.Fatalf("%+v", out.Error)
		}
	})
}

// fakeSQL records statements; readOnly sessions refuse writes the way
// sqldb's do.
type fakeSQL struct {
	mu       sync.Mutex
	readOnly bool
	ran      []string
}

func (s *fakeSQL) Exec(_ context.Context, q string, _ []any) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly && !strings.HasPrefix(q, "SELECT") {
		return nil, errors.New("the session is read-only: writes are refused")
	}
	s.ran = append(s.ran, q)
	return []map[string]any{{"n": 1}}, nil
}

func (s *fakeSQL) ReadOnly() bool { return s.readOnly }

func TestSQLPermissions(t *testing.T) {
	tool := func(mode string) string {
		return "export const permissions = { sql: '" + mode + "' };\nexport default (a: { q: string }) => tgp.exec_sql(a.q);\n"
	}
	eachMode(t, func(t *testing.T, mk func(...Option) *Runner) {
		r := mk()
		fsys := newFS(t, map[string]string{"tools/none.ts": tool("none"), "tools/read.ts": tool("read"), "tools/write.ts": tool("write")})
		run := func(p string, db *fakeSQL, q string) *Outcome {
			out, err := r.Exec(context.Background(), Request{Path: p, FS: fsys, SQL: db, Args: map[string]any{"q": q}})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		if out := run("tools/none.ts", &fakeSQL{}, "SELECT 1"); kindOf(out) != KindPermissionDenied {
			t.Fatalf("sql none: %+v", out.Error)
		}
		writable := &fakeSQL{}
		if out := run("tools/read.ts", writable, "SELECT 1"); kindOf(out) != KindPermissionDenied || len(writable.ran) != 0 {
			t.Fatalf("sql read on a writable session: %+v", out.Error)
		}
		ro := &fakeSQL{readOnly: true}
		if out := run("tools/read.ts", ro, "SELECT 1"); !out.Success {
			t.Fatalf("sql read, a read: %+v", out.Error)
		}
		if out := run("tools/read.ts", ro, "INSERT INTO t VALUES (1)"); kindOf(out) != KindPermissionDenied || len(ro.ran) != 1 {
			t.Fatalf("sql read, a write: %+v", out.Error)
		}
		if out := run("tools/write.ts", writable, "INSERT INTO t VALUES (1)"); !out.Success || len(writable.ran) != 1 {
			t.Fatalf("sql write: %+v", out.Error)
		}
	})
}

func TestWritePermissions(t *testing.T) {
	eachMode(t, func(t *testing.T, mk func(...Option) *Runner) {
		r := mk(WithWriteDirs("tools", "data"))
		fsys := newFS(t, map[string]string{
			"tools/w.ts": "export const permissions = { write: ['data/reports/'] };\nexport default (a: { p: string }) => { tgp.write_file(a.p, 'x'); return a.p; };\n",
		})
		if out := exec(t, r, fsys, "tools/w.ts", map[string]any{"p": "data/reports/q1.txt"}); !out.Success {
			t.Fatalf("%+v", out.Error)
		}
		for p, kind := range map[string]string{"data/other.txt": KindPermissionDenied, "data/reportsx/a": KindPermissionDenied,
			"tools/x.ts": KindPermissionDenied, "meta.json": KindSecurity} {
			if out := exec(t, r, fsys, "tools/w.ts", map[string]any{"p": p}); kindOf(out) != kind {
				t.Fatalf("%s: want %s, got %+v", p, kind, out.Error)
			}
			if _, err := fsys.ReadFile(p); err == nil && p != "meta.json" {
				t.Fatalf("%s was written", p)
			}
		}
	})
}

// TestParentHoldsTheToolToItsPermissions: a worker runs hostile code, so
// the host refuses what the tool's permissions refuse whatever the worker
// asks.
func TestParentHoldsTheToolToItsPermissions(t *testing.T) {
	r := New(WithWriteDirs("data"), WithAllowedFetchURLs("https://allowed.example/"))
	pol := r.newRunPolicy(&Permissions{Fetch: []string{"https://allowed.example/a/"}, SQL: SQLNone, Write: []string{"data/a/"}})
	req := Request{FS: newFS(t, nil), SQL: permSQL{inner: &fakeSQL{}, mode: SQLNone}, policy: pol}
	for _, f := range []*frame{
		{Op: "fetch", Method: "GET", URL: "https://allowed.example/b/"},
		{Op: "write_file", Path: "data/b/x", Data: []byte("x")},
		{Op: "exec_sql", Query: "SELECT 1"},
	} {
		rep := serveCall(context.Background(), r, http.DefaultClient, req, f)
		if rep.Err == "" || rep.Kind != KindPermissionDenied {
			t.Errorf("%s was not refused as permission_denied: %+v", f.Op, rep)
		}
	}
}
