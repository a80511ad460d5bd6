package gittools

// Abbreviated object names in log output (%h, %t, %p, --oneline, the
// Merge: line): git's find_unique_abbrev with the default length, which
// is core.abbrev or, when unset, 7 grown with the number of packed
// objects, then lengthened until no other object shares the prefix.
// blame's scoreboard already reads packs for this; it is reused.

import (
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

type abbrever struct {
	sb    *scoreboard
	min   int
	cache map[plumbing.Hash]string
}

func newAbbrever(r *git.Repository) *abbrever {
	sb := &scoreboard{r: r}
	n := readBlameConfig(r).abbrev
	if n < 0 {
		n = sb.defaultAbbrev()
	}
	return &abbrever{sb: sb, min: n, cache: map[plumbing.Hash]string{}}
}

// Short is h's unique abbreviation.
func (a *abbrever) Short(h plumbing.Hash) string {
	if s, ok := a.cache[h]; ok {
		return s
	}
	hex := h.String()
	n := a.min
	if n < len(hex) {
		n = min(a.sb.uniqueAbbrev(h, n), len(hex))
	}
	a.cache[h] = hex[:n]
	return hex[:n]
}

// Close releases the pack indexes opened by short.
func (a *abbrever) Close() {
	if a.sb.abbrevs != nil {
		a.sb.abbrevs.close()
	}
}
