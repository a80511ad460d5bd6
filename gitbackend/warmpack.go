package gitbackend

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/internal/gitformat/packfile"
)

// warmPacks reads the root's pack files for the git tools without go-git's
// packfile machinery, whose first read of a repository checks the whole
// .idx with a collision-detecting SHA-1 and builds a map of every object's
// offset (a third of a git_commit on a fresh 10,000-file repository): the
// .idx is searched in place (packfile.Reader), entries are inflated directly
// and deltas applied here, the objects kept in a bounded cache (delta
// bases are read again and again along a history). A pack is named by its
// checksum, so nothing cached goes stale; an object not found makes the
// pack directory listed again once (a persist or git_add may have written
// a pack since), and anything else (a loose object, an unreadable entry)
// is go-git's to read.
type warmPacks struct {
	mu   sync.Mutex
	pr   *packfile.Reader
	dir  dirStamp       // the pack directory when pr listed it
	idxs packfile.Cache // the .idx files read, by pack
	// dr resolves the entries (its cache outlives a new listing: a pack
	// is named by its checksum).
	dr *packfile.DeltaReader
}

// close releases the packs' files.
func (w *warmPacks) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pr != nil {
		w.pr.Close()
		w.pr = nil
	}
	w.dr = nil
}

// maxWarmCache bounds the bytes of the objects kept.
const maxWarmCache = 32 << 20

// packObject reads h from the root's packs (ok false: go-git reads it).
func (r *Repo) packObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, bool) {
	gitdir, ok := r.osGitDir()
	if !ok {
		return nil, false
	}
	w := &r.idx.packs
	w.mu.Lock()
	defer w.mu.Unlock()
	p, off, found := w.find(gitdir, h)
	if !found {
		return nil, false
	}
	typ, data, err := w.dr.ReadAt(p, off)
	if err != nil {
		return nil, false
	}
	if t != plumbing.AnyObject && typ != t {
		return nil, false // go-git answers ErrObjectNotFound
	}
	return &sharedObject{h: h, typ: typ, data: data}, true
}

// find looks h up in the packs listed, listing them (again) when the pack
// directory changed since.
func (w *warmPacks) find(gitdir string, h plumbing.Hash) (*packfile.Pack, uint64, bool) {
	if w.pr != nil {
		if p, off, ok := w.pr.Find(h); ok {
			return p, off, true
		}
	}
	info, err := os.Stat(filepath.Join(gitdir, "objects", "pack"))
	if err != nil {
		return nil, 0, false
	}
	stamp := dirStamp{info.ModTime(), info.Size(), inodeOf(info)}
	if w.pr != nil && stamp == w.dir {
		return nil, 0, false // no new pack: a loose object, or none
	}
	if w.pr != nil {
		w.pr.Close()
	}
	pr, err := packfile.Open(gitdir, func() *filesystem.Storage { return nil }, &w.idxs)
	if err != nil {
		w.pr = nil
		return nil, 0, false
	}
	w.pr, w.dir = pr, stamp
	if w.dr == nil {
		w.dr = packfile.NewDeltaReader(pr, maxWarmCache)
	}
	w.dr.SetReader(pr)
	return pr.Find(h)
}

type dirStamp struct {
	mtime time.Time
	size  int64
	ino   uint64
}

// sharedObject is an object read from a pack, its bytes shared with the
// reader's cache: read-only.
type sharedObject struct {
	h    plumbing.Hash
	typ  plumbing.ObjectType
	data []byte
}

var errSharedObject = errors.New("object read from a pack is read-only")

func (o *sharedObject) Hash() plumbing.Hash             { return o.h }
func (o *sharedObject) Type() plumbing.ObjectType       { return o.typ }
func (o *sharedObject) SetType(plumbing.ObjectType)     {}
func (o *sharedObject) Size() int64                     { return int64(len(o.data)) }
func (o *sharedObject) SetSize(int64)                   {}
func (o *sharedObject) Writer() (io.WriteCloser, error) { return nil, errSharedObject }
func (o *sharedObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

// Bytes is the object's content (shared: not to be changed).
func (o *sharedObject) Bytes() []byte { return o.data }

// objectBytes is a memory object's content (its reader reads the slice
// in place).
func objectBytes(o *plumbing.MemoryObject) ([]byte, error) {
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	b := make([]byte, o.Size())
	_, err = io.ReadFull(rd, b)
	return b, err
}
