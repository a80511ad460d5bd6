//go:build !unix

package gitbackend

import (
	"errors"
	"io/fs"
	"os"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

func fillStat(e *index.Entry, info fs.FileInfo) {}

func inodeOf(info fs.FileInfo) uint64 { return 0 }

// openNoFollow is not used here: objects are read through the storage.
func openNoFollow(string) (*os.File, error) { return nil, errors.ErrUnsupported }
