package gitbackend

import (
	"context"

	"github.com/tgp-go/tgp/internal/xdiff"
)

// mergeFile merges one path a replay finds changed on both sides exactly
// as `git merge-file ours base theirs` does: xdl_merge (internal/xdiff) at
// level zealous_alnum with the default (Myers) diff and the plain conflict
// style. It returns the merged bytes and the number of conflicts (the
// bytes then hold git's markers, labelled ours/base/theirs). Binary
// content (a NUL in the first 8000 bytes) is never merged: git refuses
// it, and so the path is one conflict.
func mergeFile(ctx context.Context, base, ours, theirs []byte) ([]byte, int, error) {
	if xdiff.IsBinary(base) || xdiff.IsBinary(ours) || xdiff.IsBinary(theirs) {
		return nil, 1, nil
	}
	return xdiff.Merge(ctx, base, ours, theirs, xdiff.MergeParams{
		Level: xdiff.LevelZealousAlnum, Style: xdiff.StyleMerge,
		Name1: "ours", Ancestor: "base", Name2: "theirs",
	})
}
