package gitbackend

import (
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// warmPacks reads the root's pack files for the git tools without go-git's
// packfile machinery, whose first read of a repository checks the whole
// .idx with a collision-detecting SHA-1 and builds a map of every object's
// offset (a third of a git_commit on a fresh 10,000-file repository): the
// .idx is searched in place (packReader), entries are inflated directly
// and deltas applied here, the objects kept in a bounded cache (delta
// bases are read again and again along a history). A pack is named by its
// checksum, so nothing cached goes stale; an object not found makes the
// pack directory listed again once (a persist or git_add may have written
// a pack since), and anything else (a loose object, an unreadable entry)
// is go-git's to read.
type warmPacks struct {
	mu    sync.Mutex
	pr    *packReader
	dir   dirStamp  // the pack directory when pr listed it
	idxs  packCache // the .idx files read, by pack
	zr    io.ReadCloser
	cache map[objKey]*plumbing.MemoryObject
	size  int
}

// close releases the packs' files.
func (w *warmPacks) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pr != nil {
		w.pr.Close()
		w.pr = nil
	}
	w.cache, w.size = nil, 0
}

type objKey struct {
	pack string
	off  uint64
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
	obj, err := w.object(p, off, 0)
	if err != nil {
		return nil, false
	}
	if t != plumbing.AnyObject && obj.Type() != t {
		return nil, false // go-git answers ErrObjectNotFound
	}
	return obj, true
}

// find looks h up in the packs listed, listing them (again) when the pack
// directory changed since.
func (w *warmPacks) find(gitdir string, h plumbing.Hash) (*readPack, uint64, bool) {
	if w.pr != nil {
		if p, off, ok := w.pr.find(h); ok {
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
	pr, err := openPackReader(gitdir, func() *filesystem.Storage { return nil }, &w.idxs)
	if err != nil {
		w.pr = nil
		return nil, 0, false
	}
	w.pr, w.dir = pr, stamp
	return pr.find(h)
}

type dirStamp struct {
	mtime time.Time
	size  int64
	ino   uint64
}

// object reads the entry at off of p, resolving deltas (depth counts the
// chain, bounded as git bounds it).
func (w *warmPacks) object(p *readPack, off uint64, depth int) (*plumbing.MemoryObject, error) {
	k := objKey{p.path, off}
	if obj, ok := w.cache[k]; ok {
		return obj, nil
	}
	if depth > 4096 {
		return nil, errors.New("delta chain too long")
	}
	typ, size, r, err := p.entry(off)
	if err != nil {
		return nil, err
	}
	var base *plumbing.MemoryObject
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		br := r.(io.ByteReader)
		c, err := br.ReadByte()
		if err != nil {
			return nil, err
		}
		rel := uint64(c & 0x7f)
		for c&0x80 != 0 {
			if c, err = br.ReadByte(); err != nil {
				return nil, err
			}
			rel = (rel+1)<<7 | uint64(c&0x7f)
		}
		if rel == 0 || rel > off {
			return nil, fmt.Errorf("bad delta base offset at %d", off)
		}
		if base, err = w.object(p, off-rel, depth+1); err != nil {
			return nil, err
		}
	case plumbing.REFDeltaObject:
		var bh plumbing.Hash
		if _, err := io.ReadFull(r, bh[:]); err != nil {
			return nil, err
		}
		bp, boff, ok := w.pr.find(bh)
		if !ok {
			return nil, plumbing.ErrObjectNotFound
		}
		if base, err = w.object(bp, boff, depth+1); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown object type %d at %d", typ, off)
	}
	if w.zr == nil {
		w.zr, err = zlib.NewReader(r)
	} else {
		err = w.zr.(zlib.Resetter).Reset(r, nil)
	}
	if err != nil {
		return nil, err
	}
	data, err := inflated(w.zr, size)
	if err != nil {
		return nil, err
	}
	if base != nil {
		src, err := objectBytes(base)
		if err != nil {
			return nil, err
		}
		if data, err = applyDelta(src, data); err != nil {
			return nil, fmt.Errorf("delta at %d: %w", off, err)
		}
		typ = base.Type()
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(typ)
	obj.SetSize(int64(len(data)))
	if _, err := obj.Write(data); err != nil {
		return nil, err
	}
	if w.cache == nil || w.size+len(data) > maxWarmCache {
		w.cache, w.size = map[objKey]*plumbing.MemoryObject{}, 0
	}
	w.cache[k] = obj
	w.size += len(data)
	return obj, nil
}

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

// applyDelta is git's patch_delta: the source and target sizes, then
// copies from the source and inserted bytes.
func applyDelta(src, delta []byte) ([]byte, error) {
	varint := func() (uint64, bool) {
		var v uint64
		for shift := uint(0); len(delta) > 0; shift += 7 {
			c := delta[0]
			delta = delta[1:]
			v |= uint64(c&0x7f) << shift
			if c&0x80 == 0 {
				return v, true
			}
			if shift > 56 {
				return 0, false
			}
		}
		return 0, false
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != uint64(len(src)) {
		return nil, errors.New("bad delta header")
	}
	// The target size is the delta's word; it sizes the buffer only as far
	// as the delta could fill it (each copy op takes at least one byte and
	// brings at most 2^24 bytes of the source).
	if dstSize > uint64(len(delta)+1)<<24 {
		return nil, errors.New("bad delta header: target larger than the delta can make")
	}
	out := make([]byte, 0, min(dstSize, 64<<20))
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n uint64
			for i := uint(0); i < 4; i++ {
				if op&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated copy")
					}
					off |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := uint(0); i < 3; i++ {
				if op&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated copy")
					}
					n |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(src)) || off+n < off {
				return nil, errors.New("copy out of the source")
			}
			out = append(out, src[off:off+n]...)
		case op != 0:
			if int(op) > len(delta) {
				return nil, errors.New("truncated insert")
			}
			out = append(out, delta[:op]...)
			delta = delta[op:]
		default:
			return nil, errors.New("reserved delta opcode")
		}
	}
	if uint64(len(out)) != dstSize {
		return nil, errors.New("delta result has the wrong size")
	}
	return out, nil
}
