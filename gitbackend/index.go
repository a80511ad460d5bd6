package gitbackend

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// indexCache keeps the index a persist decoded or wrote, so that the next
// persist updates the entries it changes instead of decoding the whole
// file again. It is valid while .git/index is the file it was read from or
// written as (same size, modification time and inode): a git tool or a
// git CLI that rewrote the index makes it read afresh.
type indexCache struct {
	idx   *index.Index
	stamp fileStamp
	buf   []byte
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
	idx, err := s.Index()
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	// Stamped before the read: if the file changed in between, the stamp
	// is older than the content and the next load reads it again.
	c.stamp = st
	return idx, nil
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
