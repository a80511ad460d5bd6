package packfile

import (
	"bytes"
	"compress/zlib"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	gogitpack "github.com/go-git/go-git/v5/plumbing/format/packfile"

	"github.com/tgp-go/tgp/internal/gitformat/idxfile"
)

// The readers below parse bytes from disk that another program wrote (a
// pack, a delta): each is fuzzed against go-git's reader of the same
// format as the oracle, and none may panic or allocate what the input
// does not hold.

// FuzzApplyDelta: git's patch_delta as written here agrees with go-git's.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello world\n"), []byte{12, 6, 0x90, 5, 1, '!'})
	f.Add([]byte("abc"), []byte{3, 3, 0x91, 0, 3})
	f.Add([]byte(""), []byte{0, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Add([]byte("x"), []byte{1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x80})
	f.Fuzz(func(t *testing.T, src, delta []byte) {
		got, err := ApplyDelta(src, delta)
		want, werr := gogitpack.PatchDelta(src, delta)
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
		idx, ok := idxfile.Open(append([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}, make([]byte, 256*4+40)...))
		if !ok {
			t.Fatal("the empty index is not valid")
		}
		p := &Pack{path: "fuzz", idx: idx, data: data, size: int64(len(data))}
		d := NewDeltaReader(&Reader{packs: []*Pack{p}}, 1<<20)
		_, data, err := d.ReadAt(p, uint64(off))
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
