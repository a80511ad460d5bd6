package xdiff

import "context"

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
// own with the Myers algorithm (git re-prepares the sub-files, so they are
// classified again: the classes, their counts, xdl_trim_ends and
// xdl_cleanup_records's limits are those of the ranges alone), and the
// changed flags are copied back.
// need_min is off: git's CLI clears XDF_NEED_MINIMAL whenever it picks
// patience or histogram, and only the algorithm bits are dropped here.
func (r *xrange) fallBack(line1, count1, line2, count2 int) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	s1, s2, len1, len2 := xdlClassify(r.x1.lines[line1-1:line1-1+count1], r.x2.lines[line2-1:line2-1+count2])
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
