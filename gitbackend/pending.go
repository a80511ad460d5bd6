package gitbackend

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"

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
	// changed are the paths the checkout from the root's tree to the
	// replay's changes, sorted.
	changed []string
}

// touches reports whether bringing the root to the replay changes a path
// at, beneath or above one of paths (every path when none is given).
func (p *pendingReplay) touches(paths []string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, c := range p.changed {
		for _, q := range paths {
			if q == "" || q == "." || atOrBeneath(c, q) || atOrBeneath(q, c) {
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
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	sort.Strings(paths)
	r.pending.Store(&pendingReplay{branch: branch, plan: plan, from: from, over: over, tracking: tracking, ov: ov, changed: paths})
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
// replay's version unstaged, which the commit stages over), and the
// persist's objects join the replay's in memory. The branch and the
// remote-tracking ref move once the commit is written (foldDone). It
// returns the head to commit on, or zero when there was nothing to fold.
func (r *Repo) foldPending(ctx context.Context, ch Change) (*pendingReplay, error) {
	p := r.pendingHere()
	if p == nil {
		return nil, nil
	}
	r.pending.Store(nil)
	r.ov = p.ov
	to, err := r.treeOf(p.plan.head)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, q := range ch.Paths {
		keep[q] = true
	}
	if err := takeLocalWork(ctx); err != nil {
		return nil, err
	}
	defer releaseLocalWork()
	if err := r.checkoutKeeping(ctx, p.plan.at, to, keep); err != nil {
		return nil, err
	}
	p.plan.at = to
	return p, nil
}

// foldDone ends a persist folded on p: the replay's objects are on disk
// (in the commit's pack when the persist made one, committed), the branch
// at the replay unless the commit moved it on, and the remote-tracking
// ref where the replay's push left it. The branch's log has the replay's
// entry already (persistLocked).
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

// checkoutKeeping is a lazy checkout from one tree to another that leaves
// the files at keep as they are on disk, their index entries describing
// the new tree's version with no stat data (so they compare by content).
func (r *Repo) checkoutKeeping(ctx context.Context, fromTree, toTree plumbing.Hash, keep map[string]bool) error {
	if fromTree == toTree {
		return nil
	}
	s := r.objs()
	changes, err := treeDiff(ctx, s, fromTree, toTree)
	if err != nil {
		return err
	}
	var kept []fileChange
	out := changes[:0]
	for _, c := range changes {
		if keep[c.Path] {
			kept = append(kept, c)
		} else {
			out = append(out, c)
		}
	}
	changes = out
	smudgeAll(changes, r.checkoutSmudgerFor(s, toTree))
	_, treeHook := r.hook.(TreeHook)
	deferNew := r.hook == nil || treeHook
	if err := applyChanges(s, r.wt, changes, &lazyCheckout{files: &r.lazy, deferNew: deferNew}); err != nil {
		return err
	}
	if len(kept) == 0 {
		return nil
	}
	idx, err := s.Index()
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	for _, c := range kept {
		setEntryUnstat(idx, c)
	}
	return s.SetIndex(idx)
}

// setEntryUnstat makes idx record c without stat data (deleted: without
// the entry), whatever the file on disk holds.
func setEntryUnstat(idx *index.Index, c fileChange) {
	if c.Delete {
		removeIndexPath(idx, c.Path)
		return
	}
	e := indexEntryFor(idx, c)
	e.SkipWorktree, e.IntentToAdd = false, false
	e.CreatedAt, e.ModifiedAt = time.Time{}, time.Time{}
	e.Dev, e.Inode, e.UID, e.GID, e.Size = 0, 0, 0, 0, 0
}

// logReplayMove logs the branch's move from a root's own commit to its
// replay (pull --rebase's entry) without writing the ref, which a commit
// on the replay moves further at once.
func (r *Repo) logReplayMove(branch string, from, to, tip plumbing.Hash) {
	_, who, err := r.Signatures(time.Now())
	if err != nil {
		return
	}
	ref := plumbing.NewBranchReferenceName(branch)
	refs := []plumbing.ReferenceName{ref}
	if head, err := r.store.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference && head.Target() == ref {
		refs = append(refs, plumbing.HEAD)
	}
	r.logMove(from, to, reflog.Ident(who.Name, who.Email, who.When), replayReflog(branch, tip), refs...)
}
