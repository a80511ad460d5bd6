// Package idxfile reads and writes pack index files, version 2: git's
// pack-write.c (write_idx_file) and the lookup of packfile.c
// (find_pack_entry_one, nth_packed_object_offset). An index is searched in
// place, as git maps it: the fan-out table narrows the search to the names
// sharing a first byte, a binary search finds the name, and its offset is
// read from the 32-bit table or, for packs over 2 GiB, the 64-bit one. A
// damaged index is refused before it is searched (Open), so that no lookup
// reads past its end.
package idxfile

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// magic is the header of a version 2 index.
var magic = []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}

const fanout = 8 + 256*4

// Entry is one object of a pack: its name, where its entry starts and the
// CRC-32 of the entry's bytes.
type Entry struct {
	Hash   plumbing.Hash
	Offset uint64
	CRC32  uint32
}

// Valid reports whether b is a version 2 pack index whose fan-out table
// and size agree, so that a lookup never reads past its end.
func Valid(b []byte) bool {
	if len(b) < fanout+40 || !bytes.Equal(b[:8], magic) {
		return false
	}
	prev := uint32(0)
	for i := 0; i < 256; i++ {
		v := binary.BigEndian.Uint32(b[8+i*4:])
		if v < prev {
			return false
		}
		prev = v
	}
	n := uint64(prev)
	return uint64(len(b)) >= fanout+n*28+40
}

// Index is a version 2 pack index read in place.
type Index struct {
	data []byte
	n    int
}

// Open is the index b (ok false when it is not Valid).
func Open(b []byte) (Index, bool) {
	if !Valid(b) {
		return Index{}, false
	}
	return Index{data: b, n: int(binary.BigEndian.Uint32(b[8+255*4:]))}, true
}

// Bytes is the index file.
func (x Index) Bytes() []byte { return x.data }

// Len is the number of objects.
func (x Index) Len() int { return x.n }

// Find returns h's position in the index and its offset in the pack.
func (x Index) Find(h plumbing.Hash) (pos int, off uint64, ok bool) {
	lo := 0
	if h[0] > 0 {
		lo = int(binary.BigEndian.Uint32(x.data[8+(int(h[0])-1)*4:]))
	}
	hi := int(binary.BigEndian.Uint32(x.data[8+int(h[0])*4:]))
	names := x.data[fanout:]
	for lo < hi {
		m := (lo + hi) / 2
		switch c := bytes.Compare(names[m*20:m*20+20], h[:]); {
		case c == 0:
			o := x.OffsetAt(m)
			if o == 0 {
				return 0, 0, false
			}
			return m, o, true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, 0, false
}

// OffsetAt is the offset of the pos-th object (0 when the index is
// damaged there).
func (x Index) OffsetAt(pos int) uint64 {
	offs := fanout + x.n*24
	o := uint64(binary.BigEndian.Uint32(x.data[offs+pos*4:]))
	if o&0x80000000 != 0 {
		j := offs + x.n*4 + int(o&0x7fffffff)*8
		if j+8 > len(x.data) {
			return 0
		}
		o = binary.BigEndian.Uint64(x.data[j:])
	}
	return o
}

// CRCAt is the CRC-32 recorded for the pos-th object's entry.
func (x Index) CRCAt(pos int) uint32 {
	return binary.BigEndian.Uint32(x.data[fanout+x.n*20+pos*4:])
}

// SortedOffsets lists the entries' offsets in order: an entry ends where
// the next one starts, or at the pack's trailing checksum.
func (x Index) SortedOffsets() []uint64 {
	offs := make([]uint64, x.n)
	for i := range offs {
		offs[i] = x.OffsetAt(i)
	}
	slices.Sort(offs)
	return offs
}

// Encode is the version 2 index of a pack's entries (sorted in place by
// name), as write_idx_file writes it. The names must be distinct.
func Encode(ents []Entry, packSum plumbing.Hash) []byte {
	sort.Slice(ents, func(i, j int) bool { return bytes.Compare(ents[i].Hash[:], ents[j].Hash[:]) < 0 })
	var large []uint64
	out := make([]byte, 0, fanout+len(ents)*(20+4+4)+40)
	out = append(out, magic...)
	n := 0
	for b := 0; b < 256; b++ {
		for n < len(ents) && int(ents[n].Hash[0]) <= b {
			n++
		}
		out = binary.BigEndian.AppendUint32(out, uint32(n))
	}
	for _, en := range ents {
		out = append(out, en.Hash[:]...)
	}
	for _, en := range ents {
		out = binary.BigEndian.AppendUint32(out, en.CRC32)
	}
	for _, en := range ents {
		if en.Offset > 0x7fffffff {
			out = binary.BigEndian.AppendUint32(out, 0x80000000|uint32(len(large)))
			large = append(large, en.Offset)
			continue
		}
		out = binary.BigEndian.AppendUint32(out, uint32(en.Offset))
	}
	for _, off := range large {
		out = binary.BigEndian.AppendUint64(out, off)
	}
	out = append(out, packSum[:]...)
	sum := sha1.Sum(out)
	return append(out, sum[:]...)
}

// Entries reads every object of the index b of a pack of packLen bytes
// with its offset (no CRC), sorted by offset; an offset outside the pack
// is an error.
func Entries(b []byte, packLen int) ([]Entry, error) {
	if len(b) < fanout || !bytes.Equal(b[:8], magic) {
		return nil, errors.New("not a version 2 pack index")
	}
	n := int(binary.BigEndian.Uint32(b[8+255*4:]))
	names := fanout
	offs := names + n*20 + n*4
	large := offs + n*4
	if len(b) < large+40 {
		return nil, errors.New("truncated")
	}
	out := make([]Entry, n)
	for i := range out {
		copy(out[i].Hash[:], b[names+i*20:])
		o := uint64(binary.BigEndian.Uint32(b[offs+i*4:]))
		if o&0x80000000 != 0 {
			j := large + int(o&0x7fffffff)*8
			if j+8 > len(b)-40 {
				return nil, errors.New("bad large offset")
			}
			o = binary.BigEndian.Uint64(b[j:])
		}
		if o < 12 || o >= uint64(packLen) {
			return nil, errors.New("offset out of the pack")
		}
		out[i].Offset = o
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out, nil
}
