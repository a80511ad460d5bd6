package xdiff

import (
	"bytes"
	"context"
)

// xdl_merge (git 2.39's xdiff/xmerge.c), the three-way text merge git's
// merge machinery (ll_merge's built-in "text" driver) runs: each side is
// diffed against the base (with the caller's algorithm; merge-ort
// hard-codes histogram), overlapping changes become conflicts unless they
// are identical, and at level "zealous" each conflict is refined by a
// diff of its two sides (only what truly differs stays in the markers) and
// conflicts fewer than four lines apart are joined. Ported so that the
// markers and their placement are byte for byte what git writes.

// ConflictStyle is merge.conflictStyle.
type ConflictStyle int

// The conflict styles.
const (
	StyleMerge        ConflictStyle = iota // "merge": ours and theirs
	StyleDiff3                             // "diff3": the base between them
	StyleZealousDiff3                      // "zdiff3": diff3 with common ends moved out
)

// Level is how hard xdl_merge works to shrink conflicts.
type Level int

// The merge levels (XDL_MERGE_*).
const (
	LevelMinimal      Level = iota // overlapping changes conflict
	LevelEager                     // identical changes on both sides do not
	LevelZealous                   // each conflict is refined by a diff of its sides
	LevelZealousAlnum              // and conflicts with only non-alphanumerics between join
)

// Favor is what a conflict becomes instead of markers (XDL_MERGE_FAVOR_*).
type Favor int

// The favors; FavorUnion is the "union" merge driver.
const (
	FavorNone Favor = iota
	FavorOurs
	FavorTheirs
	FavorUnion
)

// MergeParams are xmparam_t's fields the merge uses.
type MergeParams struct {
	Algorithm  string // diff algorithm of both diffs and the refinement (Params.Algorithm)
	Level      Level
	Style      ConflictStyle
	MarkerSize int    // conflict-marker-size; 0 is git's 7
	Ancestor   string // label of the base (diff3 styles)
	Name1      string // label of side 1 ("ours")
	Name2      string // label of side 2 ("theirs")
	Favor      Favor
}

// xmergeNode is xdmerge_t.
type xmergeNode struct {
	next *xmergeNode
	// 0 conflict, 1 take side 1, 2 take side 2, 3 take both, 4 identical
	// (set by the refinement: skipped, side 1's lines are copied with
	// what follows)
	mode       int
	i1, i2     int
	chg1, chg2 int
	i0, chg0   int
}

// xmergeEnv is one side's diff against the base: base records (xdf1) and
// the side's records (xdf2).
type xmergeEnv struct {
	base, side [][]byte
}

// Merge is xdl_merge: it merges mf1 and mf2, both derived from orig, and
// returns the merged bytes and the number of conflicts (0: clean), each
// written between conflict markers (or resolved as p.Favor says).
func Merge(ctx context.Context, orig, mf1, mf2 []byte, p MergeParams) ([]byte, int, error) {
	s1, err := Diff(ctx, orig, mf1, Params{Algorithm: p.Algorithm})
	if err != nil {
		return nil, 0, err
	}
	s2, err := Diff(ctx, orig, mf2, Params{Algorithm: p.Algorithm})
	if err != nil {
		return nil, 0, err
	}
	if len(s1) == 0 {
		return append([]byte(nil), mf2...), 0, nil
	}
	if len(s2) == 0 {
		return append([]byte(nil), mf1...), 0, nil
	}
	ob := Records(orig)
	xe1 := &xmergeEnv{base: ob, side: Records(mf1)}
	xe2 := &xmergeEnv{base: ob, side: Records(mf2)}
	return xdlDoMerge(ctx, xe1, s1, xe2, s2, p)
}

// appendMerge is xdl_append_merge: a change touching the previous one
// joins it (a conflict if their modes differ).
func appendMerge(last **xmergeNode, mode, i0, chg0, i1, chg1, i2, chg2 int) {
	m := *last
	if m != nil && (i1 <= m.i1+m.chg1 || i2 <= m.i2+m.chg2) {
		if mode != m.mode {
			m.mode = 0
		}
		m.chg0 = i0 + chg0 - m.i0
		m.chg1 = i1 + chg1 - m.i1
		m.chg2 = i2 + chg2 - m.i2
		return
	}
	n := &xmergeNode{mode: mode, i0: i0, chg0: chg0, i1: i1, chg1: chg1, i2: i2, chg2: chg2}
	if m != nil {
		m.next = n
	}
	*last = n
}

func xdlDoMerge(ctx context.Context, xe1 *xmergeEnv, s1 []Change, xe2 *xmergeEnv, s2 []Change, p MergeParams) ([]byte, int, error) {
	level, style := p.Level, p.Style
	if style == StyleDiff3 || style == StyleZealousDiff3 {
		if level > LevelEager {
			level = LevelEager
		}
	}
	var changes, c *xmergeNode
	a, b := 0, 0 // positions in s1 and s2
	for a < len(s1) && b < len(s2) {
		if changes == nil {
			changes = c
		}
		x1, x2 := s1[a], s2[b]
		if x1.I1+x1.Chg1 < x2.I1 {
			appendMerge(&c, 1, x1.I1, x1.Chg1, x1.I2, x1.Chg2, x2.I2-x2.I1+x1.I1, x1.Chg1)
			a++
			continue
		}
		if x2.I1+x2.Chg1 < x1.I1 {
			appendMerge(&c, 2, x2.I1, x2.Chg1, x1.I2-x1.I1+x2.I1, x2.Chg1, x2.I2, x2.Chg2)
			b++
			continue
		}
		if level == LevelMinimal || x1.I1 != x2.I1 || x1.Chg1 != x2.Chg1 || x1.Chg2 != x2.Chg2 ||
			!sameRecords(xe1.side[x1.I2:x1.I2+x1.Chg2], xe2.side[x2.I2:x2.I2+x1.Chg2]) {
			off := x1.I1 - x2.I1
			ffo := off + x1.Chg1 - x2.Chg1
			i0, i1, i2 := x1.I1, x1.I2, x2.I2
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			chg0 := x1.I1 + x1.Chg1 - i0
			chg1 := x1.I2 + x1.Chg2 - i1
			chg2 := x2.I2 + x2.Chg2 - i2
			if ffo < 0 {
				chg0 -= ffo
				chg1 -= ffo
			} else {
				chg2 += ffo
			}
			appendMerge(&c, 0, i0, chg0, i1, chg1, i2, chg2)
		}
		e1 := x1.I1 + x1.Chg1
		e2 := x2.I1 + x2.Chg1
		if e1 >= e2 {
			b++
		}
		if e2 >= e1 {
			a++
		}
	}
	for ; a < len(s1); a++ {
		if changes == nil {
			changes = c
		}
		x1 := s1[a]
		appendMerge(&c, 1, x1.I1, x1.Chg1, x1.I2, x1.Chg2, x1.I1+len(xe2.side)-len(xe2.base), x1.Chg1)
	}
	for ; b < len(s2); b++ {
		if changes == nil {
			changes = c
		}
		x2 := s2[b]
		appendMerge(&c, 2, x2.I1, x2.Chg1, x2.I1+len(xe1.side)-len(xe1.base), x2.Chg1, x2.I2, x2.Chg2)
	}
	if changes == nil {
		changes = c
	}
	if style == StyleZealousDiff3 {
		refineZdiff3Conflicts(xe1, xe2, changes)
	} else if level >= LevelZealous {
		if err := refineConflicts(ctx, xe1, xe2, changes, p.Algorithm); err != nil {
			return nil, 0, err
		}
		simplifyNonConflicts(xe1, changes, level > LevelZealous)
	}
	if p.Favor != 0 {
		for m := changes; m != nil; m = m.next {
			if m.mode == 0 {
				m.mode = int(p.Favor)
			}
		}
	}
	out := fillMergeBuffer(xe1, xe2, changes, p, style)
	n := 0
	for m := changes; m != nil; m = m.next {
		if m.mode == 0 {
			n++
		}
	}
	return out, n, nil
}

func sameRecords(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// recsCopy is xdl_recs_copy_0: count records from i, with a newline
// (CRLF when needsCR) added after the last when addNL and it has none.
func recsCopy(dst *bytes.Buffer, recs [][]byte, i, count int, needsCR, addNL bool) {
	if count < 1 {
		return
	}
	for _, r := range recs[i : i+count] {
		dst.Write(r)
	}
	if addNL {
		last := recs[i+count-1]
		if len(last) == 0 || last[len(last)-1] != '\n' {
			if needsCR {
				dst.WriteByte('\r')
			}
			dst.WriteByte('\n')
		}
	}
}

// isEOLCRLF is is_eol_crlf: 1 if line i ends in CRLF (the last line
// without an end of line looks at the one before), 0 if in LF, -1 when it
// cannot tell.
func isEOLCRLF(recs [][]byte, i int) int {
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	n := len(recs)
	if i < n-1 {
		r := recs[i]
		return b(len(r) > 1 && r[len(r)-2] == '\r')
	}
	if n == 0 {
		return -1
	}
	if r := recs[i]; len(r) > 0 && r[len(r)-1] == '\n' {
		return b(len(r) > 1 && r[len(r)-2] == '\r')
	}
	if i == 0 {
		return -1
	}
	r := recs[i-1]
	return b(len(r) > 1 && r[len(r)-2] == '\r')
}

func isCRNeeded(xe1, xe2 *xmergeEnv, m *xmergeNode) bool {
	prev := func(i int) int {
		if i > 0 {
			return i - 1
		}
		return 0
	}
	needs := isEOLCRLF(xe1.side, prev(m.i1))
	if needs != 0 {
		needs = isEOLCRLF(xe2.side, prev(m.i2))
	}
	if needs != 0 {
		needs = isEOLCRLF(xe1.base, 0)
	}
	return needs > 0
}

func marker(dst *bytes.Buffer, ch byte, size int, name string, needsCR bool) {
	dst.Write(bytes.Repeat([]byte{ch}, size))
	if name != "" {
		dst.WriteByte(' ')
		dst.WriteString(name)
	}
	if needsCR {
		dst.WriteByte('\r')
	}
	dst.WriteByte('\n')
}

// fillConflictHunk is fill_conflict_hunk: the lines before the conflict,
// then the markers around each side (and the base for diff3 styles).
func fillConflictHunk(dst *bytes.Buffer, xe1, xe2 *xmergeEnv, i int, style ConflictStyle, m *xmergeNode, p MergeParams) {
	size := p.MarkerSize
	if size <= 0 {
		size = 7
	}
	needsCR := isCRNeeded(xe1, xe2, m)
	recsCopy(dst, xe1.side, i, m.i1-i, false, false)
	marker(dst, '<', size, p.Name1, needsCR)
	recsCopy(dst, xe1.side, m.i1, m.chg1, needsCR, true)
	if style == StyleDiff3 || style == StyleZealousDiff3 {
		marker(dst, '|', size, p.Ancestor, needsCR)
		recsCopy(dst, xe1.base, m.i0, m.chg0, needsCR, true)
	}
	marker(dst, '=', size, "", needsCR)
	recsCopy(dst, xe2.side, m.i2, m.chg2, needsCR, true)
	marker(dst, '>', size, p.Name2, needsCR)
}

func fillMergeBuffer(xe1, xe2 *xmergeEnv, m *xmergeNode, p MergeParams, style ConflictStyle) []byte {
	var dst bytes.Buffer
	i := 0
	for ; m != nil; m = m.next {
		switch {
		case m.mode == 0:
			fillConflictHunk(&dst, xe1, xe2, i, style, m, p)
		case m.mode&3 != 0:
			recsCopy(&dst, xe1.side, i, m.i1-i, false, false)
			if m.mode&1 != 0 {
				recsCopy(&dst, xe1.side, m.i1, m.chg1, isCRNeeded(xe1, xe2, m), m.mode&2 != 0)
			}
			if m.mode&2 != 0 {
				recsCopy(&dst, xe2.side, m.i2, m.chg2, false, false)
			}
		default:
			continue
		}
		i = m.i1 + m.chg1
	}
	recsCopy(&dst, xe1.side, i, len(xe1.side)-i, false, false)
	return dst.Bytes()
}

// refineZdiff3Conflicts is xdl_refine_zdiff3_conflicts: lines common to
// both sides at a conflict's start and end leave it.
func refineZdiff3Conflicts(xe1, xe2 *xmergeEnv, m *xmergeNode) {
	r1, r2 := xe1.side, xe2.side
	for ; m != nil; m = m.next {
		if m.mode != 0 {
			continue
		}
		for m.chg1 > 0 && m.chg2 > 0 && bytes.Equal(r1[m.i1], r2[m.i2]) {
			m.chg1--
			m.chg2--
			m.i1++
			m.i2++
		}
		for m.chg1 > 0 && m.chg2 > 0 && bytes.Equal(r1[m.i1+m.chg1-1], r2[m.i2+m.chg2-1]) {
			m.chg1--
			m.chg2--
		}
	}
}

// refineConflicts is xdl_refine_conflicts: a conflict's two sides are
// diffed and only the differing parts stay conflicts.
func refineConflicts(ctx context.Context, xe1, xe2 *xmergeEnv, m *xmergeNode, algo string) error {
	for ; m != nil; m = m.next {
		if m.mode != 0 || m.chg1 == 0 || m.chg2 == 0 {
			continue
		}
		i1, i2 := m.i1, m.i2
		t1 := bytes.Join(xe1.side[m.i1:m.i1+m.chg1], nil)
		t2 := bytes.Join(xe2.side[m.i2:m.i2+m.chg2], nil)
		xscr, err := Diff(ctx, t1, t2, Params{Algorithm: algo})
		if err != nil {
			return err
		}
		if len(xscr) == 0 {
			m.mode = 4
			continue
		}
		m.i1, m.chg1 = xscr[0].I1+i1, xscr[0].Chg1
		m.i2, m.chg2 = xscr[0].I2+i2, xscr[0].Chg2
		for _, x := range xscr[1:] {
			m2 := &xmergeNode{next: m.next, mode: 0, i1: x.I1 + i1, chg1: x.Chg1, i2: x.I2 + i2, chg2: x.Chg2}
			m.next = m2
			m = m2
		}
	}
	return nil
}

func linesContainAlnum(recs [][]byte, i, chg int) bool {
	for ; chg > 0; chg, i = chg-1, i+1 {
		for _, c := range recs[i] {
			if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				return true
			}
		}
	}
	return false
}

// simplifyNonConflicts is xdl_simplify_non_conflicts: conflicts with
// fewer than four lines between them become one.
func simplifyNonConflicts(xe1 *xmergeEnv, m *xmergeNode, ifNoAlnum bool) {
	if m == nil {
		return
	}
	for {
		next := m.next
		if next == nil {
			return
		}
		begin, end := m.i1+m.chg1, next.i1
		if m.mode != 0 || next.mode != 0 || (end-begin > 3 && (!ifNoAlnum || linesContainAlnum(xe1.side, begin, end-begin))) {
			m = next
			continue
		}
		m.chg1 = next.i1 + next.chg1 - m.i1
		m.chg2 = next.i2 + next.chg2 - m.i2
		m.next = next.next
	}
}
