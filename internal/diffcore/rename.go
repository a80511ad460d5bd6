package diffcore

import (
	"sort"
	"strings"
)

// CandidatesPerDst is NUM_CANDIDATE_PER_DST: how many sources a
// destination keeps for the global ranking.
const CandidatesPerDst = 4

// Candidate is struct diff_score: a source scored against a destination
// (both the caller's indexes).
type Candidate struct {
	Src, Dst int
	Score    int
	SameName bool // the same basename as the destination (basename_same)
}

// Compare is score_compare: negative when a ranks before b (a higher
// score, then a same basename), 0 when they tie.
func Compare(a, b Candidate) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	switch {
	case a.SameName == b.SameName:
		return 0
	case a.SameName:
		return -1
	}
	return 1
}

// Best is one destination's CandidatesPerDst best sources, kept as
// record_if_better keeps them: a candidate replaces the first of the
// worst slots when it ranks strictly before it; an empty slot ranks after
// every candidate.
type Best struct {
	slot [CandidatesPerDst]Candidate
	used [CandidatesPerDst]bool
}

// worse reports whether slot i ranks after candidate c (score_compare > 0).
func (b *Best) worse(i int, c Candidate, cset bool) bool {
	if !b.used[i] {
		return cset
	}
	if !cset {
		return false
	}
	return Compare(b.slot[i], c) > 0
}

// Record is record_if_better.
func (b *Best) Record(c Candidate) {
	w := 0
	for k := 1; k < CandidatesPerDst; k++ {
		if b.worse(k, b.slot[w], b.used[w]) {
			w = k
		}
	}
	if b.worse(w, c, true) {
		b.slot[w], b.used[w] = c, true
	}
}

// Ranked is the kept candidates best first, ties in slot order (git sorts
// its candidate array with a stable merge sort).
func (b *Best) Ranked() []Candidate {
	out := make([]Candidate, 0, CandidatesPerDst)
	for i, c := range b.slot {
		if b.used[i] {
			out = append(out, c)
		}
	}
	Rank(out)
	return out
}

// Rank sorts candidates best first by score_compare, ties kept in order.
func Rank(cs []Candidate) {
	sort.SliceStable(cs, func(i, j int) bool { return Compare(cs[i], cs[j]) < 0 })
}

// maxIdentical is how many identical sources find_identical_files looks
// at before it takes the best seen ("too many identical alternatives").
const maxIdentical = 100

// Identical is find_identical_files for one destination: of n sources
// (in the caller's order, git's path order), those cand accepts (the
// destination's blob, in modes ModesPair allows, usable as a source) are
// scored, a point for a source not renamed away yet and one for the same
// basename, and the first of the best is returned (-1: none). At most 100
// accepted sources are looked at.
func Identical(n int, cand func(i int) (ok, unused, sameName bool)) int {
	best, bestScore, left := -1, -1, maxIdentical
	for i := 0; i < n; i++ {
		ok, unused, sameName := cand(i)
		if !ok {
			continue
		}
		score := 0
		if unused {
			score++
		}
		if sameName {
			score++
		}
		if score > bestScore {
			best, bestScore = i, score
			if score == 2 {
				break
			}
		}
		if left--; left == 0 {
			break
		}
	}
	return best
}

// MinBasenameScore is the score a basename match needs
// (find_basename_matches' minimum: halfway from minScore to MaxScore, git's
// default basename factor of 50%).
func MinBasenameScore(minScore int) int { return minScore + (MaxScore-minScore)/2 }

// BasenameMatches is find_basename_matches, the step between exact and
// inexact renames when renames, not copies, are sought: of the sources and
// destinations not paired yet (their paths, in the caller's order: git's
// path order), a source whose basename no other source has is paired
// with the destination whose basename it is, when no other destination
// has it either and score(src, dst) (estimate_similarity, cut at
// MinBasenameScore(minScore)) reaches MinBasenameScore(minScore).
// relevant, when not nil, leaves out the sources merge-ort does not look
// for (relevant_sources). Each pair is a Candidate with the sources' and
// destinations' indexes.
func BasenameMatches(srcs, dsts []string, relevant func(src int) bool, minScore int, score func(src, dst, minScore int) int) []Candidate {
	base := func(p string) string {
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			return p[i+1:]
		}
		return p
	}
	unique := func(paths []string) map[string]int {
		m := make(map[string]int, len(paths))
		for i, p := range paths {
			if _, dup := m[base(p)]; dup {
				m[base(p)] = -1
			} else {
				m[base(p)] = i
			}
		}
		return m
	}
	srcBase, dstBase := unique(srcs), unique(dsts)
	min := MinBasenameScore(minScore)
	var out []Candidate
	taken := map[int]bool{}
	for i, p := range srcs {
		if relevant != nil && !relevant(i) {
			continue
		}
		b := base(p)
		d, ok := dstBase[b]
		// A basename shared by several sources or destinations is left
		// to directory rename heuristics (idx_possible_rename), which
		// only merges have.
		if !ok || d < 0 || srcBase[b] != i || taken[d] {
			continue
		}
		if s := score(i, d, min); s >= min {
			out = append(out, Candidate{Src: i, Dst: d, Score: s, SameName: true})
			taken[d] = true
		}
	}
	return out
}
