package toolbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/sync/singleflight"

	"github.com/tgp-go/tgp/internal/telemetry"
	"github.com/tgp-go/tgp/registry"
)

// RefreshEvent reports a refresh that brought in what other agents
// pushed, or was blocked by local edits (Config.OnRefresh).
type RefreshEvent struct {
	Time time.Time
	Head string
	// Paths are every path the refresh changed; Tools the tool files
	// among them (added, changed or deleted).
	Paths, Tools []string
	// Blocked are local edits that kept the root where it was.
	Blocked []string
}

// RefreshStatus is the freshness part of a status.
type RefreshStatus struct {
	// LastCheck is when the remote was last asked (Open counts).
	LastCheck time.Time `json:"last_check,omitempty"`
	// Behind: local edits kept the root from the remote's newer commits.
	Behind bool `json:"behind"`
	// Error is the last check's failure, if it failed.
	Error string `json:"error,omitempty"`
}

// refresher is the state of the remote checks: one at a time
// (singleflight), the last one's time and outcome for Status.
type refresher struct {
	group   singleflight.Group
	mu      sync.Mutex
	last    time.Time
	lastErr error
	blocked []string
}

// refreshRetryAfterFailure spaces checks while the remote cannot be
// reached, so that with refresh_interval 0 every read does not wait on a
// dead remote; refreshTimeout bounds a whole refresh (the tip check itself
// is bounded tighter in gitbackend).
const (
	refreshRetryAfterFailure = 10 * time.Second
	refreshTimeout           = 2 * time.Minute
)

func (rf *refresher) due(every time.Duration) bool {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	if rf.lastErr != nil && every < refreshRetryAfterFailure {
		every = refreshRetryAfterFailure
	}
	return every == 0 || rf.last.IsZero() || time.Since(rf.last) >= every
}

// MaybeRefresh is called before a read of the toolbox: it checks the
// remote when the last check is older than Config.RefreshEvery. It returns
// a note when the answer may be stale (the remote could not be reached,
// or local edits kept the root behind); the read goes on from the local
// state either way. An unopened box, a plain directory and the
// pull-request strategy never refresh.
func (b *Box) MaybeRefresh(ctx context.Context) string {
	if b.Repo() == nil || !b.opened.Load() || b.cfg.Strategy == PullRequest {
		return ""
	}
	if b.cfg.RefreshOff || !b.refresh.due(b.cfg.RefreshEvery) {
		return b.staleNote()
	}
	// Concurrent reads share one check; a caller that gives up does not
	// cancel it for the others.
	_, _, _ = b.refresh.group.Do("refresh", func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		return nil, b.Refresh(cctx)
	})
	return b.staleNote()
}

func (b *Box) staleNote() string {
	b.refresh.mu.Lock()
	defer b.refresh.mu.Unlock()
	switch {
	case b.refresh.lastErr != nil:
		return "may be stale: the remote could not be checked (" + b.refresh.lastErr.Error() + ")"
	case len(b.refresh.blocked) > 0:
		return "may be stale: the remote changed " + strings.Join(b.refresh.blocked, ", ") + ", which have local edits here; persist them to bring in the remote's version"
	}
	return ""
}

// Refresh asks the remote whether its branch moved and, if it did, brings
// the root up to it (gitbackend.Repo.Refresh: fast-forward, or replay and
// push local commits; local edits block it and are kept) and rebuilds the
// registry.
func (b *Box) Refresh(ctx context.Context) (err error) {
	repo := b.Repo()
	if repo == nil {
		return nil
	}
	ctx, span := telemetry.Start(ctx, "tgp.refresh")
	defer func() {
		if err != nil {
			span.SetAttributes(telemetry.ErrorType("refresh_failed"))
		}
		telemetry.End(span, err)
	}()
	res, err := repo.Refresh(ctx)
	if res != nil {
		tools := 0
		for _, p := range res.Paths {
			if registry.IsTool(p) {
				tools++
			}
		}
		span.SetAttributes(attribute.Bool("tgp.refresh.moved", res.Moved), attribute.Bool("tgp.refresh.applied", res.Applied),
			attribute.Int("tgp.refresh.paths", len(res.Paths)), attribute.Int("tgp.refresh.tools", tools),
			attribute.Int("tgp.refresh.blocked", len(res.Blocked)))
	}
	now := time.Now()
	b.refresh.mu.Lock()
	b.refresh.last, b.refresh.lastErr = now, err
	if err == nil {
		b.refresh.blocked = res.Blocked
	}
	b.refresh.mu.Unlock()
	if err != nil {
		b.progressf("refresh: %v", err)
		return fmt.Errorf("refresh: %w", err)
	}
	if !res.Applied && len(res.Blocked) == 0 {
		return nil
	}
	ev := RefreshEvent{Time: now, Head: res.Head, Paths: res.Paths, Blocked: res.Blocked}
	for _, p := range res.Paths {
		if registry.IsTool(p) {
			ev.Tools = append(ev.Tools, p)
		}
	}
	if res.Applied {
		if err := b.cat.rebuild(); err != nil {
			return fmt.Errorf("refresh: rebuild the registry: %w", err)
		}
		b.progressf("refresh: pulled %d path(s) other agents pushed (head %s)%s", len(res.Paths), shortHead(res.Head), toolList(ev.Tools))
	} else {
		b.progressf("refresh: the remote changed %s, which have local edits: not pulled", strings.Join(res.Blocked, ", "))
	}
	for _, h := range b.cfg.OnRefresh {
		func() {
			defer func() { _ = recover() }() // a broken hook must not break a read
			h(ev)
		}()
	}
	return nil
}

// RefreshStatus says when the remote was last checked and whether the
// root is behind it.
func (b *Box) RefreshStatus() RefreshStatus {
	b.refresh.mu.Lock()
	defer b.refresh.mu.Unlock()
	st := RefreshStatus{LastCheck: b.refresh.last, Behind: len(b.refresh.blocked) > 0}
	if b.refresh.lastErr != nil {
		st.Error = b.refresh.lastErr.Error()
	}
	return st
}

func (b *Box) progressf(format string, args ...any) {
	if b.cfg.Git.Progress != nil {
		b.cfg.Git.Progress(fmt.Sprintf(format, args...))
	}
}

func shortHead(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func toolList(ts []string) string {
	if len(ts) == 0 {
		return ""
	}
	return "; tools: " + strings.Join(ts, ", ")
}

// DrainJournal lands the journal's waiting entries when no other process
// is pushing them (gitbackend.Repo.DrainJournal) and rebuilds the
// registry when the root moved. It returns how many entries it landed.
func (b *Box) DrainJournal(ctx context.Context) (int, error) {
	repo := b.Repo()
	if repo == nil {
		return 0, nil
	}
	n, err := repo.DrainJournal(ctx)
	if n > 0 {
		if rerr := b.cat.rebuild(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("drain journal: rebuild the registry: %w", rerr))
		}
		b.progressf("journal: landed %d waiting entr%s", n, map[bool]string{true: "y", false: "ies"}[n == 1])
	}
	return n, err
}
