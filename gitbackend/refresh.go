package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// tipCheckTimeout bounds the ref advertisement a refresh starts with.
const tipCheckTimeout = 10 * time.Second

// RefreshResult says what a refresh found and did.
type RefreshResult struct {
	// Moved: the remote branch was not where the root last saw it.
	Moved bool
	// Applied: the root now has the remote's commits (fast-forwarded, or
	// local commits replayed on them and pushed).
	Applied bool
	// Head is the root's head after the refresh.
	Head string
	// Paths are the paths the refresh changed in the root.
	Paths []string
	// Blocked are local edits (index or worktree) on paths the remote
	// changed: the refresh left the root where it was rather than
	// overwrite them. The next persist of those paths replays them on the
	// remote's version, as any persist does.
	Blocked []string
	// Pushed counts local commits replayed and pushed.
	Pushed int
	// Pending lists local commits the refresh could not push (another
	// writer was ahead, the remote did not answer): the next persist
	// pushes them; the refresh does not fail.
	Pending []string
}

// pendingBudget bounds the push of commits found pending at boot or
// refresh: a read does not wait the whole retry deadline for a race
// another writer is winning.
const pendingBudget = 15 * time.Second

// transientNetErr says whether err is a remote that did not answer (a
// refused or reset connection, a timeout, a cut stream), which a retry
// may get past, as opposed to a refusal or a bad configuration.
func transientNetErr(err error) bool {
	if permanentRemoteErr(err) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "timeout exceeded") || strings.Contains(msg, "connection reset") ||
		strings.Contains(msg, "connection refused") || strings.Contains(msg, "unexpected EOF")
}

// fetchRetrying fetches branch, retrying a remote that does not answer
// (exponential backoff with full jitter) for up to budget; an error no
// retry changes (a refused authentication, a missing repository) is not
// retried.
func (r *Repo) fetchRetrying(ctx context.Context, branch string, budget time.Duration) (plumbing.Hash, error) {
	deadline := time.Now().Add(budget)
	for attempt := 1; ; attempt++ {
		tip, err := r.remote.Fetch(ctx, branch, 0)
		if err == nil || permanentRemoteErr(err) || ctx.Err() != nil {
			return tip, err
		}
		d := r.jitter(expDelay(r.cfg.Retry.BaseDelay, attempt, 2*time.Second))
		if time.Now().Add(d).After(deadline) {
			return tip, err
		}
		if serr := r.sleep(ctx, d); serr != nil {
			return tip, err
		}
	}
}

// pushPending pushes local commits at boot or refresh, best effort:
// losing the race (or the remote not answering) leaves them pending and
// listed, it does not fail the read. A conflict, too, is reported rather
// than failed: the root then has the remote's version and the local one
// is on a conflict branch.
func (r *Repo) pushPending(ctx context.Context, branch string, tip plumbing.Hash) (int, []string, error) {
	var n int
	var err error
	if _, ok := r.remote.(*localRemote); ok {
		n, _, err = r.pushLocked(ctx, branch, tip)
	} else {
		n, _, err = r.pushNet(ctx, branch, tip, min(r.cfg.Retry.Deadline, pendingBudget))
	}
	if err == nil || ctx.Err() != nil {
		return n, nil, err
	}
	var pe *PendingError
	var ce *ConflictError
	switch {
	case errors.As(err, &pe):
		r.progressf("%v", err)
		return n, pe.Commits, nil
	case errors.As(err, &ce):
		r.progressf("%v", err)
		return n, nil, nil
	}
	head, herr := r.head()
	if herr != nil {
		return n, nil, err
	}
	r.progressf("push of local commits failed: %v", err)
	return n, r.pendingList(r.trackingTip(branch), head), nil
}

// Refresh brings a long-lived root up to the remote branch between writes.
// It asks the remote for the branch's tip only (the ref advertisement;
// for a local remote, one ref read) and does nothing more when it has not
// moved. When it moved: with no local commits, the root is fast-forwarded
// unless a path the remote changed has local edits (then nothing moves);
// with local commits, they are replayed on the new tip and pushed, exactly
// as persist does (a real conflict keeps the local version on a conflict
// branch). Nothing local is lost either way.
func (r *Repo) Refresh(ctx context.Context) (*RefreshResult, error) {
	if r.remote == nil {
		return &RefreshResult{}, nil
	}
	if err := r.lock(ctx); err != nil {
		return nil, err
	}
	defer r.unlock()
	// The caller reads the root afresh after a refresh (the toolbox
	// rebuilds its registry): every file on disk.
	if err := r.materializeLocked(ctx, nil); err != nil {
		return nil, err
	}
	res, err := r.refreshLocked(ctx)
	if err == nil && res.Moved {
		// The commits fetched join the commit-graph at once.
		if b, berr := r.branch(); berr == nil {
			r.extendGraphNoting(r.trackingTip(b))
		}
	}
	return res, err
}

func (r *Repo) refreshLocked(ctx context.Context) (*RefreshResult, error) {
	branch, err := r.branch()
	if err != nil {
		return nil, err
	}
	head, err := r.head()
	if err != nil {
		return nil, err
	}
	res := &RefreshResult{Head: head.String()}
	known := r.trackingTip(branch)
	// The check is meant to be cheap: a remote that does not answer the
	// ref advertisement quickly is reported, not waited on.
	tctx, cancel := context.WithTimeout(ctx, tipCheckTimeout)
	tip, err := r.remote.Tip(tctx, branch)
	cancel()
	if err != nil {
		return nil, r.wrapRemoteErr("refresh", err)
	}
	if tip == known || tip.IsZero() {
		return res, nil
	}
	res.Moved = true
	if tip == head {
		// Our own push, seen before the tracking ref was updated.
		return res, r.setTracking(branch, tip)
	}
	if tip, err = r.remote.Fetch(ctx, branch, 0); err != nil {
		return nil, r.wrapRemoteErr("fetch", err)
	}
	if !head.IsZero() && head != known {
		n, pending, err := r.pushPending(ctx, branch, tip)
		if err != nil {
			return nil, err
		}
		newHead, err := r.head()
		if err != nil {
			return nil, err
		}
		res.Pending = pending
		res.Applied, res.Pushed, res.Head = len(pending) == 0, n, newHead.String()
		res.Paths, err = r.changedPaths(ctx, head, newHead)
		return res, err
	}
	changes, err := r.changedPaths(ctx, head, tip)
	if err != nil {
		return nil, err
	}
	headTree, err := r.treeOf(head)
	if err != nil {
		return nil, err
	}
	if res.Blocked, err = r.localEdits(headTree, changes); err != nil {
		return nil, err
	}
	if len(res.Blocked) > 0 {
		return res, nil
	}
	if err := r.moveTo(ctx, branch, head, tip); err != nil {
		return nil, err
	}
	res.Applied, res.Head, res.Paths = true, tip.String(), changes
	return res, nil
}

func (r *Repo) changedPaths(ctx context.Context, from, to plumbing.Hash) ([]string, error) {
	a, err := r.treeOf(from)
	if err != nil {
		return nil, err
	}
	b, err := r.treeOf(to)
	if err != nil {
		return nil, err
	}
	changes, err := treeDiff(ctx, r.store, a, b)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(changes))
	for _, c := range changes {
		out = append(out, c.Path)
	}
	sort.Strings(out)
	return out, nil
}

// localEdits returns the paths among ps whose index entry or worktree
// file differs from the tree at head (an untracked file where head has
// none counts): what a checkout of another tree would overwrite.
func (r *Repo) localEdits(headTree plumbing.Hash, ps []string) ([]string, error) {
	// Through the Repo's index cache, which reads every index git
	// writes (version 4, split), not go-git's decoder.
	idx, err := r.gitStorage().Index()
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	var out []string
	clean := r.checkinCleaner(r.store, headTree)
	for _, p := range ps {
		he, inHead, err := treeEntry(r.store, headTree, p)
		if err != nil {
			return nil, err
		}
		ie, ierr := idx.Entry(p)
		inIndex := ierr == nil
		if inHead != inIndex || (inHead && (ie.Hash != he.Hash || ie.Mode != he.Mode)) {
			out = append(out, p)
			continue
		}
		info, err := r.wt.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
			if inHead {
				out = append(out, p) // deleted locally
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if !inHead {
			out = append(out, p) // untracked, in the way
			continue
		}
		h, mode, err := r.worktreeHash(p, info, clean)
		if err != nil {
			return nil, err
		}
		if h != he.Hash || mode != he.Mode {
			out = append(out, p)
		}
	}
	return out, nil
}

// worktreeHash is the blob hash and mode git would stage for a path,
// without storing anything.
func (r *Repo) worktreeHash(p string, info fs.FileInfo, clean Cleaner) (plumbing.Hash, filemode.FileMode, error) {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		t, err := r.wt.Readlink(p)
		if err != nil {
			return plumbing.ZeroHash, 0, err
		}
		return plumbing.ComputeHash(plumbing.BlobObject, []byte(t)), filemode.Symlink, nil
	case info.IsDir():
		return plumbing.ZeroHash, filemode.Dir, nil
	}
	f, err := r.wt.Open(p)
	if err != nil {
		return plumbing.ZeroHash, 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return plumbing.ZeroHash, 0, err
	}
	mode := filemode.Regular
	if info.Mode()&0o111 != 0 {
		mode = filemode.Executable
	}
	if clean != nil {
		b, mode = clean(p, b, mode)
	}
	return plumbing.ComputeHash(plumbing.BlobObject, b), mode, nil
}
