package gitbackend

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// This file is the warm state a booted kernel keeps between git tool
// calls: the decoded index (checked against the file's stat data and
// checksum on every read, so a write by anyone else is seen) and the
// flattened trees of the last commits asked about (a tree is named by its
// content, so a cached one never goes stale).

// warmStorage is the storage the root's go-git repository reads through:
// the repository's own, with the index kept decoded by the Repo's cache.
type warmStorage struct {
	*filesystem.Storage
	r *Repo
}

// gitStorage is what r.repo is opened on.
func (r *Repo) gitStorage() storage.Storer { return &warmStorage{Storage: r.store, r: r} }

// Index returns a copy of the cached index (read again when the file
// changed): the caller may change it.
func (s *warmStorage) Index() (*index.Index, error) {
	c := &s.r.idx
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view(s.r.dot, s.Storage)
}

// SetIndex writes the index and keeps a copy of it.
func (s *warmStorage) SetIndex(idx *index.Index) error {
	c := &s.r.idx
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.save(s.r.dot, s.Storage, idx)
	if c.idx == idx {
		c.idx = cloneIndex(idx)
	}
	return err
}

// Filesystem is the .git directory (the embedded storage's, named here
// so that it is not ambiguous).
func (s *warmStorage) Filesystem() billy.Filesystem { return s.Storage.Filesystem() }

// FlatEntry is one non-tree entry of a flattened tree.
type FlatEntry struct {
	Path string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// flatTrees keeps the last flattened trees.
type flatTrees struct {
	hash [2]plumbing.Hash
	list [2][]FlatEntry
}

// FlatTree lists every non-tree entry below tree (files, links,
// gitlinks) with its full path, in git's index order. Read through the
// root's repository, the list is cached: it is shared and must not be
// changed. A zero hash is the empty tree.
func FlatTree(s storer.EncodedObjectStorer, tree plumbing.Hash) ([]FlatEntry, error) {
	if tree.IsZero() {
		return nil, nil
	}
	ws, ok := s.(*warmStorage)
	if !ok {
		return flattenTree(s, tree)
	}
	c := &ws.r.idx
	c.mu.Lock()
	for i, h := range c.trees.hash {
		if h == tree {
			l := c.trees.list[i]
			c.mu.Unlock()
			return l, nil
		}
	}
	c.mu.Unlock()
	l, err := flattenTree(s, tree)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.trees.hash[1], c.trees.list[1] = c.trees.hash[0], c.trees.list[0]
	c.trees.hash[0], c.trees.list[0] = tree, l
	c.mu.Unlock()
	return l, nil
}

// flattenTree reads the raw tree objects (go-git's Tree decoding allocates
// per entry and its walker per path component).
func flattenTree(s storer.EncodedObjectStorer, tree plumbing.Hash) ([]FlatEntry, error) {
	var out []FlatEntry
	var walk func(h plumbing.Hash, prefix string) error
	walk = func(h plumbing.Hash, prefix string) error {
		data, err := readRaw(s, plumbing.TreeObject, h, nil)
		if err != nil {
			return fmt.Errorf("read tree %s%s: %w", prefix, h, err)
		}
		for len(data) > 0 {
			sp := bytes.IndexByte(data, ' ')
			nul := bytes.IndexByte(data, 0)
			if sp < 0 || nul < sp || nul+21 > len(data) {
				return fmt.Errorf("read tree %s%s: malformed entry", prefix, h)
			}
			m, err := parseMode(data[:sp])
			if err != nil {
				return fmt.Errorf("read tree %s%s: %w", prefix, h, err)
			}
			name := prefix + string(data[sp+1:nul])
			var eh plumbing.Hash
			copy(eh[:], data[nul+1:nul+21])
			data = data[nul+21:]
			if m == filemode.Dir {
				if err := walk(eh, name+"/"); err != nil {
					return err
				}
				continue
			}
			out = append(out, FlatEntry{Path: name, Mode: m, Hash: eh})
		}
		return nil
	}
	if err := walk(tree, ""); err != nil {
		return nil, err
	}
	// A tree git wrote is sorted so that this is index order; one written
	// otherwise is sorted here.
	if !slices.IsSortedFunc(out, func(a, b FlatEntry) int { return strings.Compare(a.Path, b.Path) }) {
		slices.SortStableFunc(out, func(a, b FlatEntry) int { return strings.Compare(a.Path, b.Path) })
	}
	return out, nil
}

func parseMode(b []byte) (filemode.FileMode, error) {
	var m uint32
	if len(b) == 0 {
		return 0, fmt.Errorf("malformed mode %q", b)
	}
	for _, c := range b {
		if c < '0' || c > '7' {
			return 0, fmt.Errorf("malformed mode %q", b)
		}
		m = m<<3 | uint32(c-'0')
	}
	return filemode.FileMode(m), nil
}

// readRaw reads an object's content, appending it to buf.
func readRaw(s storer.EncodedObjectStorer, t plumbing.ObjectType, h plumbing.Hash, buf []byte) ([]byte, error) {
	obj, err := s.EncodedObject(t, h)
	if err != nil {
		return nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	n := int(obj.Size())
	if cap(buf)-len(buf) < n {
		buf = slices.Grow(buf, n)
	}
	start := len(buf)
	buf = buf[:start+n]
	if _, err := io.ReadFull(rd, buf[start:]); err != nil {
		return nil, err
	}
	return buf, nil
}

// OSRoot is the OS directory of a worktree on disk (ok false for a
// memory root).
func OSRoot(wt billy.Filesystem) (string, bool) { return osPathOf(wt, ".") }
