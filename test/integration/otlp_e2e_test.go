package integration

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestCallExportsOTLP: `tgp call` with the standard OTEL_* environment
// sends its spans over OTLP/HTTP (to a local receiver decoding the
// protobuf), as children of the span in TRACEPARENT; without an endpoint
// it sends nothing.
func TestCallExportsOTLP(t *testing.T) {
	var mu sync.Mutex
	var spans []string
	parents := map[string]string{}
	traces := map[string]bool{}
	var metricPosts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/traces":
			var req coltrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				t.Errorf("traces: %v", err)
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						spans = append(spans, s.Name)
						parents[s.Name] = hex.EncodeToString(s.ParentSpanId)
						traces[hex.EncodeToString(s.TraceId)] = true
					}
				}
			}
		case "/v1/metrics":
			metricPosts++
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	remote := gittest.BareRemote(t)
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	run := func(name string, env ...string) {
		t.Helper()
		cmd := exec.Command(tgpBin, "call", "write_file", `{"path":"tools/`+name+`.ts","content":"/** T. */\nexport default () => 1;\n"}`, "--root", t.TempDir())
		cmd.Env = append(kernelEnv(remote), env...)
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `"ok":true`) {
			t.Fatalf("tgp call: %v\n%s", err, out)
		}
	}
	run("quiet") // no endpoint: no export
	mu.Lock()
	if len(spans) != 0 {
		t.Fatalf("exported without OTEL_EXPORTER_OTLP_ENDPOINT: %v", spans)
	}
	mu.Unlock()
	run("traced", "OTEL_EXPORTER_OTLP_ENDPOINT="+srv.URL, "TRACEPARENT=00-"+traceID+"-"+parentID+"-01")
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(spans, ",")
	for _, want := range []string{"tgp.boot", "execute_tool write_file", "tgp.persist", "tgp.persist.attempt", "git.push"} {
		if !strings.Contains(got, want) {
			t.Fatalf("exported spans %s lack %s", got, want)
		}
	}
	if len(traces) != 1 || !traces[traceID] || parents["execute_tool write_file"] != parentID || parents["tgp.boot"] != parentID {
		t.Fatalf("spans are not children of TRACEPARENT: traces %v parents %v", traces, parents)
	}
	if metricPosts == 0 {
		t.Fatal("no metrics exported")
	}
}
