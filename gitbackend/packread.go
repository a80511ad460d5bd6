package gitbackend

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// packReader reads objects straight from the packs of a git directory on
// disk: the .idx files searched in place (no index built in memory), whole
// objects inflated from the .pack, small packs' entries handed out as they
// are for copying. It is what a push under the remote's lock reads other
// agents' new commits with; deltas and loose objects, which our own pushes
// never write, are read through go-git (fallback).
type packReader struct {
	cache    *packCache
	packs    []*readPack
	fallback func() *filesystem.Storage
	fb       *filesystem.Storage
	zr       io.ReadCloser
}

type readPack struct {
	path  string // without extension
	idx   []byte
	n     int
	data  []byte   // the whole .pack, for small packs
	f     *os.File // large packs, read in place
	size  int64
	cache *packCache
}

// inMemoryPack is the size under which a pack is read whole;
// cachedPack the size under which it is also kept between operations.
const (
	inMemoryPack = 4 << 20
	cachedPack   = 256 << 10
)

// packCache keeps the .idx files and the small .pack files of a remote
// between operations: a pack is named by its checksum, so what is cached
// under a name never goes stale; names no longer listed are dropped.
type packCache struct {
	idx  map[string][]byte
	data map[string][]byte
}

// openPackReader lists gitdir's packs; cache (optional) keeps their bytes
// for the next reader.
func openPackReader(gitdir string, fallback func() *filesystem.Storage, cache *packCache) (*packReader, error) {
	dir := filepath.Join(gitdir, "objects", "pack")
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	pr := &packReader{fallback: fallback, cache: cache}
	listed := map[string]bool{}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".idx") {
			continue
		}
		base := filepath.Join(dir, strings.TrimSuffix(n, ".idx"))
		listed[base] = true
		idx, ok := []byte(nil), false
		if cache != nil {
			idx, ok = cache.idx[base]
		}
		if !ok {
			if idx, err = os.ReadFile(base + ".idx"); err != nil {
				continue // removed by a merge since the listing
			}
			if !validIdx(idx) {
				continue
			}
			if cache != nil {
				if cache.idx == nil {
					cache.idx, cache.data = map[string][]byte{}, map[string][]byte{}
				}
				cache.idx[base] = idx
			}
		}
		pr.packs = append(pr.packs, &readPack{path: base, idx: idx, n: int(binary.BigEndian.Uint32(idx[8+255*4:])), cache: cache})
	}
	if cache != nil {
		for base := range cache.idx {
			if !listed[base] {
				delete(cache.idx, base)
				delete(cache.data, base)
			}
		}
	}
	return pr, nil
}

// validIdx reports whether idx is a version 2 pack index whose fan-out
// table and size agree, so that find never reads past its end: a damaged
// .idx is left to go-git, which refuses it with an error.
func validIdx(idx []byte) bool {
	const fan = 8 + 256*4
	if len(idx) < fan+40 || !bytes.Equal(idx[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return false
	}
	prev := uint32(0)
	for i := 0; i < 256; i++ {
		v := binary.BigEndian.Uint32(idx[8+i*4:])
		if v < prev {
			return false
		}
		prev = v
	}
	n := uint64(prev)
	return uint64(len(idx)) >= fan+n*28+40
}

// Close releases the packs and the fallback store.
func (pr *packReader) Close() {
	for _, p := range pr.packs {
		if p.f != nil {
			p.f.Close()
		}
	}
	if pr.fb != nil {
		pr.fb.Close()
	}
}

// find returns the pack and offset of h.
func (pr *packReader) find(h plumbing.Hash) (*readPack, uint64, bool) {
	pi, _, off, ok := pr.locate(h)
	if !ok {
		return nil, 0, false
	}
	return pr.packs[pi], off, true
}

// offsetAt is the offset of the pos-th object of the .idx (0 when the
// index is damaged there).
func (p *readPack) offsetAt(pos int) uint64 {
	offs := 8 + 256*4 + p.n*24
	o := uint64(binary.BigEndian.Uint32(p.idx[offs+pos*4:]))
	if o&0x80000000 != 0 {
		j := offs + p.n*4 + int(o&0x7fffffff)*8
		if j+8 > len(p.idx) {
			return 0
		}
		o = binary.BigEndian.Uint64(p.idx[j:])
	}
	return o
}

// crcAt is the CRC-32 the .idx records for its pos-th object's entry.
func (p *readPack) crcAt(pos int) uint32 {
	return binary.BigEndian.Uint32(p.idx[8+256*4+p.n*20+pos*4:])
}

// locate returns the index of the pack holding h, h's position in its
// .idx and its offset.
func (pr *packReader) locate(h plumbing.Hash) (int, int, uint64, bool) {
	for pi, p := range pr.packs {
		lo := 0
		if h[0] > 0 {
			lo = int(binary.BigEndian.Uint32(p.idx[8+(int(h[0])-1)*4:]))
		}
		hi := int(binary.BigEndian.Uint32(p.idx[8+int(h[0])*4:]))
		names := p.idx[8+256*4:]
		for lo < hi {
			m := (lo + hi) / 2
			switch c := bytes.Compare(names[m*20:m*20+20], h[:]); {
			case c == 0:
				o := p.offsetAt(m)
				if o == 0 {
					return 0, 0, 0, false
				}
				return pi, m, o, true
			case c < 0:
				lo = m + 1
			default:
				hi = m
			}
		}
	}
	return 0, 0, 0, false
}

// open makes the pack's bytes readable.
func (p *readPack) open() error {
	if p.data != nil || p.f != nil {
		return nil
	}
	if p.cache != nil {
		if b, ok := p.cache.data[p.path]; ok {
			p.data, p.size = b, int64(len(b))
			return nil
		}
	}
	f, err := os.Open(p.path + ".pack")
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	p.size = fi.Size()
	if p.size <= inMemoryPack {
		p.data = make([]byte, p.size)
		_, err := io.ReadFull(f, p.data)
		f.Close()
		if err != nil {
			p.data = nil
			return err
		}
		if p.cache != nil && p.size <= cachedPack && p.cache.data != nil {
			p.cache.data[p.path] = p.data
		}
		return nil
	}
	p.f = f
	return nil
}

// entry reads the header of the entry at off: its type, inflated size and
// a reader positioned at its compressed data.
func (p *readPack) entry(off uint64) (plumbing.ObjectType, int64, io.Reader, error) {
	if err := p.open(); err != nil {
		return 0, 0, nil, err
	}
	var r interface {
		io.Reader
		io.ByteReader
	}
	if p.data != nil {
		if off >= uint64(len(p.data)) {
			return 0, 0, nil, fmt.Errorf("%s.pack: offset %d out of the pack", p.path, off)
		}
		r = bytes.NewReader(p.data[off:])
	} else {
		r = bufio.NewReaderSize(io.NewSectionReader(p.f, int64(off), p.size-int64(off)), 4096)
	}
	c, err := r.ReadByte()
	if err != nil {
		return 0, 0, nil, err
	}
	t := plumbing.ObjectType((c >> 4) & 7)
	size := int64(c & 0x0f)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 53 {
			return 0, 0, nil, fmt.Errorf("%s.pack: entry at %d: size overflows", p.path, off)
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, 0, nil, err
		}
		size |= int64(c&0x7f) << shift
	}
	return t, size, r, nil
}

// inflated reads exactly size bytes from the inflater zr. The size comes
// from an entry's header, which may lie (a damaged or hostile pack): a
// buffer is made whole only up to a bound, larger objects grow with the
// bytes actually inflated, so a header cannot make us allocate what the
// data does not hold.
func inflated(zr io.Reader, size int64) ([]byte, error) {
	const whole = 16 << 20
	switch {
	case size < 0:
		return nil, errors.New("negative object size")
	case size <= whole:
		b := make([]byte, size)
		if _, err := io.ReadFull(zr, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	var buf bytes.Buffer
	buf.Grow(whole)
	n, err := io.Copy(&buf, io.LimitReader(zr, size))
	if err != nil {
		return nil, err
	}
	if n != size {
		return nil, io.ErrUnexpectedEOF
	}
	return buf.Bytes(), nil
}

// EncodedObject reads a whole object.
func (pr *packReader) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	p, off, ok := pr.find(h)
	if ok {
		typ, size, r, err := p.entry(off)
		if err != nil {
			return nil, fmt.Errorf("read %s from %s.pack: %w", h, p.path, err)
		}
		if typ >= plumbing.CommitObject && typ <= plumbing.TagObject {
			if t != plumbing.AnyObject && typ != t {
				return nil, plumbing.ErrObjectNotFound
			}
			if pr.zr == nil {
				pr.zr, err = zlib.NewReader(r)
			} else {
				err = pr.zr.(zlib.Resetter).Reset(r, nil)
			}
			if err != nil {
				return nil, fmt.Errorf("read %s from %s.pack: %w", h, p.path, err)
			}
			buf, err := inflated(pr.zr, size)
			if err != nil {
				return nil, fmt.Errorf("read %s from %s.pack: %w", h, p.path, err)
			}
			obj := &plumbing.MemoryObject{}
			obj.SetType(typ)
			obj.SetSize(size)
			if _, err := obj.Write(buf); err != nil {
				return nil, err
			}
			return obj, nil
		}
	}
	if pr.fb == nil {
		pr.fb = pr.fallback()
	}
	return pr.fb.EncodedObject(t, h)
}

// raw returns the entry of a whole object in a pack read in memory, as it
// is (header and compressed data), to be copied into another pack.
func (pr *packReader) raw(h plumbing.Hash) ([]byte, bool) {
	p, off, ok := pr.find(h)
	if !ok || p.open() != nil || p.data == nil {
		return nil, false
	}
	typ, _, r, err := p.entry(off)
	if err != nil || typ < plumbing.CommitObject || typ > plumbing.TagObject {
		return nil, false
	}
	br := r.(*bytes.Reader)
	if pr.zr == nil {
		pr.zr, err = zlib.NewReader(br)
	} else {
		err = pr.zr.(zlib.Resetter).Reset(br, nil)
	}
	if err != nil {
		return nil, false
	}
	// The zlib stream ends where its checksum does: with a ByteReader
	// underneath, flate reads no further.
	if _, err := io.Copy(io.Discard, pr.zr); err != nil {
		return nil, false
	}
	end := uint64(len(p.data)) - uint64(br.Len())
	return p.data[off:end], true
}

// The rest of storer.EncodedObjectStorer: the reader is read-only.

var errReadOnly = errors.New("pack reader is read-only")

func (pr *packReader) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (pr *packReader) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errReadOnly
}

func (pr *packReader) IterEncodedObjects(plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errReadOnly
}

func (pr *packReader) HasEncodedObject(h plumbing.Hash) error {
	if _, _, ok := pr.find(h); ok {
		return nil
	}
	if pr.fb == nil {
		pr.fb = pr.fallback()
	}
	return pr.fb.HasEncodedObject(h)
}

func (pr *packReader) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if p, off, ok := pr.find(h); ok {
		if t, size, _, err := p.entry(off); err == nil && t >= plumbing.CommitObject && t <= plumbing.TagObject {
			return size, nil
		}
	}
	if pr.fb == nil {
		pr.fb = pr.fallback()
	}
	return pr.fb.EncodedObjectSize(h)
}

func (pr *packReader) AddAlternate(string) error { return errReadOnly }
