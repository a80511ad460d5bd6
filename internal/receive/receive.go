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

// Receive applies a push to the repository as git's receive-pack would.
// On a refusal (a *PushRejectedError) nothing the push brought stays in
// the repository.
func (pol *Policy) Receive(ctx context.Context, p Push) error {
	u, src, rs, lk := p.Update, p.Src, p.Remote, p.Lock
	path := pol.gitdir
	var err error
	var out []string
	reject := func(reason string) error {
		return &PushRejectedError{Ref: u.Ref, Reason: reason, Output: out}
	}
	var q *quarantine
	defer func() { q.remove() }()
	var shallow, direct []plumbing.Hash
	if !u.New.IsZero() {
		var missing []plumbing.Hash
		if p.Pack != nil {
			missing = p.Pack.Hashes
		} else if missing, shallow, err = p.Missing(); err != nil {
			return err
		}
		if pol.fsck {
			lines, failed, err := fsck.Objects(src, missing, &pol.fsckOpts)
			if err != nil {
				return err
			}
			out = append(out, lines...)
			if failed {
				out = append(out, "fatal: fsck error in packed object")
				return reject("unpacker error")
			}
		}
		if len(shallow) > 0 && !pol.shallowUpdate {
			return reject("shallow update not allowed")
		}
		// The quarantine is for whoever looks at the objects before the
		// ref moves: the pre-receive and update hooks, git's work-tree
		// update, the group permissions of a shared repository. With none
		// of them the checks below need only our own store, and the
		// objects go straight into the remote's once they passed (on a
		// slow filesystem the quarantine's directories cost more than the
		// rest of the push).
		if pol.needsQuarantine() {
			if q, err = newQuarantine(path, pol.shared); err != nil {
				return err
			}
			if err := q.write(ctx, src, missing, len(missing) >= pol.unpackLimit); err != nil {
				return err
			}
		} else {
			direct = missing
		}
	}
	var qenv []string
	if q != nil {
		qenv = q.env()
	}

	if pol.hidden(u.Ref) {
		if u.New.IsZero() {
			return reject("deny deleting a hidden ref")
		}
		return reject("deny updating a hidden ref")
	}

	if pol.procReceive(u) {
		// The refs a proc-receive hook takes over (code review systems);
		// its protocol is not spoken here, and skipping it would be worse.
		out = append(out, "error: receive.procReceiveRefs names "+u.Ref+": the in-process push cannot run the proc-receive hook")
		return reject("fail to run proc-receive hook")
	}

	hookOut, _, err := pol.runHook(ctx, "pre-receive", nil, u.line(), hookEnv(append([]string{"GIT_PUSH_OPTION_COUNT=0"}, qenv...)...))
	out = append(out, hookOut...)
	if err != nil {
		if ctx.Err() != nil {
			// Stopped, not refused: nothing permanent about it.
			return fmt.Errorf("pre-receive hook of %s: %w", path, ctx.Err())
		}
		if !isExit(err) {
			out = append(out, "error: "+err.Error())
		}
		return reject("pre-receive hook declined")
	}

	reason, lines, updateWorktree := pol.check(ctx, src, rs, u)
	out = append(out, lines...)
	if reason != "" {
		return reject(reason)
	}

	hookOut, _, err = pol.runHook(ctx, "update", []string{u.Ref, u.Old.String(), u.New.String()}, "", hookEnv(qenv...))
	out = append(out, hookOut...)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("update hook of %s: %w", path, ctx.Err())
		}
		if !isExit(err) {
			out = append(out, "error: "+err.Error())
		}
		out = append(out, "error: hook declined to update "+u.Ref)
		return reject("hook declined")
	}

	if updateWorktree {
		lines, reason := pol.updateWorktree(ctx, u.New, qenv)
		out = append(out, lines...)
		if reason != "" {
			return reject(reason)
		}
	}

	if len(direct) > 0 {
		// One pack, whatever receive.unpackLimit says: the objects are the
		// same either way, and a file per object is what makes a push slow.
		pk := p.Pack
		if pk == nil {
			enc := p.Encoder
			if enc == nil {
				enc = new(packfile.Encoder)
			}
			if pk, err = enc.Encode(src, direct); err != nil {
				return fmt.Errorf("push %s to %s: %w", u.Ref, path, err)
			}
		}
		if err := packfile.WriteFiles(path, pk, nil); err != nil {
			return fmt.Errorf("push %s to %s: %w", u.Ref, path, err)
		}
	}
	if q != nil {
		// git's "unable to migrate objects to permanent storage": a
		// failure of the store (a full disk), not of the policy, so not
		// a permanent refusal.
		if err := q.migrate(); err != nil {
			return fmt.Errorf("unable to migrate objects to permanent storage in %s: %w", path, err)
		}
		q = nil
	}
	if len(shallow) > 0 {
		// receive.shallowUpdate allowed it: the remote's history now ends
		// where ours does (before the ref points into it).
		old, _ := rs.Shallow()
		if err := rs.SetShallow(append(old, shallow...)); err != nil {
			return fmt.Errorf("update shallow of %s: %w", path, err)
		}
	}
	// Still under the ref's lock, so that the writers queued on it never
	// read the packs while they are merged.
	if p.Consolidate != nil {
		p.Consolidate(pol.AdjustPerm)
	}
	if u.New.IsZero() {
		err = lk.Delete()
	} else {
		err = lk.Commit(u.New, pol.AdjustPerm)
	}
	if err != nil {
		return fmt.Errorf("update %s in %s: %w", u.Ref, path, err)
	}
	for _, d := range lk.NewDirs() {
		_ = adjustSharedPerm(d, pol.shared) // best effort: the ref is written
	}

	// After the ref moved: their exit status does not matter (git ignores
	// it too), but one that cannot run is reported.
	hookOut, _, err = pol.runHook(ctx, "post-receive", nil, u.line(), hookEnv("GIT_PUSH_OPTION_COUNT=0"))
	out = append(out, hookOut...)
	if err != nil && !isExit(err) {
		out = append(out, "error: "+err.Error())
	}
	hookOut, _, err = pol.runHook(ctx, "post-update", []string{u.Ref}, "", hookEnv())
	out = append(out, hookOut...)
	if err != nil && !isExit(err) {
		out = append(out, "error: "+err.Error())
	}
	if p.Progress != nil {
		for _, line := range out {
			p.Progress("remote: " + line)
		}
	}
	return nil
}
