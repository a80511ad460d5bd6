package xdiff

// What xdiff/xprepare.c does before an algorithm runs: records are
// classified (equal lines share a class), common ends trimmed and lines
// with no match, or many matches inside unmatched runs, set aside.

import (
	"bytes"
	"context"
	"hash/maphash"
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

func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// xdlClassify is the classification half of xdl_prepare_env: each record
// gets its equivalence class (numbered in order of first appearance,
// parent first, as git's classifier numbers them), and len1/len2 count
// each class's records on each side.
func xdlClassify(lines1, lines2 [][]byte) (x1, x2 *xfile, len1, len2 []int) {
	x1 = &xfile{lines: lines1}
	x2 = &xfile{lines: lines2}
	n := len(x1.lines) + len(x2.lines)
	len1 = make([]int, 0, n)
	len2 = make([]int, 0, n)
	// An open-addressed table of the classes, as xdl_classify_record's
	// hash chains: a line is hashed once and compared byte for byte only
	// with a class of the same hash (a map keyed by the line's bytes
	// hashes it again to insert and costs an allocation per class).
	size := 16
	for size < 2*n {
		size <<= 1
	}
	mask := uint64(size - 1)
	slots := make([]int32, size) // class+1; 0 empty
	reps := make([][]byte, 0, n)
	hashes := make([]uint64, 0, n)
	seed := maphash.MakeSeed()
	classify := func(x *xfile, side int) {
		x.class = make([]int, len(x.lines))
		for i, l := range x.lines {
			h := maphash.Bytes(seed, l)
			j := h & mask
			id := -1
			for slots[j] != 0 {
				c := int(slots[j] - 1)
				if hashes[c] == h && bytes.Equal(reps[c], l) {
					id = c
					break
				}
				j = (j + 1) & mask
			}
			if id < 0 {
				id = len(reps)
				reps = append(reps, l)
				hashes = append(hashes, h)
				slots[j] = int32(id + 1)
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
