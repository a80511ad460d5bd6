package git

// A faster TREESAME test for git_log with literal paths: instead of
// decoding every tree along the way (go-git's Tree.Decode allocates per
// entry, most of git_log's time on a path), the entry a literal path
// names is looked up by scanning the raw tree objects, as git's
// tree-walk does. Pathspecs with wildcards keep revWalk's full listing.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"container/heap"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// literalWalk is revWalk's walk with a raw-tree fingerprint.
type literalWalk struct {
	r       *git.Repository
	items   []specItem
	shallow map[plumbing.Hash]bool
	prints  map[plumbing.Hash]string
	since   time.Time
}

// newLiteralWalk returns nil when some item has a wildcard.
func newLiteralWalk(r *git.Repository, ps pathspec) *literalWalk {
	if ps.empty() || !ps.plain() {
		return nil
	}
	for _, it := range ps.items {
		if it.glob {
			return nil
		}
	}
	return &literalWalk{r: r, items: ps.items, shallow: shallowCommits(r), prints: map[plumbing.Hash]string{}}
}

// rawTree reads a tree object's bytes.
func (w *literalWalk) rawTree(h plumbing.Hash) ([]byte, bool) {
	obj, err := w.r.Storer.EncodedObject(plumbing.TreeObject, h)
	if err != nil {
		return nil, false
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, false
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	return data, err == nil
}

// lookup finds name in a raw tree: "<mode> <name>\0<20-byte hash>".
func lookup(data []byte, name string) (filemode.FileMode, plumbing.Hash, bool) {
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			break
		}
		nul := bytes.IndexByte(data[sp+1:], 0)
		if nul < 0 || sp+1+nul+21 > len(data) {
			break
		}
		n := data[sp+1 : sp+1+nul]
		if string(n) == name {
			m, err := filemode.New(string(data[:sp]))
			if err != nil {
				return 0, plumbing.ZeroHash, false
			}
			var h plumbing.Hash
			copy(h[:], data[sp+1+nul+1:sp+1+nul+21])
			return m, h, true
		}
		data = data[sp+1+nul+21:]
	}
	return 0, plumbing.ZeroHash, false
}

// fingerprint is the (mode, hash) of each item's entry in tree: what
// revWalk.collect lists for literal items.
func (w *literalWalk) fingerprint(tree plumbing.Hash) string {
	if fp, ok := w.prints[tree]; ok {
		return fp
	}
	var b strings.Builder
	for _, it := range w.items {
		if it.pat == "" {
			// The whole tree: nothing when it is empty, as a listing.
			if data, ok := w.rawTree(tree); ok && len(data) > 0 {
				fmt.Fprintf(&b, "%s\n", tree)
			}
			continue
		}
		cur, mode, ok := tree, filemode.Dir, true
		for _, part := range strings.Split(it.pat, "/") {
			if mode != filemode.Dir {
				ok = false
				break
			}
			data, found := w.rawTree(cur)
			if !found {
				ok = false
				break
			}
			mode, cur, ok = lookup(data, part)
			if !ok {
				break
			}
		}
		if ok && (!it.dirOnly || mode == filemode.Dir) {
			fmt.Fprintf(&b, "%s %o %s\n", it.pat, mode, cur)
		}
	}
	w.prints[tree] = b.String()
	return b.String()
}

func (w *literalWalk) parents(c *object.Commit) []plumbing.Hash {
	if w.shallow[c.Hash] {
		return nil
	}
	return c.ParentHashes
}

// simplify is revWalk.simplify.
func (w *literalWalk) simplify(c *object.Commit) ([]plumbing.Hash, bool) {
	parents := w.parents(c)
	mine := w.fingerprint(c.TreeHash)
	if len(parents) == 0 {
		return nil, mine != ""
	}
	for _, ph := range parents {
		pc, err := object.GetCommit(w.r.Storer, ph)
		if err != nil {
			continue
		}
		if w.fingerprint(pc.TreeHash) == mine {
			return []plumbing.Hash{ph}, false
		}
	}
	return parents, true
}

// run is revWalk.run.
func (w *literalWalk) run(ctx context.Context, start plumbing.Hash, visit func(*object.Commit) bool) error {
	seen := map[plumbing.Hash]bool{start: true}
	first, err := object.GetCommit(w.r.Storer, start)
	if err != nil {
		return err
	}
	q := &walkQueue{{c: first}}
	seq := 1
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := heap.Pop(q).(walkItem).c
		if !w.since.IsZero() && c.Committer.When.Before(w.since) {
			continue
		}
		follow, show := w.simplify(c)
		for _, ph := range follow {
			if seen[ph] {
				continue
			}
			seen[ph] = true
			pc, err := object.GetCommit(w.r.Storer, ph)
			if err != nil {
				if errors.Is(err, plumbing.ErrObjectNotFound) {
					continue
				}
				return err
			}
			heap.Push(q, walkItem{c: pc, seq: seq})
			seq++
		}
		if show && !visit(c) {
			return nil
		}
	}
	return nil
}
