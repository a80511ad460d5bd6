package kernel

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestTelemetrySpanTreeOfAReplayedWrite: a host traces an agent turn and
// hands its context to the kernel. Another agent pushes first, so the
// kernel's write is rejected once and replayed: the recorded tree is
//
//	host → tgp.boot → git.clone → git.checkout
//	host → execute_tool write_file → tgp.persist → tgp.persist.attempt ×2 → git.push (rejected, pushed)
//
// and the shell, SQL and sandbox calls of the same turn have their spans.
// No span name, attribute or event holds the remote's token, the DSN or
// a command's argument; the metrics count the retry, the landed writes
// and a failed call by kind.
func TestTelemetrySpanTreeOfAReplayedWrite(t *testing.T) {
	const token = "tok-9f8e7d6c5b4a"
	const argSecret = "ARGSECRET4711"
	root := t.TempDir()
	bare := filepath.Join(root, "tools.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", bare)
	gittest.Git(t, bare, "config", "http.receivepack", "true")
	srv := gittest.NewHTTPServer(t, root, token)
	// The other agent pushes (straight to the bare repository) at the
	// worst moment: after this kernel read the remote's tip, before its
	// push lands. The push is then refused, and the kernel replays.
	var other *Kernel
	var raced atomic.Bool
	target, _ := url.Parse(srv.Server.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") && raced.CompareAndSwap(false, true) {
			if _, err := other.Call(context.Background(), "write_file", json.RawMessage(`{"path":"tools/other.ts","content":"/** Other. */\nexport default () => 1;\n"}`)); err != nil {
				t.Errorf("the other agent's write: %v", err)
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	remote := front.URL + "/tools.git"
	dsn := filepath.Join(t.TempDir(), "dsn-DSNSECRET-shop.sqlite")

	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	newKernel := func(name string, opts ...Option) *Kernel {
		t.Helper()
		k, err := New(context.Background(), append([]Option{
			WithEnviron([]string{"TGP_GIT_TOKEN=" + token, "TGP_SQL_DSN=" + dsn}),
			WithRoot(t.TempDir()),
			WithSetting("git.remote", remote),
			WithSetting("git.author.name", name), WithSetting("git.author.email", name+"@example.com"),
			WithSetting("git.retry.base_delay", "2ms"),
			// Each kernel is its own machine: no shared push queue hands
			// one the other's tip, so the write must replay.
			WithSetting("git.lock_dir", "off"),
			WithSetting("sql.driver", "sqlite"),
		}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
		return k
	}
	other = newKernel("other", WithSetting("git.remote", bare))
	if err := other.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustCall := func(k *Kernel, ctx context.Context, name string, args any) tools.Result {
		t.Helper()
		raw, _ := json.Marshal(args)
		res, err := k.Call(ctx, name, raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	// A toolbox with a tool in it: the boot below clones and checks out.
	mustCall(other, context.Background(), "write_file", map[string]string{"path": "tools/seed.ts", "content": "/** Seed. */\nexport default () => 0;\n"})
	k := newKernel("traced", WithTracerProvider(tp), WithMeterProvider(mp))

	ctx, host := tp.Tracer("host").Start(context.Background(), "host.agent_turn")
	if err := k.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	res := mustCall(k, ctx, "write_file", map[string]string{"path": "tools/mine.ts", "content": "/** Mine. */\nexport default () => 2;\n"})
	if p := res.Value.(tools.WriteResult).Persisted; p == nil || !p.Persisted || p.Attempts != 2 {
		t.Fatalf("want a write persisted on the second attempt, got %+v", p)
	}
	sh := mustCall(k, ctx, "shell", map[string]any{"command": "ls -d " + argSecret})
	mustCall(k, ctx, "exec_sql", map[string]any{"sql": "CREATE TABLE t (x TEXT)"})
	mustCall(k, ctx, "exec_sql", map[string]any{"sql": "INSERT INTO t (x) VALUES (?)", "params": []any{argSecret}})
	mustCall(k, ctx, "exec_tool", map[string]any{"path": "tools/mine.ts"})
	if _, err := k.Call(ctx, "read_file", json.RawMessage(`{"path":"missing.txt"}`)); err == nil {
		t.Fatal("read_file of a missing file succeeded")
	}
	host.End()

	spans := sr.Ended()
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID().String()] = s
	}
	parentName := func(s sdktrace.ReadOnlySpan) string {
		if p, ok := byID[s.Parent().SpanID().String()]; ok {
			return p.Name()
		}
		return ""
	}
	children := func(parent sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range spans {
			if s.Parent().SpanID() == parent.SpanContext().SpanID() && s.Name() == name {
				out = append(out, s)
			}
		}
		return out
	}
	one := func(parent sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
		t.Helper()
		got := children(parent, name)
		if len(got) != 1 {
			var tree []string
			for _, s := range spans {
				tree = append(tree, parentName(s)+" → "+s.Name())
			}
			t.Fatalf("want one %q under %q, got %d; spans:\n%s", name, parent.Name(), len(got), strings.Join(tree, "\n"))
		}
		return got[0]
	}
	attr := func(s sdktrace.ReadOnlySpan, key string) attribute.Value {
		for _, kv := range s.Attributes() {
			if string(kv.Key) == key {
				return kv.Value
			}
		}
		return attribute.Value{}
	}
	var hostSpan sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "host.agent_turn" {
			hostSpan = s
		}
	}
	if hostSpan == nil {
		t.Fatal("no host span")
	}
	boot := one(hostSpan, "tgp.boot")
	one(one(boot, "git.clone"), "git.checkout")
	var call sdktrace.ReadOnlySpan
	for _, c := range children(hostSpan, "execute_tool write_file") {
		call = c
	}
	if call == nil {
		t.Fatal("no execute_tool write_file under the host span")
	}
	if attr(call, "gen_ai.tool.name").AsString() != "write_file" || attr(call, "tgp.outcome").AsString() != "ok" || attr(call, "tgp.result.bytes").AsInt64() == 0 {
		t.Fatalf("call attributes %v", call.Attributes())
	}
	persist := one(call, "tgp.persist")
	if attr(persist, "tgp.persist.attempts").AsInt64() != 2 || !attr(persist, "tgp.persist.replayed").AsBool() ||
		attr(persist, "tgp.persist.conflict").AsBool() || attr(persist, "tgp.outcome").AsString() != "pushed" {
		t.Fatalf("persist attributes %v", persist.Attributes())
	}
	attempts := children(persist, "tgp.persist.attempt")
	if len(attempts) != 2 {
		t.Fatalf("want 2 attempts under tgp.persist, got %d", len(attempts))
	}
	for i, a := range attempts {
		push := one(a, "git.push")
		want := []string{"rejected", "pushed"}[i]
		if attr(a, "tgp.persist.attempt").AsInt64() != int64(i+1) || attr(push, "tgp.outcome").AsString() != want {
			t.Fatalf("attempt %d: %v, push %v (want %s)", i+1, a.Attributes(), push.Attributes(), want)
		}
	}

	shellCall := one(hostSpan, "execute_tool shell")
	cmd := one(shellCall, "tgp.shell.command")
	var shOut struct {
		ExitCode int64 `json:"exit_code"`
	}
	_ = json.Unmarshal([]byte(jsonOf(sh.Value)), &shOut)
	if attr(cmd, "process.executable.name").AsString() != "ls" || shOut.ExitCode == 0 || attr(cmd, "process.exit.code").AsInt64() != shOut.ExitCode {
		t.Fatalf("shell command span %v", cmd.Attributes())
	}
	var sqlTx int
	for _, c := range children(hostSpan, "execute_tool exec_sql") {
		tx := one(c, "tgp.sql.transaction")
		if attr(tx, "db.system.name").AsString() != "sqlite" || attr(tx, "tgp.outcome").AsString() != "commit" {
			t.Fatalf("sql span %v", tx.Attributes())
		}
		sqlTx++
	}
	if sqlTx != 2 {
		t.Fatalf("%d SQL transactions", sqlTx)
	}
	one(one(hostSpan, "execute_tool exec_tool"), "tgp.sandbox.exec")
	failed := one(hostSpan, "execute_tool read_file")
	if attr(failed, "error.type").AsString() != string(tools.KindNotFound) {
		t.Fatalf("failed call %v", failed.Attributes())
	}

	// No secret anywhere a span can carry text.
	for _, s := range spans {
		texts := []string{s.Name(), s.Status().Description}
		for _, kv := range s.Attributes() {
			texts = append(texts, string(kv.Key)+"="+kv.Value.String())
		}
		for _, ev := range s.Events() {
			texts = append(texts, ev.Name)
			for _, kv := range ev.Attributes {
				texts = append(texts, string(kv.Key)+"="+kv.Value.String())
			}
		}
		for _, txt := range texts {
			for _, secret := range []string{token, "DSNSECRET", argSecret, dsn} {
				if strings.Contains(txt, secret) {
					t.Fatalf("span %s carries a secret: %s", s.Name(), txt)
				}
			}
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	histograms := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					key := m.Name
					if kind, ok := p.Attributes.Value("error.type"); ok {
						key += "{" + kind.AsString() + "}"
					}
					sums[key] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					histograms[m.Name] += p.Count
				}
			}
		}
	}
	// One write (replayed once), six calls, one of them failed.
	if sums["tgp.persist.retries"] != 1 || sums["tgp.persist.writes"] != 1 || sums["tgp.tool.errors{not_found}"] != 1 ||
		histograms["tgp.persist.duration"] != 1 || sums["tgp.tool.calls"] != 6 {
		t.Fatalf("metrics: sums %v histograms %v", sums, histograms)
	}
}
