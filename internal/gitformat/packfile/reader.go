package packfile

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/internal/gitformat/idxfile"
)

// Reader reads objects straight from the packs of a git directory on
// disk: the .idx files searched in place (no index built in memory), whole
// objects inflated from the .pack, small packs' entries handed out as they
// are for copying (Raw). Deltas and loose objects are read through go-git
// (the fallback store) by EncodedObject; DeltaReader resolves deltas
// itself. It is a read-only storer.EncodedObjectStorer.
type Reader struct {
	cache    *Cache
	packs    []*Pack
	fallback func() *filesystem.Storage
	fb       *filesystem.Storage
	zr       io.ReadCloser
}

// Pack is one pack of a Reader.
type Pack struct {
	path  string // without extension
	idx   idxfile.Index
	data  []byte   // the whole .pack, for small packs
	f     *os.File // large packs, read in place
	size  int64
	cache *Cache
}

// inMemoryPack is the size under which a pack is read whole;
// cachedPack the size under which it is also kept between operations.
const (
	inMemoryPack = 4 << 20
	cachedPack   = 256 << 10
)

// Cache keeps the .idx files and the small .pack files of a git
// directory between Readers: a pack is named by its checksum, so what is
// cached under a name never goes stale; names no longer listed are
// dropped. The zero Cache is empty and ready.
type Cache struct {
	idx  map[string][]byte
	data map[string][]byte
}

// Open lists the packs of gitdir; fallback opens the store that reads
// what they do not hold, at most once, when first needed; cache
// (optional) keeps their bytes for the next Reader. An index that is not
// valid is left out (go-git, reading it, refuses it with an error).
func Open(gitdir string, fallback func() *filesystem.Storage, cache *Cache) (*Reader, error) {
	dir := filepath.Join(gitdir, "objects", "pack")
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	pr := &Reader{fallback: fallback, cache: cache}
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
			if !idxfile.Valid(idx) {
				continue
			}
			if cache != nil {
				if cache.idx == nil {
					cache.idx, cache.data = map[string][]byte{}, map[string][]byte{}
				}
				cache.idx[base] = idx
			}
		}
		x, _ := idxfile.Open(idx)
		pr.packs = append(pr.packs, &Pack{path: base, idx: x, cache: cache})
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

// MemoryReader reads the pack p held in memory, named name in errors,
// with no fallback store: an object it lacks is not found.
func MemoryReader(name string, p *Packed) *Reader {
	x, _ := idxfile.Open(p.Idx)
	rp := &Pack{path: name, idx: x, data: p.Pack, size: int64(len(p.Pack))}
	return &Reader{packs: []*Pack{rp}, fallback: func() *filesystem.Storage { return nil }}
}

// Close releases the packs and the fallback store.
func (pr *Reader) Close() {
	for _, p := range pr.packs {
		if p.f != nil {
			p.f.Close()
		}
	}
	if pr.fb != nil {
		pr.fb.Close()
	}
}

// Find returns the pack and offset of h.
func (pr *Reader) Find(h plumbing.Hash) (*Pack, uint64, bool) {
	pi, _, off, ok := pr.Locate(h)
	if !ok {
		return nil, 0, false
	}
	return pr.packs[pi], off, true
}

// Locate returns the number of the pack holding h (in the order the
// Reader lists them), h's position in its .idx and its offset.
func (pr *Reader) Locate(h plumbing.Hash) (pack, pos int, off uint64, ok bool) {
	for pi, p := range pr.packs {
		if pos, off, ok := p.idx.Find(h); ok {
			return pi, pos, off, true
		}
	}
	return 0, 0, 0, false
}

// open makes the pack's bytes readable.
func (p *Pack) open() error {
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
func (p *Pack) entry(off uint64) (plumbing.ObjectType, int64, io.Reader, error) {
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

// EncodedObject reads a whole object.
func (pr *Reader) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	p, off, ok := pr.Find(h)
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

// Raw returns the entry of a whole object in a pack read in memory, as it
// is (header and compressed data), to be copied into another pack.
func (pr *Reader) Raw(h plumbing.Hash) ([]byte, bool) {
	p, off, ok := pr.Find(h)
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

func (pr *Reader) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (pr *Reader) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errReadOnly
}

func (pr *Reader) IterEncodedObjects(plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errReadOnly
}

func (pr *Reader) HasEncodedObject(h plumbing.Hash) error {
	if _, _, ok := pr.Find(h); ok {
		return nil
	}
	if pr.fb == nil {
		pr.fb = pr.fallback()
	}
	return pr.fb.HasEncodedObject(h)
}

func (pr *Reader) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if p, off, ok := pr.Find(h); ok {
		if t, size, _, err := p.entry(off); err == nil && t >= plumbing.CommitObject && t <= plumbing.TagObject {
			return size, nil
		}
	}
	if pr.fb == nil {
		pr.fb = pr.fallback()
	}
	return pr.fb.EncodedObjectSize(h)
}

func (pr *Reader) AddAlternate(string) error { return errReadOnly }

// LoadWhole reads every pack whole into memory (a copy of entries reads
// from all of them).
func (pr *Reader) LoadWhole() error {
	for _, p := range pr.packs {
		if p.data != nil {
			continue
		}
		if p.f != nil {
			p.f.Close()
			p.f = nil
		}
		b, err := os.ReadFile(p.path + ".pack")
		if err != nil {
			return err
		}
		if len(b) < 32 {
			return fmt.Errorf("%s.pack: too short", p.path)
		}
		p.data, p.size = b, int64(len(b))
	}
	return nil
}
