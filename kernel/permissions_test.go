package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/sandbox/analysis"
)

// TestToolPermissionsThroughTheKernel: what a new user tries first, with
// the kernel's defaults (process isolation): a tool limited to /a/ cannot
// fetch /b/, which sandbox.allowed_fetch_urls allows, and check_tool
// shows the declaration.
func TestToolPermissionsThroughTheKernel(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		_, _ = w.Write([]byte("at " + r.URL.Path))
	}))
	defer srv.Close()
	k := bootWith(t, WithSetting("sandbox.allowed_fetch_urls", []any{srv.URL + "/"}))
	src := "/** Fetches under /a/. */\nexport const permissions = { fetch: [\"" + srv.URL + "/a/\"] };\n" +
		"export default async (x: { p: string }) => (await tgp.fetch(\"" + srv.URL + "\" + x.p)).text();\n"
	if out := execOutcome(t, k, "tools/a.ts", src, map[string]any{"p": "/a/1"}); !out.Success || out.Result != "at /a/1" {
		t.Fatalf("/a/: %+v %+v", out.Result, out.Error)
	}
	out := execOutcome(t, k, "tools/a.ts", src, map[string]any{"p": "/b/1"})
	if out.Success || out.Error.Kind != sandbox.KindPermissionDenied {
		t.Fatalf("/b/: want permission_denied, got %+v %+v", out.Result, out.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range seen {
		if strings.HasPrefix(p, "/b/") {
			t.Fatalf("the server saw %s", p)
		}
	}
	rep, ok := analysisReport(call(t, k, "check_tool", map[string]string{"path": "tools/a.ts"}).Value)
	if !ok || rep.Permissions == nil || len(rep.Permissions.Fetch) != 1 || rep.Permissions.SQL != sandbox.SQLNone {
		t.Fatalf("check_tool: %+v", rep)
	}
}

func analysisReport(v any) (analysis.Report, bool) {
	r, ok := v.(analysis.Report)
	return r, ok
}

// TestRequirePermissionsConfig: sandbox.require_permissions refuses a
// tool without the export; by default it runs.
func TestRequirePermissionsConfig(t *testing.T) {
	bare := "/** Bare. */\nexport default () => 1;\n"
	declared := "/** Declared. */\nexport const permissions = { sql: \"none\" };\nexport default () => 2;\n"
	if out := execOutcome(t, bootWith(t), "tools/bare.ts", bare, nil); !out.Success {
		t.Fatalf("default: %+v", out.Error)
	}
	k := bootWith(t, WithSetting("sandbox.require_permissions", true))
	out := execOutcome(t, k, "tools/bare.ts", bare, nil)
	if out.Success || out.Error.Kind != sandbox.KindPermissionDenied || !strings.Contains(out.Error.Message, "require_permissions") {
		t.Fatalf("required: %+v", out.Error)
	}
	rep, _ := analysisReport(call(t, k, "check_tool", map[string]string{"path": "tools/bare.ts"}).Value)
	if len(rep.Warnings) == 0 || rep.Warnings[0].Rule != analysis.RulePermissions {
		t.Fatalf("check_tool does not warn: %+v", rep)
	}
	if out := execOutcome(t, k, "tools/declared.ts", declared, nil); !out.Success || out.Result != float64(2) {
		t.Fatalf("declared: %+v", out.Error)
	}
	// The environment's form.
	k = bootWith(t, WithEnviron([]string{"TGP_SANDBOX_REQUIRE_PERMISSIONS=true"}))
	if out := execOutcome(t, k, "tools/bare.ts", bare, nil); out.Success {
		t.Fatal("TGP_SANDBOX_REQUIRE_PERMISSIONS=true let a bare tool run")
	}
}

const brokeredValue = "tok-9f8e7d6c5b4a-secret"

// TestBrokeredSecretConfig: sandbox.secrets brokers a value from the
// kernel's environment to its URL only, never into the run's outcome or
// the commit of what the tool wrote; the variable unset is a typed error
// naming it.
func TestBrokeredSecretConfig(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		_, _ = w.Write([]byte("you sent " + r.Header.Get("X-Api-Key")))
	}))
	defer srv.Close()
	secrets := map[string]any{"API": map[string]any{"env": "API_TOKEN", "urls": []any{srv.URL + "/api/"}}}
	src := "/** Calls the API. */\nexport const permissions = { fetch: [\"" + srv.URL + "/\"], secrets: [\"API\"], write: [\"data/\"] };\n" +
		"export default async () => {\n" +
		"  const r = await tgp.fetch(\"" + srv.URL + "/api/me\", { headers: { \"X-Api-Key\": tgp.secret(\"API\") } });\n" +
		"  const text = await r.text();\n  tgp.write_file(\"data/last.txt\", text);\n  tgp.log(text);\n  return text;\n};\n"
	k := bootWith(t, WithEnviron([]string{"API_TOKEN=" + brokeredValue}),
		WithSetting("sandbox.allowed_fetch_urls", []any{srv.URL + "/"}), WithSetting("sandbox.secrets", secrets))
	out := execOutcome(t, k, "tools/api.ts", src, nil)
	if !out.Success {
		t.Fatalf("%+v", out.Error)
	}
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), brokeredValue) {
		t.Fatalf("the value reached the outcome: %s", b)
	}
	if !strings.Contains(out.Result.(string), "tgp_secret_API_") {
		t.Fatalf("the echo is not the placeholder: %v", out.Result)
	}
	mu.Lock()
	if len(got) != 1 || got[0] != "/api/me "+brokeredValue {
		t.Fatalf("the server got %q", got)
	}
	mu.Unlock()
	if data, err := k.FS().ReadFile("data/last.txt"); err != nil || strings.Contains(string(data), brokeredValue) {
		t.Fatalf("what the tool wrote (and the kernel committed): %q %v", data, err)
	}

	// The variable unset: a typed error naming it, not its value.
	k = bootWith(t, WithSetting("sandbox.allowed_fetch_urls", []any{srv.URL + "/"}), WithSetting("sandbox.secrets", secrets))
	out = execOutcome(t, k, "tools/api.ts", src, nil)
	if out.Success || out.Error.Kind != sandbox.KindSecretUnavailable || !strings.Contains(out.Error.Message, "API_TOKEN") {
		t.Fatalf("unset: %+v", out.Error)
	}

	// The environment's form of the key.
	raw, _ := json.Marshal(secrets)
	k = bootWith(t, WithEnviron([]string{"API_TOKEN=" + brokeredValue, "TGP_SANDBOX_SECRETS=" + string(raw),
		"TGP_SANDBOX_ALLOWED_FETCH_URLS=" + srv.URL + "/"}))
	if out := execOutcome(t, k, "tools/api.ts", src, nil); !out.Success {
		t.Fatalf("TGP_SANDBOX_SECRETS: %+v", out.Error)
	}
}

func TestSecretsConfigErrors(t *testing.T) {
	for _, c := range []struct {
		setting any
		key     string
	}{
		{map[string]any{"API": map[string]any{"env": "T", "urls": []any{"https://user@api.example.com/"}}}, "sandbox.secrets.API.urls"},
		{map[string]any{"API": map[string]any{"urls": []any{"https://api.example.com/"}}}, "sandbox.secrets.API.env"},
		{map[string]any{"API": map[string]any{"env": "T"}}, "sandbox.secrets.API.urls"},
		{map[string]any{"A-B": map[string]any{"env": "T", "urls": []any{"https://api.example.com/"}}}, "sandbox.secrets.A-B"},
		{map[string]any{"API": map[string]any{"env": "T", "urls": []any{"https://api.example.com/"}, "value": "x"}}, "sandbox.secrets.API.value"},
	} {
		_, err := New(context.Background(), WithEnviron([]string{}), WithMemoryFS(), WithSetting("sandbox.secrets", c.setting))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != c.key {
			t.Errorf("%v: want a ConfigError for %s, got %v", c.setting, c.key, err)
		}
	}
	_, err := New(context.Background(), WithEnviron([]string{}), WithMemoryFS(), WithSetting("sandbox.allowed_fetch_urls", []any{"api.example.com"}))
	if ce := (*ConfigError)(nil); !errors.As(err, &ce) || ce.Key != "sandbox.allowed_fetch_urls" {
		t.Errorf("a fetch prefix without a scheme: %v", err)
	}
}

// TestSQLReadPermission: a tool that declares sql: "read" runs on a
// read-only session whatever the call asks: its write is refused and
// nothing changes.
func TestSQLReadPermission(t *testing.T) {
	k := sqlKernel(t, "sqlite")
	read := "/** Reads. */\nexport const permissions = { sql: \"read\" };\nexport default (a: { q: string }) => tgp.exec_sql(a.q);\n"
	write := "/** Writes. */\nexport const permissions = { sql: \"write\" };\nexport default (a: { q: string }) => tgp.exec_sql(a.q);\n"
	if out := runTool(t, k, "tools/r.ts", read, map[string]any{"q": "SELECT name FROM users ORDER BY id"}); !out.Success {
		t.Fatalf("read: %+v", out.Error)
	}
	raw, _ := json.Marshal(map[string]any{"path": "tools/r.ts", "args": map[string]any{"q": "DELETE FROM users"}, "read_only": false})
	res, err := k.Call(context.Background(), "exec_tool", raw)
	if err != nil {
		t.Fatal(err)
	}
	if out := res.Value.(*sandbox.Outcome); out.Success || out.Error.Kind != sandbox.KindPermissionDenied {
		t.Fatalf("a write from a read tool: %+v", out.Error)
	}
	if out := runTool(t, k, "tools/w.ts", write, map[string]any{"q": "SELECT COUNT(*) AS n FROM users"}); !out.Success ||
		!strings.Contains(jsonOf(out.Result), `"n":2`) {
		t.Fatalf("the users table changed: %+v %+v", out.Result, out.Error)
	}
	if out := runTool(t, k, "tools/w.ts", write, map[string]any{"q": "DELETE FROM users WHERE id = 2"}); !out.Success {
		t.Fatalf("write: %+v", out.Error)
	}
}
