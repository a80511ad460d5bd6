package gitbackend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"go.opentelemetry.io/otel/attribute"

	"github.com/tgp-go/tgp/internal/gitident"
	"github.com/tgp-go/tgp/internal/reflog"
	"github.com/tgp-go/tgp/internal/telemetry"
)

// DerivedFile is never merged textually: the Hook regenerates it.
const DerivedFile = "meta.json"

// Change is a set of worktree paths to commit (deletions included) with a
// message. A Change with no paths pushes what is already committed.
type Change struct {
	Paths   []string
	Message string
}

// PersistResult is reported once the remote accepted the push.
type PersistResult struct {
	Commit   string
	Branch   string
	Attempts int
	// Replayed is true when the change was recreated on a newer remote head.
	Replayed bool
	// NoChange is true when the paths already matched HEAD: nothing was
	// committed.
	NoChange bool
	// Local is true when there is no remote: the commit stays local.
	Local bool
	// Batched is how many callers' changes went out in this commit (group
	// commit, see Persist); 0 when it holds this change alone.
	Batched int
	// Notes say what the caller should know of how it was pushed (the
	// journal did not answer and the push went directly).
	Notes []string
	// Unlanded is true when the write returned once its journal entry
	// JournalID was durable (Config.JournalAckDurable), before any push:
	// Commit is the root's own commit, not the remote's yet.
	Unlanded  bool
	JournalID int64
}

// Committed says whether the change is in a commit. Persist returns a
// result with its error once the commit exists (a failed push: the commit
// waits, unpushed, for the next one) and none when it failed before.
func (p *PersistResult) Committed() bool { return p != nil && p.Commit != "" }

// ErrConflict matches *ConflictError.
var ErrConflict = errors.New("conflict")

// ConflictError: another agent changed the same lines. The agent's version
// is kept on Branch, pushed to the remote; the root is at the remote head.
type ConflictError struct {
	Paths  []string
	Branch string
	Commit string
	// Pushed is false when even the conflict branch could not be pushed;
	// it then exists only locally.
	Pushed bool
}

func (e *ConflictError) Error() string {
	where := "pushed to the remote"
	if !e.Pushed {
		where = "kept locally (pushing it failed)"
	}
	return fmt.Sprintf("conflict: another agent changed the same lines of %s; your version is on branch %s (%s); the root now has the remote's version: re-read and redo your edit",
		strings.Join(e.Paths, ", "), e.Branch, where)
}

func (e *ConflictError) Is(t error) bool { return t == ErrConflict }

// Persist commits the change and pushes it, replaying it on the remote
// head as often as needed (bounded by Retry.Deadline).
//
// Persists of one Repo are group-committed: a call that finds another
// persist in progress (waiting for the remote, replaying) queues its
// change, and the next call to run takes every queued change into one
// commit and one push. Under contention the changes go out in batches, not
// as a queue of replays; each caller gets the result of the commit that
// holds its change.
func (r *Repo) Persist(ctx context.Context, ch Change) (*PersistResult, error) {
	t := &persistTicket{ch: ch, done: make(chan struct{})}
	r.batch.mu.Lock()
	r.batch.queue = append(r.batch.queue, t)
	r.batch.mu.Unlock()
	if err := r.lockOrDone(ctx, t.done); err != nil {
		if r.batch.withdraw(t) {
			return nil, err
		}
		<-t.done // taken by a persist in progress: its outcome is ours
		return t.res, t.err
	}
	select {
	case <-t.done: // a batch before ours held it
		r.unlock()
		return t.res, t.err
	default:
	}
	defer r.unlock()
	batch := r.batch.take()
	if len(batch) == 0 { // cannot happen: ours was not done, so queued
		batch = []*persistTicket{t}
	}
	res, err := r.persistLocked(ctx, mergeChanges(batch))
	for _, b := range batch {
		b.res, b.err = res, err
		if res != nil && len(batch) > 1 {
			cp := *res
			cp.Batched = len(batch)
			b.res = &cp
		}
		close(b.done)
	}
	return t.res, t.err
}

// persistTicket is one caller's change waiting for a persist to take it.
type persistTicket struct {
	ch   Change
	done chan struct{}
	res  *PersistResult
	err  error
}

// persistBatch is the queue of changes waiting for the repository lock.
type persistBatch struct {
	mu    sync.Mutex
	queue []*persistTicket
}

// take empties the queue.
func (b *persistBatch) take() []*persistTicket {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	return q
}

// withdraw removes t when no persist has taken it yet.
func (b *persistBatch) withdraw(t *persistTicket) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, x := range b.queue {
		if x == t {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			return true
		}
	}
	return false
}

// mergeChanges makes one change of a batch: every path once, the
// messages one after the other (the first is the subject).
func mergeChanges(batch []*persistTicket) Change {
	if len(batch) == 1 {
		return batch[0].ch
	}
	var out Change
	seen := map[string]bool{}
	var msgs []string
	for _, t := range batch {
		for _, p := range t.ch.Paths {
			if !seen[p] {
				seen[p] = true
				out.Paths = append(out.Paths, p)
			}
		}
		m := strings.TrimSpace(t.ch.Message)
		if m == "" && len(t.ch.Paths) > 0 {
			m = "forge: " + strings.Join(t.ch.Paths, ", ")
		}
		if m != "" {
			msgs = append(msgs, m)
		}
	}
	out.Message = strings.Join(msgs, "\n\n")
	return out
}

// lockOrDone takes the repository's locks, unless done closes first (the
// caller's change was taken by the persist holding them).
func (r *Repo) lockOrDone(ctx context.Context, done <-chan struct{}) error {
	select {
	case r.sem <- struct{}{}:
	case <-done:
		return errTaken
	case <-ctx.Done():
		return ctx.Err()
	}
	return r.lockFile(ctx)
}

// errTaken: the change was taken into another caller's commit.
var errTaken = errors.New("taken by a batch")

func (r *Repo) persistLocked(ctx context.Context, ch Change) (*PersistResult, error) {
	// The objects this persist makes stay in memory until they are
	// written as one pack (commitPaths, replay).
	r.ov = r.newOverlay()
	r.sigs = &sigMemo{}
	defer func() { r.ov, r.sigs = nil, nil }()
	branch, err := r.branch()
	if err != nil {
		return nil, err
	}
	head, err := r.head()
	if err != nil {
		return nil, err
	}
	// A replay the last persist pushed and the root has not taken yet goes
	// into this commit's pack (pending.go); without a change to commit,
	// the root takes it first.
	var fold *pendingReplay
	switch {
	case r.pending.Load() == nil:
	case len(ch.Paths) > 0:
		if fold, err = r.foldPending(ctx, ch); err != nil {
			return nil, err
		}
		if fold != nil {
			head = fold.plan.head
		}
	default:
		if err := r.settle(ctx); err != nil {
			return nil, err
		}
	}
	r.mayDefer = r.cfg.DeferReplays
	defer func() { r.mayDefer = false }()
	res := &PersistResult{Branch: branch}
	if lr, ok := r.remote.(*localRemote); ok && len(ch.Paths) > 0 {
		// The writer whose turn comes while this commit is made waits
		// for it, to push it in the same batch.
		var a *arrival
		ctx, a = lr.expectPush(ctx, branch)
		defer a.done()
	}
	if len(ch.Paths) > 0 {
		newHead, changed, err := r.commitPaths(ctx, branch, head, ch)
		if fold != nil {
			if ferr := r.foldDone(fold, err == nil && changed); ferr != nil {
				return nil, errors.Join(err, fmt.Errorf("bring the root to commit %s (already on the remote): %w", short(fold.plan.head), ferr))
			}
		}
		if err != nil {
			return nil, err
		}
		if !changed {
			res.NoChange = true
		}
		head = newHead
	}
	res.Commit = head.String()
	if r.remote == nil {
		res.Local = true
		return res, nil
	}
	if head.IsZero() {
		return res, nil
	}
	if head == r.trackingTip(branch) {
		res.Attempts = 0
		return res, nil
	}
	r.journalNotes, r.journalAcked, r.acking = nil, 0, true
	n, final, err := r.pushLocked(ctx, branch, plumbing.ZeroHash)
	res.Notes, res.JournalID, res.Unlanded = r.journalNotes, r.journalAcked, r.journalAcked != 0
	r.acking, r.journalAcked = false, 0
	if err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) {
			return nil, err
		}
		return res, err // committed locally, not pushed
	}
	res.Commit, res.Attempts, res.Replayed = final.String(), n, final != head
	return res, nil
}

// commitPaths stages the paths and commits them on top of head. The new
// objects go to disk as one pack before the index and the branch name
// them.
func (r *Repo) commitPaths(ctx context.Context, branch string, head plumbing.Hash, ch Change) (plumbing.Hash, bool, error) {
	if r.ov == nil {
		r.ov = r.newOverlay()
		defer func() { r.ov = nil }()
	}
	ov := r.ov
	baseTree, err := r.treeOf(head)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	// A path left unwritten that the change names (a file written over
	// another agent's, unread) is settled first: the file there now is
	// what its entry describes, skip-worktree no more.
	if err := r.materializeLocked(ctx, ch.Paths); err != nil {
		return plumbing.ZeroHash, false, err
	}
	clean := r.checkinCleaner(ov, baseTree)
	var changes []fileChange
	seen := map[string]bool{}
	for _, p := range ch.Paths {
		if seen[p] || p == "" {
			continue
		}
		seen[p] = true
		c, err := stagePathWith(ov, r.wt, p, clean)
		if err != nil {
			return plumbing.ZeroHash, false, fmt.Errorf("stage %s: %w", p, err)
		}
		changes = append(changes, c)
	}
	tree, err := writeTreeStored(ov, baseTree, changes)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if tree == baseTree && !head.IsZero() {
		if err := stageInIndex(ov, r.wt, changes); err != nil {
			return plumbing.ZeroHash, false, err
		}
		return head, false, nil
	}
	if tree.IsZero() {
		if tree, err = storeEmptyTree(ov); err != nil {
			return plumbing.ZeroHash, false, err
		}
	}
	msg := ch.Message
	if strings.TrimSpace(msg) == "" {
		msg = "forge: " + strings.Join(ch.Paths, ", ")
	}
	var parents []plumbing.Hash
	if !head.IsZero() {
		parents = []plumbing.Hash{head}
	}
	// The commit is made before the index is touched: a commit that
	// cannot be made (no identity) leaves the index as it was, so the
	// change is an unstaged edit, not staged half-state.
	c, err := r.writeCommit(tree, parents, msg, nil)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if err := takeLocalWork(ctx); err != nil {
		return plumbing.ZeroHash, false, err
	}
	defer releaseLocalWork()
	p, err := r.flushOverlay()
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	// Every object new since head is in p: the push sends it as it is
	// when the remote is still at head.
	ov.pushable = &segment{base: head, head: c, pack: p}
	if err := stageInIndex(ov, r.wt, changes); err != nil {
		return plumbing.ZeroHash, false, err
	}
	if err := r.setBranch(branch, c); err != nil {
		return plumbing.ZeroHash, false, err
	}
	r.logCommit(branch, true, head, c, msg) // branch is HEAD's (persistLocked)
	return c, true, nil
}

// localWork bounds how many persists of this process write their roots'
// files at once (a commit's pack, index and refs; a replay's checkout)
// to the number of processors. Creating a file is CPU time in the kernel;
// with every writer of a batch checking out at once, the writer holding
// the remote's lock (whose turn every other waits for) got a small share
// of the processors and held the lock many times longer (32 writers: the
// lock held 90% of the time, ~1 s per batch).
var localWork = make(chan struct{}, runtime.GOMAXPROCS(0))

func takeLocalWork(ctx context.Context) error {
	select {
	case localWork <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func releaseLocalWork() { <-localWork }

func (r *Repo) setBranch(branch string, h plumbing.Hash) error {
	return r.store.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), h))
}

// writeCommit stores a commit; author keeps an original author on replay.
func (r *Repo) writeCommit(tree plumbing.Hash, parents []plumbing.Hash, msg string, author *object.Signature) (plumbing.Hash, error) {
	a, committer, err := r.Signatures(time.Now())
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if author != nil {
		a = *author
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	signer, err := r.signer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	c := &object.Commit{Author: a, Committer: committer, Message: msg, TreeHash: tree, ParentHashes: parents}
	return EncodeCommit(r.objs(), c, signer)
}

// signer is the key that signs this root's commits (ResolveSigner). A
// persist resolves it once, with the people (sigs): a replay made under
// the remote's lock reads no key or config file.
func (r *Repo) signer() (CommitSigner, error) {
	if m := r.sigs; m != nil && m.signerOK {
		return m.signer, nil
	}
	s, err := ResolveSigner(r.cfg.SigningKey, r.repo, r.cfg.Environ)
	if err != nil {
		return nil, err
	}
	if m := r.sigs; m != nil {
		m.signer, m.signerOK = s, true
	}
	return s, nil
}

// ErrNoIdentity: user.useConfigOnly is set and no commit identity is
// configured (otherwise the bot identity is used).
var ErrNoIdentity = gitident.ErrNoIdentity

// Signatures resolves the author and committer of a commit made now, as
// git does (package gitident): git.author, the GIT_AUTHOR_* /
// GIT_COMMITTER_* variables, the repository's, global and system git
// config, then the bot identity. The git tools commit through the same
// resolver, so every commit the kernel makes names the same people.
//
// A persist resolves the people once (sigs): the replays a batch's leader
// makes for it under the remote's lock and their reflog entries do not
// read the config files again with the lock held.
func (r *Repo) Signatures(now time.Time) (author, committer object.Signature, err error) {
	if m := r.sigs; m != nil && m.ok {
		// The people resolved once; a time that was now's is now's again
		// (one the environment fixed, GIT_*_DATE, stays).
		author, committer = m.author, m.committer
		if m.authorNow {
			author.When = now
		}
		if m.committerNow {
			committer.When = now
		}
		return author, committer, nil
	}
	author, committer, err = Signatures(r.repo, gitident.Person(r.cfg.Author), r.cfg.Environ, now)
	if m := r.sigs; m != nil && err == nil {
		*m = sigMemo{author: author, committer: committer, ok: true,
			authorNow: author.When.Equal(now), committerNow: committer.When.Equal(now)}
	}
	return author, committer, err
}

// sigMemo holds the signatures of one persist (Repo.Signatures), and
// whether each time was the call's.
type sigMemo struct {
	author, committer       object.Signature
	authorNow, committerNow bool
	ok                      bool
	// signer is the persist's CommitSigner, once signerOK.
	signer   CommitSigner
	signerOK bool
}

// Signatures is Repo.Signatures for any repository.
func Signatures(repo *git.Repository, configured gitident.Person, environ []string, now time.Time) (author, committer object.Signature, err error) {
	var raw []byte
	if cfg, cerr := repo.Config(); cerr == nil {
		raw, _ = cfg.Marshal()
	}
	a, c, err := gitident.Resolve(gitident.Sources{Configured: configured, Environ: environ, RepoConfig: raw}, now)
	if err != nil {
		return author, committer, err
	}
	return object.Signature{Name: a.Name, Email: a.Email, When: a.When}, object.Signature{Name: c.Name, Email: c.Email, When: c.When}, nil
}

// pushLocked pushes the local commits on branch, replaying them on the
// remote tip when the remote moved. tip, when not zero, is a tip already
// fetched. It returns the attempts made and the final head.
func (r *Repo) pushLocked(ctx context.Context, branch string, tip plumbing.Hash) (int, plumbing.Hash, error) {
	if lr, ok := r.remote.(*localRemote); ok {
		// The remote's hooks speak to whoever pushes, as git shows them.
		lr.progress = r.cfg.Progress
		return r.pushUnderRemoteLock(ctx, lr, branch)
	}
	return r.pushNet(ctx, branch, tip, 0)
}

// pushUnderRemoteLock pushes to a local remote as one locked transaction
// (see localRemote.Update): replay happens at most once, on the tip read
// under the lock. The wait for the lock is bounded by the retry budget.
//
// Only what the push needs is done under the remote's lock: the replay is
// made in memory (planReplay) and its objects read from there by the
// remote. The root takes it afterwards (finishReplay: its pack, worktree,
// index and refs), while the next writer holds the lock; this Repo's own
// lock is held throughout, so no tool sees the root in between.
func (r *Repo) pushUnderRemoteLock(ctx context.Context, lr *localRemote, branch string) (int, plumbing.Hash, error) {
	budget := r.cfg.Retry.Deadline
	// Nothing else moves the refs while the repository is locked: read
	// them once.
	base := r.trackingTip(branch)
	head, err := r.head()
	if err != nil {
		return 0, plumbing.ZeroHash, err
	}
	final := head
	// What other agents pushed joins this persist's objects in memory and
	// goes to disk in the same pack as the replay.
	if r.ov == nil {
		r.ov = r.newOverlay()
		defer func() { r.ov = nil }()
	}
	ov := r.ov
	var plan *replayPlan
	// over is the remote's tip the push goes over (for the reflog).
	over := base
	// One attempt (the replay is made under the remote's lock), its push
	// the locked update.
	actx, aspan := telemetry.Start(ctx, "tgp.persist.attempt", attribute.Int("tgp.persist.attempt", 1))
	pctx, pspan := telemetry.Start(actx, "git.push")
	err = lr.Update(pctx, branch, budget, base, ov, ov.addFetched, func(tip plumbing.Hash) (plumbing.Hash, *segment, error) {
		over = tip
		if (tip == base || tip == head) && plan == nil {
			// Nothing to replay (or the remote has our head already: a
			// process stopped after the push, before its refs moved).
			final = head
			return head, ov.pushable, nil
		}
		// Called again (a batch that could not be pushed): the replay is
		// made anew on this tip, from where the last one left the root
		// and the hook.
		p, err := r.planReplay(ctx, branch, base, head, tip, plan)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		plan, final = p, p.head
		if p.head == tip {
			return tip, nil, nil // every change was on the remote already
		}
		own, err := r.packOwn()
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		var seg *segment
		if own != nil {
			seg = &segment{base: tip, head: p.head, pack: own}
		}
		return p.head, seg, nil
	})
	telemetry.End(pspan, err)
	telemetry.End(aspan, err)
	if r.stopped("pushed") {
		return 1, final, errStopped
	}
	if plan != nil && err == nil && r.deferReplay(branch, plan, head, over, final, ov) {
		return 1, final, nil // the root takes it when next needed
	}
	if plan != nil {
		// The replay goes to the root whether the push went through or
		// not (then it waits there, unpushed, as a replay made before a
		// failed push always did).
		tracking := plan.tip
		if err == nil {
			tracking = final
		}
		if ferr := r.finishReplay(ctx, branch, plan, tracking); ferr != nil {
			if err == nil {
				return 1, final, fmt.Errorf("the remote has commit %s, but bringing the root to it failed (the next persist or boot does): %w", short(final), ferr)
			}
			return 1, final, errors.Join(r.wrapRemoteErr("push", err), ferr)
		}
	}
	if err != nil {
		if errors.Is(err, ErrDeclined) {
			err = fmt.Errorf("%w\n(commit %s stays local and is not retried: the remote's own policy refused it, and refuses every push that contains it until that policy accepts it)", err, short(final))
		}
		return 1, final, r.wrapRemoteErr("push", err)
	}
	if plan == nil { // finishReplay set it
		if err := r.setTracking(branch, final); err != nil {
			return 1, final, err
		}
	}
	r.logPush(branch, over, final)
	return 1, final, nil
}

// replayPlan is a replay made in memory (planReplay): commits recreated
// on tip, their objects in the overlay.
type replayPlan struct {
	tip plumbing.Hash
	// head is the last commit recreated (tip when every change was on
	// tip already).
	head plumbing.Hash
	// at is the tree the worktree and index are at: the local head's, or
	// the last one a replay had to check out (a hook that reads the
	// worktree); seen is the tree the hook's derived files were last made
	// for.
	at, seen plumbing.Hash
}

// planReplay recreates the local commits base..head on top of tip in the
// overlay. The worktree, the index and the refs are left as they are
// (finishReplay moves them), unless the hook can only regenerate derived
// files from the worktree: then each merged tree is checked out. On a real
// conflict the original head goes to a tgp/conflict/<id> branch (pushed)
// and the root is reset to tip.
//
// A commit whose change tip has already (every path the same) is dropped,
// as git rebase drops a commit that became empty: a process that stopped
// after its push and before its refs moved replays onto its own commit.
//
// prev is a plan made before on another tip and abandoned (its push
// failed): the root and the hook are where it left them.
func (r *Repo) planReplay(ctx context.Context, branch string, base, head, tip plumbing.Hash, prev *replayPlan) (*replayPlan, error) {
	if prev == nil {
		at, err := r.treeOf(head)
		if err != nil {
			return nil, err
		}
		prev = &replayPlan{at: at, seen: at}
	}
	plan, conflicts, err := r.planReplayKeep(ctx, base, head, tip, prev)
	if err != nil {
		return nil, err
	}
	if len(conflicts) > 0 {
		return nil, r.conflict(ctx, branch, head, plan.at, tip, conflicts)
	}
	return plan, nil
}

// planReplayKeep is planReplay without the conflict's consequences: it
// returns the paths in conflict, with the plan as far as it got (where the
// worktree and the hook are: the caller carries them on). prev says
// where they are before it. On an error, too, the plan says where they
// are (nil only when nothing moved), so that the caller can bring them
// back (unwindReplay).
func (r *Repo) planReplayKeep(ctx context.Context, base, head, tip plumbing.Hash, prev *replayPlan) (*replayPlan, []string, error) {
	local, err := r.localCommits(base, head)
	if err != nil {
		return nil, nil, err
	}
	ov := r.ov
	plan := &replayPlan{tip: tip, at: prev.at, seen: prev.seen}
	cur := tip
	for _, c := range local {
		parentTree := plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			if parentTree, err = r.treeOf(c.ParentHashes[0]); err != nil {
				return plan, nil, err
			}
		}
		ours, err := treeDiff(ctx, ov, parentTree, c.TreeHash)
		if err != nil {
			return plan, nil, err
		}
		curTree, err := r.treeOf(cur)
		if err != nil {
			return plan, nil, err
		}
		merged, conflicts, err := r.mergeChanges(ctx, parentTree, curTree, ours)
		if err != nil {
			return plan, nil, err
		}
		if len(conflicts) > 0 {
			return plan, conflicts, nil
		}
		// The remote has never seen our own blobs: they go in the pack
		// with the replayed commit.
		for _, m := range merged {
			if !m.Delete && m.Mode != filemode.Submodule {
				if err := ov.include(m.Hash); err != nil {
					return plan, nil, err
				}
			}
		}
		newTree, err := writeTreeStored(ov, curTree, merged)
		if err != nil {
			return plan, nil, err
		}
		if r.hook != nil {
			if newTree, err = r.deriveFiles(ctx, plan, plan.seen, newTree); err != nil {
				return plan, nil, err
			}
			plan.seen = newTree
		}
		if newTree == curTree && parentTree != c.TreeHash {
			continue // tip has this change already
		}
		author := c.Author
		var parents []plumbing.Hash
		if !cur.IsZero() { // the remote branch was deleted: a root commit
			parents = []plumbing.Hash{cur}
		}
		nc, err := r.writeCommit(newTree, parents, c.Message, &author)
		if err != nil {
			return plan, nil, err
		}
		cur = nc
	}
	plan.head = cur
	return plan, nil, nil
}

// deriveFiles has the hook regenerate the derived files for newTree, the
// paths that differ from seen (the tree they were last made for) being
// what changed, and returns newTree with them. A TreeHook reads the tree;
// any other hook reads the worktree, which is checked out first.
func (r *Repo) deriveFiles(ctx context.Context, plan *replayPlan, seen, newTree plumbing.Hash) (plumbing.Hash, error) {
	ov := r.ov
	if th, ok := r.hook.(TreeHook); ok {
		changes, err := treeDiff(ctx, ov, seen, newTree)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		changed := make([]string, len(changes))
		for i, c := range changes {
			changed[i] = c.Path
		}
		files, ok, err := th.DeriveFromTree(ctx, changed, &treeReader{s: ov, tree: newTree, smudge: r.checkoutSmudgerFor(ov, newTree)})
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("regenerate derived files: %w", err)
		}
		if ok {
			if len(files) == 0 {
				return newTree, nil
			}
			clean := r.checkinCleaner(ov, newTree)
			extra := make([]fileChange, 0, len(files))
			for p, data := range files {
				data, mode := clean(p, data, filemode.Regular)
				h, err := storeBlob(ov, data)
				if err != nil {
					return plumbing.ZeroHash, err
				}
				extra = append(extra, fileChange{Path: p, Mode: mode, Hash: h})
			}
			sort.Slice(extra, func(i, j int) bool { return extra[i].Path < extra[j].Path })
			return writeTreeStored(ov, newTree, extra)
		}
	}
	// The hook reads the worktree: bring it to the merged tree first,
	// every file on disk.
	if err := r.materializeLocked(ctx, nil); err != nil {
		return plumbing.ZeroHash, err
	}
	moved, err := r.checkoutTrees(ctx, plan.at, newTree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	plan.at = newTree
	var paths []string
	if ih, ok := r.hook.(IncrementalHook); ok {
		changed := make([]string, len(moved))
		for i, m := range moved {
			changed[i] = m.Path
		}
		paths, err = ih.RegenerateChanged(ctx, changed)
	} else {
		paths, err = r.hook.Regenerate(ctx)
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("regenerate derived files: %w", err)
	}
	var extra []fileChange
	clean := r.checkinCleaner(ov, newTree)
	for _, p := range paths {
		fc, err := stagePathWith(ov, r.wt, p, clean)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		extra = append(extra, fc)
	}
	if newTree, err = writeTreeStored(ov, newTree, extra); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := stageInIndex(ov, r.wt, extra); err != nil {
		return plumbing.ZeroHash, err
	}
	// The index now records the derived files too: it is at newTree.
	plan.at = newTree
	return newTree, nil
}

// treeReader is a TreeReader on a tree of the overlay.
type treeReader struct {
	s      storer.EncodedObjectStorer
	tree   plumbing.Hash
	smudge Smudger
}

func (t *treeReader) ReadFile(p string) ([]byte, bool, error) {
	e, ok, err := treeEntry(t.s, t.tree, p)
	if err != nil || !ok || !e.Mode.IsRegular() {
		return nil, false, err
	}
	data, err := readBlob(t.s, e.Hash)
	if err != nil {
		return nil, false, err
	}
	return t.smudge(p, data), true, nil
}

func (t *treeReader) Exists(p string) (bool, error) {
	_, ok, err := treeEntry(t.s, t.tree, p)
	return ok, err
}

// finishReplay brings the root to a replay made in memory: its objects
// (and those fetched) into the root's store as one pack, the worktree and
// index from the tree they are at to the replayed commit's, then the
// branch there and the remote-tracking ref at tracking. The branch moves
// last: until then the root is at its own commit, which a later replay
// recreates on the remote tip (or finds there already).
func (r *Repo) finishReplay(ctx context.Context, branch string, plan *replayPlan, tracking plumbing.Hash) error {
	if err := takeLocalWork(ctx); err != nil {
		return err
	}
	defer releaseLocalWork()
	if err := r.writeOverlay(); err != nil {
		return err
	}
	to, err := r.treeOf(plan.head)
	if err != nil {
		return err
	}
	// The new files are other agents': written when something reads the
	// root (Materialize), not by every root at every persist.
	if _, err := r.checkoutTreesLazy(ctx, plan.at, to, true); err != nil {
		return err
	}
	plan.at = to
	if r.stopped("checked-out") {
		return errStopped
	}
	if err := r.moveBranch(branch, plan.head, replayReflog(branch, plan.tip)); err != nil {
		return err
	}
	if r.stopped("branch-moved") {
		return errStopped
	}
	return r.setTracking(branch, tracking)
}

// unwindReplay brings the root back to its own head's tree after a
// replay that will not be pushed (the push gave up): the worktree and
// the index from where the plan left them (a hook that reads the
// worktree had each merged tree checked out), and the hook's state from
// the tree it last derived for. A TreeHook's state is rewound from the
// tree; a hook that reads the worktree regenerates from the root, whose
// derived files then go back to the head's version (the root is as it
// was before the push, byte for byte).
func (r *Repo) unwindReplay(ctx context.Context, headTree plumbing.Hash, plan *replayPlan) error {
	if plan == nil {
		return nil
	}
	// The unwind runs when the push's own context has ended: it must not
	// stop halfway for that reason.
	ctx = context.WithoutCancel(ctx)
	if plan.at != headTree {
		if _, err := r.checkoutTrees(ctx, plan.at, headTree); err != nil {
			return fmt.Errorf("bring the root back to its own commit after the push gave up: %w", err)
		}
		plan.at = headTree
	}
	if plan.seen == headTree || r.hook == nil {
		return nil
	}
	changes, err := treeDiff(ctx, r.objs(), plan.seen, headTree)
	if err != nil {
		return err
	}
	plan.seen = headTree
	changed := make([]string, len(changes))
	for i, c := range changes {
		changed[i] = c.Path
	}
	if th, ok := r.hook.(TreeHook); ok {
		s := r.objs()
		_, ok, err := th.DeriveFromTree(ctx, changed, &treeReader{s: s, tree: headTree, smudge: r.checkoutSmudgerFor(s, headTree)})
		if err != nil || ok {
			return err
		}
		// It declined: it holds no state to rewind.
		return nil
	}
	var derived []string
	if ih, ok := r.hook.(IncrementalHook); ok {
		derived, err = ih.RegenerateChanged(ctx, changed)
	} else {
		derived, err = r.hook.Regenerate(ctx)
	}
	if err != nil {
		return fmt.Errorf("regenerate derived files: %w", err)
	}
	return r.checkoutPaths(headTree, derived)
}

// checkoutPaths writes paths as tree has them (deleted where it has
// none) to the worktree and the index.
func (r *Repo) checkoutPaths(tree plumbing.Hash, paths []string) error {
	s := r.objs()
	var changes []fileChange
	for _, p := range paths {
		e, ok, err := treeEntry(s, tree, p)
		switch {
		case err != nil:
			return err
		case !ok:
			if _, err := r.wt.Lstat(p); err == nil {
				changes = append(changes, fileChange{Path: p, Delete: true})
			}
		default:
			changes = append(changes, fileChange{Path: p, Mode: e.Mode, Hash: e.Hash})
		}
	}
	return r.checkoutChanges(changes, tree, false, nil)
}

// errStopped: a test stopped the persist there (Repo.stopAt).
var errStopped = errors.New("stopped (test)")

// stopped says whether a test stops the persist at point.
func (r *Repo) stopped(point string) bool { return r.stopAt != nil && r.stopAt(point) }

// checkoutTrees moves worktree and index from fromTree to toTree and
// returns the paths it changed.
func (r *Repo) checkoutTrees(ctx context.Context, fromTree, toTree plumbing.Hash) ([]fileChange, error) {
	return r.checkoutTreesLazy(ctx, fromTree, toTree, false)
}

// checkoutTreesLazy is checkoutTrees leaving new files unwritten when
// deferNew is set (lazyFiles): what brings a root to a commit its persist
// pushed, where the new files are other agents'.
func (r *Repo) checkoutTreesLazy(ctx context.Context, fromTree, toTree plumbing.Hash, deferNew bool) ([]fileChange, error) {
	if fromTree == toTree {
		return nil, nil
	}
	changes, err := treeDiff(ctx, r.objs(), fromTree, toTree)
	if err != nil {
		return nil, err
	}
	return changes, r.checkoutChanges(changes, toTree, deferNew, nil)
}

// checkoutChanges writes changes, a diff to toTree, to the worktree and
// the index (checkoutTreesLazy); the files at keep stay as they are
// (lazyCheckout.keep).
func (r *Repo) checkoutChanges(changes []fileChange, toTree plumbing.Hash, deferNew bool, keep map[string]bool) error {
	s := r.objs()
	smudgeAll(changes, r.checkoutSmudgerFor(s, toTree))
	// A hook that reads the worktree needs every file on disk.
	_, treeHook := r.hook.(TreeHook)
	deferNew = deferNew && (r.hook == nil || treeHook)
	return applyChanges(s, r.wt, changes, &lazyCheckout{files: &r.lazy, deferNew: deferNew, keep: keep})
}

// localCommits lists base..head along first parents, oldest first.
func (r *Repo) localCommits(base, head plumbing.Hash) ([]*object.Commit, error) {
	var out []*object.Commit
	for h := head; !h.IsZero() && h != base; {
		c, err := object.GetCommit(r.objs(), h)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		out = append(out, c)
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
		if len(out) > 10000 {
			return nil, fmt.Errorf("more than 10000 unpushed commits: refusing to replay")
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// mergeChanges applies our changes (relative to parentTree) onto curTree:
// a path the other side did not touch takes our version; a path both sides
// changed is merged three-way; the derived file is left to the hook.
func (r *Repo) mergeChanges(ctx context.Context, parentTree, curTree plumbing.Hash, ours []fileChange) ([]fileChange, []string, error) {
	s := r.objs()
	var out []fileChange
	var conflicts []string
	for _, c := range ours {
		if c.Path == DerivedFile {
			continue
		}
		base, hasBase, err := treeEntry(s, parentTree, c.Path)
		if err != nil {
			return nil, nil, err
		}
		theirs, hasTheirs, err := treeEntry(s, curTree, c.Path)
		if err != nil {
			return nil, nil, err
		}
		sameAsBase := hasBase == hasTheirs && (!hasBase || (base.Hash == theirs.Hash && base.Mode == theirs.Mode))
		if sameAsBase {
			out = append(out, c) // they did not touch it
			continue
		}
		oursSame := (c.Delete && !hasTheirs) || (!c.Delete && hasTheirs && theirs.Hash == c.Hash && theirs.Mode == c.Mode)
		if oursSame {
			continue // both made the same change
		}
		if c.Delete || !hasTheirs || !hasBase || theirs.Mode != c.Mode || c.Mode == filemode.Symlink {
			conflicts = append(conflicts, c.Path)
			continue
		}
		bb, err := readBlob(s, base.Hash)
		if err != nil {
			return nil, nil, err
		}
		ob, err := readBlob(s, c.Hash)
		if err != nil {
			return nil, nil, err
		}
		tb, err := readBlob(s, theirs.Hash)
		if err != nil {
			return nil, nil, err
		}
		m, n, err := mergeFile(ctx, bb, ob, tb)
		if err != nil {
			return nil, nil, err
		}
		if n > 0 {
			conflicts = append(conflicts, c.Path)
			continue
		}
		h, err := storeBlob(s, m)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, fileChange{Path: c.Path, Mode: c.Mode, Hash: h})
	}
	sort.Strings(conflicts)
	return out, conflicts, nil
}

// conflict keeps the agent's commits on a conflict branch, pushes it, and
// resets branch, worktree and index to the remote tip.
func (r *Repo) conflict(ctx context.Context, branch string, head, worktreeAt, tip plumbing.Hash, paths []string) error {
	// worktreeAt is the tree the worktree and index are at.
	name := "tgp/conflict/" + time.Now().UTC().Format("20060102-150405") + "-" + randomID()
	ce := &ConflictError{Paths: paths, Branch: name, Commit: head.String()}
	if _, err := r.flushOverlay(); err != nil {
		return err
	}
	// The root is reset to the remote's version and read again whole
	// (the toolbox rebuilds its registry): every file on disk.
	if err := r.materializeLocked(ctx, nil); err != nil {
		return err
	}
	if err := r.setTracking(branch, tip); err != nil {
		return err
	}
	if err := r.store.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(name), head)); err != nil {
		return err
	}
	if _, who, err := r.Signatures(time.Now()); err == nil {
		r.logMove(plumbing.ZeroHash, head, reflog.Ident(who.Name, who.Email, who.When), "branch: Created from "+head.String(), plumbing.NewBranchReferenceName(name))
	}
	if err := r.remote.Push(ctx, name, plumbing.ZeroHash, head); err == nil {
		ce.Pushed = true
	}
	tipTree, err := r.treeOf(tip)
	if err != nil {
		return err
	}
	if _, err := r.checkoutTrees(ctx, worktreeAt, tipTree); err != nil {
		return err
	}
	if err := r.moveBranch(branch, tip, "reset: moving to "+tip.String()); err != nil {
		return err
	}
	return ce
}

func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Flush pushes local commits not yet on the remote; an error lists what
// could not be pushed. Shutdown calls it.
func (r *Repo) Flush(ctx context.Context) error {
	if r.remote == nil {
		return nil
	}
	if err := r.lock(ctx); err != nil {
		return err
	}
	defer r.unlock()
	branch, err := r.branch()
	if err != nil {
		return nil // detached: nothing of ours to push
	}
	head, err := r.head()
	if err != nil || head.IsZero() || head == r.trackingTip(branch) {
		return err
	}
	if _, _, err := r.pushLocked(ctx, branch, plumbing.ZeroHash); err != nil {
		return fmt.Errorf("unpushed commits on %s (head %s): %w", branch, short(head), err)
	}
	return nil
}

func backoff(base time.Duration, attempt int) time.Duration {
	d := base << uint(attempt-1)
	if max := 2 * time.Second; d > max || d <= 0 {
		d = max
	}
	return d
}

// equalJitter picks a uniformly random delay in [d/2, d].
func equalJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d/2)+1))
	if err != nil {
		return d
	}
	return d/2 + time.Duration(n.Int64())
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

// PersistBranch commits the change on branch (created from HEAD's commit
// when it does not exist yet) without moving HEAD, the index or the
// worktree, and pushes that branch. It is the pull-request strategy: the
// base branch is never pushed. A rejected push is an error (the branch is
// this session's own), never a silent local-only commit.
func (r *Repo) PersistBranch(ctx context.Context, ch Change, branch string) (*PersistResult, error) {
	if err := r.lock(ctx); err != nil {
		return nil, err
	}
	defer r.unlock()
	var parent plumbing.Hash
	if ref, err := r.store.Reference(plumbing.NewBranchReferenceName(branch)); err == nil {
		parent = ref.Hash()
	} else if r.remote != nil && r.trackingTip(branch).IsZero() {
		// A branch this root never had may exist on the remote (a session
		// shared with other roots): build on it.
		tip, err := r.remote.Fetch(ctx, branch, 0)
		if err != nil {
			return nil, r.wrapRemoteErr("fetch "+branch, err)
		}
		if !tip.IsZero() {
			parent = tip
			if err := r.setTracking(branch, tip); err != nil {
				return nil, err
			}
		}
	}
	if parent.IsZero() {
		var err error
		if parent, err = r.head(); err != nil {
			return nil, err
		}
	}
	parentTree, err := r.treeOf(parent)
	if err != nil {
		return nil, err
	}
	clean := r.checkinCleaner(r.store, parentTree)
	// The root's derived file was made for the base branch: with a hook
	// that can, it is derived again for the branch (derived holds the
	// root's own, for when it cannot), and it is never a clash.
	bh, _ := r.hook.(BranchHook)
	var changes []fileChange
	var derived *fileChange
	for _, p := range ch.Paths {
		c, err := stagePathWith(r.store, r.wt, p, clean)
		if err != nil {
			return nil, fmt.Errorf("stage %s: %w", p, err)
		}
		if bh != nil && p == DerivedFile {
			derived = &c
			continue
		}
		changes = append(changes, c)
	}
	// build commits the changes on top of parent (a no-op when they are
	// already there).
	build := func(parent plumbing.Hash) (plumbing.Hash, bool, error) {
		baseTree, err := r.treeOf(parent)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		tree, err := writeTreeStored(r.store, baseTree, changes)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if derived != nil {
			if tree, err = r.deriveOnBranch(ctx, bh, parent, baseTree, tree, *derived); err != nil {
				return plumbing.ZeroHash, false, err
			}
		}
		if tree == baseTree && !parent.IsZero() {
			return parent, false, nil
		}
		if tree.IsZero() {
			if tree, err = storeEmptyTree(r.store); err != nil {
				return plumbing.ZeroHash, false, err
			}
		}
		var parents []plumbing.Hash
		if !parent.IsZero() {
			parents = []plumbing.Hash{parent}
		}
		head, err := r.writeCommit(tree, parents, ch.Message, nil)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if err := r.setBranch(branch, head); err != nil {
			return plumbing.ZeroHash, false, err
		}
		cur, err := r.branch()
		r.logCommit(branch, err == nil && cur == branch, parent, head, ch.Message)
		return head, true, nil
	}
	head, made, err := build(parent)
	if err != nil {
		return nil, err
	}
	res := &PersistResult{Branch: branch, Commit: head.String(), NoChange: !made}
	if r.remote == nil {
		res.Local = true
		return res, nil
	}
	old := r.trackingTip(branch)
	if old == head {
		return res, nil
	}
	for attempt := 1; ; attempt++ {
		err := r.remote.Push(ctx, branch, old, head)
		if err == nil {
			break
		}
		if errors.Is(err, ErrRejected) && attempt < r.cfg.Retry.MaxAttempts {
			// Another root of the same session pushed first: rebuild the
			// change on the branch's new tip, unless it touched the same
			// paths (then the agent re-reads them).
			tip, ferr := r.remote.Fetch(ctx, branch, 0)
			if ferr != nil {
				return nil, r.wrapRemoteErr("fetch "+branch, ferr)
			}
			if clash, cerr := r.sameTreePaths(parent, tip, changes); cerr != nil {
				return nil, cerr
			} else if len(clash) > 0 {
				return nil, &ConflictError{Paths: clash, Branch: branch, Commit: head.String(), Pushed: false}
			}
			if err := r.setTracking(branch, tip); err != nil {
				return nil, err
			}
			parent, old = tip, tip
			if head, made, err = build(tip); err != nil {
				return nil, err
			}
			res.Commit, res.NoChange, res.Replayed = head.String(), !made, true
			if head == tip {
				break
			}
			res.Attempts = attempt
			continue
		}
		if permanentRemoteErr(err) || errors.Is(err, ErrRejected) || attempt >= r.cfg.Retry.MaxAttempts {
			return nil, r.wrapRemoteErr("push "+branch, err)
		}
		if err := r.sleep(ctx, r.jitter(backoff(r.cfg.Retry.BaseDelay, attempt))); err != nil {
			return nil, err
		}
		res.Attempts = attempt
	}
	res.Attempts++
	if err := r.setTracking(branch, head); err != nil {
		return res, err
	}
	r.logPush(branch, old, head)
	return res, nil
}

// deriveOnBranch adds the derived files to tree, the change committed on
// a branch at parent (whose tree is baseTree). On the root's own HEAD the
// root's derived file (own) was made for that very tree and is taken;
// elsewhere (a branch other roots committed to) the hook derives them from
// the branch's own and the paths the change makes differ, and own only
// when the hook cannot.
func (r *Repo) deriveOnBranch(ctx context.Context, bh BranchHook, parent, baseTree, tree plumbing.Hash, own fileChange) (plumbing.Hash, error) {
	if head, err := r.head(); err == nil && head == parent {
		return writeTreeStored(r.store, tree, []fileChange{own})
	}
	diff, err := treeDiff(ctx, r.store, baseTree, tree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	changed := make([]string, len(diff))
	for i, c := range diff {
		changed[i] = c.Path
	}
	files, ok, err := bh.DeriveOnBranch(ctx, changed, &treeReader{s: r.store, tree: tree, smudge: r.checkoutSmudgerFor(r.store, tree)})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("regenerate derived files for the branch: %w", err)
	}
	if !ok {
		return writeTreeStored(r.store, tree, []fileChange{own})
	}
	clean := r.checkinCleaner(r.store, tree)
	extra := make([]fileChange, 0, len(files))
	for p, data := range files {
		data, mode := clean(p, data, filemode.Regular)
		h, err := storeBlob(r.store, data)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		extra = append(extra, fileChange{Path: p, Mode: mode, Hash: h})
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].Path < extra[j].Path })
	return writeTreeStored(r.store, tree, extra)
}

// sameTreePaths lists the paths among changes that differ between the
// trees of commits a and b: changed on both sides.
func (r *Repo) sameTreePaths(a, b plumbing.Hash, changes []fileChange) ([]string, error) {
	ta, err := r.treeOf(a)
	if err != nil {
		return nil, err
	}
	tb, err := r.treeOf(b)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range changes {
		ea, oka, err := treeEntry(r.store, ta, c.Path)
		if err != nil {
			return nil, err
		}
		eb, okb, err := treeEntry(r.store, tb, c.Path)
		if err != nil {
			return nil, err
		}
		if oka != okb || (oka && (ea.Hash != eb.Hash || ea.Mode != eb.Mode)) {
			out = append(out, c.Path)
		}
	}
	return out, nil
}
