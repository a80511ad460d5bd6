//go:build linux

package gitbackend

import (
	"errors"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"
)

// fastWriter writes the files of a checkout beneath an OS root with
// openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS): the kernel refuses any
// path that leaves the root or crosses a link, which is what the jail
// checks component by component (a dozen calls a file), in one call. A
// root with one of those in the way, a directory where the file goes or
// a kernel without openat2 is the general path's (WriteWorktreeFile).
// Replays write every other agent's new files into each root: this is
// most of what that costs.
type fastWriter struct {
	root int
	made map[string]bool // directories known to exist
}

func newFastWriter(wt billy.Filesystem) *fastWriter {
	dir, ok := osPathOf(wt, ".")
	if !ok {
		return nil
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return &fastWriter{root: fd, made: map[string]bool{"": true}}
}

func (w *fastWriter) close() {
	if w != nil {
		unix.Close(w.root)
	}
}

// beneath is the resolution every path here takes.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// write writes a regular file at p (ok false: nothing was done that the
// general path cannot redo; take it).
func (w *fastWriter) write(p string, mode filemode.FileMode, content []byte) (checkoutStat, bool) {
	if w == nil || (mode != filemode.Regular && mode != filemode.Executable && mode != filemode.Deprecated) {
		return checkoutStat{}, false
	}
	perm := uint32(0o644)
	if mode == filemode.Executable {
		perm = 0o755
	}
	how := &unix.OpenHow{Flags: unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC | unix.O_NOFOLLOW | unix.O_CLOEXEC, Mode: uint64(perm), Resolve: uint64(beneath)}
	fd, err := unix.Openat2(w.root, p, how)
	if errors.Is(err, unix.ENOENT) && w.mkdirs(p) {
		fd, err = unix.Openat2(w.root, p, how)
	}
	if err != nil {
		return checkoutStat{}, false
	}
	return fillFile(fd, perm, content)
}

// absent reports whether nothing (no file, link or directory) is at p,
// beneath the root: a checkout may leave p unwritten (lazyFiles). Any
// other answer, a file in the way of a directory included, is the
// checkout's to deal with.
func (w *fastWriter) absent(p string) bool {
	if w == nil {
		return false
	}
	var st unix.Stat_t
	return errors.Is(unix.Fstatat(w.root, p, &st, unix.AT_SYMLINK_NOFOLLOW), unix.ENOENT)
}

// mkdirs makes the missing directories above p, each in its parent
// opened beneath the root (mkdirat follows no link at the name it makes).
func (w *fastWriter) mkdirs(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		dir := p[:i]
		if w.made[dir] {
			continue
		}
		parent, name := "", dir
		if j := strings.LastIndexByte(dir, '/'); j >= 0 {
			parent, name = dir[:j], dir[j+1:]
		}
		pfd := w.root
		if parent != "" {
			fd, err := unix.Openat2(w.root, parent, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: uint64(beneath)})
			if err != nil {
				return false
			}
			defer unix.Close(fd)
			pfd = fd
		}
		if err := unix.Mkdirat(pfd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return false
		}
		w.made[dir] = true
	}
	return true
}
