package xdiff

// Patience diff, git's xdiff/xpatience.c.

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
