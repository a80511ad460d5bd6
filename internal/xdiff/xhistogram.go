package xdiff

// Histogram diff, git's xdiff/xhistogram.c.

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
			return ErrFailed
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
