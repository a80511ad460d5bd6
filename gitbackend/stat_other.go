//go:build !unix

package gitbackend

import (
	"io/fs"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

func fillStat(e *index.Entry, info fs.FileInfo) {}

func inodeOf(info fs.FileInfo) uint64 { return 0 }
