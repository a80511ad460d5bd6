package kernel

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/tgp-go/tgp/registry"
)

// RefreshEvent reports a refresh that brought in what other agents
// pushed (WithRefreshHook).
type RefreshEvent struct {
	Time time.Time
	Head string
	// Paths are every path the refresh changed; Tools the tool files
	// among them (added, changed or deleted).
	Paths, Tools []string
	// Blocked are local edits that kept the root where it was.
	Blocked []string
}

// WithRefreshHook receives every refresh that moved the root or was
// blocked by local edits.
func WithRefreshHook(h func(RefreshEvent)) Option {
	return func(o *options) { o.refreshHooks = append(o.refreshHooks, h) }
}

// readsToolbox are the calls that answer from the root: a long-lived
// kernel checks the remote before them (git.refresh_interval). Writes need
// no check: persist replays on whatever the remote has.
var readsToolbox = map[string]bool{
	"find_tools": true, "read_file": true, "list_files": true, "list_dir": true, "grep_files": true,
	"check_tool": true, "exec_tool": true,
	"git_status": true, "git_diff": true, "git_log": true, "git_show": true, "git_blame": true,
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

// maybeRefresh checks the remote before a read when the last check is
// older than git.refresh_interval. It returns a note when the answer may
// be stale (the remote could not be reached, or local edits kept the root
// behind); the read goes on from the local state either way.
func (k *Kernel) maybeRefresh(ctx context.Context, tool string) string {
	if !readsToolbox[tool] || k.repo == nil || !k.booted || k.cfg.Git.WriteStrategy == "pr" {
		return ""
	}
	every, off, err := k.cfg.Git.RefreshEvery()
	if err != nil || off || !k.refresh.due(every) {
		return k.staleNote()
	}
	// Concurrent reads share one check; a caller that gives up does not
	// cancel it for the others.
	_, _, _ = k.refresh.group.Do("refresh", func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		return nil, k.Refresh(cctx)
	})
	return k.staleNote()
}

func (k *Kernel) staleNote() string {
	k.refresh.mu.Lock()
	defer k.refresh.mu.Unlock()
	switch {
	case k.refresh.lastErr != nil:
		return "may be stale: the remote could not be checked (" + k.refresh.lastErr.Error() + ")"
	case len(k.refresh.blocked) > 0:
		return "may be stale: the remote changed " + strings.Join(k.refresh.blocked, ", ") + ", which have local edits here; persist them to bring in the remote's version"
	}
	return ""
}

// Refresh asks the remote whether its branch moved and, if it did, brings
// the root up to it (gitbackend.Repo.Refresh: fast-forward, or replay and
// push local commits; local edits block it and are kept) and rebuilds the
// registry. It is what calls that read the toolbox do on their own every
// git.refresh_interval.
func (k *Kernel) Refresh(ctx context.Context) error {
	if k.repo == nil {
		return nil
	}
	res, err := k.repo.Refresh(ctx)
	now := time.Now()
	k.refresh.mu.Lock()
	k.refresh.last, k.refresh.lastErr = now, err
	if err == nil {
		k.refresh.blocked = res.Blocked
	}
	k.refresh.mu.Unlock()
	if err != nil {
		k.progressf("refresh: %v", err)
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
		if err := k.rebuildRegistry(); err != nil {
			return fmt.Errorf("refresh: rebuild the registry: %w", err)
		}
		k.progressf("refresh: pulled %d path(s) other agents pushed (head %s)%s", len(res.Paths), shortHead(res.Head), toolList(ev.Tools))
	} else {
		k.progressf("refresh: the remote changed %s, which have local edits: not pulled", strings.Join(res.Blocked, ", "))
	}
	for _, h := range k.opts.refreshHooks {
		func() {
			defer func() { _ = recover() }() // a broken hook must not break a read
			h(ev)
		}()
	}
	return nil
}

func (k *Kernel) progressf(format string, args ...any) {
	if k.opts.progress != nil {
		k.opts.progress(fmt.Sprintf(format, args...))
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

// RefreshStatus is the freshness part of Status.
type RefreshStatus struct {
	// LastCheck is when the remote was last asked (boot counts).
	LastCheck time.Time `json:"last_check,omitempty"`
	// Behind: local edits kept the root from the remote's newer commits.
	Behind bool `json:"behind"`
	// Error is the last check's failure, if it failed.
	Error string `json:"error,omitempty"`
}

func (k *Kernel) refreshStatus() RefreshStatus {
	k.refresh.mu.Lock()
	defer k.refresh.mu.Unlock()
	st := RefreshStatus{LastCheck: k.refresh.last, Behind: len(k.refresh.blocked) > 0}
	if k.refresh.lastErr != nil {
		st.Error = k.refresh.lastErr.Error()
	}
	return st
}
