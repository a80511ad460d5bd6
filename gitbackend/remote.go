package gitbackend

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	gogitpack "github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/gofrs/flock"

	"github.com/tgp-go/tgp/internal/gitformat/packfile"
	"github.com/tgp-go/tgp/internal/receive"
)

// Errors callers can test with errors.Is.
var (
	// ErrRejected: the remote ref was not at the expected value (another
	// agent pushed first); the caller fetches and replays.
	ErrRejected = errors.New("push rejected: the remote branch moved")
	// ErrAuth: the remote refused our credentials; retrying will not help.
	ErrAuth = errors.New("authentication to the remote failed")
	// ErrRemoteLocked: another process holds the remote ref's lock.
	ErrRemoteLocked = errors.New("remote ref is locked by another writer")
)

// remoteStore is where the shared branch lives.
type remoteStore interface {
	// Tip returns the branch's current commit (zero if it does not
	// exist) from the ref advertisement alone: no objects move.
	Tip(ctx context.Context, branch string) (plumbing.Hash, error)
	// Tip returns the branch's current commit (zero if it does not exist)
	// and makes its objects available in the local store.
	Fetch(ctx context.Context, branch string, depth int) (plumbing.Hash, error)
	// Push moves refs/heads/<branch> from old to new atomically (old zero:
	// create), copying the objects first.
	Push(ctx context.Context, branch string, old, new plumbing.Hash) error
}

// isLocalRemote reports whether a remote is a path or a file:// URL, and
// returns the path.
func isLocalRemote(remote string) (string, bool) {
	if strings.HasPrefix(remote, "file://") {
		u, err := url.Parse(remote)
		if err != nil {
			return "", false
		}
		return u.Path, true
	}
	if strings.Contains(remote, "://") {
		return "", false
	}
	// scp-like user@host:path
	if i := strings.Index(remote, ":"); i > 0 && !strings.ContainsAny(remote[:i], "/\\") {
		return "", false
	}
	return remote, true
}

// ---- local remotes: in-process object copy + ref compare-and-swap ----

type localRemote struct {
	path  string // the remote's git directory
	local storage.Storer
	// progress receives the remote's output ("remote: ..." lines) of a
	// push it accepted; a refusal carries it in the error.
	progress func(string)
	// enc packs what a push sends; pol caches the receive policy, packs
	// the remote's pack indexes and small packs.
	enc   packfile.Encoder
	pol   receive.PolicyCache
	packs packfile.Cache
}

func newLocalRemote(p string, local storage.Storer) (*localRemote, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	gitdir := abs
	if fi, err := os.Stat(filepath.Join(abs, ".git")); err == nil && fi.IsDir() {
		gitdir = filepath.Join(abs, ".git")
	}
	if _, err := os.Stat(filepath.Join(gitdir, "objects")); err != nil {
		return nil, fmt.Errorf("remote %s is not a git repository: %w", p, err)
	}
	return &localRemote{path: gitdir, local: local}, nil
}

// open opens the remote's store afresh: another process may have added
// packs or refs since the last operation.
//
// The packs it opens stay open until Close (every caller closes it when
// its operation ends): otherwise go-git opens the pack file again for
// every object it reads.
func (l *localRemote) open() *filesystem.Storage {
	return filesystem.NewStorageWithOptions(osfs.New(l.path), cache.NewObjectLRU(16<<20), filesystem.Options{KeepDescriptors: true})
}

// Update runs a whole push as one transaction under the remote ref's lock:
// read the tip, let fn bring the local commits onto it (fetching what is
// missing), then hand the update to the remote's receive policy (see
// receive.go), which copies the objects and moves the ref. Writers queue on
// the lock instead of racing, so no work is wasted on rejected pushes.
//
// lockWait bounds only the wait for the lock, not the remote's hooks,
// which may legitimately run long (ctx bounds those). known is a tip the
// local store already has everything of (nothing to fetch when the remote
// is still there). fn may return the pack that completes its head (see
// segment): the remote then takes it as it is instead of walking the
// commits for what it lacks.
//
// sink, when not nil, takes the objects fetched instead of the local
// store (the caller stores them with its own); src, when not nil, is where
// the objects fn made are read (the caller's objects held in memory).
//
// The callers of one process queue first (batchpush.go): the one that
// takes the lock calls every waiting caller's fn in turn, each on the
// commit the one before made, and pushes them together; the others return
// when that push is done. fn may then be called with a tip holding other
// callers' commits the remote does not have yet (sink has brought their
// objects), and called again, alone, when that push failed.
func (l *localRemote) Update(ctx context.Context, branch string, lockWait time.Duration, known plumbing.Hash,
	src storer.EncodedObjectStorer, sink func(storer.EncodedObjectStorer, []plumbing.Hash) error,
	fn func(tip plumbing.Hash) (plumbing.Hash, *segment, error)) error {
	// The writers of this process queue first, so that the one holding
	// the lock pushes for all of them (batchpush.go).
	return l.updateQueued(ctx, branch, lockWait, known, src, sink, fn)
}

func (l *localRemote) Tip(ctx context.Context, branch string) (plumbing.Hash, error) {
	// A repository that is gone is an error, not an empty branch.
	if _, err := os.Stat(filepath.Join(l.path, "HEAD")); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("remote repository %s: %w", l.path, err)
	}
	return readRef(l.path, "refs/heads/"+branch)
}

func (l *localRemote) Fetch(ctx context.Context, branch string, depth int) (plumbing.Hash, error) {
	tip, err := readRef(l.path, "refs/heads/"+branch)
	if err != nil || tip.IsZero() {
		return plumbing.ZeroHash, err
	}
	rs := l.open()
	defer func() { rs.Close() }()
	if depth == 0 {
		err = copyObjectsRetry(ctx, l, &rs, tip)
	} else {
		err = copyObjects(ctx, rs, l.local, tip, depth)
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("fetch %s: %w", branch, err)
	}
	return tip, nil
}

// fetchSince copies the objects of known..tip into the local store when
// tip descends from known along single parents (other agents' persists):
// each commit's trees and blobs that differ from its parent's, read from
// the remote, written as one pack, with no look-up per object in the local
// store. Anything else is copyObjectsRetry's walk.
func (l *localRemote) fetchSince(ctx context.Context, rs **filesystem.Storage, known, tip plumbing.Hash, sink func(storer.EncodedObjectStorer, []plumbing.Hash) error) error {
	if !known.IsZero() {
		for attempt := 0; ; attempt++ {
			_, ok, err := l.fetchNew(ctx, known, tip, sink)
			if err == nil && ok {
				return nil
			}
			if err == nil || ctx.Err() != nil || attempt == 3 {
				break // not a line of single-parent commits: walk
			}
			(*rs).Close()
			*rs = l.open()
			if err := sleepCtx(ctx, time.Duration(attempt+1)*5*time.Millisecond); err != nil {
				return err
			}
		}
	}
	return copyObjectsRetry(ctx, l, rs, tip)
}

// fetchNew copies the objects known..tip adds into the local store as
// one pack, read from the remote's packs directly (packfile.Reader): the
// entries of whole objects are copied as they are. ok is false when tip
// does not descend from known along single parents.
func (l *localRemote) fetchNew(ctx context.Context, known, tip plumbing.Hash, sink func(storer.EncodedObjectStorer, []plumbing.Hash) error) ([]plumbing.Hash, bool, error) {
	pr, err := packfile.Open(l.path, l.open, &l.packs)
	if err != nil {
		return nil, false, err
	}
	defer pr.Close()
	order, ok, err := collectNew(ctx, pr, known, tip)
	if err != nil || !ok || len(order) == 0 {
		return order, ok, err
	}
	if sink != nil {
		return order, true, sink(pr, order)
	}
	dst, isFS := l.local.(*filesystem.Storage)
	if !isFS {
		return order, true, writeObjects(pr, l.local, order, len(order) > packThreshold)
	}
	p, err := l.enc.Encode(pr, order)
	if err != nil {
		return nil, false, err
	}
	return order, true, writeLocalPack(dst, p)
}

// collectNew lists what the commits base..tip add to base's closure, when
// tip reaches base through single-parent commits (ok false otherwise):
// per commit, the trees and blobs that differ from its parent's, then the
// commit.
func collectNew(ctx context.Context, src storer.EncodedObjectStorer, base, tip plumbing.Hash) ([]plumbing.Hash, bool, error) {
	return (&newObjects{base: base}).extend(ctx, src, tip)
}

// newObjects is collectNew's walk from base, kept so that it can go on to
// a later tip of the same line: the writers of a batch that knew the same
// remote tip each need the objects up to the commit the one before made,
// and each walk then reads only the commits added since.
type newObjects struct {
	base, tip plumbing.Hash // tip: zero until the first extend
	tree      plumbing.Hash // tip's tree
	order     []plumbing.Hash
	seen      map[plumbing.Hash]bool
}

// extend is collectNew(base, tip) for a tip whose line of single-parent
// commits passes through the last one's.
func (n *newObjects) extend(ctx context.Context, src storer.EncodedObjectStorer, tip plumbing.Hash) ([]plumbing.Hash, bool, error) {
	from := n.tip
	if from.IsZero() {
		from = n.base
	}
	var chain []*object.Commit
	for h := tip; h != from; {
		c, err := object.GetCommit(src, h)
		if err != nil {
			return nil, false, fmt.Errorf("read commit %s: %w", h, err)
		}
		if len(c.ParentHashes) != 1 || len(chain) >= 1000 {
			return nil, false, nil
		}
		chain = append(chain, c)
		h = c.ParentHashes[0]
	}
	if n.tip.IsZero() {
		parent, err := object.GetCommit(src, n.base)
		if err != nil {
			return nil, false, fmt.Errorf("read commit %s: %w", n.base, err)
		}
		n.tree, n.seen = parent.TreeHash, map[plumbing.Hash]bool{}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		c := chain[i]
		if err := diffCollect(src, n.tree, c.TreeHash, n.seen, &n.order); err != nil {
			return nil, false, err
		}
		n.order = append(n.order, c.Hash)
		n.tree = c.TreeHash
	}
	n.tip = tip
	return n.order[:len(n.order):len(n.order)], true, nil
}

// diffCollect adds tree b and what it holds that tree a (zero: none) does
// not hold at the same name.
func diffCollect(src storer.EncodedObjectStorer, a, b plumbing.Hash, seen map[plumbing.Hash]bool, order *[]plumbing.Hash) error {
	if a == b || seen[b] {
		return nil
	}
	tb, err := object.GetTree(src, b)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", b, err)
	}
	var old map[string]object.TreeEntry
	if !a.IsZero() {
		ta, err := object.GetTree(src, a)
		if err != nil {
			return fmt.Errorf("read tree %s: %w", a, err)
		}
		old = make(map[string]object.TreeEntry, len(ta.Entries))
		for _, e := range ta.Entries {
			old[e.Name] = e
		}
	}
	for _, e := range tb.Entries {
		was, had := old[e.Name]
		if had && was.Hash == e.Hash {
			continue
		}
		switch {
		case e.Mode == filemode.Dir:
			from := plumbing.ZeroHash
			if had && was.Mode == filemode.Dir {
				from = was.Hash
			}
			if err := diffCollect(src, from, e.Hash, seen, order); err != nil {
				return err
			}
		case e.Mode.IsFile() || e.Mode == filemode.Symlink:
			if !seen[e.Hash] {
				seen[e.Hash] = true
				*order = append(*order, e.Hash)
			}
		}
		// gitlinks (submodules) point into other repositories: skip.
	}
	seen[b] = true
	*order = append(*order, b)
	return nil
}

// copyObjectsRetry copies the closure of tip, looking at the remote's
// packs afresh when an object cannot be read: a writer may have merged the
// packs this store listed (consolidatePacks), as git's readers re-scan the
// pack directory on a miss.
func copyObjectsRetry(ctx context.Context, l *localRemote, rs **filesystem.Storage, tip plumbing.Hash) error {
	var err error
	for attempt := 0; ; attempt++ {
		if err = copyObjects(ctx, *rs, l.local, tip, 0); err == nil || ctx.Err() != nil || attempt == 3 {
			return err
		}
		(*rs).Close()
		*rs = l.open()
		if err := sleepCtx(ctx, time.Duration(attempt+1)*5*time.Millisecond); err != nil {
			return err
		}
	}
}

// Push moves the branch from old to new (new zero deletes it) with a
// compare-and-swap under the ref's lock, through the remote's receive
// policy.
func (l *localRemote) Push(ctx context.Context, branch string, old, new plumbing.Hash) error {
	ref := "refs/heads/" + branch
	lk, err := acquireRefLock(ctx, l.path, ref, false)
	if err != nil {
		return err
	}
	defer lk.release()
	cur, err := readRef(l.path, ref)
	if err != nil {
		return err
	}
	if cur != old {
		return fmt.Errorf("%w (%s is at %s, expected %s)", ErrRejected, ref, short(cur), short(old))
	}
	if old == new {
		return nil
	}
	rs := l.open()
	defer rs.Close()
	if err := l.receive(ctx, rs, lk, receive.Update{Ref: ref, Old: old, New: new}, nil, nil); err != nil {
		return err
	}
	if old.IsZero() {
		pointHEADAt(l.path, branch)
	}
	return nil
}

// pointHEADAt makes a remote whose HEAD names a branch that does not exist
// (a fresh `git init --bare`) point at the branch we just created, so a
// plain `git clone` checks it out, as hosting services do on first push.
func pointHEADAt(gitdir, branch string) {
	b, err := os.ReadFile(filepath.Join(gitdir, "HEAD"))
	if err != nil {
		return
	}
	cur := strings.TrimSpace(strings.TrimPrefix(string(b), "ref:"))
	if h, _ := readRef(gitdir, cur); !h.IsZero() || cur == "refs/heads/"+branch {
		return
	}
	_ = os.WriteFile(filepath.Join(gitdir, "HEAD"), []byte("ref: refs/heads/"+branch+"\n"), 0o644)
}

// copyObjects copies the closure of tip from src to dst, stopping at
// objects dst already has. Objects are written children first, so that a
// crash never leaves an object whose closure is incomplete. depth > 0
// copies only that many commits of history and records the shallow
// boundary, like `git clone --depth`.
func copyObjects(ctx context.Context, src, dst storage.Storer, tip plumbing.Hash, depth int) error {
	// The remote's own shallow commits are where its history ends for
	// git's upload-pack (its graft), even where their parents are there.
	grafted := map[plumbing.Hash]bool{}
	if hs, err := src.Shallow(); err == nil {
		for _, h := range hs {
			grafted[h] = true
		}
	}
	order, shallow, err := collectMissingGrafted(ctx, src, dst, tip, depth, grafted)
	if err != nil {
		return err
	}
	if err := writeObjects(src, dst, order, len(order) > packThreshold); err != nil {
		return err
	}
	if len(shallow) > 0 {
		old, _ := dst.Shallow()
		if err := dst.SetShallow(append(old, shallow...)); err != nil {
			return err
		}
	}
	return nil
}

// collectMissing lists the closure of tip that dst lacks, children before
// parents, and the commits where src's history ends (it is shallow there,
// or depth cut it) while dst has not their parents either.
func collectMissing(ctx context.Context, src, dst storer.EncodedObjectStorer, tip plumbing.Hash, depth int) ([]plumbing.Hash, []plumbing.Hash, error) {
	return collectMissingGrafted(ctx, src, dst, tip, depth, nil)
}

// collectMissingGrafted is collectMissing where the commits in grafted
// have no parents (src's shallow commits, as git's upload-pack reads
// them): they end the walk and are shallow in dst.
func collectMissingGrafted(ctx context.Context, src, dst storer.EncodedObjectStorer, tip plumbing.Hash, depth int, grafted map[plumbing.Hash]bool) ([]plumbing.Hash, []plumbing.Hash, error) {
	if dst.HasEncodedObject(tip) == nil {
		return nil, nil, nil
	}
	// Collect missing commits, newest first, breadth first.
	type item struct {
		h plumbing.Hash
		d int
	}
	var commits []*object.Commit
	var shallow []plumbing.Hash
	seen := map[plumbing.Hash]bool{tip: true}
	queue := []item{{tip, 1}}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		it := queue[0]
		queue = queue[1:]
		c, err := object.GetCommit(src, it.h)
		if err != nil {
			return nil, nil, fmt.Errorf("read commit %s: %w", it.h, err)
		}
		commits = append(commits, c)
		if depth > 0 && it.d >= depth {
			if len(c.ParentHashes) > 0 {
				shallow = append(shallow, c.Hash)
			}
			continue
		}
		if grafted[c.Hash] {
			shallow = append(shallow, c.Hash)
			continue
		}
		for _, p := range c.ParentHashes {
			if seen[p] || dst.HasEncodedObject(p) == nil {
				continue
			}
			if src.HasEncodedObject(p) != nil {
				// The source is shallow here: so are we.
				shallow = append(shallow, c.Hash)
				continue
			}
			seen[p] = true
			queue = append(queue, item{p, it.d + 1})
		}
	}
	// Children first, so that a crash never leaves an object whose closure
	// is incomplete; written as a packfile when many (a clone), which on
	// slow disks is the difference between one file and thousands.
	var order []plumbing.Hash
	collected := map[plumbing.Hash]bool{}
	for i := len(commits) - 1; i >= 0; i-- {
		c := commits[i]
		if err := collectTree(ctx, src, dst, c.TreeHash, collected, &order); err != nil {
			return nil, nil, err
		}
		order = append(order, c.Hash)
	}
	return order, shallow, nil
}

func collectTree(ctx context.Context, src, dst storer.EncodedObjectStorer, h plumbing.Hash, seen map[plumbing.Hash]bool, order *[]plumbing.Hash) error {
	if seen[h] || dst.HasEncodedObject(h) == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := object.GetTree(src, h)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", h, err)
	}
	for _, e := range t.Entries {
		switch {
		case e.Mode == 0o040000:
			if err := collectTree(ctx, src, dst, e.Hash, seen, order); err != nil {
				return err
			}
		case e.Mode.IsFile() || e.Mode == 0o120000:
			if !seen[e.Hash] && dst.HasEncodedObject(e.Hash) != nil {
				seen[e.Hash] = true
				*order = append(*order, e.Hash)
			}
		}
		// gitlinks (submodules) point into other repositories: skip.
	}
	seen[h] = true
	*order = append(*order, h)
	return nil
}

// packThreshold is the object count above which objects are written as a
// packfile instead of loose objects: every fetch that brings more than one
// object is one pack (small packs are merged later, consolidatePacks).
const packThreshold = 1

func writeObjects(src, dst storer.EncodedObjectStorer, hashes []plumbing.Hash, pack bool) error {
	if pack && len(hashes) > 0 {
		if pw, ok := dst.(storer.PackfileWriter); ok {
			w, err := pw.PackfileWriter()
			if err != nil {
				return fmt.Errorf("write pack: %w", err)
			}
			if _, err := gogitpack.NewEncoder(w, src, false).Encode(hashes, 0); err != nil {
				w.Close()
				return fmt.Errorf("write pack: %w", err)
			}
			if err := w.Close(); err != nil {
				return fmt.Errorf("write pack: %w", err)
			}
			return nil
		}
	}
	for _, h := range hashes {
		if err := copyObject(src, dst, h); err != nil {
			return err
		}
	}
	return nil
}

func copyObject(src, dst storer.EncodedObjectStorer, h plumbing.Hash) error {
	o, err := src.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return fmt.Errorf("read object %s: %w", h, err)
	}
	if _, err := dst.SetEncodedObject(o); err != nil {
		return fmt.Errorf("write object %s: %w", h, err)
	}
	return nil
}

// readRef reads a ref from a git directory: the loose file, else
// packed-refs. A missing ref is the zero hash.
func readRef(gitdir, ref string) (plumbing.Hash, error) {
	b, err := os.ReadFile(filepath.Join(gitdir, filepath.FromSlash(ref)))
	if err == nil {
		s := strings.TrimSpace(string(b))
		if strings.HasPrefix(s, "ref:") {
			return readRef(gitdir, strings.TrimSpace(strings.TrimPrefix(s, "ref:")))
		}
		if !plumbing.IsHash(s) {
			return plumbing.ZeroHash, fmt.Errorf("ref %s: bad content %q", ref, s)
		}
		return plumbing.NewHash(s), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return plumbing.ZeroHash, err
	}
	f, err := os.Open(filepath.Join(gitdir, "packed-refs"))
	if errors.Is(err, os.ErrNotExist) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if h, name, ok := strings.Cut(line, " "); ok && name == ref && plumbing.IsHash(h) {
			return plumbing.NewHash(h), nil
		}
	}
	return plumbing.ZeroHash, sc.Err()
}

// staleLockAge is how old a ref lock must be before we take it as left by
// a dead process.
const staleLockAge = 30 * time.Second

// refLock is git's lock on a ref (refs.c / lockfile.c): <ref>.lock created
// with O_EXCL, so it excludes other processes and the git CLI; the new
// value is written into it and renamed over the ref.
type refLock struct {
	gitdir, ref, path string
	f                 *os.File
	done              bool
	stop              chan struct{}
	// newDirs are the directories under refs/ that taking the lock
	// created (for core.sharedRepository).
	newDirs []string
	// queue is held by a writer that waited its turn (see joinQueue).
	queue *flock.Flock
}

// joinQueue waits for the ref's turn among the writers that queue for it
// (Update): an OS file lock in <gitdir>/tgp-queue, which the kernel hands
// to the next waiter the moment it is released, where polling the ref's
// lock file would leave it free for a sleep's length. It is an addition to
// git's lock, never a replacement: the compare-and-swap is still the
// <ref>.lock file. A queue that cannot be used (a read-only directory)
// is skipped (nil, nil) and the writer polls as before.
func joinQueue(ctx context.Context, gitdir, ref string) (*flock.Flock, error) {
	dir := filepath.Join(gitdir, "tgp-queue")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil
	}
	fl := flock.New(filepath.Join(dir, strings.ReplaceAll(ref, "/", "%")))
	done := make(chan error, 1)
	go func() { done <- fl.Lock() }()
	select {
	case err := <-done:
		if err != nil {
			return nil, nil
		}
		return fl, nil
	case <-ctx.Done():
		go func() {
			if <-done == nil {
				_ = fl.Unlock()
			}
		}()
		return nil, fmt.Errorf("waiting for %s: %w", ref, ctx.Err())
	}
}

// leaveQueue lets the next queued writer go.
func (lk *refLock) leaveQueue() {
	if lk.queue != nil {
		_ = lk.queue.Unlock()
		lk.queue = nil
	}
}

// keepFresh touches the lock while it is held: a lock older than
// staleLockAge is taken for a dead process's, and the remote's hooks may
// run for longer than that.
func (lk *refLock) keepFresh() {
	stop, lock := make(chan struct{}), lk.path+".lock"
	lk.stop = stop
	go func() {
		t := time.NewTicker(staleLockAge / 4)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				_ = os.Chtimes(lock, now, now)
			}
		}
	}()
}

func (lk *refLock) stopFresh() {
	if lk.stop != nil {
		close(lk.stop)
		lk.stop = nil
	}
}

// acquireRefLock takes the lock on ref; wait makes it queue behind another
// holder (bounded by ctx), else a held lock is ErrRemoteLocked.
func acquireRefLock(ctx context.Context, gitdir, ref string, wait bool) (*refLock, error) {
	refPath := filepath.Join(gitdir, filepath.FromSlash(ref))
	var newDirs []string
	for d := filepath.Dir(refPath); len(d) > len(gitdir); d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		newDirs = append(newDirs, d)
	}
	if err := os.MkdirAll(filepath.Dir(refPath), 0o755); err != nil {
		return nil, err
	}
	var queue *flock.Flock
	if wait {
		var err error
		if queue, err = joinQueue(ctx, gitdir, ref); err != nil {
			return nil, err
		}
	}
	lock := refPath + ".lock"
	for backoff := time.Millisecond; ; backoff = min(backoff*2, 20*time.Millisecond) {
		f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			lk := &refLock{gitdir: gitdir, ref: ref, path: refPath, f: f, newDirs: newDirs, queue: queue}
			lk.keepFresh()
			return lk, nil
		}
		if !errors.Is(err, os.ErrExist) {
			if queue != nil {
				_ = queue.Unlock()
			}
			return nil, err
		}
		stale := false
		if fi, serr := os.Stat(lock); serr == nil && time.Since(fi.ModTime()) > staleLockAge {
			_ = os.Remove(lock) // left by a dead process
			stale = true
		}
		if !wait {
			return nil, ErrRemoteLocked
		}
		if stale {
			continue
		}
		if err := sleepCtx(ctx, equalJitter(backoff)); err != nil {
			if queue != nil {
				_ = queue.Unlock()
			}
			return nil, fmt.Errorf("waiting for %s: %w", lock, err)
		}
	}
}

// commit writes h and renames the lock over the ref; adjust, when not
// nil, sets the lock file's permissions first.
func (lk *refLock) commit(h plumbing.Hash, adjust func(path string) error) error {
	lk.stopFresh()
	if _, err := lk.f.WriteString(h.String() + "\n"); err != nil {
		return err
	}
	if err := lk.f.Sync(); err != nil {
		return err
	}
	if err := lk.f.Close(); err != nil {
		return err
	}
	if adjust != nil {
		if err := adjust(lk.path + ".lock"); err != nil {
			return err
		}
	}
	if err := os.Rename(lk.path+".lock", lk.path); err != nil {
		return err
	}
	lk.done = true
	lk.leaveQueue()
	return nil
}

// deleteRef removes the ref: from packed-refs (under packed-refs.lock, as
// git does) and its loose file, then drops the lock.
func (lk *refLock) deleteRef() error {
	if err := removePackedRef(lk.gitdir, lk.ref); err != nil {
		return err
	}
	if err := os.Remove(lk.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	lk.release()
	return nil
}

// release drops the lock unless it was committed.
func (lk *refLock) release() {
	lk.stopFresh()
	defer lk.leaveQueue()
	if lk.done {
		return
	}
	lk.done = true
	lk.f.Close()
	os.Remove(lk.path + ".lock")
}

// removePackedRef rewrites packed-refs without ref (and its peeled line).
func removePackedRef(gitdir, ref string) error {
	packed := filepath.Join(gitdir, "packed-refs")
	if _, err := os.Stat(packed); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	lock := packed + ".lock"
	var f *os.File
	for wait := time.Millisecond; ; wait *= 2 {
		var err error
		if f, err = os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || wait > time.Second {
			return fmt.Errorf("lock %s: %w", packed, err)
		}
		time.Sleep(wait)
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			os.Remove(lock)
		}
	}()
	b, err := os.ReadFile(packed)
	if err != nil {
		return err
	}
	var out strings.Builder
	found, skipPeeled := false, false
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if skipPeeled && strings.HasPrefix(line, "^") {
			continue
		}
		skipPeeled = false
		if h, name, ok := strings.Cut(strings.TrimRight(line, "\n"), " "); ok && name == ref && plumbing.IsHash(h) {
			found, skipPeeled = true, true
			continue
		}
		out.WriteString(line)
	}
	if !found {
		return nil
	}
	if _, err := f.WriteString(out.String()); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(lock, packed); err != nil {
		return err
	}
	committed = true
	return nil
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.String()[:7]
}

// ---- network remotes: go-git transports ----

type netRemote struct {
	url      string
	repo     *git.Repository
	auth     transport.AuthMethod
	progress io.Writer
	// pushes and reads are the machine's budgets (nil: none): every
	// receive-pack session takes a push, every fetch and tip check a read.
	pushes budget
	reads  budget
	sleep  func(context.Context, time.Duration) error
	// transfer, when set, receives the counters of a pack being received
	// (withTransferReport).
	transfer func(string)
}

// newNetRemote is the network remote of r's configuration over repo's
// store, with r's budgets.
func (r *Repo) newNetRemote(repo *git.Repository) *netRemote {
	return &netRemote{url: r.cfg.Remote, repo: repo, auth: r.cfg.auth(), progress: r.progress,
		pushes: r.pushes, reads: r.reads, sleep: r.sleep, transfer: r.cfg.Progress}
}

// takeRead waits for the read budget's turn (none: at once).
func (n *netRemote) takeRead(ctx context.Context) error {
	if n.reads == nil {
		return nil
	}
	return n.reads.take(ctx, n.sleep)
}

func (n *netRemote) remote() *git.Remote { return n.remoteOn(n.repo.Storer) }

// remoteOn is the remote with s as the local store: a fetch takes the
// store that counts the pack it receives (withTransferReport); the rest,
// a push among them (whose pack reuses deltas through the store's own
// type), the plain one.
func (n *netRemote) remoteOn(s storage.Storer) *git.Remote {
	return git.NewRemote(s, &config.RemoteConfig{Name: "origin", URLs: []string{n.url}})
}

func (n *netRemote) Tip(ctx context.Context, branch string) (plumbing.Hash, error) {
	if err := n.takeRead(ctx); err != nil {
		return plumbing.ZeroHash, err
	}
	refs, err := n.remote().ListContext(ctx, &git.ListOptions{Auth: n.auth})
	if err != nil {
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return plumbing.ZeroHash, nil
		}
		return plumbing.ZeroHash, classifyNetErr(err)
	}
	for _, r := range refs {
		if r.Name() == plumbing.NewBranchReferenceName(branch) {
			return r.Hash(), nil
		}
	}
	return plumbing.ZeroHash, nil
}

func (n *netRemote) Fetch(ctx context.Context, branch string, depth int) (plumbing.Hash, error) {
	return n.fetchWith(ctx, branch, depth)
}

// fetchWith fetches branch's tip into refs/tgp/fetch/<branch>, and what
// the extra refspecs name beside it, in one connection: the fetch reads
// the advertisement and asks for a pack only when objects are missing
// here.
func (n *netRemote) fetchWith(ctx context.Context, branch string, depth int, extra ...config.RefSpec) (plumbing.Hash, error) {
	dst := plumbing.ReferenceName("refs/tgp/fetch/" + branch)
	specs := append([]config.RefSpec{config.RefSpec(fmt.Sprintf("+refs/heads/%s:%s", branch, dst))}, extra...)
	if err := n.takeRead(ctx); err != nil {
		return plumbing.ZeroHash, err
	}
	err := n.remoteOn(withTransferReport(n.repo.Storer, n.transfer)).FetchContext(ctx, &git.FetchOptions{RefSpecs: specs, Auth: n.auth, Depth: depth, Progress: n.progress, Force: true})
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
	case errors.Is(err, transport.ErrEmptyRemoteRepository), errors.Is(err, git.NoMatchingRefSpecError{}):
		return plumbing.ZeroHash, nil
	default:
		return plumbing.ZeroHash, classifyNetErr(err)
	}
	ref, err := n.repo.Storer.Reference(dst)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("fetch %s: %w", branch, err)
	}
	return ref.Hash(), nil
}

func (n *netRemote) Push(ctx context.Context, branch string, old, new plumbing.Hash) error {
	src := plumbing.ReferenceName("refs/tgp/push/" + branch)
	if err := n.repo.Storer.SetReference(plumbing.NewHashReference(src, new)); err != nil {
		return err
	}
	defer n.repo.Storer.RemoveReference(src)
	rem := n.remote()
	opts := &git.PushOptions{
		RefSpecs: []config.RefSpec{config.RefSpec(fmt.Sprintf("%s:refs/heads/%s", src, branch))},
		Auth:     n.auth, Progress: n.progress,
	}
	if !old.IsZero() {
		opts.RequireRemoteRefs = []config.RefSpec{config.RefSpec(fmt.Sprintf("%s:refs/heads/%s", old, branch))}
	}
	if n.pushes != nil {
		if err := n.pushes.take(ctx, n.sleep); err != nil {
			return err
		}
	}
	err := rem.PushContext(ctx, opts)
	if err == nil || errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return classifyNetErr(err)
}

// classifyNetErr maps go-git's push and fetch errors to ErrDeclined,
// ErrRejected and ErrAuth. go-git returns most of them as plain strings:
// a push that is not a fast-forward is "non-fast-forward update: <ref>"
// (only Pull returns git.ErrNonFastForwardUpdate), a refusal by the
// server's receive-pack "command error on <ref>: <reason>".
func classifyNetErr(err error) error {
	if rl := rateLimited(err); rl != nil {
		// Before ErrAuth: a rate-limited 403 is not a bad token.
		return rl
	}
	if errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed) {
		return fmt.Errorf("%w: %v", ErrAuth, err)
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "hook declined"), strings.Contains(msg, "unpacker error"),
		strings.Contains(msg, "deletion prohibited"), strings.Contains(msg, "branch is currently checked out"),
		strings.Contains(msg, "funny refname"), strings.Contains(msg, "shallow update not allowed"),
		strings.Contains(msg, "deletion of the current branch prohibited"):
		// The server's receive-pack policy refused it: permanent.
		return fmt.Errorf("%w: %v", ErrDeclined, err)
	case errors.Is(err, git.ErrNonFastForwardUpdate),
		strings.Contains(msg, "non-fast-forward"),
		strings.Contains(msg, "fetch first"),
		strings.Contains(msg, "remote ref value does not match"),
		strings.Contains(msg, "failed to update ref"),
		strings.Contains(msg, "failed to lock"),
		strings.Contains(msg, "stale info"),
		// An atomic push (a carry landed with the branch) refused as a
		// whole because one of its refs moved.
		strings.Contains(msg, "atomic push fail"), strings.Contains(msg, "atomic transaction failed"),
		strings.Contains(msg, "cannot lock ref"), strings.Contains(msg, "reference already exists"),
		// go-git's own check of RequireRemoteRefs, before it sends a
		// thing: another root moved (or deleted) the branch.
		strings.Contains(msg, "required to be"):
		return fmt.Errorf("%w: %v", ErrRejected, err)
	case strings.Contains(msg, "authentication required"), strings.Contains(msg, "authorization failed"),
		strings.Contains(msg, "status code: 401"), strings.Contains(msg, "status code: 403"),
		strings.Contains(msg, "401 Unauthorized"), strings.Contains(msg, "403 Forbidden"):
		return fmt.Errorf("%w: %v", ErrAuth, err)
	}
	return err
}

func basicAuth(token string) transport.AuthMethod {
	if token == "" {
		return nil
	}
	return &githttp.BasicAuth{Username: "x-access-token", Password: token}
}

// branches lists the remote's branches without tripping over a push in
// progress: go-git's IterReferences reads refs/heads/<b>.lock as a ref
// (an empty one while a writer holds the lock, "ref file is empty"), so a
// clone listing the remote during a push fails. Lock files are skipped
// here, as git skips them.
func (l *localRemote) branches() (map[string]plumbing.Hash, error) {
	return l.refsUnder("refs/heads/")
}
