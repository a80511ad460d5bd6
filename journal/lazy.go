package journal

import (
	"context"
	"sync"
	"time"

	"github.com/tgp-go/tgp/gitbackend"
)

// Lazy is a journal that connects on first use, so that a kernel boots
// (and reads) while the database is away. A failed connection is tried
// again after a pause, not on every call: each write meanwhile pushes
// directly (gitbackend falls back when Record fails) and says so.
type Lazy struct {
	dsn  string
	opts []Option

	mu      sync.Mutex
	p       *Postgres
	failed  time.Time
	lastErr error
}

// retryConnectAfter is the pause after a failed connection.
const retryConnectAfter = 30 * time.Second

var _ gitbackend.Journal = (*Lazy)(nil)

// NewLazy is a journal for dsn, not yet connected.
func NewLazy(dsn string, opts ...Option) *Lazy { return &Lazy{dsn: dsn, opts: opts} }

func (l *Lazy) get(ctx context.Context) (*Postgres, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p != nil {
		return l.p, nil
	}
	if !l.failed.IsZero() && time.Since(l.failed) < retryConnectAfter {
		return nil, l.lastErr
	}
	p, err := Open(ctx, l.dsn, l.opts...)
	if err != nil {
		l.failed, l.lastErr = time.Now(), err
		return nil, err
	}
	l.p = p
	return p, nil
}

// Close closes the connections, if any were made.
func (l *Lazy) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p != nil {
		l.p.Close()
		l.p = nil
	}
}

func (l *Lazy) Record(ctx context.Context, e *gitbackend.JournalEntry) (int64, error) {
	p, err := l.get(ctx)
	if err != nil {
		return 0, err
	}
	return p.Record(ctx, e)
}

func (l *Lazy) Outcome(ctx context.Context, id int64) (*gitbackend.JournalOutcome, error) {
	p, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return p.Outcome(ctx, id)
}

func (l *Lazy) Lead(ctx context.Context, remote, branch string) (func(), bool, error) {
	p, err := l.get(ctx)
	if err != nil {
		return nil, false, err
	}
	return p.Lead(ctx, remote, branch)
}

func (l *Lazy) Waiting(ctx context.Context, remote, branch string) ([]*gitbackend.JournalEntry, error) {
	p, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return p.Waiting(ctx, remote, branch)
}

func (l *Lazy) Plan(ctx context.Context, planned map[int64]string) error {
	p, err := l.get(ctx)
	if err != nil {
		return err
	}
	return p.Plan(ctx, planned)
}

func (l *Lazy) Settle(ctx context.Context, outcomes map[int64]*gitbackend.JournalOutcome) error {
	p, err := l.get(ctx)
	if err != nil {
		return err
	}
	return p.Settle(ctx, outcomes)
}

func (l *Lazy) PushBudget(ctx context.Context, remote string, n int, window time.Duration, take bool) (time.Duration, error) {
	p, err := l.get(ctx)
	if err != nil {
		return 0, err
	}
	return p.PushBudget(ctx, remote, n, window, take)
}

func (l *Lazy) LastLanded(ctx context.Context, remote, branch string) (string, error) {
	p, err := l.get(ctx)
	if err != nil {
		return "", err
	}
	return p.LastLanded(ctx, remote, branch)
}
