package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tgp-go/tgp/kernel"
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

// TestStatusListsUnlanded: `tgp status` shows each journal entry not
// landed yet (id, age, root, commits, subject, author), an unreadable
// journal, and nothing at all when the journal has nothing waiting.
func TestStatusListsUnlanded(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var b strings.Builder
	printUnlanded(&b, nil, "", now)
	if b.Len() != 0 {
		t.Fatalf("nothing waiting printed %q", b.String())
	}
	printUnlanded(&b, []kernel.JournalPending{
		{ID: 7, Root: "m1:/r/.git", Base: "1111111aaaa", Head: "2222222bbbb", Created: now.Add(-90 * time.Second), Message: "forge: tools/a.ts", Author: "A <a@x>"},
		{ID: 9, Root: "m2:/s/.git", Base: "3333333cccc", Head: "4444444dddd", Created: now.Add(-2 * time.Second)},
	}, "", now)
	want := "journal:  2 entries not landed yet\n" +
		"  not landed: #7 1m30s old, m1:/r/.git, 1111111..2222222 \"forge: tools/a.ts\" by A <a@x>\n" +
		"  not landed: #9 2s old, m2:/s/.git, 3333333..4444444\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	printUnlanded(&b, nil, "journal: unlanded entries: connect: refused", now)
	if !strings.Contains(b.String(), "journal:  unreadable: journal: unlanded entries: connect: refused") {
		t.Fatalf("an unreadable journal: %q", b.String())
	}
}
