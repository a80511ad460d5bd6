package telemetry

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSpansOnlyWithATInTheContext: an engine used without a kernel
// records nothing; with one, its spans nest under the context's span and
// an error sets the status without the error's text (it may quote a URL
// or a DSN).
func TestSpansOnlyWithATInTheContext(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	_, span := Start(context.Background(), "orphan")
	span.End()
	if len(sr.Ended()) != 0 || span.SpanContext().IsValid() {
		t.Fatal("a span without a T in the context was recorded")
	}
	ctx := With(context.Background(), New(tp, nil))
	if From(ctx) == nil || From(context.Background()) != nil || With(ctx, nil) != ctx {
		t.Fatal("With/From")
	}
	ctx, parent := Start(ctx, "parent")
	_, child := Start(ctx, "child", ErrorType("conflict"))
	End(child, errors.New("push https://user:secret@example.com/r.git: rejected"))
	End(parent, nil)
	got := sr.Ended()
	if len(got) != 2 || got[0].Name() != "child" || got[0].Parent().SpanID() != got[1].SpanContext().SpanID() {
		t.Fatalf("spans %v", got)
	}
	if st := got[0].Status(); st.Code != codes.Error || st.Description != "" {
		t.Fatalf("status %+v", st)
	}
	if got[1].Status().Code == codes.Error {
		t.Fatal("a span without error has an error status")
	}
}
