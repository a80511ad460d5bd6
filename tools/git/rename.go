package git

import (
	"sort"
	"strings"
)

// Rename detection as git does it by default (diff.renames): deleted and
// added files are paired, exact matches first, then by similarity of at
// least 50%, where similarity is the bytes of lines the two files share
// over the larger size (git's spanhash estimate counts the same thing for
// line-structured text).

const renameThreshold = 50

func similarity(a, b []byte) int {
	if len(a) == 0 && len(b) == 0 {
		return 100
	}
	count := map[string]int{}
	for _, l := range strings.SplitAfter(string(a), "\n") {
		if l != "" {
			count[l]++
		}
	}
	common := 0
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" && count[l] > 0 {
			count[l]--
			common += len(l)
		}
	}
	return common * 100 / max(len(a), len(b))
}

// detectRenames pairs deletions with additions in changes (sorted by
// path) and returns the list sorted by the destination path.
func detectRenames(changes []*change) []*change {
	var dels, adds []*change
	for _, c := range changes {
		switch {
		case c.newMode == 0:
			dels = append(dels, c)
		case c.oldMode == 0:
			adds = append(adds, c)
		}
	}
	if len(dels) == 0 || len(adds) == 0 {
		return changes
	}
	paired := map[*change]*change{} // add → del
	used := map[*change]bool{}
	for _, a := range adds {
		for _, d := range dels {
			if !used[d] && d.oldHash == a.newHash && d.oldMode == a.newMode {
				paired[a], used[d] = d, true
				break
			}
		}
	}
	if len(adds)*len(dels) <= 10000 {
		for _, a := range adds {
			if paired[a] != nil || isBinary(a.new()) {
				continue
			}
			best, bestScore := (*change)(nil), renameThreshold-1
			for _, d := range dels {
				if used[d] || isBinary(d.old()) {
					continue
				}
				if s := similarity(d.old(), a.new()); s > bestScore {
					best, bestScore = d, s
				}
			}
			if best != nil {
				paired[a], used[best] = best, true
			}
		}
	}
	var out []*change
	for _, c := range changes {
		if used[c] {
			continue
		}
		if d := paired[c]; d != nil {
			c.oldPath = d.path
			c.oldMode, c.oldHash, c.oldData, c.oldLoaded = d.oldMode, d.oldHash, d.oldData, d.oldLoaded
			c.score = similarity(c.old(), c.new())
			if c.oldHash == c.newHash {
				c.score = 100
			}
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// renameName is git's --stat name for a rename: the common directory
// prefix and suffix kept outside braces, "{old => new}".
func renameName(from, to string) string {
	pfx := 0
	for i := 0; i < len(from) && i < len(to) && from[i] == to[i]; i++ {
		if from[i] == '/' {
			pfx = i + 1
		}
	}
	sfx := 0
	for i := 1; i <= len(from)-pfx && i <= len(to)-pfx && from[len(from)-i] == to[len(to)-i]; i++ {
		if from[len(from)-i] == '/' {
			sfx = i
		}
	}
	a, b := from[pfx:len(from)-sfx], to[pfx:len(to)-sfx]
	if pfx == 0 && sfx == 0 {
		return from + " => " + to
	}
	return from[:pfx] + "{" + a + " => " + b + "}" + from[len(from)-sfx:]
}
