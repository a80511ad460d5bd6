package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestStartDrain: tgp serve's journal drain runs at every tick while the
// server runs, reports a failed drain and goes on, stops with the server,
// and drains once more as it stops (with a live context).
func TestStartDrain(t *testing.T) {
	var calls atomic.Int32
	var mu sync.Mutex
	var reported []error
	drain := func(ctx context.Context) (int, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if calls.Add(1) == 2 {
			return 0, errors.New("journal away")
		}
		return 1, nil
	}
	stop := startDrain(context.Background(), drain, 5*time.Millisecond, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	})
	deadline := time.Now().Add(5 * time.Second)
	for calls.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	n := calls.Load()
	if n < 5 {
		t.Fatalf("%d drains: want every tick, then one as it stops", n)
	}
	time.Sleep(30 * time.Millisecond)
	if calls.Load() != n {
		t.Fatalf("drains went on after stop: %d then %d", n, calls.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || reported[0].Error() != "journal away" {
		t.Fatalf("reported %v, want the one failed drain", reported)
	}
}
