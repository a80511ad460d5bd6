package gitbackend

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
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
	// trees are the last flattened trees (warm.go).
	trees flatTrees
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
	if ok && c.idx != nil && st == c.stamp {
		idx := c.idx
		c.idx = nil
		return idx, nil
	}
	c.idx = nil
	idx, rst, err := readIndex(dot, s)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
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
	st, ok := stampIndex(dot)
	if ok && c.idx != nil && st == c.stamp {
		return cloneIndex(c.idx), nil
	}
	c.idx = nil
	idx, rst, err := readIndex(dot, s)
	if err != nil {
		return nil, err
	}
	if rst.size == 0 {
		rst = st
	}
	if rst.size > 0 {
		c.idx, c.stamp = idx, rst
		return cloneIndex(idx), nil
	}
	return idx, nil
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

// readIndex decodes .git/index: versions 2 and 3 here, from one read of
// the file (go-git's decoder reads field by field through reflection and
// allocates per entry), anything else by go-git. st is the stamp of the
// bytes decoded (zero when go-git read them).
func readIndex(dot billy.Filesystem, s cachedIndexStore) (*index.Index, fileStamp, error) {
	f, err := dot.Open("index")
	if err != nil {
		idx, err := s.Index() // a missing index is an empty one, as go-git has it
		return idx, fileStamp{}, err
	}
	info, err := statOpen(f, dot)
	if err != nil {
		f.Close()
		idx, err := s.Index()
		return idx, fileStamp{}, err
	}
	data := make([]byte, info.Size())
	_, err = io.ReadFull(f, data)
	f.Close()
	if err == nil {
		if idx, ok := decodeIndex(data); ok {
			idx.ModTime = info.ModTime()
			st := fileStamp{size: info.Size(), mtime: info.ModTime(), ino: inodeOf(info)}
			copy(st.sum[:], data[len(data)-20:])
			return idx, st, nil
		}
	}
	idx, err := s.Index()
	return idx, fileStamp{}, err
}

// statOpen is the stat data of an open file (fstat when the file has one).
func statOpen(f billy.File, dot billy.Filesystem) (fs.FileInfo, error) {
	if sf, ok := f.(interface{ Stat() (fs.FileInfo, error) }); ok {
		return sf.Stat()
	}
	return dot.Stat("index")
}

// decodeIndex decodes an index file of version 2 or 3 whose checksum is
// right, as go-git's decoder does; ok is false for anything else (version
// 4, a mandatory extension, a bad checksum, a short file), which go-git
// then reads or refuses. The optional extensions (the cache tree,
// resolve-undo) are skipped: nothing reads them, and the encoder never
// writes them back.
func decodeIndex(data []byte) (*index.Index, bool) {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, false
	}
	ver := binary.BigEndian.Uint32(data[4:])
	if ver != 2 && ver != 3 {
		return nil, false
	}
	body := data[:len(data)-20]
	if sha1.Sum(body) != [20]byte(data[len(data)-20:]) {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(data[8:]))
	if n > len(body)/62 {
		return nil, false
	}
	idx := &index.Index{Version: ver}
	slab := make([]index.Entry, n)
	idx.Entries = make([]*index.Entry, n)
	// The names are substrings of one string of the entries' bytes: one
	// allocation instead of one per entry.
	off := 12
	end := off
	for i := 0; i < n; i++ {
		// Find the end of the entries first (names need the string).
		if end+62 > len(body) {
			return nil, false
		}
		flags := binary.BigEndian.Uint16(body[end+60:])
		hdr := 62
		if flags&0x4000 != 0 {
			hdr += 2
		}
		if end+hdr > len(body) {
			return nil, false
		}
		nl := int(flags & 0xfff)
		if nl == 0xfff {
			z := bytes.IndexByte(body[end+hdr:], 0)
			if z < 0 {
				return nil, false
			}
			nl = z
		}
		size := (hdr + nl + 8) &^ 7
		if end+size > len(body) {
			return nil, false
		}
		end += size
	}
	names := string(body[off:end])
	for i := 0; i < n; i++ {
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
		flags := binary.BigEndian.Uint16(b[60:])
		e.Stage = index.Stage(flags>>12) & 0x3
		hdr := 62
		if flags&0x4000 != 0 {
			ext := binary.BigEndian.Uint16(b[62:])
			e.IntentToAdd = ext&(1<<13) != 0
			e.SkipWorktree = ext&(1<<14) != 0
			hdr += 2
		}
		nl := int(flags & 0xfff)
		if nl == 0xfff {
			nl = bytes.IndexByte(b[hdr:], 0)
		}
		start := off + hdr - 12
		e.Name = names[start : start+nl]
		idx.Entries[i] = e
		off += (hdr + nl + 8) &^ 7
	}
	// Extensions: signature, length, data. An optional one (first letter
	// A-Z) is skipped; a mandatory one is go-git's to refuse.
	for off < len(body) {
		if off+8 > len(body) {
			return nil, false
		}
		sig := body[off]
		l := int(binary.BigEndian.Uint32(body[off+4:]))
		if sig < 'A' || sig > 'Z' || l < 0 || off+8+l > len(body) {
			return nil, false
		}
		off += 8 + l
	}
	return idx, true
}

// save writes the index in place (as go-git does) and keeps it.
func (c *indexCache) save(dot billy.Filesystem, s cachedIndexStore, idx *index.Index) error {
	c.idx = nil
	if idx.Version < 2 || idx.Version > 3 {
		return s.SetIndex(idx)
	}
	b, err := encodeIndex(c.buf[:0], idx)
	if err != nil {
		return err
	}
	c.buf = b
	f, err := dot.OpenFile("index", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	st, ok := stampIndex(dot)
	if !ok {
		return nil
	}
	idx.ModTime = st.mtime
	c.idx, c.stamp = idx, st
	return nil
}

// encodeIndex appends the index file (version 2 or 3, no extensions,
// entries in git's order) to b: byte for byte what go-git's encoder
// writes, without an allocation per entry.
func encodeIndex(b []byte, idx *index.Index) ([]byte, error) {
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
