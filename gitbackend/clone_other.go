//go:build !linux

package gitbackend

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing/storer"
)

// checkoutFresh is the descriptor-based checkout of clone_linux.go; here
// checkoutAll does the work.
func checkoutFresh(context.Context, storer.EncodedObjectStorer, func() blobReader, string, []checkoutEntry, []string) ([]checkoutStat, bool, error) {
	return nil, false, nil
}
