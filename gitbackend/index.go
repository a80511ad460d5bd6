package gitbackend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage"

	"github.com/tgp-go/tgp/internal/gitconfig"
	"github.com/tgp-go/tgp/internal/gitformat"
	"github.com/tgp-go/tgp/internal/gitformat/packfile"
)

// indexCache keeps the index a persist decoded or wrote, so that the next
// persist updates the entries it changes instead of decoding the whole
// file again. It is valid while .git/index is the file it was read from or
// written as (same size, modification time and inode): a git tool or a
// git CLI that rewrote the index makes it read afresh.
type indexCache struct {
	// mu guards the cache for the git tools' storage (warm.go); the
	// persist path holds the repository's lock.
	mu    sync.Mutex
	idx   *index.Index
	stamp fileStamp
	buf   []byte
	// trees are the last flattened trees, diff the last comparison of the
	// cached index with a tree (warm.go).
	trees flatTrees
	diff  cachedDiff
	// viewed: idx was handed out in place (IndexView) since it was cached.
	viewed bool
	// packs reads the root's packs for the git tools (warmpack.go).
	packs warmPacks
	// valid names the entries of the index last read that carry the
	// assume-valid bit (git update-index --assume-unchanged), which
	// go-git's index.Entry has no field for: kept here, handed to the
	// git tools (AssumeUnchanged) and written back by save.
	valid map[string]bool
	// reuc is the resolve-undo extension of the index last read or
	// written, unmerged its unmerged entries (by path, stages 1-3): save
	// keeps the one and records in it the stages of the other a write
	// removed, as git's remove_index_entry_at does (git add resolving a
	// conflict). dropReuc is set while a caller rebuilds the index from
	// a tree (WithoutResolveUndo), which starts git's index afresh.
	reuc     []gitformat.ResolveUndo
	unmerged map[string][3]*index.Entry
	dropReuc bool
	// gitdir is the .git directory on disk (gitdirOK), once looked up.
	gitdir                string
	gitdirOK, gitdirKnown bool
}

// fileStamp identifies the index file's content: its stat data and its
// trailing checksum (file times are only as fine as the kernel's clock
// tick, and an index rewritten in place keeps its inode and often its size).
type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
	sum   [20]byte
}

func stampIndex(dot billy.Filesystem) (fileStamp, bool) {
	info, err := dot.Stat("index")
	if err != nil || info.Size() < 32 {
		return fileStamp{}, false
	}
	st := fileStamp{size: info.Size(), mtime: info.ModTime(), ino: inodeOf(info)}
	f, err := dot.Open("index")
	if err != nil {
		return fileStamp{}, false
	}
	defer f.Close()
	if _, err := f.ReadAt(st.sum[:], info.Size()-20); err != nil {
		return fileStamp{}, false
	}
	return st, true
}

// cachedIndexStore is the storage's index behind the cache.
type cachedIndexStore interface {
	Index() (*index.Index, error)
	SetIndex(*index.Index) error
}

// load returns the index, decoded or from the cache. The caller owns it
// until it hands it back with save: a caller that fails before saving
// leaves the cache empty, so half-made edits are never reused.
func (c *indexCache) load(dot billy.Filesystem, s cachedIndexStore) (*index.Index, error) {
	st, ok := stampIndex(dot)
	c.diff = cachedDiff{} // the caller may change the index it is given
	if ok && c.idx != nil && st == c.stamp {
		idx := c.idx
		if c.viewed {
			// Read in place by a git tool (IndexView): not to be changed.
			idx = cloneIndex(idx)
		}
		c.idx, c.viewed = nil, false
		return idx, nil
	}
	c.idx = nil
	idx, rst, valid, reuc, err := readIndex(dot, s)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	c.valid = valid
	c.noteRead(idx, reuc)
	if rst.size == 0 {
		// Read by go-git: stamped before the read, so that if the file
		// changed in between, the stamp is older than the content and
		// the next load reads it again.
		rst = st
	}
	c.stamp = rst
	return idx, nil
}

// view returns a copy of the index, decoded or from the cache, which stays
// cached: what the git tools read (they may change their copy; only what
// they hand to save is kept).
func (c *indexCache) view(dot billy.Filesystem, s cachedIndexStore) (*index.Index, error) {
	idx, cached, err := c.current(dot, s)
	if err != nil || !cached {
		return idx, err
	}
	return cloneIndex(idx), nil
}

// current is the index, decoded or from the cache; cached says it is the
// cache's own (not to be changed).
func (c *indexCache) current(dot billy.Filesystem, s cachedIndexStore) (*index.Index, bool, error) {
	st, ok := stampIndex(dot)
	if ok && c.idx != nil && st == c.stamp {
		return c.idx, true, nil
	}
	c.idx, c.viewed = nil, false
	idx, rst, valid, reuc, err := readIndex(dot, s)
	if err != nil {
		return nil, false, err
	}
	c.valid = valid
	c.noteRead(idx, reuc)
	if rst.size == 0 {
		rst = st
	}
	if rst.size > 0 {
		c.idx, c.stamp = idx, rst
		return idx, true, nil
	}
	return idx, false, nil
}

// cloneIndex copies an index: its entries in one allocation (the names,
// immutable, are shared).
func cloneIndex(idx *index.Index) *index.Index {
	out := *idx
	slab := make([]index.Entry, len(idx.Entries))
	out.Entries = make([]*index.Entry, len(idx.Entries))
	for i, e := range idx.Entries {
		slab[i] = *e
		out.Entries[i] = &slab[i]
	}
	return &out
}

// readIndex decodes .git/index: versions 2, 3 and 4 here, from one read of
// the file, with the shared index of a split index (git update-index
// --split-index) merged in as git does; anything else by go-git. st is the
// stamp of the bytes decoded (zero when go-git read them). The stamp of a
// split index is its own file's: the link names the shared index by its
// checksum, and git never rewrites a shared index in place.
func readIndex(dot billy.Filesystem, s cachedIndexStore) (*index.Index, fileStamp, map[string]bool, []gitformat.ResolveUndo, error) {
	f, err := dot.Open("index")
	if err != nil {
		missing := errors.Is(err, fs.ErrNotExist)
		idx, err := s.Index() // a missing index is an empty one, as go-git has it
		if err == nil && missing {
			idx.Version = defaultIndexVersion(dot)
		}
		return idx, fileStamp{}, nil, nil, err
	}
	info, err := statOpen(f, dot)
	if err != nil {
		f.Close()
		idx, err := s.Index()
		return idx, fileStamp{}, nil, nil, err
	}
	data := make([]byte, info.Size())
	_, err = io.ReadFull(f, data)
	f.Close()
	if err == nil {
		if p, ok := gitformat.ParseIndex(data); ok {
			if p.Link != nil {
				if err := p.MergeShared(func(name string) ([]byte, error) { return readDotFile(dot, name) }); err != nil {
					return nil, fileStamp{}, nil, nil, err
				}
			}
			p.Index.ModTime = info.ModTime()
			st := fileStamp{size: info.Size(), mtime: info.ModTime(), ino: inodeOf(info)}
			copy(st.sum[:], data[len(data)-20:])
			return p.Index, st, p.ValidNames(), p.ResolveUndo, nil
		}
	}
	idx, err := s.Index()
	return idx, fileStamp{}, nil, nil, err
}

// noteRead keeps what save needs of an index just read: its resolve-undo
// records and its unmerged entries.
func (c *indexCache) noteRead(idx *index.Index, reuc []gitformat.ResolveUndo) {
	c.reuc = reuc
	c.unmerged = unmergedEntries(idx)
}

// unmergedEntries are idx's entries of stages 1-3, by path.
func unmergedEntries(idx *index.Index) map[string][3]*index.Entry {
	var out map[string][3]*index.Entry
	for _, e := range idx.Entries {
		if e.Stage < 1 || e.Stage > 3 {
			continue
		}
		if out == nil {
			out = map[string][3]*index.Entry{}
		}
		st := out[e.Name]
		cp := *e
		st[e.Stage-1] = &cp
		out[e.Name] = st
	}
	return out
}

// resolveUndo is the resolve-undo extension to write with idx: none when
// the index was rebuilt from a tree (dropReuc); else the one read, with
// each unmerged entry idx no longer has recorded by path and stage
// (record_resolve_undo: a stage recorded again replaces the old one).
func (c *indexCache) resolveUndo(idx *index.Index) []gitformat.ResolveUndo {
	if c.dropReuc {
		return nil
	}
	if len(c.unmerged) == 0 {
		return c.reuc
	}
	now := unmergedEntries(idx)
	out := append([]gitformat.ResolveUndo(nil), c.reuc...)
	at := map[string]int{}
	for i, r := range out {
		at[r.Path] = i
	}
	for p, st := range c.unmerged {
		for s, e := range st {
			if e == nil || now[p][s] != nil {
				continue
			}
			i, ok := at[p]
			if !ok {
				i = len(out)
				at[p] = i
				out = append(out, gitformat.ResolveUndo{Path: p})
			}
			out[i].Mode[s], out[i].Hash[s] = uint32(e.Mode), e.Hash
		}
	}
	return out
}

// statOpen is the stat data of an open file (fstat when the file has one).
func statOpen(f billy.File, dot billy.Filesystem) (fs.FileInfo, error) {
	if sf, ok := f.(interface{ Stat() (fs.FileInfo, error) }); ok {
		return sf.Stat()
	}
	return dot.Stat("index")
}

// readDotFile reads a file of the .git directory.
func readDotFile(dot billy.Filesystem, name string) ([]byte, error) {
	f, err := dot.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// defaultIndexVersion is the version git gives a new index (its
// get_index_format_default): index.version, else 4 with
// feature.manyFiles, else 3 (written as 2 when no entry needs 3), from
// the repository's config file. (git also reads GIT_INDEX_VERSION and the
// user's and system's config, which a root does not see.)
func defaultIndexVersion(dot billy.Filesystem) uint32 {
	const def = 3
	data, err := readDotFile(dot, "config")
	if err != nil {
		return def
	}
	// The last value of each key counts; index.version wins over
	// feature.manyFiles wherever it stands.
	manyFiles, version := false, ""
	if err := gitconfig.Parse(data, func(key string, value *string) {
		val := ""
		if value != nil {
			val = *value
		}
		switch key {
		case "feature.manyfiles":
			// A bare key is true; an empty value false, as git reads it.
			b, _ := gitconfig.ParseBool(val)
			manyFiles = value == nil || b
		case "index.version":
			version = val
		}
	}); err != nil {
		return def
	}
	v := uint64(def)
	if manyFiles {
		v = 4
	}
	if version != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(version), 0, 64)
		if err != nil {
			return def
		}
		v = uint64(n)
	}
	if v < 2 || v > 4 {
		return def // git warns "index.version set, but the value is invalid"
	}
	return uint32(v)
}

// save writes the index in place (as go-git does) and keeps it.
func (c *indexCache) save(dot billy.Filesystem, s cachedIndexStore, idx *index.Index) error {
	c.idx, c.diff = nil, cachedDiff{}
	if c.stamp.size == 0 {
		// Not read from a file: a new index takes the version the
		// repository's configuration asks for, as git's does.
		if _, err := dot.Stat("index"); errors.Is(err, fs.ErrNotExist) {
			idx.Version = defaultIndexVersion(dot)
		}
	}
	if idx.Version < 2 || idx.Version > 4 {
		return s.SetIndex(idx)
	}
	if idx.Version != 4 {
		// git keeps the version it read, but writes version 2 when no
		// entry needs version 3's extended flags, and 3 when one does.
		idx.Version = 2
		for _, e := range idx.Entries {
			if e.IntentToAdd || e.SkipWorktree {
				idx.Version = 3
				break
			}
		}
	}
	reuc := c.resolveUndo(idx)
	b, err := gitformat.EncodeIndexResolveUndo(c.buf[:0], idx, c.valid, reuc)
	if err != nil {
		return err
	}
	c.reuc, c.unmerged = reuc, unmergedEntries(idx)
	c.buf = b
	f, err := dot.OpenFile("index", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	_, err = f.Write(b)
	// The stamp of what was written: the open file's stat data (no second
	// open to read the checksum back: it is the buffer's end).
	var st fileStamp
	ok := false
	if err == nil {
		var info fs.FileInfo
		if info, ok = fileInfo(f); ok && info.Size() == int64(len(b)) {
			st = fileStamp{size: info.Size(), mtime: info.ModTime(), ino: inodeOf(info)}
			copy(st.sum[:], b[len(b)-20:])
		} else {
			ok = false
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if !ok {
		if st, ok = stampIndex(dot); !ok {
			return nil
		}
	}
	idx.ModTime = st.mtime
	c.idx, c.stamp = idx, st
	return nil
}

// fileInfo is an open file's stat data, when it can say.
func fileInfo(f billy.File) (fs.FileInfo, bool) {
	sf, ok := f.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return nil, false
	}
	info, err := sf.Stat()
	return info, err == nil
}

// indexStorage is an index reader/writer through the repository's cache.
type indexStorage struct {
	c   *indexCache
	dot billy.Filesystem
	s   cachedIndexStore
}

func (i indexStorage) Index() (*index.Index, error)    { return i.c.load(i.dot, i.s) }
func (i indexStorage) SetIndex(idx *index.Index) error { return i.c.save(i.dot, i.s, idx) }

// packedStageMin is the number of new blobs from which StageFiles writes
// them as one pack instead of one loose object each (git add writes loose
// objects: a file, a directory and a rename per object).
const packedStageMin = 8

// StageFiles is StagePathsCleaned for the root's repository: the blobs
// are written as one pack when there are many of them, and the index is
// updated in one pass (binary searches in the sorted entries, no scan per
// path) with git add's rules: a path's conflict stages are replaced by
// stage 0, a new path drops the entries that would be its parent
// directories and those below it, a missing path (or one that became a
// directory) is removed with all its stages. On another storage it is
// StagePathsCleaned.
func StageFiles(ctx context.Context, s storage.Storer, wt billy.Filesystem, paths []string, clean Cleaner) error {
	ws, ok := s.(*warmStorage)
	if !ok {
		return StagePathsCleaned(ctx, s, wt, paths, clean)
	}
	changes := make([]fileChange, 0, len(paths))
	infos := make([]fs.FileInfo, 0, len(paths))
	blobs := map[plumbing.Hash]plumbing.EncodedObject{}
	var order []plumbing.Hash
	for i, p := range paths {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c, content, info, err := readStaged(wt, p, clean)
		if err != nil {
			return fmt.Errorf("stage %s: %w", p, err)
		}
		if !c.Delete {
			obj := &plumbing.MemoryObject{}
			obj.SetType(plumbing.BlobObject)
			obj.SetSize(int64(len(content)))
			if _, err := obj.Write(content); err != nil {
				return err
			}
			c.Hash = obj.Hash()
			if _, ok := blobs[c.Hash]; !ok {
				blobs[c.Hash] = obj
				order = append(order, c.Hash)
			}
		}
		changes = append(changes, c)
		infos = append(infos, info)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ws.r.storeBlobs(blobs, order); err != nil {
		return err
	}
	idx, err := s.Index()
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	stageChanges(idx, changes, infos)
	return s.SetIndex(idx)
}

// readStaged reads a worktree path as stagePathWith does: its change (a
// deletion when it is missing or a directory), its cleaned bytes and its
// stat data.
func readStaged(wt billy.Filesystem, p string, clean Cleaner) (fileChange, []byte, fs.FileInfo, error) {
	info, err := wt.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// (ENOTDIR: a parent directory became a file.)
		return fileChange{Path: p, Delete: true}, nil, nil, nil
	}
	if err != nil {
		return fileChange{}, nil, nil, err
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		t, err := wt.Readlink(p)
		if err != nil {
			return fileChange{}, nil, nil, err
		}
		return fileChange{Path: p, Mode: filemode.Symlink}, []byte(t), info, nil
	case info.IsDir():
		return fileChange{Path: p, Delete: true}, nil, nil, nil
	}
	f, err := wt.Open(p)
	if err != nil {
		return fileChange{}, nil, nil, err
	}
	content := make([]byte, 0, info.Size()+1)
	buf := bytes.NewBuffer(content)
	_, err = buf.ReadFrom(f)
	f.Close()
	if err != nil {
		return fileChange{}, nil, nil, err
	}
	content = buf.Bytes()
	mode := filemode.Regular
	if info.Mode()&0o111 != 0 {
		mode = filemode.Executable
	}
	if clean != nil {
		content, mode = clean(p, content, mode)
	}
	return fileChange{Path: p, Mode: mode}, content, info, nil
}

// storeBlobs writes new blobs into the root's store: one pack when there
// are many (merged with the other small packs in time, as a persist's
// are), else loose objects.
func (r *Repo) storeBlobs(blobs map[plumbing.Hash]plumbing.EncodedObject, order []plumbing.Hash) error {
	if len(order) < packedStageMin {
		for _, h := range order {
			if _, err := r.store.SetEncodedObject(blobs[h]); err != nil {
				return err
			}
		}
		return nil
	}
	var enc packfile.Encoder
	p, err := enc.Encode(memObjects(blobs), order)
	if err != nil {
		return err
	}
	if err := storePack(r.store, r.dot, p, enc.Entries()); err != nil {
		return err
	}
	if r.packsWritten++; r.packsWritten%(maxSmallPacks/2) != 0 {
		return nil
	}
	merged, err := consolidatePacks(r.dot, r.store, &r.packer, r.storeMerged)
	if err != nil {
		r.progressf("warning: %v", err) // the packs stay as they are: still a valid store
	}
	if merged {
		_ = r.store.Close()
		r.store.Reindex()
	}
	return nil
}

// memObjects is a map of objects as an object source.
type memObjects map[plumbing.Hash]plumbing.EncodedObject

func (m memObjects) EncodedObject(_ plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, ok := m[h]; ok {
		return o, nil
	}
	return nil, plumbing.ErrObjectNotFound
}

// stageChanges applies changes (infos: each one's stat data, nil for a
// deletion) to idx as setIndexEntry and removeIndexPath would one after
// the other, in one pass: entries are looked up by binary search in the
// sorted index, removals marked and done at the end, new entries
// appended and sorted in.
func stageChanges(idx *index.Index, changes []fileChange, infos []fs.FileInfo) {
	if !sort.SliceIsSorted(idx.Entries, func(i, j int) bool { return gitformat.EntryLess(idx.Entries[i], idx.Entries[j]) }) {
		sort.SliceStable(idx.Entries, func(i, j int) bool { return gitformat.EntryLess(idx.Entries[i], idx.Entries[j]) })
	}
	ents := idx.Entries
	removed := make([]bool, len(ents))
	added := map[string]*index.Entry{}
	// rangeOf is the entries named p, [lo, hi).
	rangeOf := func(p string) (int, int) {
		lo := sort.Search(len(ents), func(i int) bool { return ents[i].Name >= p })
		hi := lo
		for hi < len(ents) && ents[hi].Name == p {
			hi++
		}
		return lo, hi
	}
	removePath := func(p string) {
		lo, hi := rangeOf(p)
		for i := lo; i < hi; i++ {
			removed[i] = true
		}
		delete(added, p)
	}
	for k, c := range changes {
		if c.Delete {
			removePath(c.Path)
			continue
		}
		lo, hi := rangeOf(c.Path)
		var e *index.Entry
		for i := lo; i < hi; i++ {
			switch {
			case removed[i]:
			case ents[i].Stage != 0:
				removed[i] = true // staging resolves the conflict
			case e == nil:
				e = ents[i]
			}
		}
		if e == nil {
			e = added[c.Path]
		}
		if e == nil {
			// A path cannot be both a file and a directory at one stage
			// (has_dir_name, has_file_name): the new stage-0 entry drops
			// the stage-0 entries in its way; a conflict's stages stay.
			for dir := path.Dir(c.Path); dir != "."; dir = path.Dir(dir) {
				lo, hi := rangeOf(dir)
				for i := lo; i < hi; i++ {
					if ents[i].Stage == 0 {
						removed[i] = true
					}
				}
				delete(added, dir)
			}
			below := c.Path + "/"
			for i := sort.Search(len(ents), func(i int) bool { return ents[i].Name >= below }); i < len(ents) && strings.HasPrefix(ents[i].Name, below); i++ {
				if ents[i].Stage == 0 {
					removed[i] = true
				}
			}
			for p := range added {
				if strings.HasPrefix(p, below) {
					delete(added, p)
				}
			}
			e = &index.Entry{Name: c.Path}
			added[c.Path] = e
		}
		// Staged content ends an intent to add (git add -N).
		e.Hash, e.Mode, e.IntentToAdd = c.Hash, c.Mode, false
		if info := infos[k]; info != nil {
			e.ModifiedAt, e.CreatedAt = info.ModTime(), info.ModTime()
			e.Size = uint32(info.Size())
			fillStat(e, info)
		}
	}
	kept := ents[:0]
	for i, e := range ents {
		if !removed[i] {
			kept = append(kept, e)
		}
	}
	if len(added) > 0 {
		for _, e := range added {
			kept = append(kept, e)
		}
		sort.SliceStable(kept, func(i, j int) bool { return gitformat.EntryLess(kept[i], kept[j]) })
	}
	idx.Entries = kept
}
