package gitbackend

import (
	"bufio"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/internal/gitformat/rawobj"
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

// IndexView returns the root's index as its storage keeps it decoded,
// not copied, for a caller that only reads it (Index hands out a copy to
// change); shared is false when s is not the root's storage and idx is
// then a copy from s.Index(). A shared index must not be changed: copy it
// with CloneIndex first.
func IndexView(s storer.IndexStorer) (idx *index.Index, shared bool, err error) {
	ws, ok := s.(*warmStorage)
	if !ok {
		idx, err = s.Index()
		return idx, false, err
	}
	c := &ws.r.idx
	c.mu.Lock()
	defer c.mu.Unlock()
	idx, cached, err := c.current(ws.r.dot, ws.Storage)
	if err != nil || !cached {
		return idx, false, err // not cacheable (no index file yet): its own
	}
	c.viewed = true
	return idx, true, nil
}

// CloneIndex copies an index (its entries; names are shared).
func CloneIndex(idx *index.Index) *index.Index { return cloneIndex(idx) }

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
		data, err := ReadRaw(s, plumbing.TreeObject, h, nil)
		if err != nil {
			return fmt.Errorf("read tree %s%s: %w", prefix, h, err)
		}
		for len(data) > 0 {
			m, n, eh, rest, ok := rawobj.NextTreeEntry(data)
			if !ok {
				return fmt.Errorf("read tree %s%s: malformed entry", prefix, h)
			}
			name := prefix + string(n)
			data = rest
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

// ReadRaw reads an object's content, appending it to buf (one read into
// a buffer the caller may reuse, no decoding).
func ReadRaw(s storer.EncodedObjectStorer, t plumbing.ObjectType, h plumbing.Hash, buf []byte) ([]byte, error) {
	obj, err := s.EncodedObject(t, h)
	if err != nil {
		return nil, err
	}
	if b, ok := obj.(interface{ Bytes() []byte }); ok {
		// An object read from a pack holds its content: copied, not
		// streamed (a reader and its closer per object were a third of
		// a path-limited git_log's allocations).
		return append(buf, b.Bytes()...), nil
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

// DiffIndex compares the index's entries with a tree the way git's
// cache-tree lets it: the tree object every index directory would make is
// hashed in memory, and only the tree's subtrees whose hash differs are
// read. head[i] is the tree's entry at ents[i]'s path (Mode 0: the tree
// has none); under a directory the index and the tree hold alike it is
// ents[i]'s own mode and hash. deleted are the tree's non-tree entries at
// paths the index lacks. ents must be in index order (name, then stage);
// a directory holding conflict stages is always compared entry by entry.
//
// The comparison of the root's shared index (IndexView) with a tree is
// kept until either changes: a second status on an unchanged index reads
// no tree and hashes nothing.
func DiffIndex(s storer.EncodedObjectStorer, tree plumbing.Hash, ents []*index.Entry) (head, deleted []FlatEntry, err error) {
	ws, ok := s.(*warmStorage)
	if !ok {
		return diffIndex(s, tree, ents)
	}
	c := &ws.r.idx
	c.mu.Lock()
	shared := c.idx != nil && len(ents) == len(c.idx.Entries) && (len(ents) == 0 || &ents[0] == &c.idx.Entries[0])
	if shared && c.diff.idx == c.idx && c.diff.tree == tree {
		head, deleted = c.diff.head, c.diff.deleted
		c.mu.Unlock()
		return head, deleted, nil
	}
	c.mu.Unlock()
	head, deleted, err = diffIndex(s, tree, ents)
	if err == nil && shared {
		c.mu.Lock()
		if c.idx != nil && len(c.idx.Entries) == len(ents) && (len(ents) == 0 || &ents[0] == &c.idx.Entries[0]) {
			c.diff = cachedDiff{idx: c.idx, tree: tree, head: head, deleted: deleted}
		}
		c.mu.Unlock()
	}
	return head, deleted, err
}

// cachedDiff is the last DiffIndex of the shared index.
type cachedDiff struct {
	idx           *index.Index
	tree          plumbing.Hash
	head, deleted []FlatEntry
}

func diffIndex(s storer.EncodedObjectStorer, tree plumbing.Hash, ents []*index.Entry) (head, deleted []FlatEntry, err error) {
	d := &indexDiff{s: s, ents: ents, head: make([]FlatEntry, len(ents)), dirs: map[string]dirHash{}}
	if len(ents) > 0 {
		d.hashDir(0, len(ents), 0)
	}
	err = d.compare(tree, 0, len(ents), 0, "")
	if errors.Is(err, errUnsortedTree) {
		return diffFlat(s, tree, ents)
	}
	if err != nil {
		return nil, nil, err
	}
	return d.head, d.deleted, nil
}

// errUnsortedTree: a tree whose entries are not in git's order (not
// written by git), compared through its sorted flattened list instead.
var errUnsortedTree = errors.New("tree entries out of order")

// diffFlat is DiffIndex on the flattened tree, both sides in index order.
func diffFlat(s storer.EncodedObjectStorer, tree plumbing.Hash, ents []*index.Entry) (head, deleted []FlatEntry, err error) {
	flat, err := FlatTree(s, tree)
	if err != nil {
		return nil, nil, err
	}
	head = make([]FlatEntry, len(ents))
	j, prev := 0, ""
	for i, e := range ents {
		for ; j < len(flat) && flat[j].Path < e.Name; j++ {
			if flat[j].Path != prev {
				deleted = append(deleted, flat[j])
			}
		}
		prev = e.Name
		if j < len(flat) && flat[j].Path == e.Name {
			head[i] = flat[j]
		}
	}
	for ; j < len(flat); j++ {
		if flat[j].Path != prev {
			deleted = append(deleted, flat[j])
		}
	}
	return head, deleted, nil
}

type indexDiff struct {
	s       storer.EncodedObjectStorer
	ents    []*index.Entry
	head    []FlatEntry
	deleted []FlatEntry
	// dirs are the index directories' tree hashes by path ("" the root).
	dirs map[string]dirHash
	buf  []byte
}

type dirHash struct {
	h  plumbing.Hash
	ok bool // false: conflict stages or a clash below; never equal
}

// child is the next name below a directory in ents[lo:hi] (names from
// byte plen on): a file entry (its stages) or a directory (its range).
func (d *indexDiff) child(lo, hi, plen int) (name string, dir bool, end int) {
	n := d.ents[lo].Name[plen:]
	if i := strings.IndexByte(n, '/'); i >= 0 {
		name = n[:i]
		end = lo + 1
		for end < hi && strings.HasPrefix(d.ents[end].Name[plen:], name) && len(d.ents[end].Name) > plen+i && d.ents[end].Name[plen+i] == '/' {
			end++
		}
		return name, true, end
	}
	end = lo + 1
	for end < hi && d.ents[end].Name == d.ents[lo].Name {
		end++
	}
	return n, false, end
}

// hashDir hashes the tree object of the directory whose entries are
// ents[lo:hi] (their names' first plen bytes being its path and '/').
func (d *indexDiff) hashDir(lo, hi, plen int) dirHash {
	var body []byte
	ok := true
	prev := ""
	for i := lo; i < hi; {
		name, dir, end := d.child(i, hi, plen)
		if name == "" || name == prev {
			ok = false // an empty component, or a file and a directory of one name
		}
		prev = name
		var mode filemode.FileMode
		var h plumbing.Hash
		if dir {
			sub := d.hashDir(i, end, plen+len(name)+1)
			ok = ok && sub.ok
			mode, h = filemode.Dir, sub.h
		} else {
			e := d.ents[i]
			if end-i > 1 || e.Stage != 0 {
				ok = false
			}
			mode, h = e.Mode, e.Hash
		}
		body = strconv.AppendUint(body, uint64(mode), 8)
		body = append(body, ' ')
		body = append(body, name...)
		body = append(body, 0)
		body = append(body, h[:]...)
		i = end
	}
	var dh dirHash
	if ok {
		hd := sha1.New()
		hd.Write(strconv.AppendInt(append(d.buf[:0], "tree "...), int64(len(body)), 10))
		hd.Write([]byte{0})
		hd.Write(body)
		copy(dh.h[:], hd.Sum(nil))
		dh.ok = true
	}
	path := ""
	if plen > 0 {
		path = d.ents[lo].Name[:plen-1]
	}
	d.dirs[path] = dh
	return dh
}

// compare sets head for ents[lo:hi], the index directory at prefix
// (plen bytes), against the tree (zero: none).
func (d *indexDiff) compare(tree plumbing.Hash, lo, hi, plen int, prefix string) error {
	var data []byte
	if !tree.IsZero() {
		var err error
		if data, err = ReadRaw(d.s, plumbing.TreeObject, tree, nil); err != nil {
			return fmt.Errorf("read tree %s%s: %w", prefix, tree, err)
		}
	}
	// The tree's entries one at a time, in tree order.
	var tName string
	var tMode filemode.FileMode
	var tHash plumbing.Hash
	tOK, first := false, true
	next := func() error {
		last, lastDir := tName, tMode == filemode.Dir
		tOK = false
		if len(data) == 0 {
			return nil
		}
		m, n, h, rest, ok := rawobj.NextTreeEntry(data)
		if !ok {
			return fmt.Errorf("read tree %s%s: malformed entry", prefix, tree)
		}
		tName, tMode, tHash, tOK = string(n), m, h, true
		data = rest
		if !first && rawobj.CompareNames(last, lastDir, tName, tMode == filemode.Dir) >= 0 {
			return errUnsortedTree
		}
		first = false
		return nil
	}
	if err := next(); err != nil {
		return err
	}
	// treeOnly records the tree's entry as deleted (a whole subtree when
	// it is a directory).
	treeOnly := func() error {
		p := prefix + tName
		if tMode == filemode.Dir {
			sub, err := flattenTree(d.s, tHash)
			if err != nil {
				return err
			}
			for _, e := range sub {
				e.Path = p + "/" + e.Path
				d.deleted = append(d.deleted, e)
			}
		} else {
			d.deleted = append(d.deleted, FlatEntry{Path: p, Mode: tMode, Hash: tHash})
		}
		return next()
	}
	for i := lo; i < hi; {
		name, dir, end := d.child(i, hi, plen)
		for tOK && rawobj.CompareNames(tName, tMode == filemode.Dir, name, dir) < 0 {
			if err := treeOnly(); err != nil {
				return err
			}
		}
		match := tOK && tName == name && (tMode == filemode.Dir) == dir
		switch {
		case dir && match:
			sub := d.dirs[d.ents[i].Name[:plen+len(name)]]
			if sub.ok && sub.h == tHash {
				for k := i; k < end; k++ {
					d.head[k] = FlatEntry{Path: d.ents[k].Name, Mode: d.ents[k].Mode, Hash: d.ents[k].Hash}
				}
			} else if err := d.compare(tHash, i, end, plen+len(name)+1, prefix+name+"/"); err != nil {
				return err
			}
		case dir:
			if err := d.compare(plumbing.ZeroHash, i, end, plen+len(name)+1, prefix+name+"/"); err != nil {
				return err
			}
		case match:
			for k := i; k < end; k++ {
				d.head[k] = FlatEntry{Path: d.ents[k].Name, Mode: tMode, Hash: tHash}
			}
		}
		if match {
			if err := next(); err != nil {
				return err
			}
		}
		i = end
	}
	for tOK {
		if err := treeOnly(); err != nil {
			return err
		}
	}
	return nil
}

// EncodedObject reads a loose blob straight from the .git directory on
// disk (one open beneath objects/, no symlink resolution per component
// by go-git's chroot, as a commit's diffstat reads the blobs git add
// left), a packed object from the packs (warmpack.go); anything else is
// the storage's.
func (s *warmStorage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if t == plumbing.BlobObject {
		if obj, ok := s.r.looseObject(h); ok {
			return obj, nil
		}
	}
	if obj, ok := s.r.packObject(t, h); ok {
		return obj, nil
	}
	return s.Storage.EncodedObject(t, h)
}

var zlibReaders sync.Pool

// looseObject reads objects/xx/yyyy of a .git on disk (ok false when it
// is not there or not a blob: the storage then reads it its own way).
func (r *Repo) looseObject(h plumbing.Hash) (plumbing.EncodedObject, bool) {
	data, ok := r.looseBlob(h)
	if !ok {
		return nil, false
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	if _, err := obj.Write(data); err != nil {
		return nil, false
	}
	return obj, true
}

// looseBlob is a loose blob's content.
func (r *Repo) looseBlob(h plumbing.Hash) ([]byte, bool) {
	gitdir, ok := r.osGitDir()
	if !ok {
		return nil, false
	}
	hex := h.String()
	f, err := openNoFollow(gitdir + "/objects/" + hex[:2] + "/" + hex[2:])
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var zr io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		zr = v.(io.ReadCloser)
		if zr.(zlib.Resetter).Reset(f, nil) != nil {
			return nil, false
		}
	} else if zr, err = zlib.NewReader(f); err != nil {
		return nil, false
	}
	defer zlibReaders.Put(zr)
	br := bufio.NewReaderSize(zr, 512)
	hdr, err := br.ReadSlice(0)
	if err != nil {
		return nil, false
	}
	typ, size, ok := strings.Cut(string(hdr[:len(hdr)-1]), " ")
	n, err := strconv.ParseInt(size, 10, 64)
	if !ok || typ != "blob" || err != nil || n < 0 {
		return nil, false
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, false
	}
	// The end of the stream, where zlib checks its checksum.
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, false
	}
	return data, true
}

// osGitDir is the OS path of the .git directory (ok false for a memory
// root).
func (r *Repo) osGitDir() (string, bool) {
	r.idx.mu.Lock()
	defer r.idx.mu.Unlock()
	if !r.idx.gitdirKnown {
		r.idx.gitdir, r.idx.gitdirOK = osPathOf(r.wt, ".git")
		r.idx.gitdirKnown = true
	}
	return r.idx.gitdir, r.idx.gitdirOK
}

// ReadLooseBlobs reads the blobs of hashes that are loose objects of the
// root's .git on disk, on as many goroutines as there are CPUs (each read
// is an open, a read and an inflate of its own file: nothing shared with
// go-git's storage, which is not safe for concurrent use). found[i] is
// false for a blob that is not loose there (or not on this storage): read
// it through the storage.
func ReadLooseBlobs(s storer.EncodedObjectStorer, hashes []plumbing.Hash) (data [][]byte, found []bool) {
	data, found = make([][]byte, len(hashes)), make([]bool, len(hashes))
	ws, ok := s.(*warmStorage)
	if !ok {
		return data, found
	}
	if _, ok := ws.r.osGitDir(); !ok {
		return data, found
	}
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for w := min(runtime.GOMAXPROCS(0), len(hashes)); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= len(hashes) {
					return
				}
				data[k], found[k] = ws.r.looseBlob(hashes[k])
			}
		}()
	}
	wg.Wait()
	return data, found
}
