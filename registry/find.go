package registry

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Match is one ranked hit of Find.
type Match struct {
	Path  string
	Entry Entry
	Score float64
}

// Field weights: a query word in the tool's name matters more than one in
// its description. Implemented by repeating the name's tokens (BM25F-lite).
const (
	nameWeight = 3
	k1         = 1.2
	b          = 0.75
)

type bm25 struct {
	docs  []Entry
	tf    []map[string]int
	lens  []int
	avg   float64
	df    map[string]int
	total int
}

// Find ranks tools for a query with BM25 over name (weighted), path and
// description. Ties keep path order. limit <= 0 means 10.
func (r *Registry) Find(query string, limit int) []Match {
	if limit <= 0 {
		limit = 10
	}
	r.mu.Lock()
	if r.index == nil {
		r.index = buildIndex(r.entries)
	}
	idx := r.index
	r.mu.Unlock()
	q := tokens(query)
	if len(q) == 0 {
		return nil
	}
	var out []Match
	for i, e := range idx.docs {
		s := 0.0
		seen := map[string]bool{}
		for _, t := range q {
			if seen[t] {
				continue
			}
			seen[t] = true
			f := float64(idx.tf[i][t])
			if f == 0 {
				continue
			}
			n := float64(idx.df[t])
			idf := math.Log(1 + (float64(idx.total)-n+0.5)/(n+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(idx.lens[i])/idx.avg))
		}
		if s > 0 {
			out = append(out, Match{Path: e.Path, Entry: e, Score: math.Round(s*1e4) / 1e4})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func buildIndex(entries map[string]Entry) *bm25 {
	idx := &bm25{df: map[string]int{}}
	paths := make([]string, 0, len(entries))
	for p := range entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	sum := 0
	for _, p := range paths {
		e := entries[p]
		var toks []string
		name := tokens(e.Name)
		for i := 0; i < nameWeight; i++ {
			toks = append(toks, name...)
		}
		toks = append(toks, tokens(strings.TrimPrefix(strings.TrimSuffix(p, ".ts"), ToolsDir+"/"))...)
		if e.Description != NoDescription {
			toks = append(toks, tokens(e.Description)...)
		}
		tf := map[string]int{}
		for _, t := range toks {
			tf[t]++
		}
		for t := range tf {
			idx.df[t]++
		}
		idx.docs = append(idx.docs, e)
		idx.tf = append(idx.tf, tf)
		idx.lens = append(idx.lens, len(toks))
		sum += len(toks)
	}
	idx.total = len(paths)
	if idx.total > 0 {
		idx.avg = float64(sum) / float64(idx.total)
	}
	if idx.avg == 0 {
		idx.avg = 1
	}
	return idx
}

var stopwords = map[string]bool{"a": true, "an": true, "the": true, "of": true, "to": true, "and": true,
	"or": true, "in": true, "for": true, "on": true, "by": true, "with": true, "is": true, "it": true, "from": true}

// tokens splits text into lower-case terms: words are split on
// non-alphanumerics and at camelCase and letter/digit boundaries, stop
// words dropped, and a plural "s" trimmed.
func tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) == 0 {
			return
		}
		t := strings.ToLower(string(cur))
		cur = cur[:0]
		if stopwords[t] {
			return
		}
		if len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") {
			t = t[:len(t)-1]
		}
		out = append(out, t)
	}
	rs := []rune(s)
	for i, c := range rs {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			flush()
			continue
		}
		if i > 0 && len(cur) > 0 {
			p := rs[i-1]
			camel := unicode.IsUpper(c) && unicode.IsLower(p)
			acronymEnd := unicode.IsUpper(c) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(p)
			digit := unicode.IsDigit(c) != unicode.IsDigit(p)
			if camel || acronymEnd || digit {
				flush()
			}
		}
		cur = append(cur, c)
	}
	flush()
	return out
}
