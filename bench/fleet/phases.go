package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// A traced row (Spec.Trace, proc mode) says where its writes' time went:
// every `tgp call` runs in a trace of its own (TRACEPARENT) and exports its
// spans over OTLP/HTTP to a receiver in the benchmark (spanSink), the same
// telemetry an operator would collect. Phases sums each call's spans by
// name; Breakdown compares the median calls with the slowest.

// Phases is one call's time by span name, and its attempts.
type Phases struct {
	Latency  time.Duration
	By       map[string]time.Duration
	Attempts int
	// Led says the call pushed for its machine (its queue span ended with
	// the machine's turn), not in another process's batch.
	Led bool
}

// spanSink is an OTLP/HTTP trace receiver keyed by trace id.
type spanSink struct {
	srv *httptest.Server
	mu  sync.Mutex
	by  map[string][]rawSpan
}

type rawSpan struct {
	name, id, parent string
	start            time.Time
	dur              time.Duration
	turn             bool
	attrs            map[string]string
}

func newSpanSink() *spanSink {
	s := &spanSink{by: map[string][]rawSpan{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *spanSink) close() { s.srv.Close() }

func (s *spanSink) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/x-protobuf")
	if r.URL.Path != "/v1/traces" {
		return
	}
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				raw := rawSpan{name: sp.Name, id: hex.EncodeToString(sp.SpanId), parent: hex.EncodeToString(sp.ParentSpanId),
					start: time.Unix(0, int64(sp.StartTimeUnixNano)), dur: time.Duration(sp.EndTimeUnixNano - sp.StartTimeUnixNano)}
				for _, a := range sp.Attributes {
					if a.Key == "tgp.outcome" && a.Value.GetStringValue() == "turn" {
						raw.turn = true
					}
					if strings.HasPrefix(a.Key, "tgp.") {
						if raw.attrs == nil {
							raw.attrs = map[string]string{}
						}
						v := a.Value
						switch {
						case v.GetStringValue() != "":
							raw.attrs[a.Key] = v.GetStringValue()
						default:
							raw.attrs[a.Key] = strings.TrimSpace(strings.TrimPrefix(v.String(), "int_value:"))
						}
					}
				}
				id := hex.EncodeToString(sp.TraceId)
				s.by[id] = append(s.by[id], raw)
			}
		}
	}
}

// env is the environment that makes one call export its spans here, in a
// trace of its own; the trace id names the call.
func (s *spanSink) env() (string, []string) {
	var tid [16]byte
	var sid [8]byte
	_, _ = rand.Read(tid[:])
	_, _ = rand.Read(sid[:])
	id := hex.EncodeToString(tid[:])
	return id, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + s.srv.URL,
		"OTEL_METRICS_EXPORTER=none",
		"TRACEPARENT=00-" + id + "-" + hex.EncodeToString(sid[:]) + "-01",
	}
}

// phases sums a call's spans by name. A fetch counts as "git.fetch" only
// inside a persist attempt (a retry's); the boot's is part of "tgp.boot".
func (s *spanSink) phases(id string, lat time.Duration) (Phases, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	spans, ok := s.by[id]
	if !ok {
		return Phases{}, false
	}
	names := map[string]string{}
	for _, sp := range spans {
		names[sp.id] = sp.name
	}
	p := Phases{Latency: lat, By: map[string]time.Duration{}}
	for _, sp := range spans {
		if sp.name == "git.fetch" && names[sp.parent] != "tgp.persist.attempt" {
			continue
		}
		p.By[sp.name] += sp.dur
		switch {
		case sp.name == "tgp.persist.attempt":
			p.Attempts++
		case sp.name == "tgp.persist.queue" && sp.turn:
			p.Led = true
		}
	}
	return p, true
}

type traceKey struct{}

// withTrace carries a call's tracing environment to the writer.
func withTrace(ctx context.Context, env []string) context.Context {
	return context.WithValue(ctx, traceKey{}, env)
}

func traceEnv(ctx context.Context) []string {
	env, _ := ctx.Value(traceKey{}).([]string)
	return env
}

// Breakdown formats where the traced calls' time went: the mean of each
// phase over the calls up to the median latency and over the slowest 5%,
// and the calls' own time outside every span (process start, the tool,
// exit).
func Breakdown(r Row) string {
	if len(r.Phases) == 0 {
		return ""
	}
	ps := append([]Phases(nil), r.Phases...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Latency < ps[j].Latency })
	groups := []struct {
		name string
		ps   []Phases
	}{
		{"≤ p50", ps[:max(1, len(ps)/2)]},
		{"slowest 5%", ps[len(ps)-max(1, len(ps)/20):]},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "where the time went (%s, %s, %d traced calls; mean seconds per call)\n", r.Name, r.Transport, len(ps))
	b.WriteString("| calls | latency | boot | queue | hold | fetch | push | attempts (n) | persist | outside spans | led |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, g := range groups {
		var lat, outside time.Duration
		sum := map[string]time.Duration{}
		attempts, led := 0, 0
		for _, p := range g.ps {
			lat += p.Latency
			for k, v := range p.By {
				sum[k] += v
			}
			attempts += p.Attempts
			if p.Led {
				led++
			}
			outside += p.Latency - p.By["tgp.boot"] - p.By["tgp.persist"]
		}
		n := time.Duration(len(g.ps))
		sec := func(d time.Duration) string { return fmt.Sprintf("%.2f", (d / n).Seconds()) }
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s (%.1f) | %s | %s | %d/%d |\n", g.name, sec(lat),
			sec(sum["tgp.boot"]), sec(sum["tgp.persist.queue"]), sec(sum["tgp.persist.hold"]), sec(sum["git.fetch"]),
			sec(sum["git.push"]), sec(sum["tgp.persist.attempt"]), float64(attempts)/float64(len(g.ps)),
			sec(sum["tgp.persist"]), sec(outside), led, len(g.ps))
	}
	return b.String()
}

// SpanLog is one exported span of a traced call, for a timeline
// (Row.Spans, -fleet.trace.out).
type SpanLog struct {
	Call  string        `json:"call"` // the call's write path
	Name  string        `json:"name"`
	Start time.Time     `json:"start"`
	Dur   time.Duration `json:"dur_ns"`
	Turn  bool          `json:"turn,omitempty"`
	// Attrs are the span's tgp.* attributes (outcome, attempt, batch
	// size, carries).
	Attrs map[string]string `json:"attrs,omitempty"`
}

func (s *spanSink) spans(id, call string) []SpanLog {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SpanLog
	for _, sp := range s.by[id] {
		out = append(out, SpanLog{Call: call, Name: sp.name, Start: sp.start, Dur: sp.dur, Turn: sp.turn, Attrs: sp.attrs})
	}
	return out
}
