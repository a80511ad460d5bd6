//go:build unix

package gitbackend

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillStat copies the inode data git compares in its racy-clean check, so
// that `git status` on a root we wrote does not rehash every file.
func fillStat(e *index.Entry, info fs.FileInfo) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		e.Dev, e.Inode = uint32(st.Dev), uint32(st.Ino)
		e.UID, e.GID = st.Uid, st.Gid
	}
}

// inodeOf is the file's inode number (0 when unknown).
func inodeOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// openNoFollow opens a file for reading, refusing a link at its last
// component.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
