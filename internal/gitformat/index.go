// Package gitformat holds codecs of git's on-disk formats, as go-git
// keeps them in plumbing/format: the index file (read-cache.c: versions 2,
// 3 and 4 with version 4's prefix-compressed names, the assume-valid and
// extended flags, and split-index.c's "link" extension with its EWAH
// bitmaps, ewah/ewah_io.c). A codec knows bytes, not repositories: where a
// split index needs its shared index, the caller reads the file. Each
// decoder has a fuzz target beside it. The packs' formats are the
// packages below: idxfile (pack indexes), packfile (packs and deltas) and
// rawobj (the headers of commits, trees and tags a walk reads).
package gitformat

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"slices"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// DecodeIndex decodes an index file of version 2, 3 or 4 whose checksum
// is right, as go-git's decoder does, and names the stage-0 entries whose
// assume-valid bit is set (nil: none); ok is false for anything else (a
// mandatory extension, a bad checksum, a short file, a split index, which
// needs its shared index: ParseIndex and MergeShared), which go-git then
// reads or refuses. The optional extensions (the cache tree, the
// untracked cache) are skipped: nothing reads them, and the encoder never
// writes them back; resolve-undo is ParseIndex's.
func DecodeIndex(data []byte) (idx *index.Index, valid map[string]bool, ok bool) {
	p, ok := ParseIndex(data)
	if !ok || p.Link != nil {
		return nil, nil, false
	}
	return p.Index, p.ValidNames(), true
}

// IndexFile is one index file decoded.
type IndexFile struct {
	Index *index.Index
	// Valid are the entries with the assume-valid bit (any stage).
	Valid []*index.Entry
	// Link is a split index's link to its shared index (nil: none, or a
	// link whose shared index is the null hash, which git reads as a
	// whole index).
	Link *SplitLink
	// ResolveUndo is the resolve-undo extension (nil: none).
	ResolveUndo []ResolveUndo
}

// SplitLink is the "link" extension of a split index: the checksum of the
// shared index (.git/sharedindex.<hex>), and which of its entries this
// file deletes and replaces (git's split-index.c).
type SplitLink struct {
	Base            [20]byte
	Delete, Replace EWAH
}

// ValidNames names the stage-0 entries with the assume-valid bit.
func (p *IndexFile) ValidNames() map[string]bool {
	var m map[string]bool
	for _, e := range p.Valid {
		if e.Stage == 0 {
			if m == nil {
				m = map[string]bool{}
			}
			m[e.Name] = true
		}
	}
	return m
}

// maxNameRatio bounds the bytes of names a version 4 index may expand to,
// per byte of the file: an entry takes at least 64 bytes on disk and a
// path is rarely longer than 4096 bytes; prefix compression of real paths
// stays far below. A file claiming more (a crafted one: many entries
// keeping all of a long name) is left to go-git.
const maxNameRatio = 256

// diskEntry is an entry's place in the file: its flags, the length of its
// fixed part (62 bytes, 64 with the extended flags), its name (version 4:
// keep bytes of the previous entry's name, then name) and its size.
type diskEntry struct {
	flags uint16
	hdr   int
	keep  int
	name  []byte
	size  int
}

// readDiskEntry reads the entry at body[at:] as git's create_from_disk
// does. For version 4, prev is the previous entry's name length, first
// says there is none (its strip length is then ignored, as git ignores
// it). A version 4 name must end where its flags say (git takes the length
// from the flags when it is below 0xfff) with a NUL.
func readDiskEntry(body []byte, at int, v4 bool, prev int, first bool) (diskEntry, bool) {
	var r diskEntry
	if at+62 > len(body) {
		return r, false
	}
	r.flags = binary.BigEndian.Uint16(body[at+60:])
	r.hdr = 62
	if r.flags&0x4000 != 0 {
		r.hdr = 64
	}
	if at+r.hdr > len(body) {
		return r, false
	}
	nl := int(r.flags & 0xfff)
	rest := body[at+r.hdr:]
	if !v4 {
		if nl == 0xfff {
			z := bytes.IndexByte(rest, 0)
			if z < 0 {
				return r, false
			}
			nl = z
		}
		r.size = (r.hdr + nl + 8) &^ 7
		if at+r.size > len(body) {
			return r, false
		}
		r.name = rest[:nl]
		return r, true
	}
	strip, vn, ok := decodeVarint(rest)
	if !ok {
		return r, false
	}
	if !first {
		if strip > uint64(prev) {
			return r, false // git: "malformed name field in the index"
		}
		r.keep = prev - int(strip)
	}
	rest = rest[vn:]
	z := bytes.IndexByte(rest, 0)
	if z < 0 || nl != 0xfff && r.keep+z != nl {
		return r, false
	}
	r.name = rest[:z]
	r.size = r.hdr + vn + z + 1
	return r, true
}

// decodeVarint reads git's varint (varint.c: 7 bits a byte, most
// significant first, each continuation adding one); ok is false at the
// end of b or on an overflow.
func decodeVarint(b []byte) (v uint64, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	c := b[0]
	v, n = uint64(c&127), 1
	for c&128 != 0 {
		v++
		if v == 0 || v>>57 != 0 || n >= len(b) {
			return 0, 0, false
		}
		c = b[n]
		n++
		v = v<<7 + uint64(c&127)
	}
	return v, n, true
}

// appendVarint appends v as git's encode_varint writes it.
func appendVarint(b []byte, v uint64) []byte {
	var buf [16]byte
	pos := len(buf) - 1
	buf[pos] = byte(v & 127)
	for v >>= 7; v != 0; v >>= 7 {
		v--
		pos--
		buf[pos] = 128 | byte(v&127)
	}
	return append(b, buf[pos:]...)
}

// ParseIndex decodes one index file (version 2, 3 or 4, right checksum,
// only optional extensions besides "link"); ok is false for anything
// else.
func ParseIndex(data []byte) (*IndexFile, bool) {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, false
	}
	ver := binary.BigEndian.Uint32(data[4:])
	if ver < 2 || ver > 4 {
		return nil, false
	}
	v4 := ver == 4
	body := data[:len(data)-20]
	if sha1.Sum(body) != [20]byte(data[len(data)-20:]) {
		return nil, false
	}
	n64 := uint64(binary.BigEndian.Uint32(data[8:]))
	if n64 > uint64(len(body)/62) {
		return nil, false
	}
	n := int(n64)
	// The names are substrings of one string: of the entries' bytes
	// (versions 2 and 3: found by a first pass over the entries), or of
	// the names expanded (version 4): one allocation instead of one per
	// entry.
	var nb []byte
	// scan finds the end of the entries and, for version 4, the length
	// of the names expanded, then (build) expands them into nb.
	scan := func(build bool) (end, total int, ok bool) {
		end, prev := 12, 0
		for i := 0; i < n; i++ {
			r, ok := readDiskEntry(body, end, v4, prev, i == 0)
			if !ok {
				return 0, 0, false
			}
			if v4 {
				l := r.keep + len(r.name)
				if total += l; total > maxNameRatio*len(data) {
					return 0, 0, false
				}
				if build {
					start := len(nb) - prev
					nb = append(nb, nb[start:start+r.keep]...)
					nb = append(nb, r.name...)
				}
				prev = l
			}
			end += r.size
		}
		return end, total, true
	}
	end, total, ok := scan(false)
	if !ok {
		return nil, false
	}
	var names string
	if v4 {
		nb = make([]byte, 0, total)
		scan(true)
		names = string(nb)
	} else {
		names = string(body[12:end])
	}
	p := &IndexFile{Index: &index.Index{Version: ver}}
	slab := make([]index.Entry, n)
	p.Index.Entries = make([]*index.Entry, n)
	off, at, prev := 12, 0, 0
	for i := 0; i < n; i++ {
		r, _ := readDiskEntry(body, off, v4, prev, i == 0)
		b := body[off:]
		e := &slab[i]
		u := func(at int) uint32 { return binary.BigEndian.Uint32(b[at:]) }
		if sec, nsec := u(0), u(4); sec != 0 || nsec != 0 {
			e.CreatedAt = time.Unix(int64(sec), int64(nsec))
		}
		if sec, nsec := u(8), u(12); sec != 0 || nsec != 0 {
			e.ModifiedAt = time.Unix(int64(sec), int64(nsec))
		}
		e.Dev, e.Inode, e.Mode, e.UID, e.GID, e.Size = u(16), u(20), filemode.FileMode(u(24)), u(28), u(32), u(36)
		copy(e.Hash[:], b[40:60])
		e.Stage = index.Stage(r.flags>>12) & 0x3
		if r.hdr == 64 {
			ext := binary.BigEndian.Uint16(b[62:])
			e.IntentToAdd = ext&(1<<13) != 0
			e.SkipWorktree = ext&(1<<14) != 0
		}
		if v4 {
			// Names are laid end to end in names, in entry order.
			l := r.keep + len(r.name)
			e.Name = names[at : at+l]
			at += l
			prev = l
		} else {
			start := off + r.hdr - 12
			e.Name = names[start : start+len(r.name)]
		}
		if r.flags&0x8000 != 0 {
			p.Valid = append(p.Valid, e)
		}
		p.Index.Entries[i] = e
		off += r.size
	}
	// Extensions: signature, length, data. An optional one (first letter
	// A-Z) is skipped; "link" is read; another mandatory one is go-git's
	// to refuse.
	for off < len(body) {
		if off+8 > len(body) {
			return nil, false
		}
		sig := body[off : off+4]
		l := uint64(binary.BigEndian.Uint32(body[off+4:]))
		if uint64(off)+8+l > uint64(len(body)) {
			return nil, false
		}
		ext := body[off+8 : off+8+int(l)]
		switch {
		case string(sig) == "link":
			link, ok := parseLink(ext)
			if !ok {
				return nil, false
			}
			p.Link = link
		case string(sig) == "REUC":
			// Corrupt, git refuses the index; kept out here, as the
			// other optional extensions are.
			p.ResolveUndo, _ = parseResolveUndo(ext)
		case sig[0] < 'A' || sig[0] > 'Z':
			return nil, false
		}
		off += 8 + int(l)
	}
	return p, true
}

// parseLink reads the "link" extension as git's read_link_extension
// does: the shared index's checksum, then, when there is more, the delete
// and the replace bitmaps, and nothing after them. A null checksum (git
// writes one when it wrote every entry into this file) is no link.
func parseLink(b []byte) (*SplitLink, bool) {
	if len(b) < 20 {
		return nil, false // "corrupt link extension (too short)"
	}
	l := &SplitLink{}
	copy(l.Base[:], b)
	b = b[20:]
	if len(b) > 0 {
		var n int
		var ok bool
		if l.Delete, n, ok = ReadEWAH(b); !ok {
			return nil, false // "corrupt delete bitmap in link extension"
		}
		b = b[n:]
		if l.Replace, n, ok = ReadEWAH(b); !ok || n != len(b) {
			return nil, false // "corrupt replace bitmap" / "garbage at the end"
		}
	}
	if l.Base == ([20]byte{}) {
		return nil, true
	}
	return l, true
}

// EWAH is an EWAH-compressed bitmap as git serializes it (ewah/ewah_io.c):
// its size in bits, its 64-bit words (big-endian, left in the file) and
// the position of its last run-length word. Each run-length word has the
// running bit in bit 0, the running length (in words) in bits 1-32 and
// the number of literal words that follow it in bits 33-63.
type EWAH struct {
	bits  uint32
	words []byte
	rlw   uint32
}

// ErrEWAH is a bitmap whose literal words run past its end.
var ErrEWAH = errors.New("corrupt ewah bitmap: literal words past the end")

// ReadEWAH reads a bitmap at the start of b as git's ewah_read_mmap does,
// returning the bytes it took.
func ReadEWAH(b []byte) (EWAH, int, bool) {
	if len(b) < 8 {
		return EWAH{}, 0, false
	}
	e := EWAH{bits: binary.BigEndian.Uint32(b)}
	nw := uint64(binary.BigEndian.Uint32(b[4:]))
	if uint64(len(b)-8) < nw*8+4 {
		return EWAH{}, 0, false
	}
	n := 8 + int(nw)*8
	e.words = b[8:n]
	e.rlw = binary.BigEndian.Uint32(b[n:])
	return e, n + 4, true
}

// Each calls f with the position of every set bit, in order, as git's
// ewah_each_bit does (which reads neither the bit size nor the last
// run-length word), until f returns an error, which it returns. A literal
// word past the end of the words is ErrEWAH (git would read past its
// buffer).
func (e EWAH) Each(f func(pos uint64) error) error {
	n := len(e.words) / 8
	word := func(i int) uint64 { return binary.BigEndian.Uint64(e.words[8*i:]) }
	var pos uint64
	for p := 0; p < n; {
		w := word(p)
		run := (w >> 1) & 0xffffffff
		lit := w >> 33
		p++
		if w&1 != 0 {
			for k := run * 64; k > 0; k-- {
				if err := f(pos); err != nil {
					return err
				}
				pos++
			}
		} else {
			pos += run * 64
		}
		if lit > uint64(n-p) {
			return ErrEWAH
		}
		for ; lit > 0; lit-- {
			for w := word(p); w != 0; w &= w - 1 {
				if err := f(pos + uint64(bits.TrailingZeros64(w))); err != nil {
					return err
				}
			}
			pos += 64
			p++
		}
	}
	return nil
}

// MergeShared reads the shared index p links to (read returns a file of
// the .git directory, an error matching fs.ErrNotExist when it is
// missing) and merges it into p as git's merge_base_index does: the
// entries the replace bitmap names take the data (not the name) of p's
// first entries, which have empty names; those the delete bitmap names
// are dropped; p's other entries are added in order (replacing an entry
// of the same name and stage; a stage-0 entry drops the conflict stages
// of its path). The errors are git's.
func (p *IndexFile) MergeShared(read func(name string) ([]byte, error)) error {
	hexs := hex.EncodeToString(p.Link.Base[:])
	name := "sharedindex." + hexs
	var got [20]byte
	var base *IndexFile
	data, err := read(name)
	switch {
	case err == nil:
		var ok bool
		if base, ok = ParseIndex(data); !ok {
			return fmt.Errorf("index file corrupt: .git/%s", name)
		}
		copy(got[:], data[len(data)-20:])
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read .git/%s: %w", name, err)
	}
	if got != p.Link.Base {
		return fmt.Errorf("broken index, expect %s in .git/%s, got %s", hexs, name, hex.EncodeToString(got[:]))
	}
	split, ents := p.Index.Entries, base.Index.Entries
	valid := map[*index.Entry]bool{}
	for _, e := range base.Valid {
		valid[e] = true
	}
	for _, e := range p.Valid {
		valid[e] = true
	}
	nrRepl := 0
	err = p.Link.Replace.Each(func(pos uint64) error {
		if pos >= uint64(len(ents)) {
			return fmt.Errorf("position for replacement %d exceeds base index size %d", pos, len(ents))
		}
		if nrRepl >= len(split) {
			return fmt.Errorf("too many replacements (%d vs %d)", nrRepl, len(split))
		}
		src := split[nrRepl]
		if src.Name != "" {
			return fmt.Errorf("corrupt link extension, entry %d should have zero length name", pos)
		}
		src.Name = ents[pos].Name
		ents[pos] = src
		nrRepl++
		return nil
	})
	if err != nil {
		return err
	}
	var removed []bool
	err = p.Link.Delete.Each(func(pos uint64) error {
		if pos >= uint64(len(ents)) {
			return fmt.Errorf("position for delete %d exceeds base index size %d", pos, len(ents))
		}
		if removed == nil {
			removed = make([]bool, len(ents))
		}
		removed[pos] = true
		return nil
	})
	if err != nil {
		return err
	}
	if removed != nil {
		kept := ents[:0]
		for i, e := range ents {
			if !removed[i] {
				kept = append(kept, e)
			}
		}
		ents = kept
	}
	add := split[nrRepl:]
	for i, e := range add {
		if e.Name == "" {
			return fmt.Errorf("corrupt link extension, entry %d should have non-zero length name", nrRepl+i)
		}
	}
	p.Index.Entries = AddEntries(ents, add)
	p.Valid = p.Valid[:0]
	for _, e := range p.Index.Entries {
		if valid[e] {
			p.Valid = append(p.Valid, e)
		}
	}
	p.Link = nil
	return nil
}

// AddEntries adds each of add to ents (sorted) as git's add_index_entry
// does with ADD_CACHE_OK_TO_ADD: an entry of the same name and stage is
// replaced, a stage-0 entry removes the other stages of its path, and the
// entry goes in at its place. When both lists are sorted (git writes them
// so) it is one merge; otherwise one insertion at a time.
func AddEntries(ents, add []*index.Entry) []*index.Entry {
	if len(add) == 0 {
		return ents
	}
	sorted := func(l []*index.Entry) bool {
		for i := 1; i < len(l); i++ {
			if !EntryLess(l[i-1], l[i]) {
				return false
			}
		}
		return true
	}
	if sorted(ents) && sorted(add) {
		out := make([]*index.Entry, 0, len(ents)+len(add))
		i := 0
		for _, a := range add {
			for i < len(ents) && EntryLess(ents[i], a) {
				out = append(out, ents[i])
				i++
			}
			switch {
			case i < len(ents) && ents[i].Name == a.Name && ents[i].Stage == a.Stage:
				i++
			case a.Stage == 0:
				for i < len(ents) && ents[i].Name == a.Name {
					i++
				}
			}
			out = append(out, a)
		}
		return append(out, ents[i:]...)
	}
	for _, a := range add {
		pos := sort.Search(len(ents), func(i int) bool { return !EntryLess(ents[i], a) })
		if pos < len(ents) && ents[pos].Name == a.Name && ents[pos].Stage == a.Stage {
			ents[pos] = a
			continue
		}
		if a.Stage == 0 {
			end := pos
			for end < len(ents) && ents[end].Name == a.Name {
				end++
			}
			ents = append(ents[:pos], ents[end:]...)
		}
		ents = slices.Insert(ents, pos, a)
	}
	return ents
}

// EncodeIndex appends the index file (version 2, 3 or 4, no extensions,
// entries in git's order) to b: byte for byte what go-git's encoder
// writes, without an allocation per entry. A version 4 name is the number
// of bytes to strip from the end of the previous name (a varint), then the
// rest of the name and a NUL, unpadded, as git's ce_write_entry writes it.
// A split index is written whole (no link extension), which git reads as
// it read the split one and splits again when asked to; the shared index
// file is left for git to expire (splitIndex.sharedIndexExpire).
// The assume-valid bit is set on the stage-0 entries valid names.
func EncodeIndex(b []byte, idx *index.Index, valid map[string]bool) ([]byte, error) {
	return EncodeIndexResolveUndo(b, idx, valid, nil)
}

// EncodeIndexResolveUndo is EncodeIndex with a resolve-undo extension
// after the entries (none when reuc is empty): the one extension the
// tools write, since git cannot rebuild it (the cache tree and the
// untracked cache it rebuilds when it needs them).
func EncodeIndexResolveUndo(b []byte, idx *index.Index, valid map[string]bool, reuc []ResolveUndo) ([]byte, error) {
	sort.SliceStable(idx.Entries, func(i, j int) bool {
		a, c := idx.Entries[i], idx.Entries[j]
		return a.Name < c.Name || a.Name == c.Name && a.Stage < c.Stage
	})
	b = append(b, 'D', 'I', 'R', 'C')
	b = binary.BigEndian.AppendUint32(b, idx.Version)
	b = binary.BigEndian.AppendUint32(b, uint32(len(idx.Entries)))
	stamp := func(t time.Time) (uint32, uint32, error) {
		if t.IsZero() {
			return 0, 0, nil
		}
		if t.Unix() < 0 || t.UnixNano() < 0 {
			return 0, 0, index.ErrInvalidTimestamp
		}
		return uint32(t.Unix()), uint32(t.Nanosecond()), nil
	}
	var prev string // version 4: the previous entry's name
	for _, e := range idx.Entries {
		cs, cn, err := stamp(e.CreatedAt)
		if err != nil {
			return nil, err
		}
		ms, mn, err := stamp(e.ModifiedAt)
		if err != nil {
			return nil, err
		}
		for _, v := range [...]uint32{cs, cn, ms, mn, e.Dev, e.Inode, uint32(e.Mode), e.UID, e.GID, e.Size} {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		b = append(b, e.Hash[:]...)
		flags := uint16(e.Stage&0x3) << 12
		if e.Stage == 0 && valid[e.Name] {
			flags |= 0x8000
		}
		if l := len(e.Name); l < 0xfff {
			flags |= uint16(l)
		} else {
			flags |= 0xfff
		}
		n := 62
		if e.IntentToAdd || e.SkipWorktree {
			var ext uint16
			if e.IntentToAdd {
				ext |= 1 << 13
			}
			if e.SkipWorktree {
				ext |= 1 << 14
			}
			b = binary.BigEndian.AppendUint16(b, flags|0x4000)
			b = binary.BigEndian.AppendUint16(b, ext)
			n += 2
		} else {
			b = binary.BigEndian.AppendUint16(b, flags)
		}
		if idx.Version == 4 {
			common := 0
			for common < len(prev) && common < len(e.Name) && prev[common] == e.Name[common] {
				common++
			}
			b = appendVarint(b, uint64(len(prev)-common))
			b = append(b, e.Name[common:]...)
			b = append(b, 0)
			prev = e.Name
			continue
		}
		b = append(b, e.Name...)
		n += len(e.Name)
		for pad := 8 - n%8; pad > 0; pad-- {
			b = append(b, 0)
		}
	}
	b = appendResolveUndo(b, reuc)
	sum := sha1.Sum(b)
	return append(b, sum[:]...), nil
}

func EntryLess(a, b *index.Entry) bool {
	return a.Name < b.Name || a.Name == b.Name && a.Stage < b.Stage
}
