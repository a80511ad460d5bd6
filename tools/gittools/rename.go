package gittools

import (
	"path"
	"sort"
	"strings"

	"github.com/tgp-go/tgp/internal/diffcore"
	"github.com/tgp-go/tgp/internal/xdiff"
)

// Rename detection as git does it by default (diffcore-rename): deleted
// and added files are paired, exact matches first (same blob; for a
// non-regular file also the same mode), then regular files by git's
// similarity estimate (internal/diffcore). A pair needs 50%; the best
// pairs go first, a source is used once.

// basenameSame is git's tie-breaker: same file name in another directory.
func basenameSame(a, b string) bool { return path.Base(a) == path.Base(b) }

// detectRenames pairs deleted and added files as git's diffcore_rename
// does for renames.
func detectRenames(changes []*change) []*change { return detectRenamesIn(changes, false, nil, nil) }

// detectRenamesOrCopies is diffcore_rename, finding copies too when
// copies is set.
func detectRenamesOrCopies(changes []*change, copies bool) []*change {
	return detectRenamesIn(changes, copies, nil, nil)
}

// detectRenamesIn is diffcore_rename. Sources are the deleted files and,
// finding copies (diff.renames=copies), the modified ones too, whose old
// version may have been copied. Exact matches come first (a source not
// used yet and one with the same basename preferred); then, finding
// renames only, a source and a destination whose basenames are each
// unique and the same (find_basename_matches); then similarity: the four
// best sources per destination, taken best first, unused sources only,
// and finding copies, a second pass that may reuse any. relevant, when
// not nil, keeps the sources merge-ort looks for after the exact matches
// (relevant_sources). A modified source stays and every pair from it is a
// copy; of the pairs from a deleted source, the last (by path) is its
// rename and the others copies. binary, when not nil, is what a path's
// diff attribute says of its binary-ness (decided false: its content
// says), which the similarity estimate hashes by.
func detectRenamesIn(changes []*change, copies bool, relevant func(*change) bool, binary func(string) (bool, bool)) []*change {
	text := func(p string, data []byte) bool {
		if binary != nil {
			if b, decided := binary(p); decided {
				return !b
			}
		}
		return !xdiff.IsBinary(data)
	}
	estimate := func(d, a *change, minScore int) int {
		src, dst := d.old(), a.new()
		return diffcore.EstimateAs(src, text(d.path, src), dst, text(a.path, dst), minScore)
	}
	var srcs, adds []*change
	for _, c := range changes {
		switch {
		case c.unmerged:
		case c.newMode == 0:
			srcs = append(srcs, c)
		case c.oldMode == 0:
			adds = append(adds, c)
		case copies && c.oldPath == "":
			srcs = append(srcs, c)
		}
	}
	if len(srcs) == 0 || len(adds) == 0 {
		return changes
	}
	used := map[*change]int{} // git's rename_used
	deleted := map[*change]bool{}
	for _, s := range srcs {
		if s.newMode == 0 {
			deleted[s] = true
		} else {
			used[s] = 1 // a modified source stays: it is never renamed away
		}
	}
	paired := map[*change]*change{} // add → source
	scores := map[*change]int{}
	for _, a := range adds {
		var best *change
		i := diffcore.Identical(len(srcs), func(i int) (ok, unused, sameName bool) {
			d := srcs[i]
			ok = d.oldHash == a.newHash && diffcore.ModesPair(d.oldMode, a.newMode) && (used[d] == 0 || copies)
			return ok, used[d] == 0, basenameSame(d.path, a.path)
		})
		if i >= 0 {
			best = srcs[i]
		}
		if best != nil {
			paired[a], scores[a] = best, diffcore.MaxScore
			used[best]++
		}
	}
	if !copies {
		var restSrc, restDst []*change
		var srcPaths, dstPaths []string
		for _, d := range srcs {
			if used[d] == 0 {
				restSrc, srcPaths = append(restSrc, d), append(srcPaths, d.path)
			}
		}
		for _, a := range adds {
			if paired[a] == nil {
				restDst, dstPaths = append(restDst, a), append(dstPaths, a.path)
			}
		}
		var rel func(int) bool
		if relevant != nil {
			rel = func(i int) bool { return relevant(restSrc[i]) }
		}
		for _, c := range diffcore.BasenameMatches(srcPaths, dstPaths, rel, diffcore.DefaultScore, func(si, di, min int) int {
			d, a := restSrc[si], restDst[di]
			if !diffcore.IsRegular(d.oldMode) || !diffcore.IsRegular(a.newMode) {
				return 0
			}
			return estimate(d, a, min)
		}) {
			d, a := restSrc[c.Src], restDst[c.Dst]
			paired[a], scores[a] = d, c.Score
			used[d]++
		}
	}
	var cands []diffcore.Candidate
	left := 0
	for _, a := range adds {
		if paired[a] == nil {
			left++
		}
	}
	if left > 0 && left*len(srcs) <= diffcore.RenameLimit*diffcore.RenameLimit {
		for ai, a := range adds {
			if paired[a] != nil || !diffcore.IsRegular(a.newMode) {
				continue
			}
			var best diffcore.Best
			for si, d := range srcs {
				if (used[d] > 0 && !copies) || !diffcore.IsRegular(d.oldMode) || relevant != nil && !relevant(d) {
					continue
				}
				score := estimate(d, a, diffcore.DefaultScore)
				if score < diffcore.DefaultScore {
					continue
				}
				best.Record(diffcore.Candidate{Src: si, Dst: ai, Score: score, SameName: basenameSame(d.path, a.path)})
			}
			cands = append(cands, best.Ranked()...)
		}
		diffcore.Rank(cands)
		passes := 1
		if copies {
			passes = 2
		}
		for pass := 0; pass < passes; pass++ {
			for _, c := range cands {
				a, d := adds[c.Dst], srcs[c.Src]
				if paired[a] != nil || (pass == 0 && used[d] > 0) {
					continue
				}
				paired[a], scores[a] = d, c.Score
				used[d]++
			}
		}
	}
	// Each pair from a source counts down its uses in path order: while
	// some remain, the pair is a copy (diff_resolve_rename_copy).
	left2 := map[*change]int{}
	for s, n := range used {
		left2[s] = n
	}
	var out []*change
	for _, c := range changes {
		if deleted[c] && used[c] > 0 {
			continue // renamed away
		}
		if d := paired[c]; d != nil {
			c.oldPath = d.path
			c.oldMode, c.oldHash, c.oldData, c.oldLoaded = d.oldMode, d.oldHash, d.oldData, d.oldLoaded
			c.score = scores[c] * 100 / diffcore.MaxScore
			left2[d]--
			c.copied = left2[d] > 0
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// renameName is git's --stat name for a rename (diff.c pprint_rename):
// both names quoted in full when either needs quoting, else the common
// directory prefix and suffix kept outside braces, "{old => new}".
func renameName(s *settings, a, b string) string {
	if s.quote(a) != a || s.quote(b) != b {
		return s.quote(a) + " => " + s.quote(b)
	}
	pfx := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			pfx = i + 1
		}
	}
	// The suffix scan starts at the terminating NUL (equal in both) and
	// may run one byte into a prefix ending in '/'.
	sfx := 0
	adj := 0
	if pfx > 0 {
		adj = 1
	}
	for i, j := len(a), len(b); pfx-adj <= i && pfx-adj <= j; i, j = i-1, j-1 {
		ca, cb := byte(0), byte(0)
		if i < len(a) {
			ca = a[i]
		}
		if j < len(b) {
			cb = b[j]
		}
		if ca != cb {
			break
		}
		if ca == '/' {
			sfx = len(a) - i
		}
	}
	aMid, bMid := max(len(a)-pfx-sfx, 0), max(len(b)-pfx-sfx, 0)
	var out strings.Builder
	if pfx+sfx > 0 {
		out.WriteString(a[:pfx] + "{")
	}
	out.WriteString(a[pfx:pfx+aMid] + " => " + b[pfx:pfx+bMid])
	if pfx+sfx > 0 {
		out.WriteString("}" + a[len(a)-sfx:])
	}
	return out.String()
}
