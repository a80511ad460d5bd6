// Package diffcore is git's rename and copy detection (diffcore-rename.c)
// with its similarity estimate (diffcore-delta.c): content is cut into
// chunks, the chunks hashed and counted, and a source scores the bytes of
// its chunks found again in the destination over the larger size. Every
// command that pairs a deleted or copied file with an added one (diff,
// status, show, stash, log --follow, blame) scores and ranks its
// candidates here, so they pair files the way git does: identical
// contents first (Identical), then, for renames, unique basenames
// (BasenameMatches), then the best candidates by similarity (Best, Rank).
//
// Scores run from 0 to MaxScore; git's -M50% is DefaultScore.
package diffcore

import "github.com/go-git/go-git/v5/plumbing/filemode"

// Score bounds and limits, as diffcore.h and diff.c set them.
const (
	MaxScore     = 60000 // MAX_SCORE: identical content
	DefaultScore = 30000 // DEFAULT_RENAME_SCORE: 50%, git's -M
	RenameLimit  = 1000  // diff.renameLimit's default
)

// hashBase is diffcore-delta.c's HASHBASE, the prime the chunk hashes are
// reduced by.
const hashBase = 107927

// IsRegular reports a regular file of either mode (S_ISREG): only those
// have a similarity.
func IsRegular(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable || m == filemode.Deprecated
}

// ModesPair is find_identical_files' mode rule: an identical blob pairs
// two regular files whatever their modes, anything else only in the same
// mode.
func ModesPair(src, dst filemode.FileMode) bool {
	return (IsRegular(src) && IsRegular(dst)) || src == dst
}
