package git

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// diff.algorithm: git's four line diffs, as xdl_diff runs them. Myers
// ("myers", "default" or empty) is xdiffHunks; "minimal" is the same
// search with need_min set, so xdl_split never takes its cost cut-offs;
// "patience" (xdiff/xpatience.c) and "histogram" (xdiff/xhistogram.c)
// work on the whole records (git's xdl_prepare_env skips
// xdl_optimize_ctxs for them) and hand sub-ranges they cannot split to
// xdl_fall_back_diff, a full Myers xdl_do_diff of just those lines. Every
// algorithm is followed by xdl_change_compact on both sides, as xdl_diff
// does. Ported from git 2.39's xdiff.

// errXdiffFailed is what git reports as "unable to generate diff": the
// histogram index gave up (a hash chain of 64 distinct lines).
var errXdiffFailed = errors.New("xdiff: unable to generate diff")

// xdiffHunksAlgo is xdi_diff(parent, target) with no context lines (so the
// common 1 KiB tail is trimmed first, like xdiffHunks) for the
// diff.algorithm named algo (git's names, case-insensitive).
func xdiffHunksAlgo(ctx context.Context, parent, target []byte, algo string, indentHeuristic bool) ([]hunk, error) {
	return xdiffScript(ctx, parent, target, algo, indentHeuristic, true)
}

// xdiffScript is xdiffHunksAlgo with the tail trim chosen: xdi_diff trims
// the common tail only when no context lines are asked for (blame, -U0);
// a patch with context diffs the whole files.
func xdiffScript(ctx context.Context, parent, target []byte, algo string, indentHeuristic, trim bool) ([]hunk, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	algo = strings.ToLower(algo)
	switch algo {
	case "", "myers", "default", "minimal", "patience", "histogram":
	default:
		return nil, fmt.Errorf("unknown diff algorithm %q", algo)
	}
	if trim {
		parent, target = trimCommonTail(parent, target)
	}
	x1, x2, len1, len2 := xdlClassify(splitRecords(parent), splitRecords(target))
	var err error
	switch algo {
	case "", "myers", "default":
		err = xdlMyersDiff(ctx, x1, x2, len1, len2, false)
	case "minimal":
		err = xdlMyersDiff(ctx, x1, x2, len1, len2, true)
	case "patience":
		p := &xrange{ctx: ctx, x1: x1, x2: x2}
		err = p.patience(1, x1.nrec(), 1, x2.nrec())
	case "histogram":
		h := &xrange{ctx: ctx, x1: x1, x2: x2}
		// xdl_do_histogram_diff starts from dstart/dend, which are the
		// whole files as nothing trimmed them.
		err = h.histogram(1, x1.nrec(), 1, x2.nrec())
	}
	if err != nil {
		return nil, err
	}
	changeCompact(x1, x2, indentHeuristic)
	changeCompact(x2, x1, indentHeuristic)
	return xdlBuildScript(x1, x2), nil
}

// xrange holds the two classified files that patience and histogram
// diff carve into ranges. Lines are 1-based in its methods, as in git's
// sources, so the port reads like them.
type xrange struct {
	ctx    context.Context
	x1, x2 *xfile
	calls  int
}

// tick checks for cancellation every 256 recursion steps.
func (r *xrange) tick() error {
	r.calls++
	if r.calls&255 == 0 {
		return r.ctx.Err()
	}
	return nil
}

func (r *xrange) match(line1, line2 int) bool {
	return r.x1.class[line1-1] == r.x2.class[line2-1]
}

func (r *xrange) changeAll(line1, count1, line2, count2 int) {
	for ; count1 > 0; count1-- {
		r.x1.set(line1-1, true)
		line1++
	}
	for ; count2 > 0; count2-- {
		r.x2.set(line2-1, true)
		line2++
	}
}

// fallBack is xdl_fall_back_diff: the ranges are diffed as files of their
// own with the Myers algorithm (git re-prepares the sub-files, so the
// classes, their counts, xdl_trim_ends and xdl_cleanup_records's limits
// are those of the ranges alone), and the changed flags are copied back.
// need_min is off: git's CLI clears XDF_NEED_MINIMAL whenever it picks
// patience or histogram, and only the algorithm bits are dropped here.
func (r *xrange) fallBack(line1, count1, line2, count2 int) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	local := make(map[int]int)
	var len1, len2 []int
	sub := func(x *xfile, line, count, side int) *xfile {
		s := &xfile{
			lines: x.lines[line-1 : line-1+count],
			class: make([]int, count),
			rchg:  make([]bool, count+2),
		}
		for i := range count {
			c := x.class[line-1+i]
			id, ok := local[c]
			if !ok {
				id = len(local)
				local[c] = id
				len1 = append(len1, 0)
				len2 = append(len2, 0)
			}
			if side == 1 {
				len1[id]++
			} else {
				len2[id]++
			}
			s.class[i] = id
		}
		return s
	}
	s1 := sub(r.x1, line1, count1, 1)
	s2 := sub(r.x2, line2, count2, 2)
	if err := xdlMyersDiff(r.ctx, s1, s2, len1, len2, false); err != nil {
		return err
	}
	for i := range count1 {
		r.x1.set(line1-1+i, s1.chg(i))
	}
	for i := range count2 {
		r.x2.set(line2-1+i, s2.chg(i))
	}
	return nil
}

// --- patience (xdiff/xpatience.c) ---

const patienceNonUnique = -1

// patienceEntry is xpatience.c's struct entry: one class of the first
// range. line2 is 0 when the class has no line in the second range,
// patienceNonUnique when it is not unique in either. next/previous are
// indices into the entries (-1 for NULL); next first follows the order of
// the first range, then the longest common sequence.
type patienceEntry struct {
	line1, line2   int
	next, previous int
}

// patienceMap is struct hashmap. git's open-addressing table is keyed by
// the class exactly (hash == ha), so a Go map from class to entry is the
// same mapping; the list order (first occurrence in range 1) is kept in
// entries' next links from first. --anchored is not supported, so no
// entry is an anchor.
type patienceMap struct {
	entries    []patienceEntry
	byClass    map[int]int
	first      int
	last       int
	hasMatches bool
}

// fillHashmap is fill_hashmap with insert_record for both passes.
func (r *xrange) fillHashmap(line1, count1, line2, count2 int) *patienceMap {
	m := &patienceMap{
		entries: make([]patienceEntry, 0, count1),
		byClass: make(map[int]int, count1),
		first:   -1, last: -1,
	}
	for ; count1 > 0; count1-- {
		c := r.x1.class[line1-1]
		if i, ok := m.byClass[c]; ok {
			m.entries[i].line2 = patienceNonUnique
		} else {
			i = len(m.entries)
			m.entries = append(m.entries, patienceEntry{line1: line1, next: -1, previous: m.last})
			m.byClass[c] = i
			if m.first < 0 {
				m.first = i
			}
			if m.last >= 0 {
				m.entries[m.last].next = i
			}
			m.last = i
		}
		line1++
	}
	for ; count2 > 0; count2-- {
		if i, ok := m.byClass[r.x2.class[line2-1]]; ok {
			m.hasMatches = true
			e := &m.entries[i]
			if e.line2 != 0 {
				e.line2 = patienceNonUnique
			} else {
				e.line2 = line2
			}
		}
		line2++
	}
	return m
}

// findLongestCommonSequence is find_longest_common_sequence (patience
// sorting over the unique pairs in range-1 order, binary search on
// line2); it returns the first entry of the sequence, -1 if none.
func (m *patienceMap) findLongestCommonSequence() int {
	sequence := make([]int, len(m.entries))
	longest := 0
	for e := m.first; e >= 0; e = m.entries[e].next {
		ent := &m.entries[e]
		if ent.line2 == 0 || ent.line2 == patienceNonUnique {
			continue
		}
		// binary_search: the longest sequence whose last line2 is smaller.
		left, right := -1, longest
		for left+1 < right {
			middle := left + (right-left)/2
			if m.entries[sequence[middle]].line2 > ent.line2 {
				right = middle
			} else {
				left = middle
			}
		}
		i := left
		if i < 0 {
			ent.previous = -1
		} else {
			ent.previous = sequence[i]
		}
		i++
		sequence[i] = e
		if i == longest {
			longest++
		}
	}
	if longest == 0 {
		return -1
	}
	e := sequence[longest-1]
	m.entries[e].next = -1
	for m.entries[e].previous >= 0 {
		p := m.entries[e].previous
		m.entries[p].next = e
		e = p
	}
	return e
}

// walkCommonSequence is walk_common_sequence: grow each unique match
// into its run of equal lines and recurse into the gaps between runs.
func (r *xrange) walkCommonSequence(m *patienceMap, first, line1, count1, line2, count2 int) error {
	end1, end2 := line1+count1, line2+count2
	for {
		var next1, next2 int
		if first >= 0 {
			next1, next2 = m.entries[first].line1, m.entries[first].line2
			for next1 > line1 && next2 > line2 && r.match(next1-1, next2-1) {
				next1--
				next2--
			}
		} else {
			next1, next2 = end1, end2
		}
		for line1 < next1 && line2 < next2 && r.match(line1, line2) {
			line1++
			line2++
		}
		if next1 > line1 || next2 > line2 {
			if err := r.patience(line1, next1-line1, line2, next2-line2); err != nil {
				return err
			}
		}
		if first < 0 {
			return nil
		}
		for {
			f, n := m.entries[first], m.entries[first].next
			if n < 0 || m.entries[n].line1 != f.line1+1 || m.entries[n].line2 != f.line2+1 {
				break
			}
			first = n
		}
		line1 = m.entries[first].line1 + 1
		line2 = m.entries[first].line2 + 1
		first = m.entries[first].next
	}
}

// patience is patience_diff on lines [line1, line1+count1) and
// [line2, line2+count2).
func (r *xrange) patience(line1, count1, line2, count2 int) error {
	if err := r.tick(); err != nil {
		return err
	}
	if count1 == 0 || count2 == 0 {
		r.changeAll(line1, count1, line2, count2)
		return nil
	}
	m := r.fillHashmap(line1, count1, line2, count2)
	if !m.hasMatches {
		r.changeAll(line1, count1, line2, count2)
		return nil
	}
	first := m.findLongestCommonSequence()
	if first >= 0 {
		return r.walkCommonSequence(m, first, line1, count1, line2, count2)
	}
	return r.fallBack(line1, count1, line2, count2)
}

// --- histogram (xdiff/xhistogram.c) ---

const histMaxChainLength = 64

// histRecord is struct record: the occurrences of one class in range 1,
// ptr its first line, cnt how many.
type histRecord struct{ ptr, cnt int }

// histIndex is struct histindex. git chains records in hash buckets and
// try_lcs walks the whole bucket, but records of other classes in a
// bucket never change anything there (a mismatching compare only ever
// leaves has_common as it was), so a map from class to record is the
// same; the buckets are only counted, because scanA gives up (and git
// with it) when one holds max_chain_length distinct lines.
type histIndex struct {
	records   map[int]*histRecord
	lineMap   []*histRecord // by ptr - ptrShift
	nextPtrs  []int         // by ptr - ptrShift; 0 ends a chain
	ptrShift  int
	cnt       int
	hasCommon bool
}

// histRegion is struct region; begin1 == begin2 == 0 means none found.
type histRegion struct{ begin1, end1, begin2, end2 int }

// xdlHashbits is xdl_hashbits.
func xdlHashbits(size int) uint {
	val, bits := 1, uint(0)
	for ; val < size && bits < 32; bits++ {
		val <<= 1
	}
	if bits == 0 {
		return 1
	}
	return bits
}

// xdlHashlong is XDL_HASHLONG on a 64-bit unsigned long.
func xdlHashlong(v uint64, b uint) uint64 {
	return (v + (v >> b)) & (1<<b - 1)
}

// scanA indexes range 1 from its end, so each class's chain runs in line
// order from its record's ptr.
func (r *xrange) scanA(idx *histIndex, line1, count1 int) error {
	bits := xdlHashbits(count1)
	chains := make(map[uint64]int)
	for ptr := line1 + count1 - 1; ptr >= line1; ptr-- {
		c := r.x1.class[ptr-1]
		if rec, ok := idx.records[c]; ok {
			idx.nextPtrs[ptr-idx.ptrShift] = rec.ptr
			rec.ptr = ptr
			rec.cnt++
			idx.lineMap[ptr-idx.ptrShift] = rec
			continue
		}
		b := xdlHashlong(uint64(c), bits)
		if chains[b] == histMaxChainLength {
			return errXdiffFailed
		}
		chains[b]++
		rec := &histRecord{ptr: ptr, cnt: 1}
		idx.records[c] = rec
		idx.lineMap[ptr-idx.ptrShift] = rec
	}
	return nil
}

// tryLCS is try_lcs: the longest run of equal lines through b_ptr whose
// rarest line is no more common than the best so far; it returns the
// next line of range 2 to try.
func (r *xrange) tryLCS(idx *histIndex, lcs *histRegion, bPtr, line1, count1, line2, count2 int) int {
	bNext := bPtr + 1
	rec := idx.records[r.x2.class[bPtr-1]]
	if rec == nil {
		return bNext
	}
	if rec.cnt > idx.cnt {
		// The record matches b_ptr's class, so this is has_common = 1.
		idx.hasCommon = true
		return bNext
	}
	as := rec.ptr
	idx.hasCommon = true
	end1, end2 := line1+count1-1, line2+count2-1
	for {
		np := idx.nextPtrs[as-idx.ptrShift]
		bs := bPtr
		ae, be := as, bs
		rc := rec.cnt
		for line1 < as && line2 < bs && r.match(as-1, bs-1) {
			as--
			bs--
			if 1 < rc {
				rc = min(rc, idx.lineMap[as-idx.ptrShift].cnt)
			}
		}
		for ae < end1 && be < end2 && r.match(ae+1, be+1) {
			ae++
			be++
			if 1 < rc {
				rc = min(rc, idx.lineMap[ae-idx.ptrShift].cnt)
			}
		}
		if bNext <= be {
			bNext = be + 1
		}
		if lcs.end1-lcs.begin1 < ae-as || rc < idx.cnt {
			*lcs = histRegion{begin1: as, begin2: bs, end1: ae, end2: be}
			idx.cnt = rc
		}
		if np == 0 {
			break
		}
		for np <= ae {
			np = idx.nextPtrs[np-idx.ptrShift]
			if np == 0 {
				return bNext
			}
		}
		as = np
	}
	return bNext
}

// findLCS is find_lcs: 1 asks for the Myers fall-back (common lines
// exist but none is rare enough), 0 leaves the best region in lcs.
func (r *xrange) findLCS(lcs *histRegion, line1, count1, line2, count2 int) (int, error) {
	idx := &histIndex{
		records:  make(map[int]*histRecord),
		lineMap:  make([]*histRecord, count1),
		nextPtrs: make([]int, count1),
		ptrShift: line1,
	}
	if err := r.scanA(idx, line1, count1); err != nil {
		return -1, err
	}
	idx.cnt = histMaxChainLength + 1
	for bPtr := line2; bPtr <= line2+count2-1; {
		bPtr = r.tryLCS(idx, lcs, bPtr, line1, count1, line2, count2)
	}
	if idx.hasCommon && histMaxChainLength < idx.cnt {
		return 1, nil
	}
	return 0, nil
}

// histogram is histogram_diff, its tail recursion made a loop as in git.
func (r *xrange) histogram(line1, count1, line2, count2 int) error {
	for {
		if err := r.tick(); err != nil {
			return err
		}
		if count1 <= 0 && count2 <= 0 {
			return nil
		}
		if count1 == 0 || count2 == 0 {
			r.changeAll(line1, count1, line2, count2)
			return nil
		}
		var lcs histRegion
		found, err := r.findLCS(&lcs, line1, count1, line2, count2)
		if err != nil {
			return err
		}
		if found == 1 {
			return r.fallBack(line1, count1, line2, count2)
		}
		if lcs.begin1 == 0 && lcs.begin2 == 0 {
			r.changeAll(line1, count1, line2, count2)
			return nil
		}
		if err := r.histogram(line1, lcs.begin1-line1, line2, lcs.begin2-line2); err != nil {
			return err
		}
		end1, end2 := line1+count1-1, line2+count2-1
		count1, line1 = end1-lcs.end1, lcs.end1+1
		count2, line2 = end2-lcs.end2, lcs.end2+1
	}
}
