// Package suggest finds the name a typo meant: the configuration's keys
// and variables, and the tools a call names ("did you mean write_file?").
// One copy, so that every "did you mean" reads alike.
package suggest

import "strings"

// Nearest is the candidate closest to s by edit distance, when it is
// close enough to be the intended one (at most a third of its length,
// and at least 1, 2 for names of 6 and more).
func Nearest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(len(s)/3, 1)
	if len(s) >= 6 {
		limit = max(limit, 2)
	}
	if bestD == 0 || bestD > limit {
		return ""
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance (optimal string
// alignment): a swap of neighbours counts 1, as typos usually are.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
