package gitbackend

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// A rate budget keeps this machine's sessions with a remote within what
// the host allows: GitHub documents at most 6 pushes a minute per
// repository and 15 git reads a second, and throttles a repository that
// goes past them. A budget is a sliding window: at most n sessions
// started in any window. Every process of the machine that talks to the
// remote counts in one log file under the lock directory (a flock guards
// it), so the roots of one machine share the budget; without a lock
// directory a Repo counts its own.
//
// The budget is kept before a session starts, not after the host refuses
// one: a refused push is a push spent, and a fleet that retries refusals
// spends the window on them (186 refused attempts for 14 pushes, measured
// before this existed).
type rateBudget struct {
	n      int
	window time.Duration
	// path is the shared log ("" : in process only).
	path string
	lock *flock.Flock
	now  func() time.Time

	mu     sync.Mutex
	starts []time.Time // the in-process log
}

// newRateBudget is a budget of n sessions per window for remote, shared
// through lockDir (empty: this Repo only). kind names the log ("push",
// "read"). n <= 0 is no budget (nil).
func newRateBudget(n int, window time.Duration, lockDir, remote, kind string) *rateBudget {
	if n <= 0 {
		return nil
	}
	if window <= 0 {
		window = time.Minute
	}
	b := &rateBudget{n: n, window: window, now: time.Now}
	if lockDir != "" {
		// Keyed by the repository, not the branch: the host's limit is
		// per repository.
		sum := sha256.Sum256([]byte(redact(remote)))
		b.path = filepath.Join(lockDir, "budget", hex.EncodeToString(sum[:10])+"."+kind)
		b.lock = flock.New(b.path + ".lock")
	}
	return b
}

// budget is a rate budget: this machine's (rateBudget) or a journal's,
// shared by the fleet (journalBudget).
type budget interface {
	// wait is how long until a session may start without going over the
	// budget (0: now). It takes nothing.
	wait(ctx context.Context) time.Duration
	// take waits until a session may start and counts it as started.
	take(ctx context.Context, sleep func(context.Context, time.Duration) error) error
	describe() string
}

func (b *rateBudget) wait(context.Context) time.Duration {
	if b == nil {
		return 0
	}
	d, _ := b.try(false)
	return d
}

func (b *rateBudget) take(ctx context.Context, sleep func(context.Context, time.Duration) error) error {
	if b == nil {
		return nil
	}
	for {
		d, err := b.try(true)
		if err != nil {
			return err
		}
		if d == 0 {
			return nil
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return &RateLimitError{Limit: b.describe(), RetryAfter: d, Local: true}
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

func (b *rateBudget) describe() string {
	return fmt.Sprintf("%d per %v", b.n, b.window)
}

// try reads the log, drops what left the window and, when take is set
// and a session fits, counts one now. It returns how long until one fits
// (0: it did, or would).
func (b *rateBudget) try(take bool) (time.Duration, error) {
	return b.update(func(starts *[]time.Time, now time.Time) time.Duration {
		return b.admit(starts, now, take)
	})
}

// update runs f on the starts within the window, under the budget's
// locks (the mutex; the log's flock when shared), and writes the log
// back when f changed it.
func (b *rateBudget) update(f func(starts *[]time.Time, now time.Time) time.Duration) (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.path == "" {
		b.starts = inWindow(b.starts, now, b.window)
		return f(&b.starts, now), nil
	}
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return 0, fmt.Errorf("push budget %s: %w", b.path, err)
	}
	if err := b.lock.Lock(); err != nil {
		return 0, fmt.Errorf("push budget %s: lock: %w", b.path, err)
	}
	defer b.lock.Unlock()
	data, err := os.ReadFile(b.path)
	if err != nil && !os.IsNotExist(err) {
		return 0, fmt.Errorf("push budget %s: %w", b.path, err)
	}
	starts := inWindow(parseStarts(data, now), now, b.window)
	before := len(starts)
	d := f(&starts, now)
	if len(starts) != before || len(starts) == 0 && len(data) > 0 {
		if err := writeFileAtomic(b.path, formatStarts(starts)); err != nil {
			return 0, fmt.Errorf("push budget %s: %w", b.path, err)
		}
	}
	return d, nil
}

// admit counts a session at now in starts when one fits (and take is
// set); else it says how long until one does.
func (b *rateBudget) admit(starts *[]time.Time, now time.Time, take bool) time.Duration {
	if d := budgetWait(*starts, now, b.n, b.window); d > 0 {
		return d
	}
	if take {
		*starts = append(*starts, now)
	}
	return 0
}

// budgetWait is how long after now a session may start, given the starts
// within the window (oldest first): when fewer than n are in it, and
// no sooner than window/n after the last one. The pacing keeps a burst
// from spending the whole window at once: 6 pushes a minute sent in the
// first 12 s left every later write waiting ~45 s for the window to roll
// over (p99 40-51 s in the fleet bench); paced, a push goes every 10 s
// and carries everything that waited.
func budgetWait(starts []time.Time, now time.Time, n int, window time.Duration) time.Duration {
	var d time.Duration
	if len(starts) >= n {
		d = starts[len(starts)-n].Add(window).Sub(now)
	}
	if len(starts) > 0 {
		d = max(d, starts[len(starts)-1].Add(window/time.Duration(n)).Sub(now))
	}
	if d <= 0 {
		return 0
	}
	return max(d, time.Millisecond)
}

// inWindow keeps the starts within window of now, oldest first.
func inWindow(starts []time.Time, now time.Time, window time.Duration) []time.Time {
	out := starts[:0]
	for _, t := range starts {
		if now.Sub(t) < window {
			out = append(out, t)
		}
	}
	return out
}

// parseStarts reads the log: one start a line, in Unix nanoseconds. The
// file is the user's own, but a line that does not parse is skipped, and
// a start in the future counts as now (so a clock that stepped back, or
// a hand-edited line, delays pushes by one window at most, never forever).
func parseStarts(data []byte, now time.Time) []time.Time {
	var out []time.Time
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		ns, err := strconv.ParseInt(string(bytes.TrimSpace(sc.Bytes())), 10, 64)
		if err != nil || ns <= 0 {
			continue
		}
		t := time.Unix(0, ns)
		if t.After(now) {
			t = now
		}
		out = append(out, t)
	}
	// Written in order by take; sorted anyway (a future line was clamped).
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

func formatStarts(starts []time.Time) []byte {
	var buf bytes.Buffer
	for _, t := range starts {
		buf.WriteString(strconv.FormatInt(t.UnixNano(), 10))
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// journalBudget is the push budget of every machine sharing a journal,
// kept in the journal's database (its clock, its lock). When the
// database does not answer, the machine's own budget holds instead.
type journalBudget struct {
	j        Journal
	remote   string
	n        int
	window   time.Duration
	fallback *rateBudget
}

func (b *journalBudget) describe() string {
	return fmt.Sprintf("%d per %v across the journal's machines", b.n, b.window)
}

func (b *journalBudget) wait(ctx context.Context) time.Duration {
	d, err := b.j.PushBudget(ctx, b.remote, b.n, b.window, false)
	if err != nil {
		return b.fallback.wait(ctx)
	}
	return d
}

func (b *journalBudget) take(ctx context.Context, sleep func(context.Context, time.Duration) error) error {
	for {
		d, err := b.j.PushBudget(ctx, b.remote, b.n, b.window, true)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return b.fallback.take(ctx, sleep)
		}
		if d == 0 {
			// Counted on this machine too: a fallback later starts from
			// what this machine spent.
			b.fallback.record()
			return nil
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return &RateLimitError{Limit: b.describe(), RetryAfter: d, Local: true}
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// record counts a session started now without asking (the journal
// admitted it).
func (b *rateBudget) record() {
	_, _ = b.update(func(starts *[]time.Time, now time.Time) time.Duration {
		*starts = append(*starts, now)
		return 0
	})
}

// BudgetWait is budgetWait for a journal keeping the fleet's budget: one
// rule, wherever the starts are counted.
func BudgetWait(starts []time.Time, now time.Time, n int, window time.Duration) time.Duration {
	return budgetWait(starts, now, n, window)
}
