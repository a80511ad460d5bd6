package gitbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"time"

	"crypto/rand"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/tgp-go/tgp/internal/telemetry"
)

// Pushing to a network remote. A push is bounded by time (Retry.Deadline),
// not by a count of attempts: between attempts it waits an exponential
// backoff with full jitter (a uniform delay in [0, min(cap, base·2^n)]),
// and each attempt reads the remote's tip (the ref advertisement; objects
// only when it moved) before replaying on it. With a lock directory the
// processes of a machine push through one queue (machine.go).

// batchItem is one root's commits in a push.
type batchItem struct {
	own        bool
	ticket     *ticket
	base, head plumbing.Hash
	gitdir     string
	// carried, when not nil, is another root's carry found on the remote
	// (carry.go): its commits are in the store, and nobody waits here for
	// its outcome.
	carried *carry
	// landed says another root's push landed this item's commits (they
	// were in this root's carry): they are on the tip, not replayed.
	landed bool
	// Outcome of the attempt that pushed: commit holds the change (zero:
	// nothing of it to push), conflict the paths another agent changed on
	// the same lines, err why it could not be taken.
	commit   plumbing.Hash
	conflict []string
	err      error
	// landedAt is, for a landed item, the commit another root's push made
	// of its change (landedAs); commit is the chain's tip there, where
	// the next item goes on.
	landedAt plumbing.Hash
	// journalID is the item's journal entry (0: none); objects, for
	// another root's entry, holds its commits (read from its pack).
	journalID int64
	objects   storer.EncodedObjectStorer
}

// holds is the commit that holds the item's change, for its caller.
func (it *batchItem) holds() plumbing.Hash {
	if !it.landedAt.IsZero() {
		return it.landedAt
	}
	return it.commit
}

// pushNet pushes the local commits base..head on branch. tip, when not
// zero, is the remote's tip already fetched. budget bounds it (zero:
// Retry.Deadline). It returns the attempts made and the commit that holds
// the change on the remote (the root is then at the remote's new tip).
func (r *Repo) pushNet(ctx context.Context, branch string, tip plumbing.Hash, budget time.Duration) (int, plumbing.Hash, error) {
	if budget <= 0 {
		budget = r.cfg.Retry.Deadline
	}
	dctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	head, err := r.head()
	if err != nil {
		return 0, plumbing.ZeroHash, err
	}
	base := r.trackingTip(branch)
	if r.cfg.Journal != nil {
		if n, c, ok, err := r.pushJournaled(ctx, dctx, branch, base, head); ok {
			return n, c, err
		}
	}
	own := &batchItem{own: true, base: base, head: head, gitdir: r.gitDirPath()}
	var q *machineQueue
	var rootID string
	if r.cfg.LockDir != "" && own.gitdir != "" {
		rootID = r.rootIDLocked()
	}
	if rootID != "" {
		q = machineQueueFor(r.cfg.LockDir, r.cfg.Remote, branch)
		t := &ticket{ID: newTicketID(), Remote: redact(r.cfg.Remote), Branch: branch, Base: base.String(), Head: head.String(),
			GitDir: own.gitdir, RootID: rootID, Created: time.Now().UnixNano(), PID: os.Getpid()}
		if err := q.submit(t); err != nil {
			r.progressf("machine queue unavailable, pushing alone: %v", err)
			q = nil
		} else {
			own.ticket = t
		}
	}
	if q == nil {
		n, plan, final, err := r.leadPush(dctx, branch, tip, false, []*batchItem{own}, nil)
		if err == nil {
			err = r.finishBatch(ctx, branch, plan, final)
		}
		if err != nil {
			return n, plumbing.ZeroHash, r.pendingErr(ctx, branch, base, head, false, err)
		}
		return n, own.holds(), r.ownOutcome(ctx, branch, own)
	}
	// The queue and the hold are spans of their own: in a fleet they are
	// most of a slow write's time, and nothing else shows them.
	_, qspan := telemetry.Start(ctx, "tgp.persist.queue")
	res, _, err := q.await(dctx, own.ticket.ID, 10*time.Millisecond)
	switch {
	case err != nil:
		qspan.SetAttributes(attribute.String("tgp.outcome", "timeout"))
	case res != nil:
		qspan.SetAttributes(attribute.String("tgp.outcome", "batched"), attribute.Int("tgp.persist.batch_size", res.Batched))
	default:
		qspan.SetAttributes(attribute.String("tgp.outcome", "turn"))
	}
	qspan.End()
	if err != nil {
		return 0, plumbing.ZeroHash, r.pendingErr(ctx, branch, base, head, true, fmt.Errorf("no turn to push within %v (git.retry.deadline): %w", budget, err))
	}
	if res != nil {
		q.finish(own.ticket.ID)
		return r.adopt(ctx, branch, own, res)
	}
	// This process holds the machine's turn: it pushes for every root
	// waiting, and for those that queue while it retries.
	items := []*batchItem{own}
	taken := map[string]bool{own.ticket.ID: true}
	// A ticket that does not prove where it comes from is refused:
	// removed with its result, logged, never pushed (ticketcheck.go).
	refused := func(err error) {
		r.progressf("warning: %v; removed, not pushed", err)
	}
	check := func(t *ticket) error {
		if taken[t.ID] {
			return nil // checked already, or this root's own
		}
		return r.checkTicket(q, t)
	}
	more := func() []*batchItem {
		var out []*batchItem
		for _, t := range q.pending(branch, check, refused) {
			if taken[t.ID] {
				continue
			}
			taken[t.ID] = true
			b, _ := hashFromHex(t.Base)
			h, _ := hashFromHex(t.Head)
			out = append(out, &batchItem{ticket: t, base: b, head: h, gitdir: t.GitDir})
		}
		return out
	}
	mt := q.readTip()
	if w := mt.politeWait(time.Now()); w > 0 {
		_, hspan := telemetry.Start(ctx, "tgp.persist.hold")
		err := r.sleep(dctx, w)
		hspan.End()
		if err != nil {
			q.unlock()
			return 0, plumbing.ZeroHash, r.pendingErr(ctx, branch, base, head, true, err)
		}
	}
	items = append(items, more()...)
	// While other machines contend, the tip this machine last pushed is
	// stale by the time its hold ends (a round of their pushes): in a
	// trace of 4 contending machines, 21 of 23 first attempts on it were
	// refused, each a connection and an advertisement lost before the
	// fetch the retry makes anyway. Then the first attempt fetches.
	fetchFirst := mt.contendedWithin(time.Now(), 2*time.Minute)
	if tip.IsZero() && !fetchFirst {
		// The last push from this machine is likely the remote's tip: its
		// objects are here, in the root that pushed it.
		if mt != nil && mt.Commit != own.base.String() && registeredRoot(mt.GitDir, mt.Root) {
			if h, ok := hashFromHex(mt.Commit); ok && r.objectsOf(dctx, "", mt.GitDir, h, false) == nil {
				tip = h
			}
		}
	}
	n, plan, final, err := r.leadPush(dctx, branch, tip, fetchFirst, items, func() []*batchItem {
		m := more()
		items = append(items, m...)
		return m
	})
	batched := 0
	for _, it := range items {
		if !it.commit.IsZero() {
			batched++
		}
	}
	for _, it := range items[1:] {
		res := &ticketResult{Attempts: n, Batched: batched}
		switch {
		case it.err != nil:
			res.Err = it.err.Error()
		case err != nil:
			if !errors.Is(err, ErrDeclined) && !errors.Is(err, ErrAuth) {
				continue // not taken: it leads the next batch itself
			}
			res.Err = err.Error()
		default:
			res.Commit, res.Final, res.Conflict, res.LeaderGitDir = it.holds().String(), final.String(), it.conflict, own.gitdir
			res.LeaderRoot = rootID
		}
		b, _ := json.Marshal(res)
		if werr := writeFileAtomic(q.resultPath(it.ticket.ID), b); werr != nil {
			r.progressf("machine queue: result for %s: %v", it.ticket.ID, werr)
		}
	}
	if err == nil {
		nt := machineTip{Commit: final.String(), GitDir: own.gitdir, Root: rootID, PushedAt: time.Now().UnixNano(), PushNanos: int64(r.lastPush),
			CycleNanos: int64(r.lastCycle)}
		nt.Attempts = float64(n)
		if mt != nil {
			nt.ContendedAt = mt.ContendedAt
			nt.Attempts = 0.7*mt.Attempts + 0.3*float64(n)
			if mt.CycleNanos > 0 {
				if nt.CycleNanos == 0 {
					nt.CycleNanos = mt.CycleNanos
				} else {
					nt.CycleNanos = int64(0.7*float64(mt.CycleNanos) + 0.3*float64(nt.CycleNanos))
				}
			}
		}
		if n > 1 {
			nt.ContendedAt = time.Now().UnixNano()
		}
		q.writeTip(nt)
	}
	// The others have their results; this root is brought to the pushed
	// tip after the machine's turn is passed on.
	q.unlock()
	q.finish(own.ticket.ID)
	if err == nil {
		err = r.finishBatch(ctx, branch, plan, final)
	}
	if err != nil {
		return n, plumbing.ZeroHash, r.pendingErr(ctx, branch, base, head, false, err)
	}
	return n, own.holds(), r.ownOutcome(ctx, branch, own)
}

// ownOutcome is the leader's own conflict, once the batch is pushed.
func (r *Repo) ownOutcome(ctx context.Context, branch string, own *batchItem) error {
	if own.err != nil {
		return own.err
	}
	if len(own.conflict) == 0 {
		return nil
	}
	final := r.trackingTip(branch)
	finalTree, err := r.treeOf(final)
	if err != nil {
		return err
	}
	// The root is at final already (leadPush): its own version goes to
	// a conflict branch.
	return r.conflict(ctx, branch, own.head, finalTree, final, own.conflict)
}

// pendingErr reports base..head as not pushed, unless err says more (a
// conflict, a refusal that no retry changes).
func (r *Repo) pendingErr(ctx context.Context, branch string, base, head plumbing.Hash, queued bool, err error) error {
	var ce *ConflictError
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, ErrDeclined) {
		err = fmt.Errorf("%w\n(not retried: the remote's own policy refused it, and refuses every push that contains it until that policy accepts it)", err)
	}
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("not pushed within %v (git.retry.deadline): %w", r.cfg.Retry.Deadline, err)
	}
	return &PendingError{Branch: branch, Remote: redact(r.cfg.Remote), Commits: r.pendingList(base, head), Queued: queued, Err: err}
}

// leadPush recreates every item's commits, in order, on the remote's tip
// and pushes them in one push, until it succeeds or ctx ends. On success
// the root is at the pushed tip (its worktree, index, refs and hook) and
// each item says which commit holds its change.
//
// tip zero means unknown: the first attempt assumes the remote is where
// this root last saw it (a push that finds it moved fails before sending
// anything). more, when not nil, is asked before each new attempt for
// items that queued meanwhile.
//
// fetchFirst makes the first attempt fetch the remote's tip too, as every
// retry does, instead of pushing on tip (or the root's base).
func (r *Repo) leadPush(ctx context.Context, branch string, tip plumbing.Hash, fetchFirst bool, items []*batchItem, more func() []*batchItem) (_ int, _ *replayPlan, _ plumbing.Hash, err error) {
	own := items[0]
	fetched := !tip.IsZero()
	if tip.IsZero() {
		tip = own.base
	}
	if r.ov == nil {
		r.ov = r.newOverlay()
		defer func() { r.ov = nil }()
	}
	headTree, err := r.treeOf(own.head)
	if err != nil {
		return 0, nil, plumbing.ZeroHash, err
	}
	// Where the root's worktree and the hook are: moved only by a hook
	// that reads the worktree, and by the end of the push.
	prev := &replayPlan{at: headTree, seen: headTree}
	// A push that gives up leaves the root at its own commits, where it
	// was: a replay abandoned there would have the next commit made on
	// the root's head from another tree's files (the remote's, without
	// this root's own last changes), and its persist push their deletion.
	defer func() {
		if err != nil {
			if uerr := r.unwindReplay(ctx, headTree, prev); uerr != nil {
				err = errors.Join(err, uerr)
			}
		}
	}()
	sources := map[string]*filesystem.Storage{}
	defer func() {
		for _, s := range sources {
			s.Close()
		}
	}()
	var lastErr error
	attempt := 0
	// mine is this root's carry on the remote (carry.go), carried the
	// others' carries the last fetch listed. A carry not landed by this
	// root's own push is withdrawn when it returns.
	var mine *carry
	var carried []*batchItem
	// stale are the proven carries the last fetch found too old, or on
	// the branch already: the push deletes them.
	var stale []*carry
	// leaving is the carry sent after a refusal the remote made once it
	// had the pack (carryAfterRefusal): the next attempt takes it.
	var leaving chan leftCarry
	// unsure are carries sent whose outcome this root never heard (the
	// connection or the budget ended first): perhaps on the remote, so
	// never taken for this root's own (a carry gone says its commits
	// landed), and withdrawn when the push returns, in case they are.
	var unsure []*carry
	took := func(l leftCarry) {
		switch {
		case l.c == nil:
		case l.sure:
			mine = l.c
		default:
			unsure = append(unsure, l.c)
		}
	}
	defer func() {
		if leaving != nil {
			took(<-leaving)
		}
		if mine != nil {
			r.withdrawCarry(ctx, mine, false)
		}
		for _, c := range unsure {
			if c != mine {
				r.withdrawCarry(ctx, c, true)
			}
		}
	}()
	// Each attempt is a span (a child of the caller's tgp.persist), its
	// push a child of it.
	span := trace.SpanFromContext(context.Background()) // a no-op until the first attempt
	defer func() { span.End() }()
	for {
		if attempt > 0 {
			d := r.backoffDelay(attempt, lastErr)
			if (mine != nil || leaving != nil) && len(carried) >= 2 && errors.Is(lastErr, ErrRejected) {
				// This root's commits wait on the remote for the next
				// push that wins, and at least two other roots race for
				// it: rather than race them again at once, give them about
				// a retry cycle to land it (the next fetch then finds it
				// landed). With fewer, a wait is a round lost: at 4
				// machines waiting always cost 10-30% of the throughput.
				d = max(d, carryPatience(r.lastCycle))
			}
			if err := r.sleep(ctx, d); err != nil {
				break
			}
		}
		// Within the push budget, a push waits for its turn before it
		// reads the remote's tip (a tip read before the wait would be
		// stale after it), and the writes that queue meanwhile go in it.
		waited, err := r.awaitPushBudget(ctx)
		if err != nil {
			lastErr = err
			break
		}
		attempt++
		span.End()
		var actx context.Context
		actx, span = telemetry.Start(ctx, "tgp.persist.attempt", attribute.Int("tgp.persist.attempt", attempt),
			attribute.Int("tgp.persist.batch_size", len(items)))
		if (attempt > 1 || waited) && more != nil {
			items = append(items, more()...)
		}
		if mine != nil && time.Since(mine.at) > carryOwnAge {
			// Soon any winner may delete it as stale: its absence would
			// no longer say it landed. This root pushes its commits itself.
			r.withdrawCarry(ctx, mine, false)
			mine = nil
		}
		var opened chan openedPush
		cycleStart := time.Time{}
		if (tip.IsZero() && !fetched) || attempt > 1 || fetchFirst {
			fetchFirst = false
			cycleStart = time.Now()
			fetched = true
			opened = r.openPushBeside(ctx)
			fctx, fspan := telemetry.Start(actx, "git.fetch")
			var t plumbing.Hash
			var err error
			if r.carrying() {
				var cs []*carry
				t, cs, err = r.remote.(*netRemote).fetchCarrying(fctx, branch)
				if err == nil {
					if leaving != nil {
						// The carry sent after the last refusal: a fetch
						// that began before it landed does not list it,
						// so absence proves nothing yet (the push below
						// deletes it, or fails if another push did).
						if l := <-leaving; l.c != nil && l.sure {
							took(l)
							if !listed(cs, mine) {
								cs = append(cs, mine)
							}
						} else {
							took(l)
						}
						leaving = nil
					}
					if mine != nil && !listed(cs, mine) {
						// Gone: deleted by another root's push with the
						// branch update that holds its commits (atomic).
						for _, it := range items[:min(mine.items, len(items))] {
							it.landed = true
						}
						mine = nil
					}
					carried, stale = r.sortCarries(branch, t, cs, mine)
					fspan.SetAttributes(attribute.Int("tgp.persist.carries_seen", len(carried)))
				}
			} else {
				t, err = r.remote.Fetch(fctx, branch, 0)
			}
			telemetry.End(fspan, err)
			if err != nil {
				closeOpened(opened)
				lastErr = err
				if permanentRemoteErr(err) {
					return attempt, nil, plumbing.ZeroHash, r.wrapRemoteErr("fetch", err)
				}
				if rerr := r.rateLimitOutlasts(ctx, err); rerr != nil {
					lastErr = rerr
					break
				}
				if ctx.Err() != nil {
					break
				}
				continue
			}
			tip = t
		}
		all := items
		if len(carried) > 0 && r.carrying() {
			all = append(append([]*batchItem(nil), items...), carried...)
		}
		plan, chain, err := r.planBatch(ctx, tip, prev, all, sources)
		if plan != nil {
			// The replay is where the worktree and the hook are now: the
			// next attempt, or the unwind, starts there.
			prev = plan
		}
		if err != nil {
			closeOpened(opened)
			return attempt, nil, plumbing.ZeroHash, err
		}
		if chain == tip {
			closeOpened(opened)
			return attempt, plan, tip, nil
		}
		// go-git's push reads the objects from the store (and the other
		// roots of this machine copy them from there).
		if err := r.writeOverlay(); err != nil {
			closeOpened(opened)
			return attempt, nil, plumbing.ZeroHash, err
		}
		ex, next := r.pushExtrasFor(branch, tip, items, all[len(items):], stale, mine)
		if r.beforePush != nil {
			if err := r.beforePush(all); err != nil {
				closeOpened(opened)
				return attempt, nil, plumbing.ZeroHash, err
			}
		}
		pushStart := time.Now()
		err = r.pushTraced(actx, branch, tip, chain, takeOpened(opened), ex)
		r.lastPush = time.Since(pushStart)
		if !cycleStart.IsZero() {
			r.lastCycle = time.Since(cycleStart)
		}
		if err == nil {
			if ex != nil && ex.withSent {
				mine = nil // deleted by the push
			}
			return attempt, plan, chain, nil
		}
		switch {
		case ex != nil && ex.sentInstead:
			mine = next
		case ex != nil && ex.unsureInstead:
			unsure = append(unsure, next)
		case next != nil && errors.Is(err, ErrRejected) && ex.withSent:
			// The advertisement matched, but another push landed first:
			// the carry goes in a session of its own, beside the next
			// attempt's fetch.
			leaving = r.carryAfterRefusal(ctx, ex.pack, next)
		}
		lastErr = err
		if errors.Is(err, ErrDeclined) && ex != nil && ex.withSent && len(ex.with) > 0 {
			// A remote that refuses deleting refs (receive.denyDeletes)
			// takes no carries: push without them from now on.
			r.noCarry.Store(true)
			carried, stale = nil, nil
			continue
		}
		if permanentRemoteErr(err) {
			return attempt, nil, plumbing.ZeroHash, r.wrapRemoteErr("push", err)
		}
		if rerr := r.rateLimitOutlasts(ctx, err); rerr != nil {
			lastErr = rerr
			break
		}
		if ctx.Err() != nil {
			break
		}
	}
	if lastErr == nil {
		lastErr = ctx.Err()
	} else if ctx.Err() != nil {
		lastErr = fmt.Errorf("%w (last attempt: %v)", ctx.Err(), lastErr)
	}
	return attempt, nil, plumbing.ZeroHash, fmt.Errorf("gave up after %d attempt(s): %w", attempt, lastErr)
}

// openedPush is a receive-pack session opened beside a fetch, or why not.
type openedPush struct {
	ps  *pushSession
	err error
}

// openPushBeside opens the push's receive-pack session while the fetch
// runs (nil for a remote that is not a network one). A retry's window,
// from the fetch's advertisement to the update landing, is then the rest
// of the fetch, the replay and the send: the push's connection and
// advertisement (a round trip and a half, and a process the server
// starts) are out of it, and a machine whose window is shorter loses
// fewer races.
func (r *Repo) openPushBeside(ctx context.Context) chan openedPush {
	n, ok := r.remote.(*netRemote)
	if !ok || r.pushes != nil {
		// Within a push budget a session opened ahead counts as a push
		// and may be wasted (nothing to push, or the tip moved): the
		// push opens its own once its turn is taken.
		return nil
	}
	ch := make(chan openedPush, 1)
	go func() {
		ps, err := n.openPush(ctx)
		ch <- openedPush{ps, err}
	}()
	return ch
}

// takeOpened is the session opened beside the fetch, nil when it could
// not be opened (the push opens its own).
func takeOpened(ch chan openedPush) *pushSession {
	if ch == nil {
		return nil
	}
	o := <-ch
	if o.err != nil {
		return nil
	}
	return o.ps
}

func closeOpened(ch chan openedPush) {
	if ch != nil {
		go func() { takeOpened(ch).close() }()
	}
}

// pushTraced is r.pushChain in a git.push span; a push another agent
// beat is an outcome ("rejected"), not a span error.
func (r *Repo) pushTraced(ctx context.Context, branch string, from, to plumbing.Hash, ps *pushSession, ex *pushExtras) error {
	ctx, span := telemetry.Start(ctx, "git.push")
	err := r.pushChain(ctx, branch, from, to, ps, ex)
	if ex != nil {
		span.SetAttributes(attribute.Bool("tgp.persist.carry_left", ex.sentInstead))
		if ex.withSent {
			span.SetAttributes(attribute.Int("tgp.persist.carries_landed", len(ex.with)))
		}
	}
	switch {
	case err == nil:
		span.SetAttributes(attribute.String("tgp.outcome", "pushed"))
	case errors.Is(err, ErrRejected):
		span.SetAttributes(attribute.String("tgp.outcome", "rejected"))
		span.End()
		return err
	default:
		span.SetAttributes(telemetry.ErrorType(pushErrorKind(err)))
	}
	telemetry.End(span, err)
	return err
}

func pushErrorKind(err error) string {
	switch {
	case errors.Is(err, ErrAuth):
		return "auth"
	case errors.Is(err, ErrDeclined):
		return "declined"
	}
	return "push_failed"
}

// backoffDelay is the pause before attempt+1. After a push that another
// machine beat, the remote is up and moving: the loser retries at once
// (a few milliseconds of jitter), because a loser that backed off longer
// with each loss would lose every race to the machines that just won (the
// capture effect of exponential backoff); the winners make room instead
// (machineTip.politeWait). A remote that did not answer gets exponential
// backoff with full jitter, up to 5 s.
func (r *Repo) backoffDelay(attempt int, last error) time.Duration {
	var rl *RateLimitError
	if errors.As(last, &rl) && rl.RetryAfter > 0 {
		// The host said when: asking sooner is refused again, and spends
		// the budget it is refusing.
		return rl.RetryAfter + r.jitter(r.cfg.Retry.BaseDelay)
	}
	if errors.Is(last, ErrRejected) || errors.Is(last, ErrRemoteLocked) {
		return r.jitter(r.cfg.Retry.BaseDelay)
	}
	return r.jitter(expDelay(r.cfg.Retry.BaseDelay, attempt, 5*time.Second))
}

// awaitPushBudget waits until the machine's push budget has room for a
// push (nothing to wait without a budget). waited says it slept: writes
// may have queued meanwhile. A wait longer than ctx allows is an error
// naming the budget.
func (r *Repo) awaitPushBudget(ctx context.Context) (waited bool, err error) {
	if r.pushes == nil {
		return false, nil
	}
	d := r.pushes.wait(ctx)
	if d == 0 {
		return false, nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false, &RateLimitError{Limit: r.pushes.describe(), RetryAfter: d, Local: true}
	}
	_, span := telemetry.Start(ctx, "tgp.persist.budget", attribute.Int64("tgp.persist.budget_wait_ms", d.Milliseconds()))
	err = r.sleep(ctx, d)
	span.End()
	return true, err
}

// rateLimitOutlasts is err as the push's final error when it is a rate
// limit the push cannot wait out: the machine's own budget (take found the
// deadline too short), or a host's Retry-After beyond ctx's deadline.
// nil: retry.
func (r *Repo) rateLimitOutlasts(ctx context.Context, err error) error {
	var rl *RateLimitError
	if !errors.As(err, &rl) {
		return nil
	}
	if rl.Local {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && rl.RetryAfter > 0 && time.Until(dl) < rl.RetryAfter {
		return fmt.Errorf("%w (beyond git.retry.deadline)", err)
	}
	return nil
}

// expDelay is base·2^(attempt-1), at most ceiling.
func expDelay(base time.Duration, attempt int, ceiling time.Duration) time.Duration {
	if attempt > 30 {
		return ceiling
	}
	d := base << uint(attempt-1)
	if d > ceiling || d <= 0 {
		d = ceiling
	}
	return d
}

// fullJitterDelay picks a uniform delay in [0, d] (the "full jitter" of
// exponential backoff: writers that lost the same race spread out).
func fullJitterDelay(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d)+1))
	if err != nil {
		return d
	}
	return time.Duration(n.Int64())
}

// planBatch recreates the items' commits one after the other on tip, in
// memory, and returns the plan (where the root and the hook are) and the
// last commit. An item whose commits descend from the chain so far is
// taken as it is (a fast-forward). On an error the plan still says where
// the root and the hook are.
func (r *Repo) planBatch(ctx context.Context, tip plumbing.Hash, prev *replayPlan, items []*batchItem, sources map[string]*filesystem.Storage) (*replayPlan, plumbing.Hash, error) {
	r.ov = r.newOverlay()
	plan := &replayPlan{tip: tip, head: tip, at: prev.at, seen: prev.seen}
	chain := tip
	for _, it := range items {
		it.commit, it.conflict, it.landedAt = plumbing.ZeroHash, nil, plumbing.ZeroHash
		if it.ticket != nil && it.err != nil {
			continue // unreadable ticket, or objects gone
		}
		if it.landed {
			it.commit, it.landedAt = chain, r.landedAs(chain, it)
			continue
		}
		if !it.own && it.carried == nil {
			if err := r.ingest(ctx, it, sources); err != nil {
				it.err = fmt.Errorf("read the commits of %s: %w", it.gitdir, err)
				continue
			}
		}
		switch {
		case it.head.IsZero() || it.head == it.base || it.head == chain:
			it.commit = chain // nothing of its own (or already there)
			continue
		case it.base == chain:
			chain, it.commit = it.head, it.head
			continue
		}
		p, conflicts, err := r.planReplayKeep(ctx, it.base, it.head, chain, plan)
		if p != nil {
			// Where the worktree and the hook are now, whatever came of
			// it: the next item's replay, or the unwind, starts there.
			plan.at, plan.seen = p.at, p.seen
		}
		if err != nil {
			if it.own {
				return plan, plumbing.ZeroHash, err
			}
			it.err = err
			continue
		}
		if len(conflicts) > 0 {
			it.conflict = conflicts
			continue
		}
		chain, it.commit = p.head, p.head
	}
	plan.head = chain
	return plan, chain, nil
}

// ingest brings another root's commits base..head into the overlay (and
// its base, when this root lacks it).
func (r *Repo) ingest(ctx context.Context, it *batchItem, sources map[string]*filesystem.Storage) error {
	if it.head.IsZero() || r.ov.HasEncodedObject(it.head) == nil {
		return nil
	}
	// src is the item's pack (a journal entry) or its root's .git; a nil
	// *filesystem.Storage must not become a non-nil interface.
	var src storer.EncodedObjectStorer = it.objects
	if src == nil {
		fs := sources[it.gitdir]
		if fs == nil {
			s, err := openGitDir(it.gitdir)
			if err != nil {
				return err
			}
			sources[it.gitdir], fs = s, s
		}
		src = fs
	}
	order, _, err := collectMissing(ctx, src, r.ov, it.head, 0)
	if err != nil {
		return err
	}
	for _, h := range order {
		obj, err := src.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return fmt.Errorf("read object %s: %w", h, err)
		}
		r.ov.add(h, obj)
	}
	return nil
}

// finishBatch brings the root to final (pushed, or the tip when nothing
// was): the overlay's objects, the worktree and index, the branch, the
// tracking ref, and the hook's view of the tree.
func (r *Repo) finishBatch(ctx context.Context, branch string, plan *replayPlan, final plumbing.Hash) error {
	plan.head = final
	if err := r.finishReplay(ctx, branch, plan, final); err != nil {
		return fmt.Errorf("the remote has commit %s, but bringing the root to it failed (the next persist or boot does): %w", short(final), err)
	}
	r.logPush(branch, plan.tip, final)
	to, err := r.treeOf(final)
	if err != nil {
		return err
	}
	return r.syncHook(ctx, plan.seen, to)
}

// syncHook tells the hook that the root went from tree from to tree to
// without a replay it saw (fast-forwards, another process's push).
func (r *Repo) syncHook(ctx context.Context, from, to plumbing.Hash) error {
	if r.hook == nil || from == to {
		return nil
	}
	th, ok := r.hook.(TreeHook)
	if !ok {
		return nil
	}
	changes, err := treeDiff(ctx, r.objs(), from, to)
	if err != nil {
		return err
	}
	changed := make([]string, len(changes))
	for i, c := range changes {
		changed[i] = c.Path
	}
	_, _, err = th.DeriveFromTree(ctx, changed, &treeReader{s: r.objs(), tree: to, smudge: r.checkoutSmudgerFor(r.objs(), to)})
	return err
}

// adopt takes the result another process's push gave this root's ticket:
// the objects from its .git (or the remote), the root moved to the pushed
// tip, or the conflict.
func (r *Repo) adopt(ctx context.Context, branch string, own *batchItem, res *ticketResult) (int, plumbing.Hash, error) {
	if res.Err != "" {
		return res.Attempts, plumbing.ZeroHash, r.pendingErr(ctx, branch, own.base, own.head, false, errors.New(res.Err))
	}
	final, ok1 := hashFromHex(res.Final)
	commit, ok2 := hashFromHex(res.Commit)
	if !ok1 || !ok2 {
		return 0, plumbing.ZeroHash, fmt.Errorf("machine queue: unreadable result (%q, %q)", res.Final, res.Commit)
	}
	// A result from a root of this machine is believed, and its objects
	// read from there. Any other (forged, or from a tgp before root ids)
	// only when the remote's branch holds its commit.
	from := res.LeaderGitDir
	if !registeredRoot(from, res.LeaderRoot) {
		from = ""
		if err := r.remoteHolds(ctx, branch, final); err != nil {
			r.progressf("warning: %v; not taken", err)
			return res.Attempts, plumbing.ZeroHash, r.pendingErr(ctx, branch, own.base, own.head, false, err)
		}
	}
	if err := r.objectsOf(ctx, branch, from, final, true); err != nil {
		return res.Attempts, plumbing.ZeroHash, fmt.Errorf("your change is on the remote as commit %s, but this root could not read it (the next refresh or boot does): %w", short(commit), err)
	}
	headTree, err := r.treeOf(own.head)
	if err != nil {
		return 0, plumbing.ZeroHash, err
	}
	if len(res.Conflict) > 0 {
		return res.Attempts, plumbing.ZeroHash, r.conflict(ctx, branch, own.head, headTree, final, res.Conflict)
	}
	finalTree, err := r.treeOf(final)
	if err != nil {
		return 0, plumbing.ZeroHash, err
	}
	if _, err := r.checkoutTreesLazy(ctx, headTree, finalTree, true); err != nil {
		return res.Attempts, commit, err
	}
	// The leader replayed this root's commit onto the remote's tip: the
	// commit's parent is what it went onto.
	onto := final
	if c, err := r.repo.CommitObject(commit); err == nil && len(c.ParentHashes) > 0 {
		onto = c.ParentHashes[0]
	}
	if err := r.moveBranch(branch, final, replayReflog(branch, onto)); err != nil {
		return res.Attempts, commit, err
	}
	if err := r.setTracking(branch, final); err != nil {
		return res.Attempts, commit, err
	}
	return res.Attempts, commit, r.syncHook(ctx, headTree, finalTree)
}

// objectsOf puts final's closure in the store: from another root's .git
// on this machine, else fetched from the remote.
func (r *Repo) objectsOf(ctx context.Context, branch, gitdir string, final plumbing.Hash, orFetch bool) error {
	if r.store.HasEncodedObject(final) == nil {
		return nil
	}
	if gitdir != "" {
		if src, err := openGitDir(gitdir); err == nil {
			err = copyObjects(ctx, src, r.store, final, 0)
			src.Close()
			if err == nil {
				return nil
			}
		}
	}
	if !orFetch {
		return fmt.Errorf("objects of %s not found on this machine", short(final))
	}
	if _, err := r.remote.Fetch(ctx, branch, 0); err != nil {
		return r.wrapRemoteErr("fetch", err)
	}
	return r.store.HasEncodedObject(final)
}

// landedAs finds the commit that holds a landed item's change: the
// winner recreated the item's last commit on its own (same author, date
// and message, as a replay keeps them) somewhere below tip; the tip
// itself may hold later changes of the same paths. Of the commits that
// look so, the newest whose files at the paths the item changed are the
// item's (another root with the same identity may have written the same
// message in the same second); else the newest. Not found (the walk is
// bounded): tip.
func (r *Repo) landedAs(tip plumbing.Hash, it *batchItem) plumbing.Hash {
	s := r.objs()
	want, err := object.GetCommit(s, it.head)
	if err != nil {
		return tip
	}
	var changed []fileChange
	if len(want.ParentHashes) > 0 {
		if parent, err := object.GetCommit(s, want.ParentHashes[0]); err == nil {
			changed, _ = treeDiff(context.Background(), s, parent.TreeHash, want.TreeHash)
		}
	}
	sameFiles := func(c *object.Commit) bool {
		for _, ch := range changed {
			e, ok, err := treeEntry(s, c.TreeHash, ch.Path)
			if err != nil || ok == ch.Delete || (ok && (e.Hash != ch.Hash || e.Mode != ch.Mode)) {
				return false
			}
		}
		return true
	}
	found := plumbing.ZeroHash
	h := tip
	for n := 0; n < 10000 && !h.IsZero() && h != it.base; n++ {
		c, err := object.GetCommit(s, h)
		if err != nil {
			break
		}
		if c.Hash == it.head {
			return c.Hash
		}
		if c.Author.Email == want.Author.Email && c.Author.Name == want.Author.Name &&
			c.Author.When.Equal(want.Author.When) && c.Message == want.Message {
			if sameFiles(c) {
				return c.Hash
			}
			if found.IsZero() {
				found = c.Hash
			}
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	if found.IsZero() {
		return tip
	}
	return found
}
