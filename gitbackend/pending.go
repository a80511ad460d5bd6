package gitbackend

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/internal/reflog"
)

// A replay that a persist pushed to a local remote is taken by the root
// when something next needs it, not at once (a pendingReplay). The remote
// has every object of it by then, so the root on disk stays what it was
// before the push: its own commit, checked out, with the remote-tracking
// ref where it was, a state a process that dies there leaves too (the
// next boot finds the change on the remote and drops the commit, as git
// rebase drops one that became empty).
//
// Why: with several kernels writing to one remote, most persists replay
// on other agents' commits, and bringing the root to the replay was a
// fifth of their CPU time, most of it creating a pack (two new files) for
// the other agents' objects. A persist that comes next, as under a burst
// of writes, takes the pending replay into its own commit instead: one
// pack holds both, and the index and refs are written once. Anything else
// that takes the repository's lock, and Materialize for a path the replay
// changes (the kernel calls it before every tool call), brings the root to
// the replay first, so nothing ever reads the root behind it.

// pendingReplay is a pushed replay the root has not taken yet.
type pendingReplay struct {
	branch string
	plan   *replayPlan
	// from is the commit the branch is at on disk (the root's own head,
	// which the replay recreated); over is the remote's tip the push went
	// over, tracking where the remote-tracking ref goes.
	from, over, tracking plumbing.Hash
	// ov holds the replay's objects and the other agents' it fetched.
	ov *overlay
	// to is the replay's tree; changes the checkout from the root's tree
	// to it (read, never changed: Materialize looks without the lock).
	to      plumbing.Hash
	changes []fileChange
}

// touches reports whether bringing the root to the replay changes a path
// at, beneath or above one of paths (every path when none is given).
func (p *pendingReplay) touches(paths []string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, c := range p.changes {
		for _, q := range paths {
			if q == "" || q == "." || atOrBeneath(c.Path, q) || atOrBeneath(q, c.Path) {
				return true
			}
		}
	}
	return false
}

// deferReplay makes the replay just pushed pending instead of bringing the
// root to it, when nothing has moved the worktree yet (a hook that reads
// the worktree had each merged tree checked out). It reports whether it
// did.
func (r *Repo) deferReplay(branch string, plan *replayPlan, from, over, tracking plumbing.Hash, ov *overlay) bool {
	if !r.mayDefer || ov == nil {
		return false
	}
	fromTree, err := r.treeOf(from)
	if err != nil || plan.at != fromTree {
		return false
	}
	to, err := r.treeOf(plan.head)
	if err != nil {
		return false
	}
	changes, err := treeDiff(context.Background(), ov, fromTree, to)
	if err != nil {
		return false
	}
	r.pending.Store(&pendingReplay{branch: branch, plan: plan, from: from, over: over, tracking: tracking, ov: ov, to: to, changes: changes})
	return true
}

// pendingHere returns the pending replay when the root on disk is still
// where it left it (another process sharing the root, or git run in it,
// may have moved the branch since: then the replay is dropped, and the
// root is as that left it). The repository's lock is held.
func (r *Repo) pendingHere() *pendingReplay {
	p := r.pending.Load()
	if p == nil {
		return nil
	}
	if branch, err := r.branch(); err != nil || branch != p.branch {
		r.pending.Store(nil)
		return nil
	}
	if head, err := r.head(); err != nil || head != p.from {
		r.pending.Store(nil)
		return nil
	}
	return p
}

// Settle brings the root on disk to the last commit its persists pushed
// (a replay left pending, see Config.DeferReplays): for a caller about to
// hand the root to another program. Every other call that reads the root
// does it first anyway.
func (r *Repo) Settle(ctx context.Context) error {
	if r.pending.Load() == nil {
		return nil
	}
	if err := r.lock(ctx); err != nil {
		return err
	}
	r.unlock()
	return nil
}

// settle brings the root to a pending replay (the repository's lock held):
// what a persist did at once before replays were deferred.
func (r *Repo) settle(ctx context.Context) error {
	p := r.pendingHere()
	if p == nil {
		return nil
	}
	r.pending.Store(nil)
	saved := r.ov
	r.ov = p.ov
	defer func() { r.ov = saved }()
	if err := r.finishReplay(ctx, p.branch, p.plan, p.tracking); err != nil {
		return fmt.Errorf("bring the root to commit %s (already on the remote): %w", short(p.plan.head), err)
	}
	r.logPush(p.branch, p.over, p.tracking)
	return nil
}

// foldPending starts a persist of ch on a pending replay: the root's
// worktree and index are brought to the replay, but for the paths ch
// commits (their files are the agent's now; their entries take the
// replay's version unstaged, which the commit stages over), the replay's
// entry goes to the branch's log, and the persist's objects join the
// replay's in memory. The branch and the remote-tracking ref move once
// the commit is written (foldDone). It returns nil when there was
// nothing to fold.
func (r *Repo) foldPending(ctx context.Context, ch Change) (*pendingReplay, error) {
	p := r.pendingHere()
	if p == nil {
		return nil, nil
	}
	r.pending.Store(nil)
	r.ov = p.ov
	keep := map[string]bool{}
	for _, q := range ch.Paths {
		keep[q] = true
	}
	if err := takeLocalWork(ctx); err != nil {
		return nil, err
	}
	defer releaseLocalWork()
	// The checkout sorts and smudges its changes: a copy, since a
	// Materialize may still be reading p's.
	if err := r.checkoutChanges(slices.Clone(p.changes), p.to, true, keep); err != nil {
		return nil, err
	}
	p.plan.at = p.to
	r.logReplayMove(p)
	return p, nil
}

// foldDone ends a persist folded on p: the replay's objects are on disk
// (in the commit's pack when the persist made one, committed), the branch
// at the replay unless the commit moved it on, and the remote-tracking
// ref where the replay's push left it. The branch's log has the replay's
// entry already (foldPending).
func (r *Repo) foldDone(p *pendingReplay, committed bool) error {
	if err := r.writeOverlay(); err != nil {
		return err
	}
	if !committed {
		if err := r.setBranch(p.branch, p.plan.head); err != nil {
			return err
		}
	}
	if err := r.setTracking(p.branch, p.tracking); err != nil {
		return err
	}
	r.logPush(p.branch, p.over, p.tracking)
	return nil
}

// logReplayMove logs the branch's move from the root's own commit to
// p's replay (pull --rebase's entry) without writing the ref, which a
// commit on the replay moves further at once.
func (r *Repo) logReplayMove(p *pendingReplay) {
	_, who, err := r.Signatures(time.Now())
	if err != nil {
		return
	}
	ref := plumbing.NewBranchReferenceName(p.branch)
	refs := []plumbing.ReferenceName{ref}
	if head, err := r.store.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference && head.Target() == ref {
		refs = append(refs, plumbing.HEAD)
	}
	r.logMove(p.from, p.plan.head, reflog.Ident(who.Name, who.Email, who.When), replayReflog(p.branch, p.plan.tip), refs...)
}
