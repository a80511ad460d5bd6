package gitbackend

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	gogitidx "github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/tgp-go/tgp/internal/gitformat/idxfile"
	"github.com/tgp-go/tgp/internal/gitformat/packfile"
)

// This file is how a persist stores what it creates: the blobs, trees and
// commit of a change are kept in memory (an overlay on the root's store)
// while the change is built, then written as one small pack on each side
// (the root's .git and the remote) instead of one loose file per object.
// Small packs are merged once there are many of them (consolidatePacks),
// as git's gc.autoPackLimit would.

// overlay is the root's store with the objects of the current persist held
// in memory. Reads see the overlay first; everything else (refs, index
// through the repository's cache, config) is the store's own.
type overlay struct {
	*filesystem.Storage
	ix   indexStorage
	objs map[plumbing.Hash]plumbing.EncodedObject
	// pending are the objects set or included since the last flush: the
	// next pack holds exactly them.
	pending   []plumbing.Hash
	inPending map[plumbing.Hash]bool
	// pushable is the last pack written with the commits it completes.
	pushable *segment
	// fetched are objects another agent pushed (the remote has them):
	// they go to the root's pack, not to the remote's; raws are their
	// pack entries as the remote stores them, copied into the root's pack
	// without compressing them again.
	fetched map[plumbing.Hash]bool
	raws    map[plumbing.Hash][]byte
	// packed are the entries of the objects of this persist last packed
	// for a push (packOwn): the root's pack copies them as they are
	// instead of compressing the same objects again.
	packed map[plumbing.Hash][]byte
}

// Raw makes the overlay a packfile.RawSource for the fetched objects and
// those packed for the push.
func (o *overlay) Raw(h plumbing.Hash) ([]byte, bool) {
	if b, ok := o.raws[h]; ok {
		return b, true
	}
	b, ok := o.packed[h]
	return b, ok
}

// segment is a pack holding every object of the commits base..head that
// base's closure lacks: a remote at base needs exactly it.
type segment struct {
	base, head plumbing.Hash
	pack       *packfile.Packed
}

func (r *Repo) newOverlay() *overlay {
	return &overlay{Storage: r.store, ix: indexStorage{c: &r.idx, dot: r.dot, s: r.store},
		objs: map[plumbing.Hash]plumbing.EncodedObject{}, inPending: map[plumbing.Hash]bool{}}
}

// Index and SetIndex go through the repository's index cache.
func (o *overlay) Index() (*index.Index, error)    { return o.ix.Index() }
func (o *overlay) SetIndex(idx *index.Index) error { return o.ix.SetIndex(idx) }

func (o *overlay) add(h plumbing.Hash, obj plumbing.EncodedObject) {
	o.objs[h] = obj
	if !o.inPending[h] {
		o.inPending[h] = true
		o.pending = append(o.pending, h)
	}
}

func (o *overlay) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	if obj.Type() == plumbing.OFSDeltaObject || obj.Type() == plumbing.REFDeltaObject {
		return plumbing.ZeroHash, plumbing.ErrInvalidType
	}
	h := obj.Hash()
	if old, ok := o.objs[h]; ok {
		obj = old
	}
	o.add(h, obj)
	return h, nil
}

func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if obj, ok := o.objs[h]; ok {
		if t != plumbing.AnyObject && obj.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return obj, nil
	}
	return o.Storage.EncodedObject(t, h)
}

func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := o.objs[h]; ok {
		return nil
	}
	return o.Storage.HasEncodedObject(h)
}

func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if obj, ok := o.objs[h]; ok {
		return obj.Size(), nil
	}
	return o.Storage.EncodedObjectSize(h)
}

// addFetched takes objects read from the remote into the next pack of
// the root (not of the push).
func (o *overlay) addFetched(src storer.EncodedObjectStorer, order []plumbing.Hash) error {
	if o.fetched == nil {
		o.fetched = map[plumbing.Hash]bool{}
		o.raws = map[plumbing.Hash][]byte{}
	}
	rs, _ := src.(packfile.RawSource)
	for _, h := range order {
		if _, ok := o.objs[h]; ok {
			continue
		}
		obj, err := src.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return fmt.Errorf("fetch object %s: %w", h, err)
		}
		o.add(h, obj)
		o.fetched[h] = true
		if rs == nil {
			continue
		}
		if b, ok := rs.Raw(h); ok {
			o.raws[h] = append([]byte(nil), b...)
		}
	}
	return nil
}

// include puts an object the store already has into the next pack (a
// replayed change's own blobs, which the remote has never seen).
func (o *overlay) include(h plumbing.Hash) error {
	delete(o.fetched, h) // ours to send after all
	delete(o.raws, h)
	obj, ok := o.objs[h]
	if !ok {
		var err error
		if obj, err = o.Storage.EncodedObject(plumbing.AnyObject, h); err != nil {
			return fmt.Errorf("read object %s: %w", h, err)
		}
	}
	o.add(h, obj)
	return nil
}

// writeLocalPack stores a pack in the root's own store through go-git,
// which indexes it and makes its objects readable at once.
func writeLocalPack(s *filesystem.Storage, p *packfile.Packed) error {
	w, err := s.PackfileWriter()
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if _, err := w.Write(p.Pack); err != nil {
		w.Close()
		return fmt.Errorf("write pack: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	return nil
}

// storePack writes a pack and its index into the root's .git (dot) as
// packfile.WriteFiles does, and makes go-git's store read it at once: go-git
// registers only the packs written through its own PackfileWriter, which
// parses the whole pack again to index it. The writer's registration
// (Notify) is taken and the index we already have handed to it; when
// go-git's writer is not the one expected, its own path is used.
func storePack(s *filesystem.Storage, dot billy.Filesystem, p *packfile.Packed, entries []idxfile.Entry) error {
	// On the root's store the writer's temporary file is one in memory
	// (storeFS): creating a file is most of what a persist costs.
	sf, _ := s.Filesystem().(*storeFS)
	if sf != nil {
		sf.noTemp.Store(true)
	}
	w, err := s.PackfileWriter()
	if sf != nil {
		sf.noTemp.Store(false)
	}
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	pw, ok := w.(*dotgit.PackWriter)
	if !ok || pw.Notify == nil {
		w.Close()
		return writeLocalPack(s, p)
	}
	notify := pw.Notify
	pw.Notify = nil
	if err := pw.Close(); err != nil { // nothing written: its temporary file goes
		return fmt.Errorf("write pack: %w", err)
	}
	base := "objects/pack/pack-" + p.Sum.String()
	put := func(ext string, data []byte) error {
		if _, err := dot.Lstat(base + ext); err == nil {
			return nil // the same objects, already there
		}
		f, err := dot.TempFile("objects/pack", "tmp_pack_")
		if err != nil {
			return err
		}
		tmp := f.Name()
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = dot.Rename(tmp, base+ext)
		}
		if err != nil {
			_ = dot.Remove(tmp)
			return fmt.Errorf("write %s: %w", base+ext, err)
		}
		return nil
	}
	if err := put(".idx", p.Idx); err != nil {
		return err
	}
	if err := put(".pack", p.Pack); err != nil {
		return err
	}
	iw := new(gogitidx.Writer)
	if err := iw.OnHeader(uint32(len(entries))); err != nil {
		return err
	}
	for _, e := range entries {
		iw.Add(e.Hash, e.Offset, e.CRC32)
	}
	if err := iw.OnFooter(p.Sum); err != nil {
		return err
	}
	notify(p.Sum, iw)
	return nil
}

// flushOverlay writes the overlay's objects not yet on disk as one pack in
// the root's store and returns it (nil when there was nothing to write).
func (r *Repo) flushOverlay() (*packfile.Packed, error) {
	o := r.ov
	if o == nil || len(o.pending) == 0 {
		return nil, nil
	}
	if len(o.fetched) == 0 {
		p, err := r.packer.Encode(o, o.pending)
		if err != nil {
			return nil, err
		}
		return p, r.storeOverlay(p)
	}
	// The pack for the remote: without what it sent us.
	p, err := r.packOwn()
	if err != nil {
		return nil, err
	}
	return p, r.writeOverlay()
}

// packOwn packs the overlay's objects not yet on disk that the remote
// did not send (nil when none): what a push brings. Nothing is written.
func (r *Repo) packOwn() (*packfile.Packed, error) {
	o := r.ov
	if o == nil {
		return nil, nil
	}
	own := make([]plumbing.Hash, 0, len(o.pending))
	for _, h := range o.pending {
		if !o.fetched[h] {
			own = append(own, h)
		}
	}
	if len(own) == 0 {
		return nil, nil
	}
	p, err := r.packer.Encode(o, own)
	if err != nil {
		return nil, err
	}
	o.packed = packEntries(p)
	return p, nil
}

// writeOverlay writes the overlay's objects not yet on disk as one pack
// in the root's store.
func (r *Repo) writeOverlay() error {
	o := r.ov
	if o == nil || len(o.pending) == 0 {
		return nil
	}
	p, err := r.packer.Encode(o, o.pending)
	if err != nil {
		return err
	}
	return r.storeOverlay(p)
}

// storeOverlay stores p, the pack of every pending object the packer
// just encoded, in the root; the overlay then has nothing pending.
func (r *Repo) storeOverlay(p *packfile.Packed) error {
	o := r.ov
	if err := storePack(r.store, r.dot, p, r.packer.Entries()); err != nil {
		return err
	}
	clear(o.fetched)
	clear(o.raws)
	o.packed = nil
	o.pending = nil
	clear(o.inPending)
	// Look at the pack directory every few packs, not on every persist.
	if r.packsWritten++; r.packsWritten%(maxSmallPacks/2) != 0 {
		return nil
	}
	merged, err := consolidatePacks(r.dot, r.store, &r.packer, r.storeMerged)
	if err != nil {
		r.progressf("warning: %v", err) // the packs stay as they are: still a valid store
	}
	if merged {
		// Drop the handles and the index of the packs just removed.
		_ = r.store.Close()
		r.store.Reindex()
	}
	return nil
}

// storeMerged writes a pack consolidatePacks merged, with the index the
// merge made: go-git's PackfileWriter would inflate and hash every object
// of it again to make its own (the store is read afresh after a merge).
func (r *Repo) storeMerged(p *packfile.Packed) error {
	return storePack(r.store, r.dot, p, r.packer.Entries())
}

// Packs are merged once more than maxSmallPacks of them are under
// smallPackSize, geometrically (as git repack --geometric=2): the smallest
// packs are merged until every pack left is at least twice the size of
// all the smaller ones together, so each object is rewritten O(log n)
// times and readers look objects up in a bounded number of indexes.
const (
	maxSmallPacks = 16
	smallPackSize = 16 << 20
)

type packFile struct {
	base string // objects/pack/pack-<sum>, without extension
	size int64
}

// smallPacks lists the packs of objects/pack that may be merged (no .keep
// or .promisor file, an index next to them), smallest first.
func smallPacks(fs billy.Filesystem) ([]packFile, error) {
	dir := "objects/pack"
	ents, err := fs.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name()] = true
	}
	var out []packFile
	for _, e := range ents {
		n := e.Name()
		if path.Ext(n) != ".pack" || len(n) != len("pack-")+40+len(".pack") || e.Size() >= smallPackSize {
			continue
		}
		base := n[:len(n)-len(".pack")]
		if names[base+".keep"] || names[base+".promisor"] || !names[base+".idx"] {
			continue
		}
		out = append(out, packFile{base: dir + "/" + base, size: e.Size()})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].size < out[j].size || out[i].size == out[j].size && out[i].base < out[j].base
	})
	return out, nil
}

// geometricPrefix is how many of the packs (smallest first) to merge: the
// packs after them each outweigh twice all the smaller ones, and at most
// maxSmallPacks stay.
func geometricPrefix(packs []packFile) int {
	k := 0
	var total int64
	for i, p := range packs {
		if i > 0 && p.size < 2*total {
			k = i + 1
		}
		total += p.size
	}
	if min := len(packs) - maxSmallPacks + 1; k < min {
		k = min
	}
	if k < 2 {
		return 0
	}
	return k
}

// consolidatePacks merges the small packs of the git directory fs when
// there are too many: the merged pack is written (by write) before any
// small pack is removed, so every object stays readable throughout; a
// reader that listed a removed pack finds its objects in the merged one
// when it looks again. Another process merging at the same time makes this
// one stand down (objects/pack/tgp-repack.lock). It reports whether it
// merged.
func consolidatePacks(fs billy.Filesystem, src packfile.ObjectSource, enc *packfile.Encoder, write func(*packfile.Packed) error) (bool, error) {
	small, err := smallPacks(fs)
	if err != nil || len(small) <= maxSmallPacks {
		return false, err
	}
	small = small[:geometricPrefix(small)]
	if len(small) < 2 {
		return false, nil
	}
	lock := "objects/pack/tgp-repack.lock"
	f, err := fs.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if fi, serr := fs.Stat(lock); serr == nil && time.Since(fi.ModTime()) > staleLockAge {
			_ = fs.Remove(lock) // left by a dead process; the next persist merges
		}
		return false, nil
	}
	f.Close()
	defer fs.Remove(lock)
	bases := make([]string, len(small))
	for i, sp := range small {
		bases[i] = sp.base
	}
	p, err := enc.Merge(fs, bases, src)
	if err != nil {
		return false, fmt.Errorf("consolidate packs: %w", err)
	}
	if err := write(p); err != nil {
		return false, fmt.Errorf("consolidate packs: %w", err)
	}
	merged := "objects/pack/pack-" + p.Sum.String()
	for _, sp := range small {
		base := sp.base
		if base == merged {
			continue
		}
		// The .pack first: git lists packs by their .idx and skips one
		// whose .pack is gone; go-git lists them by their .pack.
		for _, ext := range []string{".pack", ".rev", ".idx"} {
			_ = fs.Remove(base + ext)
		}
	}
	return true, nil
}

// storeFS is the root's .git as its go-git store sees it. storePack asks
// go-git's PackfileWriter only for the store's registration of a pack it
// writes itself, and closes the writer unused: while noTemp is set, the
// writer's temporary file is an empty one in memory, not a file created
// and removed in objects/pack.
type storeFS struct {
	billy.Filesystem
	noTemp atomic.Bool
	// temps counts the temporary files made on disk (for the tests).
	temps atomic.Int64
}

// noTempName marks the writer's file in memory.
const noTempName = "objects/pack/tmp_pack_tgp-in-memory"

func (f *storeFS) TempFile(dir, prefix string) (billy.File, error) {
	if f.noTemp.Load() && prefix == "tmp_pack_" && path.Clean(dir) == "objects/pack" {
		return emptyFile(noTempName), nil
	}
	f.temps.Add(1)
	return f.Filesystem.TempFile(dir, prefix)
}

func (f *storeFS) Open(name string) (billy.File, error) {
	if name == noTempName {
		return emptyFile(noTempName), nil
	}
	return f.Filesystem.Open(name)
}

func (f *storeFS) Remove(name string) error {
	if name == noTempName {
		return nil
	}
	return f.Filesystem.Remove(name)
}

// Capabilities and Chmod are the directory's own.
func (f *storeFS) Capabilities() billy.Capability { return billy.Capabilities(f.Filesystem) }

func (f *storeFS) Chmod(name string, mode os.FileMode) error {
	if c, ok := f.Filesystem.(billy.Chmod); ok {
		return c.Chmod(name, mode)
	}
	return nil
}

// emptyFile is an empty file in memory that refuses writes.
type emptyFile string

func (e emptyFile) Name() string                      { return string(e) }
func (e emptyFile) Write([]byte) (int, error)         { return 0, errors.New("write to a file in memory") }
func (e emptyFile) Read([]byte) (int, error)          { return 0, io.EOF }
func (e emptyFile) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (e emptyFile) Seek(int64, int) (int64, error)    { return 0, nil }
func (e emptyFile) Close() error                      { return nil }
func (e emptyFile) Lock() error                       { return nil }
func (e emptyFile) Unlock() error                     { return nil }
func (e emptyFile) Truncate(int64) error              { return nil }
