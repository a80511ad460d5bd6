package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/internal/gitformat/idxfile"
	"github.com/tgp-go/tgp/internal/gitformat/packfile"
	"github.com/tgp-go/tgp/internal/gitformat/rawobj"
)

// This file is how a fresh root gets the objects of a local remote: what
// `git clone file://` gets, one pack of everything the remote's branches
// and tags reach, with its deltas, and its .idx. upload-pack's
// pack-objects reuses the deltas it has; index-pack then inflates and
// hashes every object to index them. Here the pack entries are copied as
// they are stored (packfile.CopyPack: only an offset delta's distance to
// its base is written again), each checked against the CRC-32 the
// remote's .idx records for it, and the .idx is written from the hashes
// the walk already knows: no object is inflated but the commits and trees
// the walk reads.

// walkedCommit is what the commit-graph needs of a commit read by a walk.
type walkedCommit struct {
	h plumbing.Hash
	rawobj.Commit
}

// cloneWalk lists the closure of some tips in the remote's packs.
type cloneWalk struct {
	ctx      context.Context
	pr       *packfile.Reader
	dr       *packfile.DeltaReader
	fallback *filesystem.Storage // loose objects
	seen     map[plumbing.Hash]bool
	objs     []packfile.Located
	commits  []walkedCommit
	// shallow: commits whose parents the remote lacks (it is shallow).
	shallow []plumbing.Hash
	// grafted: the commits the remote's shallow file lists. git's
	// upload-pack reads them as having no parents (its graft), so the
	// walk stops there even where the parents are in the remote (another
	// branch's shallow tip), and the clone records them as shallow.
	grafted map[plumbing.Hash]bool
	// commitsOnly walks the commits and not their trees (for a
	// commit-graph of a store that has everything already).
	commitsOnly bool
}

func newCloneWalk(ctx context.Context, pr *packfile.Reader, fallback *filesystem.Storage) *cloneWalk {
	return &cloneWalk{ctx: ctx, pr: pr, dr: packfile.NewDeltaReader(pr, 64<<20), fallback: fallback, seen: map[plumbing.Hash]bool{}}
}

// locate records h as part of the closure (false when it already was).
func (w *cloneWalk) locate(h plumbing.Hash) bool {
	if w.seen[h] {
		return false
	}
	w.seen[h] = true
	o := packfile.Located{Hash: h, Pack: -1}
	if pi, pos, off, ok := w.pr.Locate(h); ok {
		o.Pack, o.Pos, o.Off = pi, pos, off
	}
	w.objs = append(w.objs, o)
	return true
}

// read is an object's type and bytes (shared: not to be changed).
func (w *cloneWalk) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	t, b, err := w.dr.Read(h)
	if !errors.Is(err, packfile.ErrNotPacked) {
		return t, b, err
	}
	if w.fallback == nil {
		return 0, nil, plumbing.ErrObjectNotFound
	}
	obj, err := w.fallback.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return 0, nil, err
	}
	defer rd.Close()
	b, err = io.ReadAll(rd)
	return obj.Type(), b, err
}

// has reports whether the remote has h.
func (w *cloneWalk) has(h plumbing.Hash) bool {
	if _, _, ok := w.pr.Find(h); ok {
		return true
	}
	return w.fallback != nil && w.fallback.HasEncodedObject(h) == nil
}

// try is add for a ref the clone can do without: on failure what it
// added is taken back.
func (w *cloneWalk) try(h plumbing.Hash) {
	nObjs, nCommits, nShallow := len(w.objs), len(w.commits), len(w.shallow)
	if err := w.add(h); err != nil {
		for _, o := range w.objs[nObjs:] {
			delete(w.seen, o.Hash)
		}
		w.objs, w.commits, w.shallow = w.objs[:nObjs], w.commits[:nCommits], w.shallow[:nShallow]
	}
}

// add walks the closure of a ref's target (a commit, an annotated tag, a
// tree or a blob).
func (w *cloneWalk) add(h plumbing.Hash) error {
	for depth := 0; depth < 16; depth++ {
		if w.seen[h] {
			return nil
		}
		t, data, err := w.read(h)
		if err != nil {
			return fmt.Errorf("read %s: %w", h, err)
		}
		switch t {
		case plumbing.CommitObject:
			return w.commitsFrom(h)
		case plumbing.TreeObject:
			return w.tree(h)
		case plumbing.TagObject:
			w.locate(h)
			target, ok := rawobj.TagTarget(data)
			if !ok {
				return fmt.Errorf("tag %s: no object line", h)
			}
			h = target
		default:
			w.locate(h)
			return nil
		}
	}
	return errors.New("tag chain too deep")
}

// commitsFrom walks the history from tip, then the trees of the commits
// it found (newest first: the newest versions are the delta bases).
func (w *cloneWalk) commitsFrom(tip plumbing.Hash) error {
	first := len(w.commits)
	stack := []plumbing.Hash{tip}
	w.locate(tip)
	for len(stack) > 0 {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t, data, err := w.read(h)
		if err != nil {
			return fmt.Errorf("read commit %s: %w", h, err)
		}
		if t != plumbing.CommitObject {
			return fmt.Errorf("read commit %s: a %s", h, t)
		}
		rc, ok := rawobj.ParseCommit(data)
		if !ok {
			return fmt.Errorf("read commit %s: malformed", h)
		}
		c := walkedCommit{h, rc}
		w.commits = append(w.commits, c)
		if w.grafted[h] {
			w.shallow = append(w.shallow, h)
			continue
		}
		for i := len(c.Parents) - 1; i >= 0; i-- {
			p := c.Parents[i]
			if w.seen[p] {
				continue
			}
			if !w.has(p) {
				w.shallow = append(w.shallow, h) // the remote is shallow here: so are we
				continue
			}
			w.locate(p)
			stack = append(stack, p)
		}
	}
	for _, c := range w.commits[first:] {
		if w.commitsOnly {
			break
		}
		if err := w.tree(c.Tree); err != nil {
			return err
		}
	}
	return nil
}

// tree walks a tree and everything below it.
func (w *cloneWalk) tree(root plumbing.Hash) error {
	if !w.locate(root) {
		return nil
	}
	stack := []plumbing.Hash{root}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t, data, err := w.read(h)
		if err != nil {
			return fmt.Errorf("read tree %s: %w", h, err)
		}
		if t != plumbing.TreeObject {
			return fmt.Errorf("read tree %s: a %s", h, t)
		}
		for len(data) > 0 {
			mode, _, eh, rest, ok := rawobj.NextTreeEntry(data)
			if !ok {
				return fmt.Errorf("read tree %s: malformed entry", h)
			}
			data = rest
			switch {
			case mode == filemode.Dir:
				if w.locate(eh) {
					stack = append(stack, eh)
				}
			case mode == filemode.Submodule:
				// a commit of another repository
			default:
				w.locate(eh)
			}
		}
	}
	return nil
}

// writeClonePack packs w's objects as the remote stores them, deltas
// included (packfile.CopyPack); a delta whose base is not in the closure
// is written as its whole object.
func (w *cloneWalk) writeClonePack() (*packfile.Packed, []idxfile.Entry, error) {
	return w.pr.CopyPack(w.objs, w.read, func(h plumbing.Hash) bool { return w.seen[h] })
}
