package gittools

// git's dense combined diff (git show of a merge, "diff --cc";
// combine-diff.c): for each path that differs from every parent, the
// result's lines are marked with the parents they were added against, the
// lines each parent lost are hung in front of the result line they
// preceded (coalesced across parents by LCS), and hunks whose changes come
// from one side only (the result took one parent's version unchanged) are
// dropped.

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/tgp-go/tgp/internal/xdiff"
)

// lostLine is a parent's line missing from the result.
type lostLine struct {
	text    []byte
	parents uint
}

// sline is one result line (plus a trailing one for lines lost at the end).
type sline struct {
	text  []byte
	flag  uint // bit i: added against parent i; bit n: shown; bit n+1: no pre-delete
	lost  []*lostLine
	plost []*lostLine // this parent's lost lines before coalescing
	pLno  []int
}

// writeCombined writes the --cc patch of one path, or nothing when every
// hunk is uninteresting and the modes agree.
//
// dirInPlace: the worktree holds a directory where the result would be.
// git then reads the result as an empty blob (combine-diff.c's S_ISDIR
// case): deleted in the header, every line removed in the hunks, where a
// missing file shows the header only.
func writeCombined(b *strings.Builder, po patchOpts, p string, parents []side, hasParent []bool, result side, hasResult, dirInPlace bool) {
	n := len(parents)
	var res []byte
	if hasResult {
		res, _ = result.load()
	}
	datas := make([][]byte, n)
	for i := range parents {
		if hasParent[i] {
			datas[i], _ = parents[i].load()
		}
	}
	modeDiffers := false
	for i := range parents {
		pm := filemode.FileMode(0)
		if hasParent[i] {
			pm = parents[i].mode
		}
		rm := filemode.FileMode(0)
		if hasResult {
			rm = result.mode
		}
		if pm != rm {
			modeDiffers = true
		}
	}
	// The path's diff driver decides when it says (show_patch_diff reads
	// userdiff->binary: the diff attribute, diff.<driver>.binary),
	// whatever the modes; otherwise a NUL in any side makes it binary.
	binary, decided := po.driverBinary(p)
	if !decided {
		binary = xdiff.IsBinary(res)
		for _, d := range datas {
			binary = binary || xdiff.IsBinary(d)
		}
	}
	lines := xdiff.Records(res)
	cnt := len(lines)
	sl := make([]sline, cnt+2)
	for i, l := range lines {
		sl[i].text = l
	}
	for i := range sl {
		sl[i].pLno = make([]int, n)
	}
	if !binary {
	parents:
		for i := 0; i < n; i++ {
			// A parent with the same object as an earlier one takes its
			// result (reuse_combine_diff): no second diff, and no
			// coalescing of the same lost lines, whose table is the
			// product of their counts.
			for j := 0; j < i; j++ {
				if parentOID(parents, hasParent, i) == parentOID(parents, hasParent, j) {
					reuseCombined(sl, cnt, i, j)
					continue parents
				}
			}
			combineParent(sl, cnt, i, datas[i], res)
		}
	}
	shown := !binary && makeHunks(sl, cnt, n, po.ctx)
	if !shown && !modeDiffers && !binary {
		return
	}
	fmt.Fprintf(b, "diff --cc %s\nindex ", po.quote(p))
	for i := range parents {
		if i > 0 {
			b.WriteByte(',')
		}
		h := plumbing.ZeroHash
		if hasParent[i] {
			h = parents[i].hash
		}
		b.WriteString(po.short(h))
	}
	rh := plumbing.ZeroHash
	if hasResult {
		rh = result.hash
	}
	fmt.Fprintf(b, "..%s\n", po.short(rh))
	added, deleted := false, !hasResult
	if modeDiffers {
		added = !deleted
		for i := range parents {
			if hasParent[i] {
				added = false
			}
		}
		if added {
			fmt.Fprintf(b, "new file mode %06o\n", result.mode)
		} else {
			if deleted {
				b.WriteString("deleted file ")
			}
			b.WriteString("mode ")
			for i := range parents {
				if i > 0 {
					b.WriteByte(',')
				}
				m := filemode.FileMode(0)
				if hasParent[i] {
					m = parents[i].mode
				}
				fmt.Fprintf(b, "%06o", m)
			}
			if hasResult {
				fmt.Fprintf(b, "..%06o", result.mode)
			}
			b.WriteString("\n")
		}
	}
	if binary {
		b.WriteString("Binary files differ\n")
		return
	}
	from, to := po.quote(po.aPrefix+p), po.quote(po.bPrefix+p)
	if added {
		from = "/dev/null"
	}
	if deleted {
		to = "/dev/null"
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n", from, to)
	if deleted && !dirInPlace {
		return
	}
	dumpSline(b, sl, cnt, n)
}

// parentOID is parent i's object id (zero when it has none), as
// combine-diff.c compares them.
func parentOID(parents []side, has []bool, i int) plumbing.Hash {
	if !has[i] {
		return plumbing.ZeroHash
	}
	return parents[i].hash
}

// reuseCombined is reuse_combine_diff: parent i is parent j's object, so
// it has j's line numbers, added lines and lost lines.
func reuseCombined(sl []sline, cnt, i, j int) {
	imask, jmask := uint(1)<<i, uint(1)<<j
	for lno := 0; lno <= cnt; lno++ {
		sl[lno].pLno[i] = sl[lno].pLno[j]
		for _, ll := range sl[lno].lost {
			if ll.parents&jmask != 0 {
				ll.parents |= imask
			}
		}
		if sl[lno].flag&jmask != 0 {
			sl[lno].flag |= imask
		}
	}
	sl[cnt+1].pLno[i] = sl[cnt+1].pLno[j]
}

// combineParent records parent i's differences against the result and
// numbers its lines (combine-diff.c combine_diff).
func combineParent(sl []sline, cnt, i int, parent, result []byte) {
	plines := xdiff.Records(parent)
	mask := uint(1) << i
	for _, h := range lineChanges(parent, result, xdiff.Params{IndentHeuristic: true, TrimTail: true}) {
		for k := h.I2; k < h.I2+h.Chg2; k++ {
			sl[k].flag |= mask
		}
		at := h.I2
		for k := h.I1; k < h.I1+h.Chg1; k++ {
			sl[at].plost = append(sl[at].plost, &lostLine{text: plines[k], parents: mask})
		}
	}
	pLno := 1
	for lno := 0; lno <= cnt; lno++ {
		sl[lno].pLno[i] = pLno
		if len(sl[lno].plost) > 0 {
			sl[lno].lost = coalesce(sl[lno].lost, sl[lno].plost, mask)
			sl[lno].plost = nil
		}
		for _, ll := range sl[lno].lost {
			if ll.parents&mask != 0 {
				pLno++
			}
		}
		if lno < cnt && sl[lno].flag&mask == 0 {
			pLno++
		}
	}
	sl[cnt+1].pLno[i] = pLno
}

// coalesce merges a parent's lost lines into the ones already hung on a
// result line: lines in the longest common subsequence gain the parent's
// bit, the others are inserted where the LCS places them.
func coalesce(base, add []*lostLine, mask uint) []*lostLine {
	if len(base) == 0 {
		return add
	}
	nb, na := len(base), len(add)
	const (
		dBase = iota
		dNew
		dMatch
	)
	lcs := make([][]int, nb+1)
	dir := make([][]int, nb+1)
	for i := range lcs {
		lcs[i] = make([]int, na+1)
		dir[i] = make([]int, na+1)
		dir[i][0] = dBase
	}
	for j := 1; j <= na; j++ {
		dir[0][j] = dNew
	}
	for i := 1; i <= nb; i++ {
		for j := 1; j <= na; j++ {
			switch {
			case bytes.Equal(base[i-1].text, add[j-1].text):
				lcs[i][j] = lcs[i-1][j-1] + 1
				dir[i][j] = dMatch
			case lcs[i][j-1] >= lcs[i-1][j]:
				lcs[i][j] = lcs[i][j-1]
				dir[i][j] = dNew
			default:
				lcs[i][j] = lcs[i-1][j]
				dir[i][j] = dBase
			}
		}
	}
	// Walk back from the ends, building the merged list in reverse.
	var rev []*lostLine
	i, j := nb, na
	for i != 0 || j != 0 {
		switch dir[i][j] {
		case dMatch:
			base[i-1].parents |= mask
			rev = append(rev, base[i-1])
			i, j = i-1, j-1
		case dNew:
			rev = append(rev, add[j-1])
			j--
		default:
			rev = append(rev, base[i-1])
			i--
		}
	}
	out := make([]*lostLine, len(rev))
	for k := range rev {
		out[k] = rev[len(rev)-1-k]
	}
	return out
}

func (s *sline) interesting(all uint) bool { return s.flag&all != 0 || len(s.lost) > 0 }

// makeHunks marks the lines to show (interesting lines and their context)
// and, dense, unmarks hunks whose changes all come from the same parents
// when that is not every parent. It reports whether anything is shown.
func makeHunks(sl []sline, cnt, n, context int) bool {
	all := uint(1)<<n - 1
	mark := uint(1) << n
	noPreDelete := uint(2) << n
	for i := 0; i <= cnt; i++ {
		if sl[i].interesting(all) {
			sl[i].flag |= mark
		} else {
			sl[i].flag &^= mark
		}
	}
	findNext := func(i int, uninteresting bool) int {
		for i <= cnt {
			if (sl[i].flag&mark == 0) == uninteresting {
				return i
			}
			i++
		}
		return i
	}
	adjustTail := func(begin, i int) int {
		if begin+1 <= i && sl[i-1].flag&all == 0 {
			i--
		}
		return i
	}
	// Dense: drop hunks with only two versions where the result is one
	// (before the context is painted, as git does).
	i := 0
	for i <= cnt {
		for i <= cnt && sl[i].flag&mark == 0 {
			i++
		}
		if cnt < i {
			break
		}
		begin := i
		j := i + 1
		for ; j <= cnt; j++ {
			if sl[j].flag&mark == 0 {
				la := adjustTail(begin, j)
				la = min(la+context, cnt+1)
				contin := false
				for la > 0 {
					la--
					if la < j {
						break
					}
					if sl[la].flag&mark != 0 {
						contin = true
						break
					}
				}
				if !contin {
					break
				}
				j = la
			}
		}
		end := j
		same, interesting := uint(0), false
		for k := i; k < end && !interesting; k++ {
			if d := sl[k].flag & all; d != 0 {
				if same == 0 {
					same = d
				} else if same != d {
					interesting = true
					break
				}
			}
			for _, ll := range sl[k].lost {
				if interesting {
					break
				}
				if same == 0 {
					same = ll.parents
				} else if same != ll.parents {
					interesting = true
				}
			}
		}
		if !interesting && same != all {
			for k := begin; k < end; k++ {
				sl[k].flag &^= mark
			}
		}
		i = end
	}
	i = findNext(0, false)
	if cnt < i {
		return false
	}
	for i <= cnt {
		j := max(i-context, 0)
		for j < i {
			if sl[j].flag&mark == 0 {
				sl[j].flag |= noPreDelete
			}
			sl[j].flag |= mark
			j++
		}
		for {
			j = findNext(i, true)
			if cnt < j {
				i = cnt + 1
				break
			}
			k := findNext(j, false)
			j = adjustTail(i, j)
			if k < j+context {
				for j < k {
					sl[j].flag |= mark
					j++
				}
				i = k
				continue
			}
			i = k
			end := min(j+context, cnt+1)
			for j < end {
				sl[j].flag |= mark
				j++
			}
			break
		}
	}
	for k := 0; k <= cnt; k++ {
		if sl[k].flag&mark != 0 {
			return true
		}
	}
	return false
}

// dumpSline writes the marked hunks (combine-diff.c dump_sline).
func dumpSline(b *strings.Builder, sl []sline, cnt, n int) {
	mark := uint(1) << n
	noPreDelete := uint(2) << n
	lno := 0
	for {
		var comment []byte
		for lno <= cnt && sl[lno].flag&mark == 0 {
			if t := sl[lno].text; len(t) > 0 && (t[0] == '_' || t[0] == '$' || t[0] >= 'a' && t[0] <= 'z' || t[0] >= 'A' && t[0] <= 'Z') {
				comment = t
			}
			lno++
		}
		if cnt < lno {
			return
		}
		end := lno + 1
		for end <= cnt && sl[end].flag&mark != 0 {
			end++
		}
		rlines := end - lno
		if cnt < end {
			rlines--
		}
		b.WriteString(strings.Repeat("@", n+1))
		for i := 0; i < n; i++ {
			fmt.Fprintf(b, " -%d,%d", sl[lno].pLno[i], sl[end].pLno[i]-sl[lno].pLno[i])
		}
		fmt.Fprintf(b, " +%d,%d ", lno+1, rlines)
		b.WriteString(strings.Repeat("@", n+1))
		if comment != nil {
			commentEnd := 0
			for i := 0; i < 40 && i < len(comment); i++ {
				c := comment[i]
				if c == '\n' || c == 0 {
					break
				}
				if c != ' ' && c != '\t' && c != '\r' && c != '\v' && c != '\f' {
					commentEnd = i
				}
			}
			if commentEnd > 0 {
				b.WriteString(" ")
				b.Write(comment[:commentEnd])
			}
		}
		b.WriteString("\n")
		for lno < end {
			s := &sl[lno]
			lno++
			if s.flag&noPreDelete == 0 {
				for _, ll := range s.lost {
					for j := 0; j < n; j++ {
						if ll.parents&(1<<j) != 0 {
							b.WriteByte('-')
						} else {
							b.WriteByte(' ')
						}
					}
					writeLine(b, ll.text, true)
				}
			}
			if cnt < lno {
				break
			}
			for j := 0; j < n; j++ {
				if s.flag&(1<<j) != 0 {
					b.WriteByte('+')
				} else {
					b.WriteByte(' ')
				}
			}
			writeLine(b, s.text, false)
		}
	}
}

// writeLine writes a line as git's show_line_to_eol does: printf's
// "%.*s" stops at a NUL, and a CR at the line's end is written after
// the text. A lost line is passed with its length unknown (strlen): its
// NUL ends it before the CR is looked for; a result line's CR is the
// byte before its newline.
func writeLine(b *strings.Builder, l []byte, lost bool) {
	l = bytes.TrimSuffix(l, []byte("\n"))
	if lost {
		if i := bytes.IndexByte(l, 0); i >= 0 {
			l = l[:i]
		}
	}
	cr := len(l) > 0 && l[len(l)-1] == '\r'
	if cr {
		l = l[:len(l)-1]
	}
	if i := bytes.IndexByte(l, 0); i >= 0 {
		l = l[:i]
	}
	b.Write(l)
	if cr {
		b.WriteByte('\r')
	}
	b.WriteByte('\n')
}
