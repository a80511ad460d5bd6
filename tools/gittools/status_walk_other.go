//go:build !linux

package gittools

import "github.com/go-git/go-billy/v5"

// newDirSource reads through the billy view (the descriptor-based walk is
// Linux's, status_walk_linux.go).
func newDirSource(wt billy.Filesystem) dirSource { return billySource{fs: wt} }
