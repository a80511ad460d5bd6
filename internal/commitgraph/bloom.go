package commitgraph

import (
	"math/bits"
	"strings"
)

// The changed-path filter settings git 2.39 writes (bloom.h): murmur3
// hash version 1, 7 hashes, 10 bits per path, at most 512 changed paths
// (beyond, a one-byte filter with every bit set: "maybe" for any path).
const (
	BloomHashVersion  = 1
	BloomHashes       = 7
	BloomBitsPerEntry = 10
	MaxChangedPaths   = 512
)

// Key is a path's seven bit positions' hashes (git's bloom_key).
type Key struct{ h [BloomHashes]uint32 }

// NewKey is git's fill_bloom_key of a path (no trailing slash).
func NewKey(path string) *Key {
	h0 := murmur3(0x293ae76f, path)
	h1 := murmur3(0x7e646e2c, path)
	k := &Key{}
	for i := range k.h {
		k.h[i] = h0 + uint32(i)*h1
	}
	return k
}

// in is git's bloom_filter_contains: every bit of the key set.
func (k *Key) in(f []byte) bool {
	mod := uint64(len(f)) * 8
	for _, h := range k.h {
		pos := uint64(h) % mod
		if f[pos/8]&(1<<(pos%8)) == 0 {
			return false
		}
	}
	return true
}

func (k *Key) add(f []byte) {
	mod := uint64(len(f)) * 8
	for _, h := range k.h {
		pos := uint64(h) % mod
		f[pos/8] |= 1 << (pos % 8)
	}
}

// NewFilter is the changed-path filter of a commit whose diff against its
// first parent (or the empty tree) changed the files paths, as git's
// get_or_compute_bloom_filter makes it: each path and each of its leading
// directories, once. large (more than MaxChangedPaths files changed)
// makes the filter that answers "maybe" for every path.
func NewFilter(paths []string, large bool) []byte {
	if large || len(paths) > MaxChangedPaths {
		return []byte{0xff}
	}
	set := make(map[string]struct{}, len(paths)*2)
	for _, p := range paths {
		for p != "" {
			set[p] = struct{}{}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	n := (len(set)*BloomBitsPerEntry + 7) / 8
	if n == 0 {
		return []byte{0}
	}
	f := make([]byte, n)
	for p := range set {
		NewKey(p).add(f)
	}
	return f
}

// murmur3 is git's murmur3_seeded as version 1 filters hash: the bytes
// are C chars, signed on the platforms git's filters were made on, so a
// byte of 0x80 or more is sign-extended (bloom.c keeps this for
// compatibility; version 2 filters, git 2.42 on, do not).
func murmur3(seed uint32, data string) uint32 {
	const (
		c1 = 0xcc9e2d51
		c2 = 0x1b873593
		n  = 0xe6546b64
	)
	sx := func(b byte) uint32 { return uint32(int32(int8(b))) }
	h := seed
	len4 := len(data) / 4
	for i := 0; i < len4; i++ {
		k := sx(data[4*i]) | sx(data[4*i+1])<<8 | sx(data[4*i+2])<<16 | sx(data[4*i+3])<<24
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)*5 + n
	}
	tail := data[len4*4:]
	var k1 uint32
	switch len(tail) {
	case 3:
		k1 ^= sx(tail[2]) << 16
		fallthrough
	case 2:
		k1 ^= sx(tail[1]) << 8
		fallthrough
	case 1:
		k1 ^= sx(tail[0])
		k1 *= c1
		k1 = bits.RotateLeft32(k1, 15)
		k1 *= c2
		h ^= k1
	}
	h ^= uint32(len(data))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
