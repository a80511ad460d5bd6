package gitbackend

import (
	"maps"

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
