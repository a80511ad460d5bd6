package gitformat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// ResolveUndo is one path of the index's resolve-undo extension ("REUC",
// git's resolve-undo.c): the unmerged stages 1-3 a resolution removed
// from the index, kept so that git checkout -m can make the conflict
// again. A stage whose mode is 0 was not there.
type ResolveUndo struct {
	Path string
	Mode [3]uint32
	Hash [3]plumbing.Hash
}

// parseResolveUndo reads a REUC extension (resolve_undo_read): per path,
// the name and three octal modes, each ending in a NUL, then the object
// of each stage whose mode is not 0. ok is false for a corrupt one.
func parseResolveUndo(b []byte) ([]ResolveUndo, bool) {
	var out []ResolveUndo
	for len(b) > 0 {
		var r ResolveUndo
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, false
		}
		r.Path, b = string(b[:i]), b[i+1:]
		for s := 0; s < 3; s++ {
			i := bytes.IndexByte(b, 0)
			if i < 0 {
				return nil, false
			}
			m, err := strconv.ParseUint(string(b[:i]), 8, 32)
			if err != nil {
				return nil, false
			}
			r.Mode[s], b = uint32(m), b[i+1:]
		}
		for s := 0; s < 3; s++ {
			if r.Mode[s] == 0 {
				continue
			}
			if len(b) < 20 {
				return nil, false
			}
			copy(r.Hash[s][:], b[:20])
			b = b[20:]
		}
		out = append(out, r)
	}
	return out, true
}

// appendResolveUndo appends the REUC extension of rs (resolve_undo_write),
// paths in git's order; nothing when rs is empty.
func appendResolveUndo(b []byte, rs []ResolveUndo) []byte {
	if len(rs) == 0 {
		return b
	}
	rs = append([]ResolveUndo(nil), rs...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Path < rs[j].Path })
	var data []byte
	for _, r := range rs {
		data = append(data, r.Path...)
		data = append(data, 0)
		for _, m := range r.Mode {
			data = fmt.Appendf(data, "%o", m)
			data = append(data, 0)
		}
		for s, m := range r.Mode {
			if m != 0 {
				data = append(data, r.Hash[s][:]...)
			}
		}
	}
	b = append(b, "REUC"...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}
