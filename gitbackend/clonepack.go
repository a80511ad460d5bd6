package gitbackend

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// This file is how a fresh root gets the objects of a local remote: what
// `git clone file://` gets, one pack of everything the remote's branches
// and tags reach, with its deltas, and its .idx. upload-pack's
// pack-objects reuses the deltas it has; index-pack then inflates and
// hashes every object to index them. Here the pack entries are copied as
// they are stored (only an offset delta's distance to its base is written
// again), each checked against the CRC-32 the remote's .idx records for
// it, and the .idx is written from the hashes the walk already knows: no
// object is inflated but the commits and trees the walk reads.

// cloneObj is one object of the closure: where the remote stores it.
type cloneObj struct {
	h    plumbing.Hash
	pack int // index into the reader's packs; -1: not packed (loose)
	pos  int // its position in the pack's .idx
	off  uint64
}

// walkedCommit is what the commit-graph needs of a commit read by a walk.
type walkedCommit struct {
	h, tree plumbing.Hash
	parents []plumbing.Hash
	time    int64
}

// cloneWalk lists the closure of some tips in the remote's packs.
type cloneWalk struct {
	ctx      context.Context
	pr       *packReader
	dr       *deltaReader
	fallback *filesystem.Storage // loose objects
	seen     map[plumbing.Hash]bool
	objs     []cloneObj
	commits  []walkedCommit
	// shallow: commits whose parents the remote lacks (it is shallow).
	shallow []plumbing.Hash
	// commitsOnly walks the commits and not their trees (for a
	// commit-graph of a store that has everything already).
	commitsOnly bool
}

func newCloneWalk(ctx context.Context, pr *packReader, fallback *filesystem.Storage) *cloneWalk {
	return &cloneWalk{ctx: ctx, pr: pr, dr: newDeltaReader(pr, 64<<20), fallback: fallback, seen: map[plumbing.Hash]bool{}}
}

// locate records h as part of the closure (false when it already was).
func (w *cloneWalk) locate(h plumbing.Hash) bool {
	if w.seen[h] {
		return false
	}
	w.seen[h] = true
	o := cloneObj{h: h, pack: -1}
	if pi, pos, off, ok := w.pr.locate(h); ok {
		o.pack, o.pos, o.off = pi, pos, off
	}
	w.objs = append(w.objs, o)
	return true
}

// read is an object's type and bytes (shared: not to be changed).
func (w *cloneWalk) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	t, b, err := w.dr.read(h)
	if !errors.Is(err, errNotPacked) {
		return t, b, err
	}
	if w.fallback == nil {
		return 0, nil, plumbing.ErrObjectNotFound
	}
	obj, err := w.fallback.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return 0, nil, err
	}
	defer rd.Close()
	b, err = io.ReadAll(rd)
	return obj.Type(), b, err
}

// has reports whether the remote has h.
func (w *cloneWalk) has(h plumbing.Hash) bool {
	if _, _, ok := w.pr.find(h); ok {
		return true
	}
	return w.fallback != nil && w.fallback.HasEncodedObject(h) == nil
}

// try is add for a ref the clone can do without: on failure what it
// added is taken back.
func (w *cloneWalk) try(h plumbing.Hash) {
	nObjs, nCommits, nShallow := len(w.objs), len(w.commits), len(w.shallow)
	if err := w.add(h); err != nil {
		for _, o := range w.objs[nObjs:] {
			delete(w.seen, o.h)
		}
		w.objs, w.commits, w.shallow = w.objs[:nObjs], w.commits[:nCommits], w.shallow[:nShallow]
	}
}

// add walks the closure of a ref's target (a commit, an annotated tag, a
// tree or a blob).
func (w *cloneWalk) add(h plumbing.Hash) error {
	for depth := 0; depth < 16; depth++ {
		if w.seen[h] {
			return nil
		}
		t, data, err := w.read(h)
		if err != nil {
			return fmt.Errorf("read %s: %w", h, err)
		}
		switch t {
		case plumbing.CommitObject:
			return w.commitsFrom(h)
		case plumbing.TreeObject:
			return w.tree(h)
		case plumbing.TagObject:
			w.locate(h)
			target, ok := tagTarget(data)
			if !ok {
				return fmt.Errorf("tag %s: no object line", h)
			}
			h = target
		default:
			w.locate(h)
			return nil
		}
	}
	return errors.New("tag chain too deep")
}

// commitsFrom walks the history from tip, then the trees of the commits
// it found (newest first: the newest versions are the delta bases).
func (w *cloneWalk) commitsFrom(tip plumbing.Hash) error {
	first := len(w.commits)
	stack := []plumbing.Hash{tip}
	w.locate(tip)
	for len(stack) > 0 {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t, data, err := w.read(h)
		if err != nil {
			return fmt.Errorf("read commit %s: %w", h, err)
		}
		if t != plumbing.CommitObject {
			return fmt.Errorf("read commit %s: a %s", h, t)
		}
		c, ok := parseCommitHeader(data)
		if !ok {
			return fmt.Errorf("read commit %s: malformed", h)
		}
		c.h = h
		w.commits = append(w.commits, c)
		for i := len(c.parents) - 1; i >= 0; i-- {
			p := c.parents[i]
			if w.seen[p] {
				continue
			}
			if !w.has(p) {
				w.shallow = append(w.shallow, h) // the remote is shallow here: so are we
				continue
			}
			w.locate(p)
			stack = append(stack, p)
		}
	}
	for _, c := range w.commits[first:] {
		if w.commitsOnly {
			break
		}
		if err := w.tree(c.tree); err != nil {
			return err
		}
	}
	return nil
}

// tree walks a tree and everything below it.
func (w *cloneWalk) tree(root plumbing.Hash) error {
	if !w.locate(root) {
		return nil
	}
	stack := []plumbing.Hash{root}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t, data, err := w.read(h)
		if err != nil {
			return fmt.Errorf("read tree %s: %w", h, err)
		}
		if t != plumbing.TreeObject {
			return fmt.Errorf("read tree %s: a %s", h, t)
		}
		for len(data) > 0 {
			mode, _, eh, rest, ok := nextTreeEntry(data)
			if !ok {
				return fmt.Errorf("read tree %s: malformed entry", h)
			}
			data = rest
			switch {
			case mode == filemode.Dir:
				if w.locate(eh) {
					stack = append(stack, eh)
				}
			case mode == filemode.Submodule:
				// a commit of another repository
			default:
				w.locate(eh)
			}
		}
	}
	return nil
}

// nextTreeEntry reads "<mode> <name>\0<hash>" off a raw tree.
func nextTreeEntry(data []byte) (filemode.FileMode, []byte, plumbing.Hash, []byte, bool) {
	var h plumbing.Hash
	sp := bytes.IndexByte(data, ' ')
	if sp <= 0 {
		return 0, nil, h, nil, false
	}
	nul := bytes.IndexByte(data[sp+1:], 0)
	if nul < 0 || sp+1+nul+21 > len(data) {
		return 0, nil, h, nil, false
	}
	var m uint32
	for _, c := range data[:sp] {
		if c < '0' || c > '7' {
			return 0, nil, h, nil, false
		}
		m = m<<3 | uint32(c-'0')
	}
	name := data[sp+1 : sp+1+nul]
	copy(h[:], data[sp+1+nul+1:])
	return filemode.FileMode(m), name, h, data[sp+1+nul+21:], true
}

// parseCommitHeader reads a commit's tree, parents and committer time
// as git's parse_commit_buffer does (a committer line it cannot read
// gives time 0).
func parseCommitHeader(data []byte) (walkedCommit, bool) {
	var c walkedCommit
	line := func() ([]byte, []byte, bool) {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return nil, nil, false
		}
		l := data[:nl]
		data = data[nl+1:]
		k, v, _ := bytes.Cut(l, []byte{' '})
		return k, v, true
	}
	k, v, ok := line()
	if !ok || string(k) != "tree" || !hexHash(v, &c.tree) {
		return c, false
	}
	for {
		if k, v, ok = line(); !ok {
			return c, true // no committer: time 0
		}
		if string(k) != "parent" {
			break
		}
		var p plumbing.Hash
		if !hexHash(v, &p) {
			return c, false
		}
		c.parents = append(c.parents, p)
	}
	for ; ok && len(k) > 0; k, v, ok = line() {
		if string(k) != "committer" {
			continue
		}
		if gt := bytes.LastIndexByte(v, '>'); gt >= 0 {
			t := bytes.TrimLeft(v[gt+1:], " ")
			if sp := bytes.IndexByte(t, ' '); sp >= 0 {
				t = t[:sp]
			}
			if n, err := strconv.ParseUint(string(t), 10, 64); err == nil {
				c.time = int64(n)
			}
		}
		break
	}
	return c, true
}

func hexHash(b []byte, h *plumbing.Hash) bool {
	if len(b) != 40 {
		return false
	}
	for i := 0; i < 20; i++ {
		hi, ok1 := unhexDigit(b[2*i])
		lo, ok2 := unhexDigit(b[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		h[i] = hi<<4 | lo
	}
	return true
}

func unhexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// tagTarget is the "object" line of an annotated tag.
func tagTarget(data []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	v, ok := bytes.CutPrefix(data, []byte("object "))
	if !ok || len(v) < 40 {
		return h, false
	}
	return h, hexHash(v[:40], &h)
}

// sortedOffsets lists a pack's entry offsets in order (the end of an
// entry is the next one's start, or the trailing checksum).
func sortedOffsets(p *readPack) []uint64 {
	offs := make([]uint64, p.n)
	for i := range offs {
		offs[i] = p.offsetAt(i)
	}
	slices.Sort(offs)
	return offs
}

// writeClonePack packs w's objects: entries copied as the remote stores
// them, in its order (so an offset delta's base is always written
// first), an offset delta's distance written again, a delta whose base
// is not in the closure written as its whole object. Every entry copied
// is checked against its .idx CRC-32.
func (w *cloneWalk) writeClonePack() (*packed, []packEntry, error) {
	objs := w.objs
	slices.SortFunc(objs, func(a, b cloneObj) int {
		if a.pack != b.pack {
			// loose ones (-1) last
			if a.pack < 0 || b.pack < 0 {
				return b.pack - a.pack
			}
			return a.pack - b.pack
		}
		switch {
		case a.off < b.off:
			return -1
		case a.off > b.off:
			return 1
		}
		return 0
	})
	total := 12 + 20
	for _, p := range w.pr.packs {
		total += len(p.data)
	}
	out := bytes.NewBuffer(make([]byte, 0, total))
	var hdr [12]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(objs)))
	out.Write(hdr[:])
	ents := make([]packEntry, 0, len(objs))
	var zw *zlib.Writer
	whole := func(h plumbing.Hash) error {
		t, data, err := w.read(h)
		if err != nil {
			return fmt.Errorf("pack %s: %w", h, err)
		}
		writeEntryHeader(out, t, int64(len(data)))
		if zw == nil {
			zw, _ = zlib.NewWriterLevel(out, zlib.BestSpeed)
		} else {
			zw.Reset(out)
		}
		if _, err := zw.Write(data); err != nil {
			return err
		}
		return zw.Close()
	}
	curPack := -2
	var offs []uint64
	newOff := map[uint64]uint64{} // source offset → ours, in the current pack
	for _, o := range objs {
		at := uint64(out.Len())
		if o.pack < 0 {
			if err := whole(o.h); err != nil {
				return nil, nil, err
			}
			ents = append(ents, packEntry{h: o.h, off: at, crc: crc32.ChecksumIEEE(out.Bytes()[at:])})
			continue
		}
		p := w.pr.packs[o.pack]
		if o.pack != curPack {
			curPack, offs = o.pack, sortedOffsets(p)
			clear(newOff)
		}
		i, _ := slices.BinarySearch(offs, o.off)
		end := uint64(len(p.data) - 20)
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		if o.off >= end || end > uint64(len(p.data)) {
			return nil, nil, fmt.Errorf("%s.pack: bad entry bounds at %d", p.path, o.off)
		}
		raw := p.data[o.off:end]
		if crc32.ChecksumIEEE(raw) != p.crcAt(o.pos) {
			return nil, nil, fmt.Errorf("%s.pack: entry of %s at %d does not match its CRC-32: the remote's pack is damaged", p.path, o.h, o.off)
		}
		n := 0 // the type and size header
		for n < len(raw) && raw[n]&0x80 != 0 {
			n++
		}
		n++
		if n > len(raw) {
			return nil, nil, fmt.Errorf("%s.pack: bad entry header at %d", p.path, o.off)
		}
		switch plumbing.ObjectType((raw[0] >> 4) & 7) {
		case plumbing.OFSDeltaObject:
			rel, m := uint64(raw[n]&0x7f), n
			for raw[m]&0x80 != 0 {
				m++
				if m >= len(raw) {
					return nil, nil, fmt.Errorf("%s.pack: bad delta offset at %d", p.path, o.off)
				}
				rel = (rel+1)<<7 | uint64(raw[m]&0x7f)
			}
			m++
			var nb uint64
			ok := rel != 0 && rel <= o.off
			if ok {
				nb, ok = newOff[o.off-rel]
			}
			if !ok {
				if err := whole(o.h); err != nil {
					return nil, nil, err
				}
				break
			}
			out.Write(raw[:n])
			writeOfsDelta(out, at-nb)
			out.Write(raw[m:])
		case plumbing.REFDeltaObject:
			var base plumbing.Hash
			if len(raw) < n+20 {
				return nil, nil, fmt.Errorf("%s.pack: bad delta at %d", p.path, o.off)
			}
			copy(base[:], raw[n:])
			if !w.seen[base] {
				if err := whole(o.h); err != nil {
					return nil, nil, err
				}
				break
			}
			out.Write(raw)
		default:
			out.Write(raw)
		}
		newOff[o.off] = at
		ents = append(ents, packEntry{h: o.h, off: at, crc: crc32.ChecksumIEEE(out.Bytes()[at:])})
	}
	sum := sha1.Sum(out.Bytes())
	out.Write(sum[:])
	hashes := make([]plumbing.Hash, len(objs))
	for i, o := range objs {
		hashes[i] = o.h
	}
	p := &packed{sum: plumbing.Hash(sum), pack: out.Bytes(), hashes: hashes}
	p.idx = encodeIdx(ents, p.sum)
	return p, ents, nil
}

// writeOfsDelta is an offset delta's distance to its base (git's
// encoding: big-endian groups of 7 bits, each but the last minus one).
func writeOfsDelta(out *bytes.Buffer, ofs uint64) {
	var b [10]byte
	pos := len(b) - 1
	b[pos] = byte(ofs & 127)
	for ofs >>= 7; ofs != 0; ofs >>= 7 {
		ofs--
		pos--
		b[pos] = 128 | byte(ofs&127)
	}
	out.Write(b[pos:])
}

// loadWhole reads every pack of pr whole into memory (the clone copies
// from all of them).
func (pr *packReader) loadWhole() error {
	for _, p := range pr.packs {
		if p.data != nil {
			continue
		}
		if p.f != nil {
			p.f.Close()
			p.f = nil
		}
		b, err := os.ReadFile(p.path + ".pack")
		if err != nil {
			return err
		}
		if len(b) < 32 {
			return fmt.Errorf("%s.pack: too short", p.path)
		}
		p.data, p.size = b, int64(len(b))
	}
	return nil
}
