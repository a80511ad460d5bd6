package git

import (
	"bytes"
	"context"
)

// Blame attributes a line to a parent only where git's own line diff
// says it is unchanged, and where a file repeats lines ("}", blank lines)
// every LCS algorithm picks differently. This is git's xdiff as blame
// calls it (xdi_diff with no context: Myers' divide and conquer with
// git's cost cut-offs, its pre-pass that drops lines with no match and
// multi-matched lines inside unmatched runs, the slide of each change
// group with the indent heuristic, and the 1 KiB common-tail trim done
// before), reimplemented from the algorithm's description so the hunks are
// the ones git computes.

// hunk is a changed region: p0/pn lines of the parent, t0/tn of the target.
type hunk struct{ p0, pn, t0, tn int }

const (
	xdlMaxCostMin   = 256
	xdlHeurMinCost  = 256
	xdlSnakeCnt     = 20
	xdlKHeur        = 4
	xdlLineMax      = int(^uint(0) >> 1)
	xdlMaxEqLimit   = 1024
	xdlSimscanWin   = 100
	xdlKpdisRun     = 4
	maxIndent       = 200
	maxBlanks       = 20
	indentMaxSlide  = 100
	startOfFilePen  = 1
	endOfFilePen    = 21
	totalBlankW     = -30
	postBlankW      = 6
	relIndentPen    = -4
	relIndentBlank  = 10
	relOutdentPen   = 24
	relOutdentBlank = 17
	relDedentPen    = 23
	relDedentBlank  = 17
	indentWeight    = 60
)

// xfile is one side of the diff.
type xfile struct {
	lines  [][]byte // records, each with its newline
	class  []int    // equivalence class of each record
	rchg   []bool   // changed flags, offset by one (rchg[0], rchg[n+1] sentinels)
	rindex []int    // record index of each kept record
	ha     []int    // class of each kept record
	dstart int
	dend   int
}

func (x *xfile) nrec() int         { return len(x.lines) }
func (x *xfile) chg(i int) bool    { return x.rchg[i+1] }
func (x *xfile) set(i int, v bool) { x.rchg[i+1] = v }

// trimCommonTail is xdiff-interface.c's trim_common_tail: identical 1 KiB
// blocks at the end are dropped, then the partial line is given back.
func trimCommonTail(a, b []byte) ([]byte, []byte) {
	const blk = 1024
	trimmed, recovered := 0, 0
	smaller := min(len(a), len(b))
	ap, bp := len(a), len(b)
	for blk+trimmed <= smaller && bytes.Equal(a[ap-blk:ap], b[bp-blk:bp]) {
		trimmed += blk
		ap -= blk
		bp -= blk
	}
	for recovered < trimmed {
		c := a[ap+recovered]
		recovered++
		if c == '\n' {
			break
		}
	}
	return a[:len(a)-(trimmed-recovered)], b[:len(b)-(trimmed-recovered)]
}

func splitRecords(b []byte) [][]byte {
	out := make([][]byte, 0, bytes.Count(b, []byte{'\n'})+1)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// blameHunks is xdi_diff(parent, target) with blame's default options,
// returning the change script.
func blameHunks(ctx context.Context, parent, target []byte) ([]hunk, error) {
	return xdiffHunks(ctx, parent, target, true)
}

// xdiffHunks is blameHunks with the indent heuristic (diff.indentHeuristic)
// on or off.
func xdiffHunks(ctx context.Context, parent, target []byte, indentHeuristic bool) ([]hunk, error) {
	parent, target = trimCommonTail(parent, target)
	x1, x2, len1, len2 := xdlClassify(splitRecords(parent), splitRecords(target))
	if err := xdlMyersDiff(ctx, x1, x2, len1, len2, false); err != nil {
		return nil, err
	}
	changeCompact(x1, x2, indentHeuristic)
	changeCompact(x2, x1, indentHeuristic)
	return xdlBuildScript(x1, x2), nil
}

// xdlClassify is the classification half of xdl_prepare_env: each record
// gets its equivalence class (numbered in order of first appearance,
// parent first, as git's classifier numbers them), and len1/len2 count
// each class's records on each side.
func xdlClassify(lines1, lines2 [][]byte) (x1, x2 *xfile, len1, len2 []int) {
	x1 = &xfile{lines: lines1}
	x2 = &xfile{lines: lines2}
	ids := make(map[string]int, len(x1.lines)+len(x2.lines))
	len1 = make([]int, 0, len(x1.lines)+len(x2.lines))
	len2 = make([]int, 0, len(x1.lines)+len(x2.lines))
	classify := func(x *xfile, side int) {
		x.class = make([]int, len(x.lines))
		for i, l := range x.lines {
			id, ok := ids[string(l)]
			if !ok {
				id = len(ids)
				ids[string(l)] = id
				len1 = append(len1, 0)
				len2 = append(len2, 0)
			}
			if side == 1 {
				len1[id]++
			} else {
				len2[id]++
			}
			x.class[i] = id
		}
		x.rchg = make([]bool, len(x.lines)+2)
	}
	classify(x1, 1)
	classify(x2, 2)
	return x1, x2, len1, len2
}

// xdlMyersDiff is the rest of xdl_do_diff for the Myers algorithm:
// xdl_optimize_ctxs (xdl_trim_ends, xdl_cleanup_records) on the
// classified files, then xdl_recs_cmp over the kept records. len1/len2
// are the per-class record counts of x1 and x2 (indexed by class).
func xdlMyersDiff(ctx context.Context, x1, x2 *xfile, len1, len2 []int, needMin bool) error {
	// xdl_trim_ends
	n1, n2 := x1.nrec(), x2.nrec()
	i, lim := 0, min(n1, n2)
	for ; i < lim && x1.class[i] == x2.class[i]; i++ {
	}
	x1.dstart, x2.dstart = i, i
	lim -= i
	j := 0
	for ; j < lim && x1.class[n1-1-j] == x2.class[n2-1-j]; j++ {
	}
	x1.dend, x2.dend = n1-j-1, n2-j-1
	// xdl_cleanup_records
	cleanup := func(x *xfile, other []int) {
		mlim := min(bogosqrt(x.nrec()), xdlMaxEqLimit)
		dis := make([]byte, x.nrec()+1)
		for i := x.dstart; i <= x.dend; i++ {
			nm := other[x.class[i]]
			switch {
			case nm == 0:
				dis[i] = 0
			case nm >= mlim:
				dis[i] = 2
			default:
				dis[i] = 1
			}
		}
		for i := x.dstart; i <= x.dend; i++ {
			if dis[i] == 1 || (dis[i] == 2 && !cleanMmatch(dis, i, x.dstart, x.dend)) {
				x.rindex = append(x.rindex, i)
				x.ha = append(x.ha, x.class[i])
			} else {
				x.set(i, true)
			}
		}
	}
	cleanup(x1, len2)
	cleanup(x2, len1)
	// xdl_do_diff
	nreff1, nreff2 := len(x1.ha), len(x2.ha)
	ndiags := nreff1 + nreff2 + 3
	kv := make([]int, 2*ndiags+2)
	env := &xdalgo{
		kvdf: kv, fo: nreff2 + 1,
		kvdb: kv, bo: ndiags + nreff2 + 1,
		mxcost: max(bogosqrt(ndiags), xdlMaxCostMin),
		ctx:    ctx,
	}
	return env.recsCmp(x1, 0, nreff1, x2, 0, nreff2, needMin)
}

// xdlBuildScript is xdl_build_script, in file order.
func xdlBuildScript(x1, x2 *xfile) []hunk {
	n1, n2 := x1.nrec(), x2.nrec()
	var hs []hunk
	for i1, i2 := 0, 0; i1 < n1 || i2 < n2; {
		if x1.chg(i1) || x2.chg(i2) {
			h := hunk{p0: i1, t0: i2}
			for x1.chg(i1) {
				i1++
			}
			for x2.chg(i2) {
				i2++
			}
			h.pn, h.tn = i1-h.p0, i2-h.t0
			hs = append(hs, h)
			continue
		}
		i1++
		i2++
	}
	return hs
}

// cleanMmatch is xdl_clean_mmatch: a multi-matched line is dropped when
// it sits in a run of mostly unmatched lines.
func cleanMmatch(dis []byte, i, s, e int) bool {
	if i-s > xdlSimscanWin {
		s = i - xdlSimscanWin
	}
	if e-i > xdlSimscanWin {
		e = i + xdlSimscanWin
	}
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*xdlKpdisRun < rpdis1+rdis1
}

type xdalgo struct {
	kvdf, kvdb []int
	fo, bo     int
	mxcost     int
	ctx        context.Context
	calls      int
}

func (e *xdalgo) f(d int) *int { return &e.kvdf[e.fo+d] }
func (e *xdalgo) b(d int) *int { return &e.kvdb[e.bo+d] }

// recsCmp is xdl_recs_cmp: shrink the box by its common ends, then split
// it at the middle snake and recurse.
func (e *xdalgo) recsCmp(x1 *xfile, off1, lim1 int, x2 *xfile, off2, lim2 int, needMin bool) error {
	e.calls++
	if e.calls&255 == 0 {
		if err := e.ctx.Err(); err != nil {
			return err
		}
	}
	ha1, ha2 := x1.ha, x2.ha
	for off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2] {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && ha1[lim1-1] == ha2[lim2-1] {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			x2.set(x2.rindex[off2], true)
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			x1.set(x1.rindex[off1], true)
		}
	default:
		s := e.split(ha1, off1, lim1, ha2, off2, lim2, needMin)
		if err := e.recsCmp(x1, off1, s.i1, x2, off2, s.i2, s.minLo); err != nil {
			return err
		}
		return e.recsCmp(x1, s.i1, lim1, x2, s.i2, lim2, s.minHi)
	}
	return nil
}

type xsplit struct {
	i1, i2       int
	minLo, minHi bool
}

// split is xdl_split: Myers' forward and backward search for the middle
// snake, cut short by git's heuristics on expensive boxes.
func (e *xdalgo) split(ha1 []int, off1, lim1 int, ha2 []int, off2, lim2 int, needMin bool) xsplit {
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid
	*e.f(fmid) = off1
	*e.b(bmid) = lim1
	var spl xsplit
	for ec := 1; ; ec++ {
		gotSnake := false
		if fmin > dmin {
			fmin--
			*e.f(fmin - 1) = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			*e.f(fmax + 1) = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if *e.f(d - 1) >= *e.f(d + 1) {
				i1 = *e.f(d - 1) + 1
			} else {
				i1 = *e.f(d + 1)
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2] {
				i1++
				i2++
			}
			if i1-prev1 > xdlSnakeCnt {
				gotSnake = true
			}
			*e.f(d) = i1
			if odd && bmin <= d && d <= bmax && *e.b(d) <= i1 {
				return xsplit{i1, i2, true, true}
			}
		}
		if bmin > dmin {
			bmin--
			*e.b(bmin - 1) = xdlLineMax
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			*e.b(bmax + 1) = xdlLineMax
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if *e.b(d - 1) < *e.b(d + 1) {
				i1 = *e.b(d - 1)
			} else {
				i1 = *e.b(d + 1) - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && ha1[i1-1] == ha2[i2-1] {
				i1--
				i2--
			}
			if prev1-i1 > xdlSnakeCnt {
				gotSnake = true
			}
			*e.b(d) = i1
			if !odd && fmin <= d && d <= fmax && i1 <= *e.f(d) {
				return xsplit{i1, i2, true, true}
			}
		}
		if needMin {
			continue
		}
		if gotSnake && ec > xdlHeurMinCost {
			best := 0
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				i1 := *e.f(d)
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > xdlKHeur*ec && v > best && off1+xdlSnakeCnt <= i1 && i1 < lim1 && off2+xdlSnakeCnt <= i2 && i2 < lim2 {
					for k := 1; ha1[i1-k] == ha2[i2-k]; k++ {
						if k == xdlSnakeCnt {
							best = v
							spl.i1, spl.i2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				spl.minLo, spl.minHi = true, false
				return spl
			}
			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				i1 := *e.b(d)
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > xdlKHeur*ec && v > best && off1 < i1 && i1 <= lim1-xdlSnakeCnt && off2 < i2 && i2 <= lim2-xdlSnakeCnt {
					for k := 0; ha1[i1+k] == ha2[i2+k]; k++ {
						if k == xdlSnakeCnt-1 {
							best = v
							spl.i1, spl.i2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				spl.minLo, spl.minHi = false, true
				return spl
			}
		}
		if ec >= e.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(*e.f(d), lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1, i2 = lim2+d, lim2
				}
				if fbest < i1+i2 {
					fbest, fbest1 = i1+i2, i1
				}
			}
			bbest, bbest1 := xdlLineMax, xdlLineMax
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, *e.b(d))
				i2 := i1 - d
				if i2 < off2 {
					i1, i2 = off2+d, off2
				}
				if i1+i2 < bbest {
					bbest, bbest1 = i1+i2, i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return xsplit{fbest1, fbest - fbest1, true, false}
			}
			return xsplit{bbest1, bbest - bbest1, false, true}
		}
	}
}

// A group is a run of changed records [start, end) (possibly empty).
type xgroup struct{ start, end int }

func groupInit(x *xfile) xgroup {
	g := xgroup{}
	for x.chg(g.end) {
		g.end++
	}
	return g
}

func groupNext(x *xfile, g *xgroup) bool {
	if g.end == x.nrec() {
		return false
	}
	g.start = g.end + 1
	for g.end = g.start; x.chg(g.end); g.end++ {
	}
	return true
}

func groupPrevious(x *xfile, g *xgroup) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; x.chg(g.start - 1); g.start-- {
	}
	return true
}

func groupSlideDown(x *xfile, g *xgroup) bool {
	if g.end < x.nrec() && x.class[g.start] == x.class[g.end] {
		x.set(g.start, false)
		g.start++
		x.set(g.end, true)
		g.end++
		for x.chg(g.end) {
			g.end++
		}
		return true
	}
	return false
}

func groupSlideUp(x *xfile, g *xgroup) bool {
	if g.start > 0 && x.class[g.start-1] == x.class[g.end-1] {
		g.start--
		x.set(g.start, true)
		g.end--
		x.set(g.end, false)
		for x.chg(g.start - 1) {
			g.start--
		}
		return true
	}
	return false
}

// getIndent is the indentation of a record (TAB to 8), -1 for a blank one.
func getIndent(l []byte) int {
	ret := 0
	for _, c := range l {
		switch c {
		case ' ':
			ret++
		case '\t':
			ret += 8 - ret%8
		case '\n', '\r':
		default:
			return ret
		}
		if ret >= maxIndent {
			return maxIndent
		}
	}
	return -1
}

type splitMeasure struct {
	eof                                                bool
	indent, preBlank, preIndent, postBlank, postIndent int
}

func measureSplit(x *xfile, split int) splitMeasure {
	var m splitMeasure
	if split >= x.nrec() {
		m.eof, m.indent = true, -1
	} else {
		m.indent = getIndent(x.lines[split])
	}
	m.preIndent = -1
	for i := split - 1; i >= 0; i-- {
		m.preIndent = getIndent(x.lines[i])
		if m.preIndent != -1 {
			break
		}
		m.preBlank++
		if m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}
	m.postIndent = -1
	for i := split + 1; i < x.nrec(); i++ {
		m.postIndent = getIndent(x.lines[i])
		if m.postIndent != -1 {
			break
		}
		m.postBlank++
		if m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

type splitScore struct{ effIndent, penalty int }

func scoreAddSplit(m splitMeasure, s *splitScore) {
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePen
	}
	if m.eof {
		s.penalty += endOfFilePen
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	s.penalty += totalBlankW * totalBlank
	s.penalty += postBlankW * postBlank
	indent := m.indent
	if indent == -1 {
		indent = m.postIndent
	}
	anyBlanks := totalBlank != 0
	s.effIndent += indent
	pick := func(withBlank, without int) int {
		if anyBlanks {
			return withBlank
		}
		return without
	}
	switch {
	case indent == -1, m.preIndent == -1:
	case indent > m.preIndent:
		s.penalty += pick(relIndentBlank, relIndentPen)
	case indent == m.preIndent:
	default:
		if m.postIndent != -1 && m.postIndent > indent {
			s.penalty += pick(relOutdentBlank, relOutdentPen)
		} else {
			s.penalty += pick(relDedentBlank, relDedentPen)
		}
	}
}

func scoreCmp(a, b splitScore) int {
	c := 0
	if a.effIndent > b.effIndent {
		c = 1
	} else if a.effIndent < b.effIndent {
		c = -1
	}
	return indentWeight*c + (a.penalty - b.penalty)
}

// changeCompact is xdl_change_compact with the indent heuristic: each
// group of changes is slid as far down as it goes, then up to line up
// with a change on the other side, else to the best-scored split.
func changeCompact(x, o *xfile, indentHeuristic bool) {
	g, go_ := groupInit(x), groupInit(o)
	for {
		if g.end != g.start {
			var groupsize, earliestEnd, endMatchingOther int
			for {
				groupsize = g.end - g.start
				endMatchingOther = -1
				for groupSlideUp(x, &g) {
					groupPrevious(o, &go_)
				}
				earliestEnd = g.end
				if go_.end > go_.start {
					endMatchingOther = g.end
				}
				for groupSlideDown(x, &g) {
					groupNext(o, &go_)
					if go_.end > go_.start {
						endMatchingOther = g.end
					}
				}
				if groupsize == g.end-g.start {
					break
				}
			}
			switch {
			case g.end == earliestEnd:
			case endMatchingOther != -1:
				for go_.end == go_.start {
					groupSlideUp(x, &g)
					groupPrevious(o, &go_)
				}
			case indentHeuristic:
				shift := earliestEnd
				if g.end-groupsize-1 > shift {
					shift = g.end - groupsize - 1
				}
				if g.end-indentMaxSlide > shift {
					shift = g.end - indentMaxSlide
				}
				bestShift := -1
				var best splitScore
				for ; shift <= g.end; shift++ {
					var s splitScore
					scoreAddSplit(measureSplit(x, shift), &s)
					scoreAddSplit(measureSplit(x, shift-groupsize), &s)
					if bestShift == -1 || scoreCmp(s, best) <= 0 {
						best, bestShift = s, shift
					}
				}
				for g.end > bestShift {
					groupSlideUp(x, &g)
					groupPrevious(o, &go_)
				}
			}
		}
		if !groupNext(x, &g) {
			break
		}
		groupNext(o, &go_)
	}
}
