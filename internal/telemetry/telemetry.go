// Package telemetry is the kernel's OpenTelemetry instrumentation, on the
// OpenTelemetry API only (go.opentelemetry.io/otel): the host brings the
// SDK and its exporters, or none, in which case every call here is a
// no-op that costs a context lookup.
//
// The kernel makes one [T] from the host's providers (kernel options, else
// the global ones) and puts it in the context of every call it serves
// ([With]); the engines below (gitbackend, sandbox, shell, sqldb, toolbox)
// start their spans with [Start] from that context, so a span the host
// started around a kernel call is the parent of the kernel's. Engines used
// without a kernel record nothing.
//
// What is recorded is chosen so that no attribute can hold a secret: tool
// names, outcome kinds, byte counts, attempt counts, a shell command's
// name (never its arguments), a database system (never a DSN or a
// statement).
package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	nooptrace "go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of every span and instrument.
const ScopeName = "github.com/tgp-go/tgp"

// T holds a tracer and the kernel's instruments.
type T struct {
	tracer trace.Tracer
	// PersistDuration is how long a persist took (commit to push
	// accepted, replays included), by outcome.
	PersistDuration metric.Float64Histogram
	// PersistRetries counts the attempts after the first (replays onto a
	// remote that moved).
	PersistRetries metric.Int64Counter
	// WritesLanded counts changes the remote accepted.
	WritesLanded metric.Int64Counter
	// ToolErrors counts failed tool calls by tool and error kind.
	ToolErrors metric.Int64Counter
	// ToolCalls counts tool calls by tool and outcome.
	ToolCalls metric.Int64Counter
}

// New makes a T from the host's providers; nil ones are no-ops.
func New(tp trace.TracerProvider, mp metric.MeterProvider) *T {
	if tp == nil {
		tp = nooptrace.NewTracerProvider()
	}
	if mp == nil {
		mp = noopmetric.NewMeterProvider()
	}
	m := mp.Meter(ScopeName)
	t := &T{tracer: tp.Tracer(ScopeName)}
	// Instrument creation fails only on an invalid name or unit, a
	// programming error; the API returns a no-op instrument then.
	t.PersistDuration, _ = m.Float64Histogram("tgp.persist.duration", metric.WithUnit("s"),
		metric.WithDescription("Time from commit to the remote accepting the push, replays included."))
	t.PersistRetries, _ = m.Int64Counter("tgp.persist.retries", metric.WithUnit("{attempt}"),
		metric.WithDescription("Persist attempts after the first: replays onto a remote another agent moved."))
	t.WritesLanded, _ = m.Int64Counter("tgp.persist.writes", metric.WithUnit("{change}"),
		metric.WithDescription("Changes the remote accepted."))
	t.ToolErrors, _ = m.Int64Counter("tgp.tool.errors", metric.WithUnit("{call}"),
		metric.WithDescription("Failed tool calls, by tool and error kind."))
	t.ToolCalls, _ = m.Int64Counter("tgp.tool.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls, by tool and outcome."))
	return t
}

type key struct{}

// With returns ctx carrying t; a nil t leaves ctx as it is.
func With(ctx context.Context, t *T) context.Context {
	if t == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, t)
}

// From returns the T in ctx, or nil.
func From(ctx context.Context) *T {
	t, _ := ctx.Value(key{}).(*T)
	return t
}

var noopTracer = nooptrace.NewTracerProvider().Tracer(ScopeName)

// Start starts a span named name as a child of ctx's span, with the
// tracer of ctx's T (a no-op span when there is none).
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	tr := noopTracer
	if t := From(ctx); t != nil {
		tr = t.tracer
	}
	return tr.Start(ctx, name, trace.WithAttributes(attrs...))
}

// End ends span with an error status when err is not nil. The error's
// text is not recorded (a git or database error can quote a URL or a
// DSN): callers set an error.type attribute with the error's kind.
func End(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

// ErrorType is the semantic-convention attribute naming an error's kind.
func ErrorType(kind string) attribute.KeyValue { return attribute.String("error.type", kind) }

// Since is the seconds elapsed since start, for duration histograms.
func Since(start time.Time) float64 { return time.Since(start).Seconds() }
