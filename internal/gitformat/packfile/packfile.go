// Package packfile reads and writes git's pack files (version 2):
//   - Reader finds objects in the packs of a git directory through their
//     indexes (idxfile) searched in place, inflates whole objects and hands
//     out their entries as stored, for copying into another pack;
//   - DeltaReader resolves offset and reference delta chains as packfile.c's
//     unpack_entry does, with a cache of the bases it resolved, applying
//     each delta as patch-delta.c does (ApplyDelta);
//   - Encoder writes packs of whole objects (pack-objects without the delta
//     search) and merges packs, copying their whole objects' entries;
//     CopyPack copies entries between packs as upload-pack's pack-objects
//     reuses them, deltas included;
//   - WriteFiles puts a pack and its index into objects/pack as index-pack
//     finishes one.
//
// A codec knows bytes and files, not repositories: which objects to pack,
// when to merge packs and where refs point are the caller's.
package packfile

import (
	"bytes"
	"errors"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// Packed is an encoded pack and its index, ready to be written: Hashes
// are its objects, in the order they were packed.
type Packed struct {
	Sum       plumbing.Hash
	Pack, Idx []byte
	Hashes    []plumbing.Hash
}

// writeEntryHeader is a pack entry's type and size (git's
// encode_in_pack_object_header).
func writeEntryHeader(w *bytes.Buffer, t plumbing.ObjectType, size int64) {
	c := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size != 0 {
		w.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	w.WriteByte(c)
}

// writeOfsDelta is an offset delta's distance to its base (git's
// encoding: big-endian groups of 7 bits, each but the last minus one).
func writeOfsDelta(out *bytes.Buffer, ofs uint64) {
	var b [10]byte
	pos := len(b) - 1
	b[pos] = byte(ofs & 127)
	for ofs >>= 7; ofs != 0; ofs >>= 7 {
		ofs--
		pos--
		b[pos] = 128 | byte(ofs&127)
	}
	out.Write(b[pos:])
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
