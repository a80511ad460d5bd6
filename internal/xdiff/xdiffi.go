package xdiff

// Myers' diff as xdiff/xdiffi.c runs it: divide and conquer with git's cost
// cut-offs, then the slide of each change group (xdl_change_compact) with
// the indent heuristic.

import "context"

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

// xdlBuildScript is xdl_build_script, in file order.
func xdlBuildScript(x1, x2 *xfile) []Change {
	n1, n2 := x1.nrec(), x2.nrec()
	var hs []Change
	for i1, i2 := 0, 0; i1 < n1 || i2 < n2; {
		if x1.chg(i1) || x2.chg(i2) {
			h := Change{I1: i1, I2: i2}
			for x1.chg(i1) {
				i1++
			}
			for x2.chg(i2) {
				i2++
			}
			h.Chg1, h.Chg2 = i1-h.I1, i2-h.I2
			hs = append(hs, h)
			continue
		}
		i1++
		i2++
	}
	return hs
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
