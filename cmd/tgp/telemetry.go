package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/tgp-go/tgp/kernel"
)

// telemetry is the OpenTelemetry SDK `tgp serve` and `tgp call` install
// when the standard OTEL_* environment asks for an OTLP export; the kernel
// itself only speaks the API.
type telemetry struct {
	opts     []kernel.Option
	shutdown []func(context.Context) error
}

// getenv reads the app's environment (tests pass their own).
func (a *app) getenv(key string) string {
	for i := len(a.environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(a.environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// setupTelemetry builds OTLP/HTTP exporters for traces and metrics when
// an endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, or the per-signal
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / _METRICS_ENDPOINT) and the SDK is
// not disabled (OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none,
// OTEL_METRICS_EXPORTER=none). The exporters read the rest of OTEL_*
// (headers, timeout, TLS) from the process environment themselves; the
// resource is service.name "tgp" unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES say otherwise.
func (a *app) setupTelemetry(ctx context.Context) (*telemetry, error) {
	t := &telemetry{}
	if strings.EqualFold(a.getenv("OTEL_SDK_DISABLED"), "true") {
		return t, nil
	}
	all := a.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	traces := (all || a.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") && a.getenv("OTEL_TRACES_EXPORTER") != "none"
	metrics := (all || a.getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "") && a.getenv("OTEL_METRICS_EXPORTER") != "none"
	if !traces && !metrics {
		return t, nil
	}
	if p := a.getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
		fmt.Fprintf(a.stderr, "tgp: OTEL_EXPORTER_OTLP_PROTOCOL=%s is not supported; exporting over http/protobuf\n", p)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", "tgp")))
	if err != nil {
		return nil, err
	}
	if fromEnv, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, fromEnv); err == nil {
			res = merged
		}
	}
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("otlp traces: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		t.opts = append(t.opts, kernel.WithTracerProvider(tp))
		t.shutdown = append(t.shutdown, tp.Shutdown)
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("otlp metrics: %w", err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		t.opts = append(t.opts, kernel.WithMeterProvider(mp))
		t.shutdown = append(t.shutdown, mp.Shutdown)
	}
	return t, nil
}

// close flushes what is buffered: a one-shot `tgp call` would otherwise
// exit before its spans leave.
func (t *telemetry) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	for _, f := range t.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// parentFromEnv makes the W3C trace context in TRACEPARENT (and
// TRACESTATE) the parent of a one-shot command's spans: how a CI job or a
// script that traces passes its span to a process it starts.
func (a *app) parentFromEnv(ctx context.Context) context.Context {
	carrier := propagation.MapCarrier{}
	if tp := a.getenv("TRACEPARENT"); tp != "" {
		carrier["traceparent"] = tp
		carrier["tracestate"] = a.getenv("TRACESTATE")
	}
	return propagation.TraceContext{}.Extract(ctx, carrier)
}
