package gitbackend

import (
	"maps"

	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// AssumeUnchangedIn names the entries of the root's index, as s last read
// it, that carry the assume-valid bit (`git update-index
// --assume-unchanged`): git takes them as matching the worktree without
// looking at the files. Nil when s is not a root's storage or no entry
// carries it.
func AssumeUnchangedIn(s storer.IndexStorer) map[string]bool {
	ws, ok := s.(*warmStorage)
	if !ok {
		return nil
	}
	c := &ws.r.idx
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.valid)
}

// WithoutResolveUndo runs fn, which rebuilds the index from a tree (a
// branch switch, a stash's reset or merge), with the index's resolve-undo
// records dropped by the writes it makes: git's unpack_trees starts a new
// index, which has none. A storage that is not the root's has no records
// to drop.
func WithoutResolveUndo(s storer.IndexStorer, fn func() error) error {
	ws, ok := s.(*warmStorage)
	if !ok {
		return fn()
	}
	c := &ws.r.idx
	c.mu.Lock()
	c.dropReuc = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.dropReuc = false
		c.mu.Unlock()
	}()
	return fn()
}

// SetRefreshedIndex writes idx, the index as read with only its entries'
// stat data refreshed (refresh_index), keeping its resolve-undo records
// even inside WithoutResolveUndo: the status a switch or a stash runs
// before it decides is no rebuild, and a switch it then refuses leaves
// the records as git's does.
func SetRefreshedIndex(s storer.IndexStorer, idx *index.Index) error {
	ws, ok := s.(*warmStorage)
	if !ok {
		return s.SetIndex(idx)
	}
	c := &ws.r.idx
	c.mu.Lock()
	drop := c.dropReuc
	c.dropReuc = false
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.dropReuc = drop
		c.mu.Unlock()
	}()
	return ws.SetIndex(idx)
}
