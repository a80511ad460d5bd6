package git

import (
	"fmt"
	"path"
	"strings"

	"github.com/tgp-go/tgp/tools"
)

// pathspec is git's default pathspec: each item is relative to the working
// directory; an item matches a path equal to it, a path under it (a leading
// directory), or, when it holds a wildcard, a path fnmatch-ing it with `*`
// crossing `/` (git's default: no FNM_PATHNAME). No item matches all.
type pathspec struct {
	items []specItem
}

type specItem struct {
	pat     string // repository-relative, cleaned; "" is the whole tree
	glob    bool
	dirOnly bool
}

// parsePathspec resolves items given relative to wd (repository-relative,
// "" or "." for the root). An item that leaves the repository is git's
// "outside repository" error.
func parsePathspec(wd string, items []string) (pathspec, error) {
	var ps pathspec
	wd = strings.Trim(path.Clean("/"+wd), "/")
	for _, it := range items {
		if it == "" {
			return ps, &tools.Error{Kind: tools.KindBadArgs, Message: "fatal: empty string is not a valid pathspec. please use . instead if you meant to match all paths"}
		}
		dirOnly := strings.HasSuffix(it, "/")
		full := path.Clean(path.Join("/", wd, it))
		if rel := path.Join(wd, it); rel == ".." || strings.HasPrefix(rel, "../") {
			return ps, &tools.Error{Kind: tools.KindBadArgs, Message: fmt.Sprintf("fatal: %s: '%s' is outside repository", it, it)}
		}
		p := strings.TrimPrefix(full, "/")
		ps.items = append(ps.items, specItem{pat: p, glob: strings.ContainsAny(p, "*?[\\"), dirOnly: dirOnly && p != ""})
	}
	return ps, nil
}

// empty reports whether the pathspec has no items (it matches everything).
func (ps pathspec) empty() bool { return len(ps.items) == 0 }

// match reports whether a repository path is selected.
func (ps pathspec) match(p string) bool {
	if len(ps.items) == 0 {
		return true
	}
	for _, it := range ps.items {
		if it.matches(p) {
			return true
		}
	}
	return false
}

func (it specItem) matches(p string) bool {
	if it.pat == "" {
		return true
	}
	if p == it.pat {
		return !it.dirOnly
	}
	if strings.HasPrefix(p, it.pat+"/") {
		return true
	}
	return it.glob && wildmatch(it.pat, p)
}

// matchesDir reports whether some path under directory dir could match:
// used to prune tree walks.
func (ps pathspec) matchesDir(dir string) bool {
	if len(ps.items) == 0 {
		return true
	}
	for _, it := range ps.items {
		if it.pat == "" || it.glob || dir == it.pat || strings.HasPrefix(dir, it.pat+"/") || strings.HasPrefix(it.pat, dir+"/") {
			return true
		}
	}
	return false
}

// wildmatch is git's wildmatch without WM_PATHNAME: `*` and `?` match `/`
// too, `[...]` is a bracket expression (with `!`/`^` negation and ranges),
// and `\` quotes the next character.
func wildmatch(pat, s string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case '*':
			for len(pat) > 0 && pat[0] == '*' {
				pat = pat[1:]
			}
			if pat == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if wildmatch(pat, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			pat, s = pat[1:], s[1:]
		case '[':
			if s == "" {
				return false
			}
			n, ok, matched := bracket(pat, s[0])
			if !ok {
				// An unterminated bracket is a literal '['.
				if s[0] != '[' {
					return false
				}
				pat, s = pat[1:], s[1:]
				continue
			}
			if !matched {
				return false
			}
			pat, s = pat[n:], s[1:]
		case '\\':
			if len(pat) > 1 {
				pat = pat[1:]
			}
			fallthrough
		default:
			if s == "" || s[0] != pat[0] {
				return false
			}
			pat, s = pat[1:], s[1:]
		}
	}
	return s == ""
}

// bracket matches c against the bracket expression at the start of pat and
// returns its length; ok is false when the expression is not terminated.
func bracket(pat string, c byte) (n int, ok, matched bool) {
	i := 1
	negate := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negate = true
		i++
	}
	first := true
	for i < len(pat) {
		if pat[i] == ']' && !first {
			return i + 1, true, matched != negate
		}
		first = false
		lo := pat[i]
		if lo == '\\' && i+1 < len(pat) {
			i++
			lo = pat[i]
		}
		hi := lo
		if i+2 < len(pat) && pat[i+1] == '-' && pat[i+2] != ']' {
			hi = pat[i+2]
			if hi == '\\' && i+3 < len(pat) {
				i++
				hi = pat[i+2]
			}
			i += 2
		}
		if lo <= c && c <= hi {
			matched = true
		}
		i++
	}
	return 0, false, false
}
