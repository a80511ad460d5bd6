//go:build !linux

package gittools

import (
	"io/fs"

	"github.com/go-git/go-billy/v5"
)

// newDirSource reads through the billy view (the descriptor-based walk is
// Linux's, status_walk_linux.go).
func newDirSource(wt billy.Filesystem) dirSource { return billySource{fs: wt} }

// sysStat leaves ctime, inode and owner unknown off Linux: an
// assume-unchanged entry is then compared by size, mtime and mode only.
func sysStat(fs.FileInfo, *wstat) {}
