package git

import (
	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// A merge that stopped on conflicts leaves stages 1 (base), 2 (ours) and
// 3 (theirs) of a path in the index instead of stage 0, and MERGE_HEAD in
// .git. git shows such paths apart from every other change: status by
// the mask of the stages present (wt-status.c), diff as "* Unmerged
// path", and the commands that would lose them refuse.

// unmergedStages maps each path with conflict stages to its stage mask
// (bit 0 base, bit 1 ours, bit 2 theirs).
func unmergedStages(idx *index.Index) map[string]byte {
	var m map[string]byte
	if idx == nil {
		return nil
	}
	for _, e := range idx.Entries {
		if e.Stage == 0 || e.Stage > 3 {
			continue // stage 0 (go-git's index.Merged is 1, the base stage's number)
		}
		if m == nil {
			m = map[string]byte{}
		}
		m[e.Name] |= 1 << (byte(e.Stage) - 1)
	}
	return m
}

// unmergedShort is the porcelain XY of a stage mask (short_unmerged).
func unmergedShort(mask byte) (x, y byte) {
	switch mask {
	case 1:
		return 'D', 'D'
	case 2:
		return 'A', 'U'
	case 3:
		return 'U', 'D'
	case 4:
		return 'U', 'A'
	case 5:
		return 'D', 'U'
	case 6:
		return 'A', 'A'
	}
	return 'U', 'U'
}

// unmergedLong is the long-format label of a stage mask
// (wt_status_unmerged_status_string).
func unmergedLong(mask byte) string {
	return [...]string{"", "both deleted:", "added by us:", "deleted by them:", "added by them:", "deleted by us:", "both added:", "both modified:"}[mask&7]
}

// merging reports whether a merge is in progress (MERGE_HEAD exists).
func merging(r *git.Repository) bool {
	fsr, ok := r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return false
	}
	_, err := fsr.Filesystem().Stat("MERGE_HEAD")
	return err == nil
}
