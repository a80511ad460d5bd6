package gitbackend

import (
	"bytes"
	"compress/zlib"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// The readers below parse bytes from disk that another program wrote (a
// pack, a delta; the index's are in internal/gitformat): each is fuzzed against go-git's reader of the
// same format as the oracle, and none may panic or allocate what the input
// does not hold.

// FuzzApplyDelta: git's patch_delta as written here agrees with go-git's.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello world\n"), []byte{12, 6, 0x90, 5, 1, '!'})
	f.Add([]byte("abc"), []byte{3, 3, 0x91, 0, 3})
	f.Add([]byte(""), []byte{0, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Add([]byte("x"), []byte{1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x80})
	f.Fuzz(func(t *testing.T, src, delta []byte) {
		got, err := applyDelta(src, delta)
		want, werr := packfile.PatchDelta(src, delta)
		if err == nil && werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("applied %q, go-git %q", got, want)
		}
		if err == nil && werr != nil {
			t.Fatalf("applied a delta go-git refuses (%v)", werr)
		}
	})
}

// FuzzPackEntry: an entry of a pack read whole, whatever its bytes, is
// read or refused; a whole object read comes out with the size its header
// declared and the bytes that inflate from it.
func FuzzPackEntry(f *testing.F) {
	obj := func(typ byte, content []byte) []byte {
		var b bytes.Buffer
		n := len(content)
		c := typ<<4 | byte(n&0x0f)
		n >>= 4
		for n > 0 {
			b.WriteByte(c | 0x80)
			c, n = byte(n&0x7f), n>>7
		}
		b.WriteByte(c)
		zw := zlib.NewWriter(&b)
		zw.Write(content)
		zw.Close()
		return b.Bytes()
	}
	blob := obj(3, []byte("some content\n"))
	f.Add(blob, uint16(0))
	// An offset delta right after it: type 6, 4 bytes of delta, its base
	// len(blob) bytes back; the delta copies the base's first 4 bytes.
	ofs := append([]byte{6<<4 | 4, byte(len(blob))}, zlibOf([]byte{13, 4, 0x90, 4})...)
	f.Add(append(append([]byte(nil), blob...), ofs...), uint16(len(blob)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, off uint16) {
		// An index of no objects: a REF delta's base is never found.
		idx := append([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}, make([]byte, 256*4+40)...)
		if !validIdx(idx) {
			t.Fatal("the empty index is not valid")
		}
		p := &readPack{path: "fuzz", idx: idx, data: data, size: int64(len(data))}
		d := newDeltaReader(&packReader{packs: []*readPack{p}}, 1<<20)
		_, data, err := d.readAt(p, uint64(off))
		if err != nil {
			return
		}
		typ, size, _, err := p.entry(uint64(off))
		if err != nil {
			t.Fatalf("entry refused after the object was read: %v", err)
		}
		if typ != plumbing.OFSDeltaObject && typ != plumbing.REFDeltaObject && int64(len(data)) != size {
			t.Fatalf("object of %d bytes, header says %d", len(data), size)
		}
	})
}

func zlibOf(b []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// FuzzPackIndexFind: a pack index that passes validIdx is searched without
// reading past its end, whatever its fan-out and offsets say.
func FuzzPackIndexFind(f *testing.F) {
	one := append([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}, make([]byte, 256*4)...)
	for i := 0xab; i < 256; i++ {
		one[8+i*4+3] = 1
	}
	one = append(one, bytes.Repeat([]byte{0xab}, 20)...) // the name
	one = append(one, 0, 0, 0, 0)                        // its CRC
	one = append(one, 0x80, 0, 0, 0)                     // a large offset, the first
	one = append(one, 0, 0, 0, 0, 0, 0, 0x10, 0)         // which is 4096
	one = append(one, make([]byte, 40)...)
	f.Add(one, bytes.Repeat([]byte{0xab}, 20))
	f.Fuzz(func(t *testing.T, idx, name []byte) {
		if !validIdx(idx) {
			return
		}
		var h plumbing.Hash
		copy(h[:], name)
		p := &readPack{path: "fuzz", idx: idx}
		p.n = int(uint32(idx[8+255*4])<<24 | uint32(idx[8+255*4+1])<<16 | uint32(idx[8+255*4+2])<<8 | uint32(idx[8+255*4+3]))
		pr := &packReader{packs: []*readPack{p}}
		pr.find(h)
	})
}
