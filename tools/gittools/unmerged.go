package gittools

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/tools"
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

// conflictSides are an unmerged path's index stages (1 base, 2 ours,
// 3 theirs; nil when absent).
type conflictSides [4]*side

// stagedIndexFiles splits the index: stage-0 entries, and each unmerged
// path's stages.
func stagedIndexFiles(r *git.Repository) (map[string]side, map[string]*conflictSides, error) {
	idx, err := r.Storer.Index()
	if err != nil {
		return nil, nil, err
	}
	valid := gitbackend.AssumeUnchangedIn(r.Storer)
	merged := map[string]side{}
	var conflicts map[string]*conflictSides
	for _, e := range idx.Entries {
		s := indexSide(r, e, valid, idx.ModTime)
		if e.Stage == 0 || e.Stage > 3 {
			merged[e.Name] = s
			continue
		}
		if conflicts == nil {
			conflicts = map[string]*conflictSides{}
		}
		cs := conflicts[e.Name]
		if cs == nil {
			cs = &conflictSides{}
			conflicts[e.Name] = cs
		}
		cs[e.Stage] = &s
	}
	return merged, conflicts, nil
}

// unmergedChanges adds git's records of the unmerged paths match selects
// to changes. diff-files (worktree) queues an "Unmerged" pair for each,
// then diffs stage 2 against the worktree like any entry; with a patch
// to print, a path with both stage 2 and 3 is a combined diff (--cc) of
// the worktree against them instead, printed before everything queued.
// diff-index --cached queues the Unmerged pair only.
func unmergedChanges(changes []*change, conflicts map[string]*conflictSides, match func(string) bool, worktree map[string]side, patch bool) []*change {
	if len(conflicts) == 0 {
		return changes
	}
	combined := map[string]bool{}
	var extra []*change
	for p, cs := range conflicts {
		if match != nil && !match(p) {
			continue
		}
		c := &change{path: p, unmerged: true}
		if worktree != nil && patch && cs[2] != nil && cs[3] != nil {
			res, ok := worktree[p]
			res.hash = plumbing.ZeroHash // git does not hash the worktree file here
			c.combined = &combinedRec{parents: []side{*cs[2], *cs[3]}, has: []bool{true, true}, result: res, hasResult: ok}
			combined[p] = true
		}
		extra = append(extra, c)
	}
	out := make([]*change, 0, len(changes)+len(extra))
	for _, c := range changes {
		if !combined[c.path] {
			out = append(out, c)
		}
	}
	out = append(out, extra...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.combined != nil) != (b.combined != nil) {
			return a.combined != nil
		}
		if a.path != b.path {
			return a.path < b.path
		}
		return a.unmerged && !b.unmerged
	})
	return out
}

// combinedRec is a combined diff to print for an unmerged path.
type combinedRec struct {
	parents   []side
	has       []bool
	result    side
	hasResult bool
	// dirInPlace: a directory stands where the result would be.
	dirInPlace bool
}

// errUnmergedCommit is git's die_resolve_conflict("commit").
func errUnmergedCommit() error {
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: "error: Committing is not possible because you have unmerged files.\n" +
		"hint: Fix them up in the work tree, and then use 'git add/rm <file>'\n" +
		"hint: as appropriate to mark resolution and make a commit.\n" +
		"fatal: Exiting because of an unresolved conflict."}
}

// mergeHeads reads MERGE_HEAD: the other parents of the merge commit in
// progress (none when no merge is).
func mergeHeads(r *git.Repository) []plumbing.Hash {
	fsr, ok := r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return nil
	}
	f, err := fsr.Filesystem().Open("MERGE_HEAD")
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	var out []plumbing.Hash
	for _, l := range strings.Fields(string(data)) {
		if h := plumbing.NewHash(l); !h.IsZero() && len(l) == 40 {
			out = append(out, h)
		}
	}
	return out
}

// clearMergeState removes a merge's state from .git, as git commit and a
// branch switch do (remove_merge_branch_state, SQUASH_MSG).
func clearMergeState(r *git.Repository) {
	fsr, ok := r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return
	}
	for _, name := range []string{"MERGE_HEAD", "MERGE_RR", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "SQUASH_MSG"} {
		_ = fsr.Filesystem().Remove(name)
	}
}

// needsMerge is git's complaint about unmerged paths from a command that
// must refresh the index first ("<path>: needs merge" each), after a
// lead line (empty: none).
func needsMerge(lead string, unmerged map[string]byte) error {
	paths := make([]string, 0, len(unmerged))
	for p := range unmerged {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	if lead != "" {
		b.WriteString(lead + "\n")
	}
	for _, p := range paths {
		b.WriteString(p + ": needs merge\n")
	}
	return &tools.Error{Kind: tools.KindConflict, Message: strings.TrimSuffix(b.String(), "\n")}
}

// indexUnmerged reads the index's unmerged paths.
func indexUnmerged(r *git.Repository) map[string]byte {
	idx, err := r.Storer.Index()
	if err != nil {
		return nil
	}
	return unmergedStages(idx)
}

// withoutStages drops the conflict stages of the unmerged paths match
// selects (what restoring them from a commit resolves).
func withoutStages(entries []*index.Entry, match func(string) bool) []*index.Entry {
	kept := entries[:0]
	for _, e := range entries {
		if e.Stage != 0 && match(e.Name) {
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

// errPathsUnmerged is checkout_paths' refusal of unmerged paths it would
// have to write (nil when there are none).
func errPathsUnmerged(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "error: path '%s' is unmerged\n", p)
	}
	return &tools.Error{Kind: tools.KindConflict, Message: strings.TrimSuffix(b.String(), "\n")}
}

// unmergedRenameDsts are the rename destinations git's diff-files makes
// of unmerged paths: the "Unmerged" pair it queues for one (diff_unmerge)
// has no first side and its second takes the worktree file's mode, so
// diffcore-rename counts it as an added file and may pair a deleted file
// with it; the deletion then leaves the output, and the Unmerged record
// is named by it. Its object id is not computed (no exact match), its
// content is the worktree file's. A path shown as a combined diff (a
// patch, both stages 2 and 3) queues no pair. Keyed by path.
func unmergedRenameDsts(r *git.Repository, s *settings, conflicts map[string]*conflictSides, match func(string) bool, patch bool) map[string]*change {
	if len(conflicts) == 0 || s.orDefault().renames == 0 {
		return nil
	}
	w, err := worktreeOf(r)
	if err != nil {
		return nil
	}
	eol := newEOLConverter(r, s)
	var out map[string]*change
	for p, cs := range conflicts {
		if (match != nil && !match(p)) || (patch && cs[2] != nil && cs[3] != nil) {
			continue
		}
		data, mode, err := readWorktree(w.Filesystem, p)
		if err != nil {
			continue
		}
		if mode != filemode.Symlink {
			data = eol.ToGit(p, data)
		}
		if out == nil {
			out = map[string]*change{}
		}
		d := data
		out[p] = &change{path: p, newMode: mode, newHash: plumbing.ZeroHash, newLoad: func() ([]byte, error) { return d, nil }, newWorktree: true}
	}
	return out
}
