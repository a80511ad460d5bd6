package packfile

import "errors"

// ApplyDelta is git's patch_delta: the source and target sizes, then
// copies from the source and inserted bytes.
func ApplyDelta(src, delta []byte) ([]byte, error) {
	varint := func() (uint64, bool) {
		var v uint64
		for shift := uint(0); len(delta) > 0; shift += 7 {
			c := delta[0]
			delta = delta[1:]
			v |= uint64(c&0x7f) << shift
			if c&0x80 == 0 {
				return v, true
			}
			if shift > 56 {
				return 0, false
			}
		}
		return 0, false
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != uint64(len(src)) {
		return nil, errors.New("bad delta header")
	}
	// The target size is the delta's word; it sizes the buffer only as far
	// as the delta could fill it (each copy op takes at least one byte and
	// brings at most 2^24 bytes of the source).
	if dstSize > uint64(len(delta)+1)<<24 {
		return nil, errors.New("bad delta header: target larger than the delta can make")
	}
	out := make([]byte, 0, min(dstSize, 64<<20))
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n uint64
			for i := uint(0); i < 4; i++ {
				if op&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated copy")
					}
					off |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := uint(0); i < 3; i++ {
				if op&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated copy")
					}
					n |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(src)) || off+n < off {
				return nil, errors.New("copy out of the source")
			}
			out = append(out, src[off:off+n]...)
		case op != 0:
			if int(op) > len(delta) {
				return nil, errors.New("truncated insert")
			}
			out = append(out, delta[:op]...)
			delta = delta[op:]
		default:
			return nil, errors.New("reserved delta opcode")
		}
	}
	if uint64(len(out)) != dstSize {
		return nil, errors.New("delta result has the wrong size")
	}
	return out, nil
}
