package gitbackend

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	formatcfg "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage"
)

// indexCache keeps the index a persist decoded or wrote, so that the next
// persist updates the entries it changes instead of decoding the whole
// file again. It is valid while .git/index is the file it was read from or
// written as (same size, modification time and inode): a git tool or a
// git CLI that rewrote the index makes it read afresh.
type indexCache struct {
	// mu guards the cache for the git tools' storage (warm.go); the
	// persist path holds the repository's lock.
	mu    sync.Mutex
	idx   *index.Index
	stamp fileStamp
	buf   []byte
	// trees are the last flattened trees, diff the last comparison of the
	// cached index with a tree (warm.go).
	trees flatTrees
	diff  cachedDiff
	// viewed: idx was handed out in place (IndexView) since it was cached.
	viewed bool
	// packs reads the root's packs for the git tools (warmpack.go).
	packs warmPacks
	// valid names the entries of the index last read that carry the
	// assume-valid bit (git update-index --assume-unchanged), which
	// go-git's index.Entry has no field for: kept here, handed to the
	// git tools (AssumeUnchanged) and written back by save.
	valid map[string]bool
	// gitdir is the .git directory on disk (gitdirOK), once looked up.
	gitdir                string
	gitdirOK, gitdirKnown bool
}

// fileStamp identifies the index file's content: its stat data and its
// trailing checksum (file times are only as fine as the kernel's clock
// tick, and an index rewritten in place keeps its inode and often its size).
type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
	sum   [20]byte
}

func stampIndex(dot billy.Filesystem) (fileStamp, bool) {
	info, err := dot.Stat("index")
	if err != nil || info.Size() < 32 {
		return fileStamp{}, false
	}
	st := fileStamp{size: info.Size(), mtime: info.ModTime(), ino: inodeOf(info)}
	f, err := dot.Open("index")
	if err != nil {
		return fileStamp{}, false
	}
	defer f.Close()
	if _, err := f.ReadAt(st.sum[:], info.Size()-20); err != nil {
		return fileStamp{}, false
	}
	return st, true
}

// cachedIndexStore is the storage's index behind the cache.
type cachedIndexStore interface {
	Index() (*index.Index, error)
	SetIndex(*index.Index) error
}

// load returns the index, decoded or from the cache. The caller owns it
// until it hands it back with save: a caller that fails before saving
// leaves the cache empty, so half-made edits are never reused.
func (c *indexCache) load(dot billy.Filesystem, s cachedIndexStore) (*index.Index, error) {
	st, ok := stampIndex(dot)
	c.diff = cachedDiff{} // the caller may change the index it is given
	if ok && c.idx != nil && st == c.stamp {
		idx := c.idx
		if c.viewed {
			// Read in place by a git tool (IndexView): not to be changed.
			idx = cloneIndex(idx)
		}
		c.idx, c.viewed = nil, false
		return idx, nil
	}
	c.idx = nil
	idx, rst, valid, err := readIndex(dot, s)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	c.valid = valid
	if rst.size == 0 {
		// Read by go-git: stamped before the read, so that if the file
		// changed in between, the stamp is older than the content and
		// the next load reads it again.
		rst = st
	}
	c.stamp = rst
	return idx, nil
}

// view returns a copy of the index, decoded or from the cache, which stays
// cached: what the git tools read (they may change their copy; only what
// they hand to save is kept).
func (c *indexCache) view(dot billy.Filesystem, s cachedIndexStore) (*index.Index, error) {
	idx, cached, err := c.current(dot, s)
	if err != nil || !cached {
		return idx, err
	}
	return cloneIndex(idx), nil
}

// current is the index, decoded or from the cache; cached says it is the
// cache's own (not to be changed).
func (c *indexCache) current(dot billy.Filesystem, s cachedIndexStore) (*index.Index, bool, error) {
	st, ok := stampIndex(dot)
	if ok && c.idx != nil && st == c.stamp {
		return c.idx, true, nil
	}
	c.idx, c.viewed = nil, false
	idx, rst, valid, err := readIndex(dot, s)
	if err != nil {
		return nil, false, err
	}
	c.valid = valid
	if rst.size == 0 {
		rst = st
	}
	if rst.size > 0 {
		c.idx, c.stamp = idx, rst
		return idx, true, nil
	}
	return idx, false, nil
}

// cloneIndex copies an index: its entries in one allocation (the names,
// immutable, are shared).
func cloneIndex(idx *index.Index) *index.Index {
	out := *idx
	slab := make([]index.Entry, len(idx.Entries))
	out.Entries = make([]*index.Entry, len(idx.Entries))
	for i, e := range idx.Entries {
		slab[i] = *e
		out.Entries[i] = &slab[i]
	}
	return &out
}

// readIndex decodes .git/index: versions 2, 3 and 4 here, from one read of
// the file, with the shared index of a split index (git update-index
// --split-index) merged in as git does; anything else by go-git. st is the
// stamp of the bytes decoded (zero when go-git read them). The stamp of a
// split index is its own file's: the link names the shared index by its
// checksum, and git never rewrites a shared index in place.
func readIndex(dot billy.Filesystem, s cachedIndexStore) (*index.Index, fileStamp, map[string]bool, error) {
	f, err := dot.Open("index")
	if err != nil {
		missing := errors.Is(err, fs.ErrNotExist)
		idx, err := s.Index() // a missing index is an empty one, as go-git has it
		if err == nil && missing {
			idx.Version = defaultIndexVersion(dot)
		}
		return idx, fileStamp{}, nil, err
	}
	info, err := statOpen(f, dot)
	if err != nil {
		f.Close()
		idx, err := s.Index()
		return idx, fileStamp{}, nil, err
	}
	data := make([]byte, info.Size())
	_, err = io.ReadFull(f, data)
	f.Close()
	if err == nil {
		if p, ok := parseIndex(data); ok {
			if p.link != nil {
				if err := p.mergeShared(dot); err != nil {
					return nil, fileStamp{}, nil, err
				}
			}
			p.idx.ModTime = info.ModTime()
			st := fileStamp{size: info.Size(), mtime: info.ModTime(), ino: inodeOf(info)}
			copy(st.sum[:], data[len(data)-20:])
			return p.idx, st, validNames(p.valid), nil
		}
	}
	idx, err := s.Index()
	return idx, fileStamp{}, nil, err
}

// statOpen is the stat data of an open file (fstat when the file has one).
func statOpen(f billy.File, dot billy.Filesystem) (fs.FileInfo, error) {
	if sf, ok := f.(interface{ Stat() (fs.FileInfo, error) }); ok {
		return sf.Stat()
	}
	return dot.Stat("index")
}

// decodeIndex decodes an index file of version 2, 3 or 4 whose checksum
// is right, as go-git's decoder does; ok is false for anything else (a
// mandatory extension, a bad checksum, a short file, a split index, which
// needs its shared index: readIndex), which go-git then reads or refuses.
// The optional extensions (the cache tree, resolve-undo, the untracked
// cache) are skipped: nothing reads them, and the encoder never writes
// them back.
func decodeIndex(data []byte) (*index.Index, bool) {
	idx, _, ok := decodeIndexFlags(data)
	return idx, ok
}

// decodeIndexFlags is decodeIndex, also naming the entries whose
// assume-valid bit is set (nil: none).
func decodeIndexFlags(data []byte) (*index.Index, map[string]bool, bool) {
	p, ok := parseIndex(data)
	if !ok || p.link != nil {
		return nil, nil, false
	}
	return p.idx, validNames(p.valid), true
}

// parsedIndex is one index file decoded.
type parsedIndex struct {
	idx *index.Index
	// valid are the entries with the assume-valid bit (any stage).
	valid []*index.Entry
	// link is a split index's link to its shared index (nil: none, or a
	// link whose shared index is the null hash, which git reads as a
	// whole index).
	link *splitLink
}

// splitLink is the "link" extension of a split index: the checksum of the
// shared index (.git/sharedindex.<hex>), and which of its entries this
// file deletes and replaces (git's split-index.c).
type splitLink struct {
	base      [20]byte
	del, repl ewah
}

// validNames names the stage-0 entries among valid.
func validNames(valid []*index.Entry) map[string]bool {
	var m map[string]bool
	for _, e := range valid {
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

// parseIndex decodes one index file (version 2, 3 or 4, right checksum,
// only optional extensions besides "link"); ok is false for anything
// else.
func parseIndex(data []byte) (*parsedIndex, bool) {
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
	p := &parsedIndex{idx: &index.Index{Version: ver}}
	slab := make([]index.Entry, n)
	p.idx.Entries = make([]*index.Entry, n)
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
			p.valid = append(p.valid, e)
		}
		p.idx.Entries[i] = e
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
			p.link = link
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
func parseLink(b []byte) (*splitLink, bool) {
	if len(b) < 20 {
		return nil, false // "corrupt link extension (too short)"
	}
	l := &splitLink{}
	copy(l.base[:], b)
	b = b[20:]
	if len(b) > 0 {
		var n int
		var ok bool
		if l.del, n, ok = readEWAH(b); !ok {
			return nil, false // "corrupt delete bitmap in link extension"
		}
		b = b[n:]
		if l.repl, n, ok = readEWAH(b); !ok || n != len(b) {
			return nil, false // "corrupt replace bitmap" / "garbage at the end"
		}
	}
	if l.base == ([20]byte{}) {
		return nil, true
	}
	return l, true
}

// ewah is an EWAH-compressed bitmap as git serializes it (ewah/ewah_io.c):
// its size in bits, its 64-bit words (big-endian, left in the file) and
// the position of its last run-length word. Each run-length word has the
// running bit in bit 0, the running length (in words) in bits 1-32 and
// the number of literal words that follow it in bits 33-63.
type ewah struct {
	bits  uint32
	words []byte
	rlw   uint32
}

// errEWAH is a bitmap whose literal words run past its end.
var errEWAH = errors.New("corrupt ewah bitmap: literal words past the end")

// readEWAH reads a bitmap at the start of b as git's ewah_read_mmap does,
// returning the bytes it took.
func readEWAH(b []byte) (ewah, int, bool) {
	if len(b) < 8 {
		return ewah{}, 0, false
	}
	e := ewah{bits: binary.BigEndian.Uint32(b)}
	nw := uint64(binary.BigEndian.Uint32(b[4:]))
	if uint64(len(b)-8) < nw*8+4 {
		return ewah{}, 0, false
	}
	n := 8 + int(nw)*8
	e.words = b[8:n]
	e.rlw = binary.BigEndian.Uint32(b[n:])
	return e, n + 4, true
}

// each calls f with the position of every set bit, in order, as git's
// ewah_each_bit does (which reads neither the bit size nor the last
// run-length word), until f returns an error, which it returns. A literal
// word past the end of the words is errEWAH (git would read past its
// buffer).
func (e ewah) each(f func(pos uint64) error) error {
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
			return errEWAH
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

// mergeShared reads the shared index p links to and merges it into p as
// git's merge_base_index does: the entries the replace bitmap names take
// the data (not the name) of p's first entries, which have empty names;
// those the delete bitmap names are dropped; p's other entries are added
// in order (replacing an entry of the same name and stage; a stage-0
// entry drops the conflict stages of its path). The errors are git's.
func (p *parsedIndex) mergeShared(dot billy.Filesystem) error {
	hexs := hex.EncodeToString(p.link.base[:])
	name := "sharedindex." + hexs
	var got [20]byte
	var base *parsedIndex
	data, err := readDotFile(dot, name)
	switch {
	case err == nil:
		var ok bool
		if base, ok = parseIndex(data); !ok {
			return fmt.Errorf("index file corrupt: .git/%s", name)
		}
		copy(got[:], data[len(data)-20:])
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read .git/%s: %w", name, err)
	}
	if got != p.link.base {
		return fmt.Errorf("broken index, expect %s in .git/%s, got %s", hexs, name, hex.EncodeToString(got[:]))
	}
	split, ents := p.idx.Entries, base.idx.Entries
	valid := map[*index.Entry]bool{}
	for _, e := range base.valid {
		valid[e] = true
	}
	for _, e := range p.valid {
		valid[e] = true
	}
	nrRepl := 0
	err = p.link.repl.each(func(pos uint64) error {
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
	err = p.link.del.each(func(pos uint64) error {
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
	p.idx.Entries = addEntries(ents, add)
	p.valid = p.valid[:0]
	for _, e := range p.idx.Entries {
		if valid[e] {
			p.valid = append(p.valid, e)
		}
	}
	p.link = nil
	return nil
}

// addEntries adds each of add to ents (sorted) as git's add_index_entry
// does with ADD_CACHE_OK_TO_ADD: an entry of the same name and stage is
// replaced, a stage-0 entry removes the other stages of its path, and the
// entry goes in at its place. When both lists are sorted (git writes them
// so) it is one merge; otherwise one insertion at a time.
func addEntries(ents, add []*index.Entry) []*index.Entry {
	if len(add) == 0 {
		return ents
	}
	sorted := func(l []*index.Entry) bool {
		for i := 1; i < len(l); i++ {
			if !entryLess(l[i-1], l[i]) {
				return false
			}
		}
		return true
	}
	if sorted(ents) && sorted(add) {
		out := make([]*index.Entry, 0, len(ents)+len(add))
		i := 0
		for _, a := range add {
			for i < len(ents) && entryLess(ents[i], a) {
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
		pos := sort.Search(len(ents), func(i int) bool { return !entryLess(ents[i], a) })
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

// readDotFile reads a file of the .git directory.
func readDotFile(dot billy.Filesystem, name string) ([]byte, error) {
	f, err := dot.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// defaultIndexVersion is the version git gives a new index (its
// get_index_format_default): index.version, else 4 with
// feature.manyFiles, else 3 (written as 2 when no entry needs 3), from
// the repository's config file. (git also reads GIT_INDEX_VERSION and the
// user's and system's config, which a root does not see.)
func defaultIndexVersion(dot billy.Filesystem) uint32 {
	const def = 3
	data, err := readDotFile(dot, "config")
	if err != nil {
		return def
	}
	cfg := formatcfg.New()
	if err := formatcfg.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return def
	}
	v := uint64(def)
	feature := cfg.Section("feature")
	if feature.HasOption("manyFiles") && gitBool(feature.Option("manyFiles"), false) {
		v = 4
	}
	if ix := cfg.Section("index"); ix.HasOption("version") {
		n, err := strconv.ParseInt(strings.TrimSpace(ix.Option("version")), 0, 64)
		if err != nil {
			return def
		}
		v = uint64(n)
	}
	if v < 2 || v > 4 {
		return def // git warns "index.version set, but the value is invalid"
	}
	return uint32(v)
}

// save writes the index in place (as go-git does) and keeps it.
func (c *indexCache) save(dot billy.Filesystem, s cachedIndexStore, idx *index.Index) error {
	c.idx, c.diff = nil, cachedDiff{}
	if c.stamp.size == 0 {
		// Not read from a file: a new index takes the version the
		// repository's configuration asks for, as git's does.
		if _, err := dot.Stat("index"); errors.Is(err, fs.ErrNotExist) {
			idx.Version = defaultIndexVersion(dot)
		}
	}
	if idx.Version < 2 || idx.Version > 4 {
		return s.SetIndex(idx)
	}
	if idx.Version != 4 {
		// git keeps the version it read, but writes version 2 when no
		// entry needs version 3's extended flags, and 3 when one does.
		idx.Version = 2
		for _, e := range idx.Entries {
			if e.IntentToAdd || e.SkipWorktree {
				idx.Version = 3
				break
			}
		}
	}
	b, err := encodeIndexFlags(c.buf[:0], idx, c.valid)
	if err != nil {
		return err
	}
	c.buf = b
	f, err := dot.OpenFile("index", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	_, err = f.Write(b)
	// The stamp of what was written: the open file's stat data (no second
	// open to read the checksum back: it is the buffer's end).
	var st fileStamp
	ok := false
	if err == nil {
		var info fs.FileInfo
		if info, ok = fileInfo(f); ok && info.Size() == int64(len(b)) {
			st = fileStamp{size: info.Size(), mtime: info.ModTime(), ino: inodeOf(info)}
			copy(st.sum[:], b[len(b)-20:])
		} else {
			ok = false
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if !ok {
		if st, ok = stampIndex(dot); !ok {
			return nil
		}
	}
	idx.ModTime = st.mtime
	c.idx, c.stamp = idx, st
	return nil
}

// fileInfo is an open file's stat data, when it can say.
func fileInfo(f billy.File) (fs.FileInfo, bool) {
	sf, ok := f.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return nil, false
	}
	info, err := sf.Stat()
	return info, err == nil
}

// encodeIndex appends the index file (version 2, 3 or 4, no extensions,
// entries in git's order) to b: byte for byte what go-git's encoder
// writes, without an allocation per entry. A version 4 name is the number
// of bytes to strip from the end of the previous name (a varint), then the
// rest of the name and a NUL, unpadded, as git's ce_write_entry writes it.
// A split index is written whole (no link extension), which git reads as
// it read the split one and splits again when asked to; the shared index
// file is left for git to expire (splitIndex.sharedIndexExpire).
func encodeIndex(b []byte, idx *index.Index) ([]byte, error) {
	return encodeIndexFlags(b, idx, nil)
}

// encodeIndexFlags is encodeIndex, setting the assume-valid bit of the
// stage-0 entries valid names.
func encodeIndexFlags(b []byte, idx *index.Index, valid map[string]bool) ([]byte, error) {
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
	sum := sha1.Sum(b)
	return append(b, sum[:]...), nil
}

// indexStorage is an index reader/writer through the repository's cache.
type indexStorage struct {
	c   *indexCache
	dot billy.Filesystem
	s   cachedIndexStore
}

func (i indexStorage) Index() (*index.Index, error)    { return i.c.load(i.dot, i.s) }
func (i indexStorage) SetIndex(idx *index.Index) error { return i.c.save(i.dot, i.s, idx) }

// packedStageMin is the number of new blobs from which StageFiles writes
// them as one pack instead of one loose object each (git add writes loose
// objects: a file, a directory and a rename per object).
const packedStageMin = 8

// StageFiles is StagePathsCleaned for the root's repository: the blobs
// are written as one pack when there are many of them, and the index is
// updated in one pass (binary searches in the sorted entries, no scan per
// path) with git add's rules: a path's conflict stages are replaced by
// stage 0, a new path drops the entries that would be its parent
// directories and those below it, a missing path (or one that became a
// directory) is removed with all its stages. On another storage it is
// StagePathsCleaned.
func StageFiles(ctx context.Context, s storage.Storer, wt billy.Filesystem, paths []string, clean Cleaner) error {
	ws, ok := s.(*warmStorage)
	if !ok {
		return StagePathsCleaned(ctx, s, wt, paths, clean)
	}
	changes := make([]fileChange, 0, len(paths))
	infos := make([]fs.FileInfo, 0, len(paths))
	blobs := map[plumbing.Hash]plumbing.EncodedObject{}
	var order []plumbing.Hash
	for i, p := range paths {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c, content, info, err := readStaged(wt, p, clean)
		if err != nil {
			return fmt.Errorf("stage %s: %w", p, err)
		}
		if !c.Delete {
			obj := &plumbing.MemoryObject{}
			obj.SetType(plumbing.BlobObject)
			obj.SetSize(int64(len(content)))
			if _, err := obj.Write(content); err != nil {
				return err
			}
			c.Hash = obj.Hash()
			if _, ok := blobs[c.Hash]; !ok {
				blobs[c.Hash] = obj
				order = append(order, c.Hash)
			}
		}
		changes = append(changes, c)
		infos = append(infos, info)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ws.r.storeBlobs(blobs, order); err != nil {
		return err
	}
	idx, err := s.Index()
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	stageChanges(idx, changes, infos)
	return s.SetIndex(idx)
}

// readStaged reads a worktree path as stagePathWith does: its change (a
// deletion when it is missing or a directory), its cleaned bytes and its
// stat data.
func readStaged(wt billy.Filesystem, p string, clean Cleaner) (fileChange, []byte, fs.FileInfo, error) {
	info, err := wt.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// (ENOTDIR: a parent directory became a file.)
		return fileChange{Path: p, Delete: true}, nil, nil, nil
	}
	if err != nil {
		return fileChange{}, nil, nil, err
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		t, err := wt.Readlink(p)
		if err != nil {
			return fileChange{}, nil, nil, err
		}
		return fileChange{Path: p, Mode: filemode.Symlink}, []byte(t), info, nil
	case info.IsDir():
		return fileChange{Path: p, Delete: true}, nil, nil, nil
	}
	f, err := wt.Open(p)
	if err != nil {
		return fileChange{}, nil, nil, err
	}
	content := make([]byte, 0, info.Size()+1)
	buf := bytes.NewBuffer(content)
	_, err = buf.ReadFrom(f)
	f.Close()
	if err != nil {
		return fileChange{}, nil, nil, err
	}
	content = buf.Bytes()
	mode := filemode.Regular
	if info.Mode()&0o111 != 0 {
		mode = filemode.Executable
	}
	if clean != nil {
		content, mode = clean(p, content, mode)
	}
	return fileChange{Path: p, Mode: mode}, content, info, nil
}

// storeBlobs writes new blobs into the root's store: one pack when there
// are many (merged with the other small packs in time, as a persist's
// are), else loose objects.
func (r *Repo) storeBlobs(blobs map[plumbing.Hash]plumbing.EncodedObject, order []plumbing.Hash) error {
	if len(order) < packedStageMin {
		for _, h := range order {
			if _, err := r.store.SetEncodedObject(blobs[h]); err != nil {
				return err
			}
		}
		return nil
	}
	var enc packEncoder
	p, err := enc.encode(memObjects(blobs), order)
	if err != nil {
		return err
	}
	if err := storePack(r.store, r.dot, p, enc.ents); err != nil {
		return err
	}
	if r.packsWritten++; r.packsWritten%(maxSmallPacks/2) != 0 {
		return nil
	}
	merged, err := consolidatePacks(r.dot, r.store, &r.packer, func(p *packed) error { return writeLocalPack(r.store, p) })
	if err != nil {
		r.progressf("warning: %v", err) // the packs stay as they are: still a valid store
	}
	if merged {
		_ = r.store.Close()
		r.store.Reindex()
	}
	return nil
}

// memObjects is a map of objects as an object source.
type memObjects map[plumbing.Hash]plumbing.EncodedObject

func (m memObjects) EncodedObject(_ plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, ok := m[h]; ok {
		return o, nil
	}
	return nil, plumbing.ErrObjectNotFound
}

// stageChanges applies changes (infos: each one's stat data, nil for a
// deletion) to idx as setIndexEntry and removeIndexPath would one after
// the other, in one pass: entries are looked up by binary search in the
// sorted index, removals marked and done at the end, new entries
// appended and sorted in.
func stageChanges(idx *index.Index, changes []fileChange, infos []fs.FileInfo) {
	if !sort.SliceIsSorted(idx.Entries, func(i, j int) bool { return entryLess(idx.Entries[i], idx.Entries[j]) }) {
		sort.SliceStable(idx.Entries, func(i, j int) bool { return entryLess(idx.Entries[i], idx.Entries[j]) })
	}
	ents := idx.Entries
	removed := make([]bool, len(ents))
	added := map[string]*index.Entry{}
	// rangeOf is the entries named p, [lo, hi).
	rangeOf := func(p string) (int, int) {
		lo := sort.Search(len(ents), func(i int) bool { return ents[i].Name >= p })
		hi := lo
		for hi < len(ents) && ents[hi].Name == p {
			hi++
		}
		return lo, hi
	}
	removePath := func(p string) {
		lo, hi := rangeOf(p)
		for i := lo; i < hi; i++ {
			removed[i] = true
		}
		delete(added, p)
	}
	for k, c := range changes {
		if c.Delete {
			removePath(c.Path)
			continue
		}
		lo, hi := rangeOf(c.Path)
		var e *index.Entry
		for i := lo; i < hi; i++ {
			switch {
			case removed[i]:
			case ents[i].Stage != 0:
				removed[i] = true // staging resolves the conflict
			case e == nil:
				e = ents[i]
			}
		}
		if e == nil {
			e = added[c.Path]
		}
		if e == nil {
			// A path cannot be both a file and a directory in the index.
			for dir := path.Dir(c.Path); dir != "."; dir = path.Dir(dir) {
				removePath(dir)
			}
			below := c.Path + "/"
			for i := sort.Search(len(ents), func(i int) bool { return ents[i].Name >= below }); i < len(ents) && strings.HasPrefix(ents[i].Name, below); i++ {
				removed[i] = true
			}
			for p := range added {
				if strings.HasPrefix(p, below) {
					delete(added, p)
				}
			}
			e = &index.Entry{Name: c.Path}
			added[c.Path] = e
		}
		// Staged content ends an intent to add (git add -N).
		e.Hash, e.Mode, e.IntentToAdd = c.Hash, c.Mode, false
		if info := infos[k]; info != nil {
			e.ModifiedAt, e.CreatedAt = info.ModTime(), info.ModTime()
			e.Size = uint32(info.Size())
			fillStat(e, info)
		}
	}
	kept := ents[:0]
	for i, e := range ents {
		if !removed[i] {
			kept = append(kept, e)
		}
	}
	if len(added) > 0 {
		for _, e := range added {
			kept = append(kept, e)
		}
		sort.SliceStable(kept, func(i, j int) bool { return entryLess(kept[i], kept[j]) })
	}
	idx.Entries = kept
}

func entryLess(a, b *index.Entry) bool {
	return a.Name < b.Name || a.Name == b.Name && a.Stage < b.Stage
}
