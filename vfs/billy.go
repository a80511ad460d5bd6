package vfs

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/spf13/afero"
)

// Billy returns a go-billy view of the jail for go-git: its worktree and
// .git live in the same storage, and every path goes through Resolve.
func (f *FS) Billy() billy.Filesystem { return &billyFS{fs: f, base: "."} }

// billyFS is a chrooted billy view; base is relative to the jail's root.
type billyFS struct {
	fs   *FS
	base string
}

var (
	_ billy.Filesystem = (*billyFS)(nil)
	_ billy.Change     = (*billyFS)(nil)
	_ billy.Capable    = (*billyFS)(nil)
)

func (b *billyFS) rel(p string) string {
	// A backslash is an ordinary character in a file name on Unix (git
	// stores such names); only where it is the OS separator is it one here.
	if filepath.Separator == '\\' {
		p = strings.ReplaceAll(p, "\\", "/")
	}
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	if p == "" {
		return b.base
	}
	if b.base == "." {
		return p
	}
	return b.base + "/" + p
}

func (b *billyFS) Capabilities() billy.Capability {
	return billy.WriteCapability | billy.ReadCapability | billy.ReadAndWriteCapability |
		billy.SeekCapability | billy.TruncateCapability
}

func (b *billyFS) Create(filename string) (billy.File, error) {
	return b.OpenFile(filename, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (b *billyFS) Open(filename string) (billy.File, error) {
	return b.OpenFile(filename, os.O_RDONLY, 0)
}

func (b *billyFS) OpenFile(filename string, flag int, perm os.FileMode) (billy.File, error) {
	rel, err := b.fs.resolve("open", b.rel(filename), true)
	if err != nil {
		return nil, err
	}
	if err := b.fs.filled("open", filename, rel); err != nil {
		return nil, err
	}
	if flag&os.O_CREATE != 0 && rel != "." {
		if err := b.fs.store.MkdirAll(b.fs.storage(path.Dir(rel)), b.fs.perm); err != nil {
			return nil, b.fs.pathErr("open", filename, err)
		}
	}
	af, err := b.fs.open(rel, flag, perm)
	if err != nil {
		return nil, b.fs.pathErr("open", filename, err)
	}
	return &billyFile{File: af, name: filename}, nil
}

func (b *billyFS) Stat(filename string) (os.FileInfo, error) { return b.fs.Stat(b.rel(filename)) }

func (b *billyFS) Lstat(filename string) (os.FileInfo, error) { return b.fs.Lstat(b.rel(filename)) }

func (b *billyFS) Rename(oldpath, newpath string) error {
	return b.fs.rename(b.rel(oldpath), b.rel(newpath), false)
}

func (b *billyFS) Remove(filename string) error { return b.fs.Remove(b.rel(filename)) }

func (b *billyFS) Join(elem ...string) string { return path.Join(elem...) }

func (b *billyFS) TempFile(dir, prefix string) (billy.File, error) {
	rel, err := b.fs.resolve("tempfile", b.rel(dir), true)
	if err != nil {
		return nil, err
	}
	if err := b.fs.filled("tempfile", dir, rel); err != nil {
		return nil, err
	}
	if err := b.fs.store.MkdirAll(b.fs.storage(rel), b.fs.perm); err != nil {
		return nil, b.fs.pathErr("tempfile", dir, err)
	}
	af, err := afero.TempFile(b.fs.store, b.fs.storage(rel), prefix)
	if err != nil {
		return nil, b.fs.pathErr("tempfile", dir, err)
	}
	return &billyFile{File: af, name: path.Join(dir, path.Base(af.Name()))}, nil
}

func (b *billyFS) ReadDir(p string) ([]os.FileInfo, error) { return b.fs.ReadDir(b.rel(p)) }

func (b *billyFS) MkdirAll(filename string, perm os.FileMode) error {
	return b.fs.mkdirAll(b.rel(filename), perm, false)
}

// Rename, MkdirAll and Symlink skip git's path rules: go-git writes .git
// itself through this view, and what a checkout may materialize is decided
// by the git layer above it.
func (b *billyFS) Symlink(target, link string) error { return b.fs.symlink(target, b.rel(link), false) }

func (b *billyFS) Readlink(link string) (string, error) { return b.fs.Readlink(b.rel(link)) }

func (b *billyFS) Chroot(p string) (billy.Filesystem, error) {
	rel, err := b.fs.resolve("chroot", b.rel(p), true)
	if err != nil {
		return nil, err
	}
	return &billyFS{fs: b.fs, base: rel}, nil
}

func (b *billyFS) Root() string {
	if b.fs.mem {
		return "/" + strings.TrimPrefix(b.base, ".")
	}
	return b.fs.storage(b.base)
}

func (b *billyFS) Chmod(name string, mode os.FileMode) error {
	rel, err := b.fs.resolve("chmod", b.rel(name), true)
	if err != nil {
		return err
	}
	if err := b.fs.filled("chmod", name, rel); err != nil {
		return err
	}
	return b.fs.pathErr("chmod", name, b.fs.store.Chmod(b.fs.storage(rel), mode))
}

func (b *billyFS) Lchown(name string, uid, gid int) error { return b.Chown(name, uid, gid) }

func (b *billyFS) Chown(name string, uid, gid int) error {
	rel, err := b.fs.resolve("chown", b.rel(name), true)
	if err != nil {
		return err
	}
	if err := b.fs.filled("chown", name, rel); err != nil {
		return err
	}
	return b.fs.pathErr("chown", name, b.fs.store.Chown(b.fs.storage(rel), uid, gid))
}

func (b *billyFS) Chtimes(name string, atime, mtime time.Time) error {
	rel, err := b.fs.resolve("chtimes", b.rel(name), true)
	if err != nil {
		return err
	}
	if err := b.fs.filled("chtimes", name, rel); err != nil {
		return err
	}
	return b.fs.pathErr("chtimes", name, b.fs.store.Chtimes(b.fs.storage(rel), atime, mtime))
}

// billyFile adapts an afero.File; Name is the name the caller used, which
// go-git hands back to Rename.
type billyFile struct {
	afero.File
	name string
}

func (f *billyFile) Name() string { return f.name }

// Lock and Unlock are no-ops: the git backend serialises access with a
// mutex per repository and a file lock across processes.
func (f *billyFile) Lock() error   { return nil }
func (f *billyFile) Unlock() error { return nil }
