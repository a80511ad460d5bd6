package packfile

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/internal/gitformat/idxfile"
)

// Located is an object and where a Reader holds it: the number of its
// pack (Pack -1: none of them, a loose object), its position in the
// pack's .idx and its offset (Reader.Locate).
type Located struct {
	Hash plumbing.Hash
	Pack int
	Pos  int
	Off  uint64
}

// CopyPack packs objs (sorted here) as upload-pack's pack-objects reuses
// what a local clone asks for: entries copied as the Reader's packs store
// them, in their order (so an offset delta's base is always written
// first), an offset delta's distance written again, a delta whose base is
// not packed here (in objs, as inPack tells of a reference delta's base)
// written as its whole object, read through read, as are the objects in
// no pack. Every entry copied is checked against its .idx CRC-32. The
// Reader's packs must be in memory (LoadWhole). It returns the pack and
// its index entries.
func (pr *Reader) CopyPack(objs []Located, read func(plumbing.Hash) (plumbing.ObjectType, []byte, error), inPack func(plumbing.Hash) bool) (*Packed, []idxfile.Entry, error) {
	slices.SortFunc(objs, func(a, b Located) int {
		if a.Pack != b.Pack {
			// loose ones (-1) last
			if a.Pack < 0 || b.Pack < 0 {
				return b.Pack - a.Pack
			}
			return a.Pack - b.Pack
		}
		switch {
		case a.Off < b.Off:
			return -1
		case a.Off > b.Off:
			return 1
		}
		return 0
	})
	total := 12 + 20
	for _, p := range pr.packs {
		total += len(p.data)
	}
	out := bytes.NewBuffer(make([]byte, 0, total))
	var hdr [12]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(objs)))
	out.Write(hdr[:])
	ents := make([]idxfile.Entry, 0, len(objs))
	var zw *zlib.Writer
	whole := func(h plumbing.Hash) error {
		t, data, err := read(h)
		if err != nil {
			return fmt.Errorf("pack %s: %w", h, err)
		}
		writeEntryHeader(out, t, int64(len(data)))
		if zw == nil {
			zw, _ = zlib.NewWriterLevel(out, zlib.BestSpeed)
		} else {
			zw.Reset(out)
		}
		if _, err := zw.Write(data); err != nil {
			return err
		}
		return zw.Close()
	}
	curPack := -2
	var offs []uint64
	newOff := map[uint64]uint64{} // source offset → ours, in the current pack
	for _, o := range objs {
		at := uint64(out.Len())
		if o.Pack < 0 {
			if err := whole(o.Hash); err != nil {
				return nil, nil, err
			}
			ents = append(ents, idxfile.Entry{Hash: o.Hash, Offset: at, CRC32: crc32.ChecksumIEEE(out.Bytes()[at:])})
			continue
		}
		p := pr.packs[o.Pack]
		if o.Pack != curPack {
			curPack, offs = o.Pack, p.idx.SortedOffsets()
			clear(newOff)
		}
		i, _ := slices.BinarySearch(offs, o.Off)
		end := uint64(len(p.data) - 20)
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		if o.Off >= end || end > uint64(len(p.data)) {
			return nil, nil, fmt.Errorf("%s.pack: bad entry bounds at %d", p.path, o.Off)
		}
		raw := p.data[o.Off:end]
		if crc32.ChecksumIEEE(raw) != p.idx.CRCAt(o.Pos) {
			return nil, nil, fmt.Errorf("%s.pack: entry of %s at %d does not match its CRC-32: the remote's pack is damaged", p.path, o.Hash, o.Off)
		}
		n := 0 // the type and size header
		for n < len(raw) && raw[n]&0x80 != 0 {
			n++
		}
		n++
		if n > len(raw) {
			return nil, nil, fmt.Errorf("%s.pack: bad entry header at %d", p.path, o.Off)
		}
		switch plumbing.ObjectType((raw[0] >> 4) & 7) {
		case plumbing.OFSDeltaObject:
			rel, m := uint64(raw[n]&0x7f), n
			for raw[m]&0x80 != 0 {
				m++
				if m >= len(raw) {
					return nil, nil, fmt.Errorf("%s.pack: bad delta offset at %d", p.path, o.Off)
				}
				rel = (rel+1)<<7 | uint64(raw[m]&0x7f)
			}
			m++
			var nb uint64
			ok := rel != 0 && rel <= o.Off
			if ok {
				nb, ok = newOff[o.Off-rel]
			}
			if !ok {
				if err := whole(o.Hash); err != nil {
					return nil, nil, err
				}
				break
			}
			out.Write(raw[:n])
			writeOfsDelta(out, at-nb)
			out.Write(raw[m:])
		case plumbing.REFDeltaObject:
			var base plumbing.Hash
			if len(raw) < n+20 {
				return nil, nil, fmt.Errorf("%s.pack: bad delta at %d", p.path, o.Off)
			}
			copy(base[:], raw[n:])
			if !inPack(base) {
				if err := whole(o.Hash); err != nil {
					return nil, nil, err
				}
				break
			}
			out.Write(raw)
		default:
			out.Write(raw)
		}
		newOff[o.Off] = at
		ents = append(ents, idxfile.Entry{Hash: o.Hash, Offset: at, CRC32: crc32.ChecksumIEEE(out.Bytes()[at:])})
	}
	sum := sha1.Sum(out.Bytes())
	out.Write(sum[:])
	hashes := make([]plumbing.Hash, len(objs))
	for i, o := range objs {
		hashes[i] = o.Hash
	}
	p := &Packed{Sum: plumbing.Hash(sum), Pack: out.Bytes(), Hashes: hashes}
	p.Idx = idxfile.Encode(ents, p.Sum)
	return p, ents, nil
}
