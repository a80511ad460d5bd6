package receive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// quarantine is git's tmp_objdir (tmp-objdir.c): the objects a push brings
// wait in objects/tmp_objdir-incoming-XXXXXX, visible to the remote's hooks
// through GIT_OBJECT_DIRECTORY and GIT_ALTERNATE_OBJECT_DIRECTORIES, and
// reach the real object store only once the remote's policy accepted the
// push. A refused push removes the directory, so nothing it brought stays
// on the remote.
type quarantine struct {
	dir     string          // the quarantine objects directory
	objects string          // the remote's real objects directory
	shared  int             // core.sharedRepository (see adjustSharedPerm)
	made    map[string]bool // fan-out directories made in dir
}

func newQuarantine(gitdir string, shared int) (*quarantine, error) {
	objects := filepath.Join(gitdir, "objects")
	dir, err := os.MkdirTemp(objects, "tmp_objdir-incoming-")
	if err != nil {
		return nil, fmt.Errorf("create quarantine in %s: %w", objects, err)
	}
	return &quarantine{dir: dir, objects: objects, shared: shared, made: map[string]bool{}}, nil
}

// env is what git's tmp_objdir_env gives the hooks.
func (q *quarantine) env() []string {
	alt := q.objects
	if old := os.Getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES"); old != "" {
		alt += string(os.PathListSeparator) + old
	}
	return []string{
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + alt,
		"GIT_OBJECT_DIRECTORY=" + q.dir,
		"GIT_QUARANTINE_PATH=" + q.dir,
	}
}

// remove throws the quarantined objects away.
func (q *quarantine) remove() {
	if q != nil {
		_ = os.RemoveAll(q.dir)
	}
}

// write stores the objects (children first) in the quarantine: as loose
// objects, or as one packfile with its index (receive-pack's choice
// between unpack-objects and index-pack, by receive.unpackLimit).
func (q *quarantine) write(ctx context.Context, src storer.EncodedObjectStorer, hashes []plumbing.Hash, pack bool) error {
	if pack && len(hashes) > 0 {
		return q.writePack(src, hashes)
	}
	for _, h := range hashes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := q.writeLoose(src, h); err != nil {
			return err
		}
	}
	return nil
}

func (q *quarantine) writeLoose(src storer.EncodedObjectStorer, h plumbing.Hash) error {
	o, err := src.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return fmt.Errorf("read object %s: %w", h, err)
	}
	hex := h.String()
	dir := filepath.Join(q.dir, hex[:2])
	if !q.made[dir] {
		// The quarantine starts empty: one mkdir, no stat.
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("write object %s: %w", h, err)
		}
		q.made[dir] = true
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return fmt.Errorf("write object %s: %w", h, err)
	}
	werr := func() error {
		w := objfile.NewWriter(f)
		if err := w.WriteHeader(o.Type(), o.Size()); err != nil {
			return err
		}
		r, err := o.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		if _, err := io.Copy(w, r); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		if w.Hash() != h {
			return fmt.Errorf("content hashes to %s", w.Hash())
		}
		return nil // no fsync: git's default (core.fsyncObjectFiles off)
	}()
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), filepath.Join(dir, hex[2:]))
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write object %s: %w", h, werr)
	}
	_ = os.Chmod(filepath.Join(dir, hex[2:]), 0o444)
	return nil
}

func (q *quarantine) writePack(src storer.EncodedObjectStorer, hashes []plumbing.Hash) error {
	packDir := filepath.Join(q.dir, "pack")
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	f, err := os.CreateTemp(packDir, "tmp_pack_")
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	defer f.Close()
	sum, err := packfile.NewEncoder(f, src, false).Encode(hashes, 0)
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	// Index it the way index-pack does: parse what was written.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("index pack: %w", err)
	}
	iw := new(idxfile.Writer)
	parser, err := packfile.NewParser(packfile.NewScanner(f), iw)
	if err != nil {
		return fmt.Errorf("index pack: %w", err)
	}
	if _, err := parser.Parse(); err != nil {
		return fmt.Errorf("index pack: %w", err)
	}
	idx, err := iw.Index()
	if err != nil {
		return fmt.Errorf("index pack: %w", err)
	}
	base := filepath.Join(packDir, "pack-"+sum.String())
	xf, err := os.Create(base + ".idx.tmp")
	if err != nil {
		return fmt.Errorf("index pack: %w", err)
	}
	if _, err := idxfile.NewEncoder(xf).Encode(idx); err != nil {
		xf.Close()
		return fmt.Errorf("index pack: %w", err)
	}
	if err := xf.Close(); err != nil {
		return fmt.Errorf("index pack: %w", err)
	}
	// Read-only like the packs index-pack writes.
	_ = os.Chmod(f.Name(), 0o444)
	_ = os.Chmod(base+".idx.tmp", 0o444)
	if err := os.Rename(f.Name(), base+".pack"); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if err := os.Rename(base+".idx.tmp", base+".idx"); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	return nil
}

// migrate moves the quarantined objects into the real store the way
// tmp_objdir_migrate does: loose objects and pack data before the pack
// indexes (a reader trusts a pack once its .idx exists), an object the
// store already has left as it is. The quarantine is removed afterwards.
func (q *quarantine) migrate() error {
	var files []string
	err := filepath.WalkDir(q.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(q.dir, p)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate quarantined objects: %w", err)
	}
	prio := func(rel string) int {
		switch {
		case strings.HasSuffix(rel, ".idx"):
			return 2
		case strings.HasSuffix(rel, ".pack"):
			return 1
		}
		return 0
	}
	sort.SliceStable(files, func(i, j int) bool { return prio(files[i]) < prio(files[j]) })
	ready := map[string]bool{}
	for _, rel := range files {
		if strings.HasPrefix(filepath.Base(rel), "tmp_") || strings.HasSuffix(rel, ".tmp") {
			continue // a write that did not finish
		}
		src, dst := filepath.Join(q.dir, rel), filepath.Join(q.objects, rel)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if d := filepath.Dir(dst); !ready[d] {
			if err := mkdirShared(d, q.objects, q.shared); err != nil {
				return fmt.Errorf("migrate %s: %w", rel, err)
			}
			ready[d] = true
		}
		if err := os.Rename(src, dst); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("migrate %s: %w", rel, err)
		}
		if err := adjustSharedPerm(dst, q.shared); err != nil {
			return fmt.Errorf("migrate %s: %w", rel, err)
		}
	}
	q.remove()
	return nil
}
