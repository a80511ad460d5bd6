// Package receive is the receiving side of a push to a local repository:
// what git's receive-pack (builtin/receive-pack.c) does once the objects
// arrived, so that a shared repository's own policy holds whoever pushes
// to it. A push to a path runs in process (no git binary), so without it
// a pre-receive hook, receive.fsckObjects or receive.denyNonFastForwards
// that the git CLI obeys would be skipped.
//
// The policy is read from the configuration git would read (Policy,
// LoadPolicy, PolicyCache: system, global and repository files, includes
// and includeIf "gitdir:"). Policy.Receive then takes a push in git's
// order: fsck the incoming objects (receive.fsckObjects /
// transfer.fsckObjects, internal/fsck), keep them in a quarantine
// directory (tmp-objdir.c), refuse hidden refs (receive.hideRefs), run
// pre-receive, then for the ref: denyCurrentBranch, denyDeletes,
// denyDeleteCurrent, denyNonFastForwards, the update hook, the work tree
// for denyCurrentBranch=updateInstead (push-to-checkout, or git's own
// push_to_deploy steps); move the objects into the store (with
// core.sharedRepository's permissions); move the ref; run post-receive
// and post-update.
// One deliberate difference: git migrates the objects before the update
// hook, so a refusal by that hook leaves them in the store (unreachable);
// here the update hook also sees the quarantine, and a refusal by it
// leaves nothing behind either.
//
// Hooks git would ignore because they are not executable, or that cannot
// be started on this platform, refuse the push: a policy that cannot run is
// not skipped.
package receive

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/tgp-go/tgp/internal/fsck"
	"github.com/tgp-go/tgp/internal/gitformat/packfile"
)

// ErrDeclined matches every *PushRejectedError: the remote's own policy
// refused the push. It is permanent: pushing the same commits again is
// refused again, so the persist loop does not retry it.
var ErrDeclined = errors.New("push declined by the remote's policy")

// PushRejectedError is a push the remote refused, as git reports it:
// `! [remote rejected] <ref> (<reason>)` after the lines the remote printed
// (its hooks' stdout and stderr, receive-pack's own errors), which git
// shows prefixed with "remote: ".
type PushRejectedError struct {
	Ref    string
	Reason string
	Output []string
}

func (e *PushRejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[remote rejected] %s (%s)", e.Ref, e.Reason)
	for _, l := range e.Output {
		b.WriteString("\nremote: ")
		b.WriteString(l)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrDeclined) true.
func (e *PushRejectedError) Is(t error) bool { return t == ErrDeclined }

// Update is one command of a push: move Ref from Old to New (New zero:
// delete it; Old zero: create it).
type Update struct {
	Ref      string
	Old, New plumbing.Hash
}

func (u Update) line() string {
	return u.Old.String() + " " + u.New.String() + " " + u.Ref + "\n"
}

// RefLock is the lock the caller holds on the ref a push moves (git's
// <ref>.lock).
type RefLock interface {
	// Commit writes h into the lock and renames it over the ref; adjust,
	// when not nil, sets the lock file's permissions first.
	Commit(h plumbing.Hash, adjust func(path string) error) error
	// Delete removes the ref and drops the lock.
	Delete() error
	// NewDirs are the directories under refs/ that taking the lock
	// created.
	NewDirs() []string
}

// Push is one ref update and what it brings.
type Push struct {
	Update Update
	// Src is where the pushed objects are read; Remote is the receiving
	// repository's store.
	Src    storer.EncodedObjectStorer
	Remote *filesystem.Storage
	// Pack, when set, holds exactly the objects the remote lacks, already
	// packed; otherwise Missing lists them (and the commits whose parents
	// the pusher lacks: a shallow push), and Encoder (nil: a new one)
	// packs them.
	Pack    *packfile.Packed
	Missing func() (missing, shallow []plumbing.Hash, err error)
	Encoder *packfile.Encoder
	// Lock is held on Update.Ref, which is known to be at Update.Old.
	Lock RefLock
	// Consolidate runs once the objects are in the store, before the ref
	// moves, still under its lock (so that the writers queued on it never
	// read packs while they are merged); perm adjusts what it writes.
	Consolidate func(perm func(path string) error)
	// Progress receives the remote's lines ("remote: ...").
	Progress func(string)
}

// Receive applies a push to the repository as git's receive-pack would,
// in its phases: the objects received (receiveObjects), the move admitted
// (admit), the objects stored (storeObjects), the ref moved (moveRef),
// the post hooks run (postHooks). On a refusal (a *PushRejectedError)
// nothing the push brought stays in the repository.
func (pol *Policy) Receive(ctx context.Context, p Push) error {
	rc := &receiving{pol: pol, p: p, path: pol.gitdir}
	defer func() { rc.q.remove() }()
	if err := rc.receiveObjects(ctx); err != nil {
		return err
	}
	if err := rc.admit(ctx); err != nil {
		return err
	}
	if err := rc.storeObjects(); err != nil {
		return err
	}
	if err := rc.moveRef(); err != nil {
		return err
	}
	rc.postHooks(ctx)
	if p.Progress != nil {
		for _, line := range rc.out {
			p.Progress("remote: " + line)
		}
	}
	return nil
}

// receiving is one push on its way through Receive's phases.
type receiving struct {
	pol  *Policy
	p    Push
	path string
	// out are the lines the remote prints (hooks, receive-pack's errors).
	out []string
	// q is the quarantine of the objects (nil: none, or migrated);
	// direct are the objects that go straight into the store, shallow
	// the commits whose parents the push lacks.
	q               *quarantine
	direct, shallow []plumbing.Hash
}

// reject is the push refused for reason, with the lines printed so far.
func (rc *receiving) reject(reason string) error {
	return &PushRejectedError{Ref: rc.p.Update.Ref, Reason: reason, Output: rc.out}
}

// qenv is the quarantine's environment for the hooks (none without one).
func (rc *receiving) qenv() []string {
	if rc.q != nil {
		return rc.q.env()
	}
	return nil
}

// receiveObjects takes the objects the push brings: fsck'd
// (receive.fsckObjects), a shallow push refused unless
// receive.shallowUpdate, then kept in a quarantine when anything looks at
// them before the ref moves, else set aside to go straight into the
// store.
func (rc *receiving) receiveObjects(ctx context.Context) error {
	pol, p, u := rc.pol, rc.p, rc.p.Update
	if u.New.IsZero() {
		return nil
	}
	var missing []plumbing.Hash
	var err error
	if p.Pack != nil {
		missing = p.Pack.Hashes
	} else if missing, rc.shallow, err = p.Missing(); err != nil {
		return err
	}
	if pol.fsck {
		lines, failed, err := fsck.Objects(p.Src, missing, &pol.fsckOpts)
		if err != nil {
			return err
		}
		rc.out = append(rc.out, lines...)
		if failed {
			rc.out = append(rc.out, "fatal: fsck error in packed object")
			return rc.reject("unpacker error")
		}
	}
	if len(rc.shallow) > 0 && !pol.shallowUpdate {
		return rc.reject("shallow update not allowed")
	}
	// The quarantine is for whoever looks at the objects before the
	// ref moves: the pre-receive and update hooks, git's work-tree
	// update, the group permissions of a shared repository. With none
	// of them the checks below need only our own store, and the
	// objects go straight into the remote's once they passed (on a
	// slow filesystem the quarantine's directories cost more than the
	// rest of the push).
	if !pol.needsQuarantine() {
		rc.direct = missing
		return nil
	}
	if rc.q, err = newQuarantine(rc.path, pol.shared); err != nil {
		return err
	}
	return rc.q.write(ctx, p.Src, missing, len(missing) >= pol.unpackLimit)
}

// admit is everything that may refuse the ref's move, in git's order:
// hidden refs, proc-receive refs, the pre-receive hook, the checks of
// update() (deny*), the update hook, and the work tree of
// denyCurrentBranch=updateInstead.
func (rc *receiving) admit(ctx context.Context) error {
	pol, u, qenv := rc.pol, rc.p.Update, rc.qenv()
	if pol.hidden(u.Ref) {
		if u.New.IsZero() {
			return rc.reject("deny deleting a hidden ref")
		}
		return rc.reject("deny updating a hidden ref")
	}

	if pol.procReceive(u) {
		// The refs a proc-receive hook takes over (code review systems);
		// its protocol is not spoken here, and skipping it would be worse.
		rc.out = append(rc.out, "error: receive.procReceiveRefs names "+u.Ref+": the in-process push cannot run the proc-receive hook")
		return rc.reject("fail to run proc-receive hook")
	}

	hookOut, _, err := pol.runHook(ctx, "pre-receive", nil, u.line(), hookEnv(append([]string{"GIT_PUSH_OPTION_COUNT=0"}, qenv...)...))
	rc.out = append(rc.out, hookOut...)
	if err != nil {
		if ctx.Err() != nil {
			// Stopped, not refused: nothing permanent about it.
			return fmt.Errorf("pre-receive hook of %s: %w", rc.path, ctx.Err())
		}
		if !isExit(err) {
			rc.out = append(rc.out, "error: "+err.Error())
		}
		return rc.reject("pre-receive hook declined")
	}

	reason, lines, updateWorktree := pol.check(ctx, rc.p.Src, rc.p.Remote, u)
	rc.out = append(rc.out, lines...)
	if reason != "" {
		return rc.reject(reason)
	}

	hookOut, _, err = pol.runHook(ctx, "update", []string{u.Ref, u.Old.String(), u.New.String()}, "", hookEnv(qenv...))
	rc.out = append(rc.out, hookOut...)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("update hook of %s: %w", rc.path, ctx.Err())
		}
		if !isExit(err) {
			rc.out = append(rc.out, "error: "+err.Error())
		}
		rc.out = append(rc.out, "error: hook declined to update "+u.Ref)
		return rc.reject("hook declined")
	}

	if updateWorktree {
		lines, reason := pol.updateWorktree(ctx, u.New, qenv)
		rc.out = append(rc.out, lines...)
		if reason != "" {
			return rc.reject(reason)
		}
	}
	return nil
}

// storeObjects puts the accepted objects into the store: those set aside
// as one pack, the quarantine migrated; a shallow push's commits join the
// repository's shallow list.
func (rc *receiving) storeObjects() error {
	p, u, path := rc.p, rc.p.Update, rc.path
	if len(rc.direct) > 0 {
		// One pack, whatever receive.unpackLimit says: the objects are the
		// same either way, and a file per object is what makes a push slow.
		pk := p.Pack
		if pk == nil {
			enc := p.Encoder
			if enc == nil {
				enc = new(packfile.Encoder)
			}
			var err error
			if pk, err = enc.Encode(p.Src, rc.direct); err != nil {
				return fmt.Errorf("push %s to %s: %w", u.Ref, path, err)
			}
		}
		if err := packfile.WriteFiles(path, pk, nil); err != nil {
			return fmt.Errorf("push %s to %s: %w", u.Ref, path, err)
		}
	}
	if rc.q != nil {
		// git's "unable to migrate objects to permanent storage": a
		// failure of the store (a full disk), not of the policy, so not
		// a permanent refusal.
		if err := rc.q.migrate(); err != nil {
			return fmt.Errorf("unable to migrate objects to permanent storage in %s: %w", path, err)
		}
		rc.q = nil
	}
	if len(rc.shallow) > 0 {
		// receive.shallowUpdate allowed it: the remote's history now ends
		// where ours does (before the ref points into it).
		old, _ := p.Remote.Shallow()
		if err := p.Remote.SetShallow(append(old, rc.shallow...)); err != nil {
			return fmt.Errorf("update shallow of %s: %w", path, err)
		}
	}
	return nil
}

// moveRef moves (or deletes) the ref under its lock, the packs
// consolidated first.
func (rc *receiving) moveRef() error {
	pol, p, u, lk := rc.pol, rc.p, rc.p.Update, rc.p.Lock
	// Still under the ref's lock, so that the writers queued on it never
	// read the packs while they are merged.
	if p.Consolidate != nil {
		p.Consolidate(pol.AdjustPerm)
	}
	var err error
	if u.New.IsZero() {
		err = lk.Delete()
	} else {
		err = lk.Commit(u.New, pol.AdjustPerm)
	}
	if err != nil {
		return fmt.Errorf("update %s in %s: %w", u.Ref, rc.path, err)
	}
	for _, d := range lk.NewDirs() {
		_ = adjustSharedPerm(d, pol.shared) // best effort: the ref is written
	}
	return nil
}

// postHooks runs post-receive and post-update once the ref moved: their
// exit status does not matter (git ignores it too), but one that cannot
// run is reported.
func (rc *receiving) postHooks(ctx context.Context) {
	pol, u := rc.pol, rc.p.Update
	hookOut, _, err := pol.runHook(ctx, "post-receive", nil, u.line(), hookEnv("GIT_PUSH_OPTION_COUNT=0"))
	rc.out = append(rc.out, hookOut...)
	if err != nil && !isExit(err) {
		rc.out = append(rc.out, "error: "+err.Error())
	}
	hookOut, _, err = pol.runHook(ctx, "post-update", []string{u.Ref}, "", hookEnv())
	rc.out = append(rc.out, hookOut...)
	if err != nil && !isExit(err) {
		rc.out = append(rc.out, "error: "+err.Error())
	}
}
