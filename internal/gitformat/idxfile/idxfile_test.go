package idxfile

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	gogitidx "github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// FuzzIndexFind: an index that Open accepts is searched without reading
// past its end, whatever its fan-out and offsets say.
func FuzzIndexFind(f *testing.F) {
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
		x, ok := Open(idx)
		if !ok {
			return
		}
		var h plumbing.Hash
		copy(h[:], name)
		if pos, _, ok := x.Find(h); ok {
			x.CRCAt(pos)
		}
		x.SortedOffsets()
	})
}

// TestEncodeMatchesGoGit: the encoder writes what go-git's writes, byte
// for byte, for random entries (large offsets included), and Open, Find
// and Entries read back what was encoded.
func TestEncodeMatchesGoGit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 40; round++ {
		n := rng.IntN(300)
		var ents []Entry
		seen := map[plumbing.Hash]bool{}
		for len(ents) < n {
			var e Entry
			for i := range e.Hash {
				e.Hash[i] = byte(rng.UintN(256))
			}
			if seen[e.Hash] {
				continue
			}
			seen[e.Hash] = true
			e.Offset = 12 + uint64(rng.UintN(1<<20))
			if rng.IntN(8) == 0 {
				e.Offset += 1 << 31 // in the 64-bit table
			}
			e.CRC32 = rng.Uint32()
			ents = append(ents, e)
		}
		var sum plumbing.Hash
		for i := range sum {
			sum[i] = byte(rng.UintN(256))
		}
		w := new(gogitidx.Writer)
		if err := w.OnHeader(uint32(len(ents))); err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if err := w.OnInflatedObjectContent(e.Hash, int64(e.Offset), e.CRC32, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.OnFooter(sum); err != nil {
			t.Fatal(err)
		}
		mi, err := w.Index()
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if _, err := gogitidx.NewEncoder(&want).Encode(mi); err != nil {
			t.Fatal(err)
		}
		got := Encode(append([]Entry(nil), ents...), sum)
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("round %d: %d entries: encoded %d bytes, go-git %d", round, n, len(got), want.Len())
		}
		x, ok := Open(got)
		if !ok || x.Len() != n {
			t.Fatalf("round %d: Open refused the encoded index (ok %v, %d objects)", round, ok, x.Len())
		}
		for _, e := range ents {
			pos, off, ok := x.Find(e.Hash)
			if !ok || off != e.Offset || x.CRCAt(pos) != e.CRC32 {
				t.Fatalf("round %d: %s found %v at %d (crc %08x), want %d (%08x)", round, e.Hash, ok, off, x.CRCAt(pos), e.Offset, e.CRC32)
			}
		}
		back, err := Entries(got, 1<<33)
		if err != nil || len(back) != n {
			t.Fatalf("round %d: Entries: %d, %v", round, len(back), err)
		}
		for i := 1; i < len(back); i++ {
			if back[i-1].Offset > back[i].Offset {
				t.Fatalf("round %d: Entries not sorted by offset", round)
			}
		}
	}
}
