package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tgp-go/tgp/internal/backoff"
)

// Retry is one wait for the host: a rate limit or a server error answered
// to Op, after which the request was sent again.
type Retry struct {
	Op     string        `json:"op"`
	Status int           `json:"status"` // 0: no answer (connection failed)
	Wait   time.Duration `json:"-"`
	WaitMS int64         `json:"wait_ms"`
	Reason string        `json:"reason"`
}

func (r Retry) String() string {
	if r.Status == 0 {
		return fmt.Sprintf("%s: %s, retried after %s", r.Op, r.Reason, r.Wait)
	}
	return fmt.Sprintf("%s: HTTP %d (%s), retried after %s", r.Op, r.Status, r.Reason, r.Wait)
}

// Policy is the one retry policy of every host: each host package runs
// its calls through it, so that every host waits, gives up and reports
// the same way.
type Policy struct {
	host    string
	retries int           // attempts after the first
	maxWait time.Duration // longest wait honoured
	base    time.Duration // first backoff when the host names no wait
	sleep   func(context.Context, time.Duration) error
	report  func(Retry)
	now     func() time.Time
	// special, when set, judges the answers a host signals in its own
	// way (GitHub's secondary rate limit in a 403's body); known=false
	// leaves the answer to the common rules.
	special func(*http.Response, error) (o Outcome, retry, known bool)
}

// Outcome is what one attempt's answer says about retrying.
type Outcome struct {
	Status int
	// Limited: the host rate limited the call (wait as it says).
	Limited bool
	// Wait is what the host asked for, when Told (else: back off).
	Wait time.Duration
	Told bool
}

// Judge sets how the policy reads the answers a host signals in its own
// way (GitHub's secondary rate limit in a 403's body); known=false leaves
// an answer to the common rules.
func (p *Policy) Judge(f func(*http.Response, error) (o Outcome, retry, known bool)) { p.special = f }

// Now is the policy's clock (tests set it).
func (p *Policy) Now() time.Time { return p.now() }

type collectorKey struct{}

// collector gathers the retries of one public call (OpenOrUpdatePR and the
// look-ups inside it) for PR.Retries.
type collector struct {
	mu   sync.Mutex
	list []Retry
}

func withCollector(ctx context.Context) (context.Context, *collector) {
	if c, ok := ctx.Value(collectorKey{}).(*collector); ok {
		return ctx, c
	}
	c := &collector{}
	return context.WithValue(ctx, collectorKey{}, c), c
}

func (c *collector) retries() []Retry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Retry(nil), c.list...)
}

// Do runs call until it succeeds, fails for good, or runs out of
// attempts. call returns the HTTP answer (nil when none came) and the
// client's error; classify maps a final error to AuthError / APIError.
func (p *Policy) Do(ctx context.Context, op string, call func() (*http.Response, error), classify func(*http.Response, error) error) error {
	for attempt := 0; ; attempt++ {
		resp, err := call()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o, retryable := p.judge(resp, err)
		if !retryable {
			return classify(resp, err)
		}
		final := classify(resp, err)
		wait := o.Wait
		if !o.Told {
			wait = p.backoff(attempt)
		}
		if attempt >= p.retries {
			return &RetryError{Op: op, Attempts: attempt + 1, Reason: reason(o), Err: final}
		}
		if wait > p.maxWait {
			return &RetryError{Op: op, Attempts: attempt + 1,
				Reason: fmt.Sprintf("%s; the host asks to wait %s, more than the %s allowed", reason(o), wait.Round(time.Second), p.maxWait), Err: final}
		}
		r := Retry{Op: op, Status: o.Status, Wait: wait, WaitMS: wait.Milliseconds(), Reason: reason(o)}
		if c, ok := ctx.Value(collectorKey{}).(*collector); ok {
			c.mu.Lock()
			c.list = append(c.list, r)
			c.mu.Unlock()
		}
		if p.report != nil {
			p.report(r)
		}
		if err := p.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func reason(o Outcome) string {
	switch {
	case o.Status == 0:
		return "no answer"
	case o.Limited:
		return "rate limited"
	default:
		return "server error"
	}
}

// judge says whether an answer is worth another attempt and how long the
// host asked us to wait.
func (p *Policy) judge(resp *http.Response, err error) (Outcome, bool) {
	if resp == nil {
		// No answer: a refused or reset connection. Creating twice is
		// safe (a duplicate open finds the first), so every call may
		// be sent again.
		var ne interface{ Timeout() bool }
		return Outcome{}, (errors.As(err, &ne) && ne.Timeout()) || isConnErr(err)
	}
	if p.special != nil {
		if o, retry, known := p.special(resp, err); known {
			return o, retry
		}
	}
	o := Outcome{Status: resp.StatusCode}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		o.Limited = true
	case resp.StatusCode == http.StatusForbidden && (resp.Header.Get("X-RateLimit-Remaining") == "0" || resp.Header.Get("Retry-After") != ""):
		// GitHub's primary (remaining 0) and secondary (Retry-After)
		// limits answer 403.
		o.Limited = true
	case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented:
	default:
		return o, false
	}
	o.Wait, o.Told = p.hostWait(resp.Header)
	return o, true
}

// hostWait reads Retry-After (seconds or an HTTP date), else the reset
// time GitHub (X-RateLimit-Reset) and GitLab (RateLimit-Reset) send;
// told is false when the host named no wait.
func (p *Policy) hostWait(h http.Header) (wait time.Duration, told bool) {
	if s := strings.TrimSpace(h.Get("Retry-After")); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
		if t, err := http.ParseTime(s); err == nil {
			return max(t.Sub(p.now()), 0), true
		}
	}
	for _, k := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		if s := h.Get(k); s != "" {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
				if n > 1e9 { // an epoch time, not a number of seconds
					return max(time.Unix(n, 0).Sub(p.now()), 0) + time.Second, true
				}
				return time.Duration(n) * time.Second, true
			}
		}
	}
	return 0, false
}

// backoff doubles from base, with jitter (internal/backoff).
func (p *Policy) backoff(attempt int) time.Duration {
	return backoff.Delay(p.base, p.maxWait, attempt)
}

func isConnErr(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "connection reset") ||
		strings.Contains(msg, "EOF")
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
