package packfile

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/internal/gitformat/idxfile"
)

// Encoder encodes packs (version 2, no deltas: it serves objects that
// are new content, and merges of packs that copy what deltas they hold)
// and their .idx, reusing its buffers (its compressor comes from a pool
// shared by every Encoder). The zero Encoder is ready.
type Encoder struct {
	zw   *zlib.Writer
	ents []idxfile.Entry
}

// compressors are the zlib writers of every Encoder of the process, each
// held for one encoding: a compressor is ~650 KB of state, and a process
// of many roots (one kernel each) made one per root and per remote, all
// garbage for the collector to scan.
var compressors = sync.Pool{New: func() any {
	// Git's default level costs more CPU than it saves bytes on the
	// small objects of a persist.
	w, _ := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	return w
}}

// releaseCompressor gives the encoder's compressor back to the pool.
func (e *Encoder) releaseCompressor() {
	if e.zw != nil {
		compressors.Put(e.zw)
		e.zw = nil
	}
}

// ObjectSource is where an encoder reads the objects it packs whole.
type ObjectSource interface {
	EncodedObject(plumbing.ObjectType, plumbing.Hash) (plumbing.EncodedObject, error)
}

// RawSource hands out whole objects' pack entries as they are stored
// (header and compressed data): a source that is one is copied from
// without compressing its objects again.
type RawSource interface {
	Raw(plumbing.Hash) ([]byte, bool)
}

// Entries are the index entries of the pack last encoded (the encoder's
// to reuse at the next pack).
func (e *Encoder) Entries() []idxfile.Entry { return e.ents }

// Encode packs the objects named by hashes, read from src.
func (e *Encoder) Encode(src ObjectSource, hashes []plumbing.Hash) (*Packed, error) {
	defer e.releaseCompressor()
	var pack bytes.Buffer
	var hdr [12]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(hashes)))
	pack.Write(hdr[:])
	e.ents = e.ents[:0]
	raws, _ := src.(RawSource)
	for _, h := range hashes {
		off := pack.Len()
		if b, ok := packedEntry(raws, h); ok {
			pack.Write(b)
		} else if err := e.appendObject(&pack, src, h); err != nil {
			return nil, err
		}
		e.ents = append(e.ents, idxfile.Entry{Hash: h, Offset: uint64(off), CRC32: crc32.ChecksumIEEE(pack.Bytes()[off:])})
	}
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])
	p := &Packed{Sum: plumbing.Hash(sum), Pack: pack.Bytes(), Hashes: hashes}
	p.Idx = idxfile.Encode(e.ents, p.Sum)
	return p, nil
}

func packedEntry(s RawSource, h plumbing.Hash) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	return s.Raw(h)
}

// Merge packs the objects of the packs of the git directory fs named by
// bases (objects/pack/pack-<sum>, without extension) into one, copying
// each whole object's entry as it is (no inflating, no hashing) and
// re-encoding only deltas, read through src; an object in several packs
// is kept once.
func (e *Encoder) Merge(fs billy.Filesystem, bases []string, src ObjectSource) (*Packed, error) {
	defer e.releaseCompressor()
	var pack bytes.Buffer
	pack.Write(make([]byte, 12)) // the header, once the count is known
	e.ents = e.ents[:0]
	seen := map[plumbing.Hash]bool{}
	var hashes []plumbing.Hash
	for _, base := range bases {
		idx, err := readAll(fs, base+".idx")
		if err != nil {
			return nil, err
		}
		data, err := readAll(fs, base+".pack")
		if err != nil {
			return nil, err
		}
		ents, err := idxfile.Entries(idx, len(data))
		if err != nil {
			return nil, fmt.Errorf("%s.idx: %w", base, err)
		}
		for i, en := range ents {
			if seen[en.Hash] {
				continue
			}
			seen[en.Hash] = true
			end := uint64(len(data) - 20)
			if i+1 < len(ents) {
				end = ents[i+1].Offset
			}
			if en.Offset >= end || end > uint64(len(data)) {
				return nil, fmt.Errorf("%s.pack: bad offset %d", base, en.Offset)
			}
			raw := data[en.Offset:end]
			off := pack.Len()
			if t := plumbing.ObjectType((raw[0] >> 4) & 7); t >= plumbing.CommitObject && t <= plumbing.TagObject {
				pack.Write(raw)
			} else if err := e.appendObject(&pack, src, en.Hash); err != nil {
				return nil, err
			}
			e.ents = append(e.ents, idxfile.Entry{Hash: en.Hash, Offset: uint64(off), CRC32: crc32.ChecksumIEEE(pack.Bytes()[off:])})
			hashes = append(hashes, en.Hash)
		}
	}
	b := pack.Bytes()
	copy(b, "PACK")
	binary.BigEndian.PutUint32(b[4:], 2)
	binary.BigEndian.PutUint32(b[8:], uint32(len(e.ents)))
	sum := sha1.Sum(b)
	pack.Write(sum[:])
	p := &Packed{Sum: plumbing.Hash(sum), Pack: pack.Bytes(), Hashes: hashes}
	p.Idx = idxfile.Encode(e.ents, p.Sum)
	return p, nil
}

// appendObject writes one whole object's pack entry.
func (e *Encoder) appendObject(pack *bytes.Buffer, src ObjectSource, h plumbing.Hash) error {
	obj, err := src.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return fmt.Errorf("pack object %s: %w", h, err)
	}
	writeEntryHeader(pack, obj.Type(), obj.Size())
	r, err := obj.Reader()
	if err != nil {
		return fmt.Errorf("pack object %s: %w", h, err)
	}
	if e.zw == nil {
		e.zw = compressors.Get().(*zlib.Writer)
	}
	e.zw.Reset(pack)
	_, err = io.Copy(e.zw, r)
	r.Close()
	if err == nil {
		err = e.zw.Close()
	}
	if err != nil {
		return fmt.Errorf("pack object %s: %w", h, err)
	}
	return nil
}

func readAll(fs billy.Filesystem, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
