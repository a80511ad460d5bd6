package receive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

const refuseUnconfiguredDenyMsg = `By default, updating the current branch in a non-bare repository
is denied, because it will make the index and work tree inconsistent
with what you pushed, and will require 'git reset --hard' to match
the work tree to HEAD.

You can set the 'receive.denyCurrentBranch' configuration variable
to 'ignore' or 'warn' in the remote repository to allow pushing into
its current branch; however, this is not recommended unless you
arranged to update its work tree to match what you pushed in some
other way.

To squelch this message and still keep the default behaviour, set
'receive.denyCurrentBranch' configuration variable to 'refuse'.`

const refuseUnconfiguredDenyDeleteCurrentMsg = `By default, deleting the current branch is denied, because the next
'git clone' won't result in any file checked out, causing confusion.

You can set 'receive.denyDeleteCurrent' configuration variable to
'warn' or 'ignore' in the remote repository to allow deleting the
current branch, with or without a warning message.

To squelch this message, you can set it to 'refuse'.`

func rpError(msg string) []string {
	lines := strings.Split(msg, "\n")
	lines[0] = "error: " + lines[0]
	return lines
}

// checkedOut reports whether ref is what a work tree of the remote has
// checked out (find_shared_symref over the main and the linked work
// trees), and whether ref is the remote's HEAD.
func (p *Policy) checkedOut(ref string) (inWorktree, isHead bool) {
	headOf := func(file string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			return ""
		}
		t, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref:")
		if !ok {
			return ""
		}
		return strings.TrimSpace(t)
	}
	isHead = headOf(filepath.Join(p.gitdir, "HEAD")) == ref
	inWorktree = !p.bare && isHead
	if wts, err := os.ReadDir(filepath.Join(p.gitdir, "worktrees")); err == nil {
		for _, wt := range wts {
			if headOf(filepath.Join(p.gitdir, "worktrees", wt.Name(), "HEAD")) == ref {
				inWorktree = true
			}
		}
	}
	return inWorktree, isHead
}

// check is the policy part of receive-pack's update(): it returns the
// reason the ref may not move ("" if it may) and the lines git prints.
func (p *Policy) check(ctx context.Context, local, remote storer.EncodedObjectStorer, u Update) (reason string, out []string, updateWorktree bool) {
	reason, out = p.check1(ctx, local, remote, u)
	if reason == "" && p.denyCurrent == denyUpdateInstead {
		updateWorktree, _ = p.checkedOut(u.Ref)
	}
	return reason, out, updateWorktree
}

func (p *Policy) check1(ctx context.Context, local, remote storer.EncodedObjectStorer, u Update) (string, []string) {
	var out []string
	name := strings.TrimPrefix(u.Ref, "refs/")
	if !strings.HasPrefix(u.Ref, "refs/") || plumbing.ReferenceName(u.Ref).Validate() != nil || name == "" {
		return "funny refname", rpError(fmt.Sprintf("refusing to update funny ref '%s' remotely", u.Ref))
	}
	inWorktree, isHead := p.checkedOut(u.Ref)
	if inWorktree {
		switch p.denyCurrent {
		case denyIgnore:
		case denyWarn:
			out = append(out, "warning: updating the current branch")
		case denyRefuse, denyUnconfigured:
			out = append(out, rpError("refusing to update checked out branch: "+u.Ref)...)
			if p.denyCurrent == denyUnconfigured {
				out = append(out, rpError(refuseUnconfiguredDenyMsg)...)
			}
			return "branch is currently checked out", out
		case denyUpdateInstead:
			// Let the other checks speak first; the work tree is updated
			// after the update hook (updateWorktree).
		}
	}
	if !u.Old.IsZero() && u.New.IsZero() {
		if p.denyDeletes && strings.HasPrefix(u.Ref, "refs/heads/") {
			out = append(out, rpError("denying ref deletion for "+u.Ref)...)
			return "deletion prohibited", out
		}
		if inWorktree || isHead {
			switch p.denyDeleteCurrent {
			case denyIgnore:
			case denyWarn:
				out = append(out, "warning: deleting the current branch")
			default:
				if p.denyDeleteCurrent == denyUnconfigured {
					out = append(out, rpError(refuseUnconfiguredDenyDeleteCurrentMsg)...)
				}
				out = append(out, rpError("refusing to delete the current branch: "+u.Ref)...)
				return "deletion of the current branch prohibited", out
			}
		}
	}
	if p.denyNonFF && !u.New.IsZero() && !u.Old.IsZero() && strings.HasPrefix(u.Ref, "refs/heads/") {
		ok, err := isAncestor(ctx, u.Old, u.New, local, remote)
		if err != nil {
			return "bad ref", append(out, "error: bad sha1 objects for "+u.Ref+": "+err.Error())
		}
		if !ok {
			out = append(out, rpError(fmt.Sprintf("denying non-fast-forward %s (you should pull first)", u.Ref))...)
			return "non-fast-forward", out
		}
	}
	return "", out
}

// isAncestor reports whether old is reachable from new, reading commits
// from the pusher's store first and the remote's second.
func isAncestor(ctx context.Context, old, new plumbing.Hash, stores ...storer.EncodedObjectStorer) (bool, error) {
	get := func(h plumbing.Hash) (*object.Commit, error) {
		var lastErr error
		for _, s := range stores {
			c, err := object.GetCommit(s, h)
			if err == nil {
				return c, nil
			}
			lastErr = err
		}
		return nil, fmt.Errorf("commit %s: %w", h, lastErr)
	}
	if _, err := get(old); err != nil {
		return false, err
	}
	seen := map[plumbing.Hash]bool{new: true}
	queue := []plumbing.Hash{new}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		h := queue[0]
		queue = queue[1:]
		if h == old {
			return true, nil
		}
		c, err := get(h)
		if err != nil {
			return false, err
		}
		for _, p := range c.ParentHashes {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, nil
}
