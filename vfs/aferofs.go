package vfs

import (
	"os"
	"path"
	"time"

	"github.com/spf13/afero"
)

// Afero returns the jail as an afero.Fs: every path goes through Resolve.
func (f *FS) Afero() afero.Fs { return jailedAfero{f} }

type jailedAfero struct{ fs *FS }

var _ afero.Fs = jailedAfero{}

func (j jailedAfero) Name() string { return "tgp-vfs" }

func (j jailedAfero) Create(name string) (afero.File, error) {
	return j.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (j jailedAfero) Mkdir(name string, perm os.FileMode) error {
	rel, err := j.fs.resolve("mkdir", name, true)
	if err != nil {
		return err
	}
	if err := j.fs.filled("mkdir", name, rel); err != nil {
		return err
	}
	return j.fs.pathErr("mkdir", name, j.fs.store.Mkdir(j.fs.storage(rel), perm))
}

func (j jailedAfero) MkdirAll(name string, perm os.FileMode) error { return j.fs.MkdirAll(name, perm) }

func (j jailedAfero) Open(name string) (afero.File, error) { return j.OpenFile(name, os.O_RDONLY, 0) }

func (j jailedAfero) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	rel, err := j.fs.resolve("open", name, true)
	if err != nil {
		return nil, err
	}
	if err := j.fs.filled("open", name, rel); err != nil {
		return nil, err
	}
	if flag&os.O_CREATE != 0 && rel != "." {
		if err := j.fs.store.MkdirAll(j.fs.storage(path.Dir(rel)), j.fs.perm); err != nil {
			return nil, j.fs.pathErr("open", name, err)
		}
	}
	af, err := j.fs.open(rel, flag, perm)
	return af, j.fs.pathErr("open", name, err)
}

func (j jailedAfero) Remove(name string) error    { return j.fs.Remove(name) }
func (j jailedAfero) RemoveAll(name string) error { return j.fs.RemoveAll(name) }
func (j jailedAfero) Rename(o, n string) error    { return j.fs.Rename(o, n) }
func (j jailedAfero) Stat(name string) (os.FileInfo, error) {
	return j.fs.Stat(name)
}

func (j jailedAfero) Chmod(name string, mode os.FileMode) error {
	return (&billyFS{fs: j.fs, base: "."}).Chmod(name, mode)
}

func (j jailedAfero) Chown(name string, uid, gid int) error {
	return (&billyFS{fs: j.fs, base: "."}).Chown(name, uid, gid)
}

func (j jailedAfero) Chtimes(name string, atime, mtime time.Time) error {
	return (&billyFS{fs: j.fs, base: "."}).Chtimes(name, atime, mtime)
}
