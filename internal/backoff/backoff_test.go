package backoff

import (
	"testing"
	"time"
)

func TestDelayDoublesWithinBounds(t *testing.T) {
	for attempt, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		want *= time.Millisecond
		for range 50 {
			if d := Delay(100*time.Millisecond, time.Second, attempt); d < want/2 || d > want {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, want/2, want)
			}
		}
	}
	if d := Delay(time.Second, time.Minute, 1000); d > time.Minute {
		t.Fatalf("a late attempt waits %v, past the limit", d)
	}
}
