// Package merge is a line-based three-way merge (diff3) for text files: the
// git backend uses it to recreate an agent's change on top of a remote head
// that moved. No well-kept Go library does diff3 (go-git has no merge at
// all), so it is written here: a Myers line diff of base against each side,
// then the classic diff3 walk over the stable (unchanged-on-both-sides)
// regions.
package merge

import (
	"bytes"
	"errors"
)

// ErrConflict is returned (wrapped in *ConflictError) when both sides
// changed the same lines differently.
var ErrConflict = errors.New("merge conflict")

// ConflictError reports the conflicting hunks' line ranges in the base.
type ConflictError struct {
	Hunks int
}

func (e *ConflictError) Error() string {
	return "merge conflict in " + itoa(e.Hunks) + " hunk(s)"
}

func (e *ConflictError) Is(t error) bool { return t == ErrConflict }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// IsBinary reports whether content looks binary (a NUL in the first 8000
// bytes, git's rule); binary files are never merged.
func IsBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// Merge merges ours and theirs, both derived from base. Identical changes on
// both sides are taken once. Overlapping different changes are a
// *ConflictError; nothing is returned then.
func Merge(base, ours, theirs []byte) ([]byte, error) {
	if bytes.Equal(ours, theirs) {
		return ours, nil
	}
	if bytes.Equal(base, ours) {
		return theirs, nil
	}
	if bytes.Equal(base, theirs) {
		return ours, nil
	}
	if IsBinary(base) || IsBinary(ours) || IsBinary(theirs) {
		return nil, &ConflictError{Hunks: 1}
	}
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	mo := matches(b, o) // mo[i] = index in o matched to b[i], or -1
	mt := matches(b, t)
	var out [][]byte
	conflicts := 0
	bi, oi, ti := 0, 0, 0
	for {
		// Find the next base line that is stable: matched in both sides at
		// exactly the positions where each side continues.
		i := bi
		for i < len(b) && !(mo[i] >= oi && mt[i] >= ti && mo[i] >= 0 && mt[i] >= 0) {
			i++
		}
		if i == len(b) {
			// Final chunk: everything left.
			c, ok := chunk(b[bi:], o[oi:], t[ti:])
			if !ok {
				conflicts++
			}
			out = append(out, c...)
			break
		}
		oj, tj := mo[i], mt[i]
		if i > bi || oj > oi || tj > ti {
			c, ok := chunk(b[bi:i], o[oi:oj], t[ti:tj])
			if !ok {
				conflicts++
			}
			out = append(out, c...)
		}
		// Copy the stable run.
		for i < len(b) && mo[i] == oj && mt[i] == tj {
			out = append(out, b[i])
			i, oj, tj = i+1, oj+1, tj+1
		}
		bi, oi, ti = i, oj, tj
	}
	if conflicts > 0 {
		return nil, &ConflictError{Hunks: conflicts}
	}
	return bytes.Join(out, nil), nil
}

// chunk resolves one unstable region: a side that did not change yields to
// the other; equal changes are taken once; anything else conflicts.
func chunk(b, o, t [][]byte) ([][]byte, bool) {
	switch {
	case equal(b, o):
		return t, true
	case equal(b, t):
		return o, true
	case equal(o, t):
		return o, true
	}
	return nil, false
}

func equal(a, b [][]byte) bool {
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

// splitLines keeps each line's terminator so that joining gives the input
// back byte for byte (a missing final newline included).
func splitLines(s []byte) [][]byte {
	var out [][]byte
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// Lines splits content into lines that keep their terminators.
func Lines(s []byte) [][]byte { return splitLines(s) }

// Matches returns, for each line of a, the index of the line of b it is
// matched to by a longest-common-subsequence (Myers) line diff, or -1. The
// git tools build unified diffs from it.
func Matches(a, b [][]byte) []int { return matches(a, b) }

// matches returns, for each line of a, the index of the line of b it is
// matched to by a longest-common-subsequence line diff, or -1.
func matches(a, b [][]byte) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	// Trim common prefix and suffix: most edits are small.
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		m[pre] = pre
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		m[len(a)-1-suf] = len(b) - 1 - suf
		suf++
	}
	for _, p := range myers(a[pre:len(a)-suf], b[pre:len(b)-suf]) {
		m[pre+p[0]] = pre + p[1]
	}
	return m
}

// myers returns the matched index pairs of an LCS of a and b (Myers' O(ND)
// greedy algorithm with a trace for the path).
func myers(a, b [][]byte) [][2]int {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return nil
	}
	// Intern lines so comparisons are integer compares.
	ids := map[string]int{}
	ai, bi := make([]int, n), make([]int, m)
	for i, l := range a {
		id, ok := ids[string(l)]
		if !ok {
			id = len(ids)
			ids[string(l)] = id
		}
		ai[i] = id
	}
	for i, l := range b {
		id, ok := ids[string(l)]
		if !ok {
			id = len(ids)
			ids[string(l)] = id
		}
		bi[i] = id
	}
	max := n + m
	off := max
	v := make([]int, 2*max+2)
	var trace [][]int
	for d := 0; d <= max; d++ {
		snap := make([]int, len(v))
		copy(snap, v)
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && ai[x] == bi[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, ai, bi, d, off)
			}
		}
	}
	return nil
}

func backtrack(trace [][]int, a, b []int, d, off int) [][2]int {
	x, y := len(a), len(b)
	var pairs [][2]int
	for ; d > 0; d-- {
		v := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v[off+pk]
		py := px - pk
		for x > px && y > py && x > 0 && y > 0 {
			x, y = x-1, y-1
			pairs = append(pairs, [2]int{x, y})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		pairs = append(pairs, [2]int{x, y})
	}
	for i, j := 0, len(pairs)-1; i < j; i, j = i+1, j-1 {
		pairs[i], pairs[j] = pairs[j], pairs[i]
	}
	return pairs
}
