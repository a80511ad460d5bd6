package gitbackend

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage"

	"github.com/tgp-go/tgp/internal/gitconfig"
)

// lazyFiles are the files of HEAD a replay left unwritten in a root on
// disk: new files another agent pushed, which this root's persist brought
// into its commit and index but not onto its disk. Creating a file is the
// costliest thing a replay does (a new inode: 0.1-1 ms of kernel time on
// the machines measured, where rewriting one costs a tenth of that), and
// every root of a toolbox would otherwise create every file every other
// agent writes, whether or not it ever reads it.
//
// Their index entries carry git's skip-worktree bit and no stat data, so
// git (and the git tools, which honour the bit as git does) see them as
// unchanged, not deleted. They are written before anything reads the
// root: Materialize, which the kernel calls before every tool call but
// write_file (and for write_file's own path), and which Do, Refresh,
// Hydrate, a conflict and a hook that reads the worktree call first.
// Close leaves them (a short-lived process's root may be thrown away);
// the next Repo on the root finds them (findLazy) and writes them at the
// first of those calls.
type lazyFiles struct {
	// n is len(paths), or -1 while the index has not been looked at since
	// Open: read without the repository's lock, so that a call with
	// nothing to write takes no lock.
	n atomic.Int64
	// mu guards paths; it is changed only with the repository's lock held.
	mu    sync.Mutex
	paths map[string]bool
}

const lazyUnknown = -1

// count sets n from paths, unless the index is still to be looked at
// (the look finds these paths too).
func (l *lazyFiles) count() {
	if l.n.Load() != lazyUnknown {
		l.n.Store(int64(len(l.paths)))
	}
}

func (l *lazyFiles) add(p string) {
	l.mu.Lock()
	if l.paths == nil {
		l.paths = map[string]bool{}
	}
	l.paths[p] = true
	l.count()
	l.mu.Unlock()
}

func (l *lazyFiles) drop(p string) {
	if l.n.Load() == 0 {
		return
	}
	l.mu.Lock()
	delete(l.paths, p)
	l.count()
	l.mu.Unlock()
}

// has reports whether p is unwritten.
func (l *lazyFiles) has(p string) bool {
	if l.n.Load() == 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.paths[p]
}

// list is the unwritten paths at or beneath the paths of only (every one
// when only is nil; "" is the root).
func (l *lazyFiles) list(only []string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for p := range l.paths {
		if only == nil || beneathAny(p, only) {
			out = append(out, p)
		}
	}
	return out
}

// under reports whether an unwritten path is at or beneath dir.
func (l *lazyFiles) under(dir string) bool {
	if l.n.Load() == 0 {
		return false
	}
	if l.has(dir) {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range l.paths {
		if atOrBeneath(p, dir) {
			return true
		}
	}
	return false
}

// atOrBeneath reports whether p is dir or inside it ("" is the root).
func atOrBeneath(p, dir string) bool {
	return dir == "" || p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

func beneathAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if atOrBeneath(p, d) {
			return true
		}
	}
	return false
}

// mayHave says whether Materialize has anything to do for only (every
// path when nil) without taking the repository's lock.
func (l *lazyFiles) mayHave(only []string) bool {
	switch n := l.n.Load(); {
	case n == lazyUnknown:
		return true
	case n == 0:
		return false
	case only == nil:
		return true
	}
	for _, p := range only {
		if l.under(p) {
			return true
		}
	}
	return false
}

// Unwritten reports how many files of HEAD a replay left unwritten in the
// root (see Materialize), and one more while a replay waits for the root
// to take it (pending.go): zero means Materialize has nothing to do; -1
// until the root's index was first looked at.
func (r *Repo) Unwritten() int {
	n := int(r.lazy.n.Load())
	if r.pending.Load() != nil && n >= 0 {
		n++ // the replay not yet taken (pending.go)
	}
	return n
}

// Materialize writes the files of HEAD that replays left unwritten (see
// lazyFiles): those at or beneath the paths given (a directory's, "." the
// root's), or every one when none is given. It takes the repository's
// lock only when there is something to write, so a caller that asks for
// a path holding none while the lock is held by the same goroutine (a
// hook reading the root during a persist) returns at once.
func (r *Repo) Materialize(ctx context.Context, paths ...string) error {
	var only []string
	if len(paths) > 0 {
		only = make([]string, len(paths))
		for i, p := range paths {
			only[i] = strings.TrimPrefix(path.Clean("/"+p), "/")
		}
	}
	if p := r.pending.Load(); (p == nil || !p.touches(only)) && !r.lazy.mayHave(only) {
		return nil
	}
	if err := r.lock(ctx); err != nil {
		return err
	}
	defer r.unlock()
	return r.materializeLocked(ctx, only)
}

// materializeLocked is Materialize with the repository's lock held.
func (r *Repo) materializeLocked(ctx context.Context, only []string) error {
	if r.lazy.n.Load() == lazyUnknown {
		if err := r.findLazy(); err != nil {
			return err
		}
	}
	if r.lazy.n.Load() == 0 {
		return nil
	}
	todo := r.lazy.list(only)
	if len(todo) == 0 {
		return nil
	}
	var s storage.Storer = r.gitStorage()
	if r.ov != nil {
		s = r.ov // in a persist: its objects are there
	}
	idx, err := s.Index()
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	head, err := r.head()
	if err != nil {
		return err
	}
	tree, err := r.treeOf(head)
	if err != nil {
		return err
	}
	smudge := r.checkoutSmudgerFor(s, tree)
	fw := newFastWriter(r.wt)
	defer fw.close()
	var werr error
	for _, p := range todo {
		if err := ctx.Err(); err != nil {
			werr = err
			break
		}
		e, err := idx.Entry(p)
		if err != nil || !e.SkipWorktree || e.Stage != 0 {
			// Something else recorded the path since (a git tool, git
			// run in the root): it is no longer ours to write.
			r.lazy.drop(p)
			continue
		}
		if !fw.absent(p) {
			// Something was put there meanwhile: git leaves a file it
			// finds at a skip-worktree path, and so do we; the entry now
			// describes the file, compared as any other.
			e.SkipWorktree = false
			r.lazy.drop(p)
			continue
		}
		c := fileChange{Path: p, Mode: e.Mode, Hash: e.Hash, smudge: smudge}
		if st, ok, err := fastWriteWorktreeFile(fw, s, c); err != nil {
			werr = err
			break
		} else if ok {
			setIndexEntryStat(idx, c, st)
		} else {
			if err := writeWorktreeFile(s, r.wt, c); err != nil {
				werr = err
				break
			}
			if err := setIndexEntry(idx, r.wt, c); err != nil {
				werr = err
				break
			}
		}
		if e, err := idx.Entry(p); err == nil {
			e.SkipWorktree = false
		}
		r.lazy.drop(p)
	}
	// What was written is recorded even when a file failed: its entry
	// is then still skip-worktree, and the next call tries it again.
	if err := s.SetIndex(idx); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	return werr
}

// findLazy looks for entries a replay of another process left unwritten
// (it stopped before it could write them): skip-worktree entries with no
// stat data whose file is absent, in a root that is not a sparse checkout
// (where such entries are the sparse checkout's own).
func (r *Repo) findLazy() error {
	r.lazy.mu.Lock()
	r.lazy.paths = nil
	r.lazy.n.Store(0)
	r.lazy.mu.Unlock()
	fw := newFastWriter(r.wt)
	if fw == nil {
		return nil // no root on disk: nothing is ever left unwritten
	}
	defer fw.close()
	if v, ok := r.indexVersion(); !ok || v == 2 {
		// No index, or one of version 2: no extended flags, so no
		// skip-worktree entry (what a root reads in the common case:
		// the index is not decoded for this).
		return nil
	}
	s := r.gitStorage()
	idx, shared, err := IndexView(s)
	if err != nil {
		return nil // no readable index: no entry to write
	}
	_ = shared // only read here
	var found []string
	for _, e := range idx.Entries {
		if lazyEntry(e) {
			found = append(found, e.Name)
		}
	}
	if len(found) == 0 || r.sparseCheckout() {
		return nil
	}
	for _, p := range found {
		if fw.absent(p) {
			r.lazy.add(p)
		}
	}
	return nil
}

// indexVersion reads the version of .git/index from its header.
func (r *Repo) indexVersion() (uint32, bool) {
	if r.dot == nil {
		return 0, false
	}
	f, err := r.dot.Open("index")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var hdr [8]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil || string(hdr[:4]) != "DIRC" {
		return 0, false
	}
	return binary.BigEndian.Uint32(hdr[4:]), true
}

// lazyEntry: an entry as deferFile leaves it.
func lazyEntry(e *index.Entry) bool {
	return e.SkipWorktree && e.Stage == 0 && e.ModifiedAt.IsZero() && e.Size == 0 && e.Inode == 0 &&
		(e.Mode == filemode.Regular || e.Mode == filemode.Executable)
}

// sparseCheckout reads core.sparseCheckout from the repository's config.
func (r *Repo) sparseCheckout() bool {
	if r.dot == nil {
		return false
	}
	f, err := r.dot.Open("config")
	if err != nil {
		return false
	}
	raw, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return false
	}
	return gitconfig.Load(r.cfg.Environ, raw, "").Bool("core.sparsecheckout", false)
}

// lazyCheckout is how applyChanges treats the files a checkout leaves
// unwritten: files, the root's set, loses every path the checkout writes
// or removes; with deferNew, a new regular file (nothing on disk where it
// goes) is recorded in the index and joins the set instead of being
// written.
type lazyCheckout struct {
	files    *lazyFiles
	deferNew bool
	// keep are paths whose files stay as they are on disk (the agent's,
	// about to be committed over a replay taken late, pending.go): their
	// entries take the new version without stat data, so they compare by
	// content.
	keep map[string]bool
}

// kept says whether c's file stays as it is (keep), and if so records
// c's version in idx.
func (lc *lazyCheckout) kept(idx *index.Index, c fileChange) bool {
	if lc == nil || !lc.keep[c.Path] {
		return false
	}
	if c.Delete {
		removeIndexPath(idx, c.Path)
		return true
	}
	e := indexEntryFor(idx, c)
	e.SkipWorktree, e.IntentToAdd = false, false
	e.CreatedAt, e.ModifiedAt = time.Time{}, time.Time{}
	e.Dev, e.Inode, e.UID, e.GID, e.Size = 0, 0, 0, 0, 0
	return true
}

// deferrable says whether c may be left unwritten: a regular file whose
// path holds nothing on disk, and not one that changes how git or the
// toolbox read the root (.gitattributes, .gitignore, .gitmodules, the
// derived file).
func (lc *lazyCheckout) deferrable(fw *fastWriter, c fileChange) bool {
	if lc == nil || !lc.deferNew || c.Delete || (c.Mode != filemode.Regular && c.Mode != filemode.Executable) {
		return false
	}
	if c.Path == DerivedFile || strings.HasPrefix(strings.ToLower(path.Base(c.Path)), ".git") {
		return false
	}
	return fw.absent(c.Path)
}

// deferFile records c in the index as a file not written: skip-worktree,
// no stat data.
func deferFile(idx *index.Index, c fileChange) {
	e := indexEntryFor(idx, c)
	e.SkipWorktree, e.IntentToAdd = true, false
	e.CreatedAt, e.ModifiedAt = time.Time{}, time.Time{}
	e.Dev, e.Inode, e.UID, e.GID, e.Size = 0, 0, 0, 0, 0
}

// written says c's path is on disk as its entry says (or gone).
func (lc *lazyCheckout) written(idx *index.Index, c fileChange) {
	if lc == nil || !lc.files.has(c.Path) {
		return
	}
	if !c.Delete {
		if e, err := idx.Entry(c.Path); err == nil {
			e.SkipWorktree = false
		}
	}
	lc.files.drop(c.Path)
}
