package packfile

import (
	"compress/zlib"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// DeltaReader reads objects out of a Reader's packs, resolving delta
// chains (offset and ref deltas) as git's unpack_entry does, with a cache
// of what it resolved: along a history each version of a file or tree is
// the base of the next, so a base once resolved is read again at once.
// The cache is two generations of about limit/2 bytes each (what was used
// in the last generation moves to the new one), an LRU without a list.
// Not safe for concurrent use; the bytes it returns are shared with the
// cache and must not be changed.
type DeltaReader struct {
	pr         *Reader
	zr         io.ReadCloser
	young, old map[objKey]cachedObj
	youngSize  int
	limit      int
}

type cachedObj struct {
	typ  plumbing.ObjectType
	data []byte
}

// objKey names a pack entry: the pack's path and the entry's offset.
type objKey struct {
	pack string
	off  uint64
}

// NewDeltaReader reads pr's packs with a cache of about limit bytes.
func NewDeltaReader(pr *Reader, limit int) *DeltaReader {
	return &DeltaReader{pr: pr, limit: limit}
}

// SetReader makes d read pr's packs, keeping its cache: a pack is named
// by its checksum, so what was cached from a pack pr still lists is
// still right.
func (d *DeltaReader) SetReader(pr *Reader) { d.pr = pr }

// ErrNotPacked is what Read returns for an object in none of the packs.
var ErrNotPacked = errors.New("object not in the packs")

// Read resolves h (ErrNotPacked when no pack has it).
func (d *DeltaReader) Read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	p, off, ok := d.pr.Find(h)
	if !ok {
		return 0, nil, ErrNotPacked
	}
	return d.ReadAt(p, off)
}

func (d *DeltaReader) cached(k objKey) (cachedObj, bool) {
	if o, ok := d.young[k]; ok {
		return o, true
	}
	if o, ok := d.old[k]; ok {
		d.keep(k, o)
		return o, true
	}
	return cachedObj{}, false
}

func (d *DeltaReader) keep(k objKey, o cachedObj) {
	if d.limit <= 0 || len(o.data) > d.limit/2 {
		return
	}
	if d.young == nil || d.youngSize+len(o.data) > d.limit/2 {
		d.old, d.young, d.youngSize = d.young, make(map[objKey]cachedObj, 256), 0
	}
	d.young[k] = o
	d.youngSize += len(o.data)
}

// ReadAt resolves the entry at off of p.
func (d *DeltaReader) ReadAt(p *Pack, off uint64) (plumbing.ObjectType, []byte, error) {
	// The chain is followed down to a whole object or a cached one, then
	// the deltas are applied back up: no recursion, however long it is.
	type link struct {
		k     objKey
		delta []byte
	}
	var chain []link
	var typ plumbing.ObjectType
	var data []byte
	for {
		k := objKey{p.path, off}
		if o, ok := d.cached(k); ok {
			typ, data = o.typ, o.data
			break
		}
		if len(chain) > 10000 {
			return 0, nil, errors.New("delta chain too long")
		}
		t, size, r, err := p.entry(off)
		if err != nil {
			return 0, nil, err
		}
		var bp *Pack
		var boff uint64
		switch t {
		case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
		case plumbing.OFSDeltaObject:
			br := r.(io.ByteReader)
			c, err := br.ReadByte()
			if err != nil {
				return 0, nil, err
			}
			rel := uint64(c & 0x7f)
			for c&0x80 != 0 {
				if c, err = br.ReadByte(); err != nil {
					return 0, nil, err
				}
				rel = (rel+1)<<7 | uint64(c&0x7f)
			}
			if rel == 0 || rel > off {
				return 0, nil, fmt.Errorf("%s.pack: bad delta base offset at %d", p.path, off)
			}
			bp, boff = p, off-rel
		case plumbing.REFDeltaObject:
			var bh plumbing.Hash
			if _, err := io.ReadFull(r, bh[:]); err != nil {
				return 0, nil, err
			}
			var ok bool
			if bp, boff, ok = d.pr.Find(bh); !ok {
				return 0, nil, fmt.Errorf("%s.pack: delta base %s: %w", p.path, bh, plumbing.ErrObjectNotFound)
			}
		default:
			return 0, nil, fmt.Errorf("%s.pack: unknown object type %d at %d", p.path, t, off)
		}
		if d.zr == nil {
			d.zr, err = zlib.NewReader(r)
		} else {
			err = d.zr.(zlib.Resetter).Reset(r, nil)
		}
		if err != nil {
			return 0, nil, fmt.Errorf("%s.pack: entry at %d: %w", p.path, off, err)
		}
		b, err := inflated(d.zr, size)
		if err != nil {
			return 0, nil, fmt.Errorf("%s.pack: entry at %d: %w", p.path, off, err)
		}
		if bp == nil {
			typ, data = t, b
			d.keep(k, cachedObj{t, b})
			break
		}
		chain = append(chain, link{k, b})
		p, off = bp, boff
	}
	for i := len(chain) - 1; i >= 0; i-- {
		out, err := ApplyDelta(data, chain[i].delta)
		if err != nil {
			return 0, nil, fmt.Errorf("%s.pack: delta at %d: %w", chain[i].k.pack, chain[i].k.off, err)
		}
		data = out
		d.keep(chain[i].k, cachedObj{typ, data})
	}
	return typ, data, nil
}
