package trust

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// ErrNoPath: the path is not a file of the commit.
var ErrNoPath = errors.New("no such file at that commit")

// entry is a path's blob and mode in a tree (zero when absent): two
// commits agree on a path when their entries are equal (git's TREESAME).
type entry struct {
	hash plumbing.Hash
	mode filemode.FileMode
}

// History walks the commits that changed one path.
type History struct {
	s storer.EncodedObjectStorer
	// memo maps (commit, path) to the commit that last changed path as
	// seen from it: a walk that reaches a commit an earlier walk started
	// from stops there, so checking a tool after every new commit walks
	// one step, not its whole history.
	memo map[memoKey]plumbing.Hash
}

type memoKey struct {
	commit plumbing.Hash
	path   string
}

// maxMemo bounds History's memo; past it the memo starts over.
const maxMemo = 1 << 14

// NewHistory reads commits and trees from s.
func NewHistory(s storer.EncodedObjectStorer) *History {
	return &History{s: s, memo: map[memoKey]plumbing.Hash{}}
}

// EntryAt is the file p in commit c: its blob hash, or ZeroHash when c
// has no file there.
func (h *History) EntryAt(c *object.Commit, p string) (plumbing.Hash, error) {
	e, err := h.entry(c, p)
	return e.hash, err
}

func (h *History) entry(c *object.Commit, p string) (entry, error) {
	t, err := object.GetTree(h.s, c.TreeHash)
	if err != nil {
		return entry{}, err
	}
	// Walk the tree one directory at a time: FindEntry would too, but
	// reports a missing path and a missing object alike.
	parts := strings.Split(path.Clean(p), "/")
	for i, name := range parts {
		var found *object.TreeEntry
		for j := range t.Entries {
			if t.Entries[j].Name == name {
				found = &t.Entries[j]
				break
			}
		}
		if found == nil {
			return entry{}, nil
		}
		if i == len(parts)-1 {
			if !found.Mode.IsFile() {
				return entry{}, nil
			}
			return entry{found.Hash, found.Mode}, nil
		}
		if found.Mode != filemode.Dir {
			return entry{}, nil
		}
		if t, err = object.GetTree(h.s, found.Hash); err != nil {
			return entry{}, err
		}
	}
	return entry{}, nil
}

// LastChange is the commit that gave p the content it has in from, by
// git's default history simplification (`git log -1 --format=%H from --
// p`): from a commit, follow the first parent p is unchanged in; the
// commit none of whose parents has p as it is, is the change. A parent
// missing from a shallow clone ends the walk at its child.
func (h *History) LastChange(from *object.Commit, p string) (*object.Commit, error) {
	want, err := h.entry(from, p)
	if err != nil {
		return nil, err
	}
	if want.hash.IsZero() {
		return nil, fmt.Errorf("%s at %s: %w", p, from.Hash.String()[:7], ErrNoPath)
	}
	var walked []plumbing.Hash
	c := from
	for {
		if done, ok := h.memo[memoKey{c.Hash, p}]; ok {
			h.remember(walked, p, done)
			return object.GetCommit(h.s, done)
		}
		walked = append(walked, c.Hash)
		next, err := h.unchangedParent(c, p, want)
		if err != nil {
			return nil, err
		}
		if next == nil {
			h.remember(walked, p, c.Hash)
			return c, nil
		}
		c = next
	}
}

func (h *History) remember(walked []plumbing.Hash, p string, last plumbing.Hash) {
	if len(h.memo)+len(walked) > maxMemo {
		h.memo = map[memoKey]plumbing.Hash{}
	}
	for _, w := range walked {
		h.memo[memoKey{w, p}] = last
	}
}

// unchangedParent is c's first parent whose entry for p is want (nil:
// none; a parent not in the store, as past a shallow boundary, counts as
// none).
func (h *History) unchangedParent(c *object.Commit, p string, want entry) (*object.Commit, error) {
	for _, ph := range c.ParentHashes {
		pc, err := object.GetCommit(h.s, ph)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		e, err := h.entry(pc, p)
		if err != nil {
			return nil, err
		}
		if e == want {
			return pc, nil
		}
	}
	return nil, nil
}

// Changes lists the commits that changed p as seen from from, newest
// first, at most limit (<= 0: all): what `git log -- p` lists on a
// history without merges, deletions included. At a merge whose result
// differs from every parent the walk goes on along the first parent
// only (git walks them all).
func (h *History) Changes(from *object.Commit, p string, limit int) ([]*object.Commit, error) {
	var out []*object.Commit
	c := from
	for c != nil && (limit <= 0 || len(out) < limit) {
		e, err := h.entry(c, p)
		if err != nil {
			return nil, err
		}
		next, err := h.unchangedParent(c, p, e)
		if err != nil {
			return nil, err
		}
		if next == nil {
			if len(c.ParentHashes) > 0 || !e.hash.IsZero() {
				out = append(out, c)
			}
			if len(c.ParentHashes) > 0 {
				next, err = object.GetCommit(h.s, c.ParentHashes[0])
				if errors.Is(err, plumbing.ErrObjectNotFound) {
					next, err = nil, nil // a shallow clone's boundary
				}
				if err != nil {
					return nil, err
				}
			}
		}
		c = next
	}
	return out, nil
}

// Version is one commit that changed a tool (tool_history).
type Version struct {
	Commit  string    `json:"commit"`
	Author  string    `json:"author"`
	Date    time.Time `json:"date"`
	Subject string    `json:"subject"`
	// Signed: the commit carries a signature (of any kind).
	Signed bool `json:"signed"`
	// SignedBy is the principal sandbox.trusted_signers verified the
	// signature for ("" when not configured or not trusted).
	SignedBy string `json:"signed_by"`
	// Untrusted says why the trusted signers refuse the commit (only
	// when they are configured).
	Untrusted string `json:"untrusted,omitempty"`
	// Deleted: the commit removed the tool.
	Deleted bool `json:"deleted,omitempty"`
}
