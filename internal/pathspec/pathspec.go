package pathspec

import (
	"fmt"
	"path"
	"strings"
)

// Pathspec is git's pathspec: each item is relative to the working
// directory; an item matches a path equal to it, a path under it (a leading
// directory), or, when it holds a wildcard, a path fnmatch-ing it with `*`
// crossing `/` (git's default: no FNM_PATHNAME). No item matches all.
// Magic is read as git's pathspec.c does: the short form (":/" top, ":!" or
// ":^" exclude) and the long form ":(top,literal,glob,icase,exclude)"; a
// path is selected when some positive item matches it and no exclude item
// does, and a pathspec of excludes only starts from the whole tree.
type Pathspec struct {
	Items   []Item // the positive items; none matches every path
	Exclude []Item // the exclude items
}

// Item is one pathspec item.
type Item struct {
	Raw      string // as given (for error messages)
	Pat      string // repository-relative, cleaned; "" is the whole tree
	Match    string // the path as git's pathspec item holds it (from the top: as written)
	Glob     bool   // holds a wildcard (and is not literal)
	PathGlob bool   // :(glob): wildmatch with WM_PATHNAME ("*" stays in a directory, "**" crosses)
	ICase    bool   // :(icase): ASCII letters match either case
	DirOnly  bool   // names a directory only (a trailing "/", ".", "..")
}

// Magic is one item's magic.
type Magic struct {
	Top, Literal, Glob, ICase, Exclude bool
}

// ParseMagic splits an item into its magic and the path that follows.
func ParseMagic(it string) (Magic, string, error) {
	var m Magic
	if !strings.HasPrefix(it, ":") {
		return m, it, nil
	}
	rest := it[1:]
	if strings.HasPrefix(rest, "(") {
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return m, "", fmt.Errorf("fatal: Missing ')' at the end of pathspec magic in '%s'", it)
		}
		for _, w := range strings.Split(rest[1:end], ",") {
			switch strings.TrimSpace(w) {
			case "top":
				m.Top = true
			case "literal":
				m.Literal = true
			case "glob":
				m.Glob = true
			case "icase":
				m.ICase = true
			case "exclude":
				m.Exclude = true
			case "":
			default:
				return m, "", fmt.Errorf("fatal: Invalid pathspec magic '%s' in '%s'", strings.TrimSpace(w), it)
			}
		}
		if m.Literal && m.Glob {
			return m, "", fmt.Errorf("fatal: %s: 'literal' and 'glob' are incompatible", it)
		}
		return m, rest[end+1:], nil
	}
	// Short magic runs to a ':' or the first character that is not
	// pathspec punctuation (git's GIT_PATHSPEC_MAGIC class); such
	// punctuation with no meaning is an error, as in git.
	i := 0
	for ; i < len(rest) && rest[i] != ':'; i++ {
		ch := rest[i]
		if ch == '^' || ch == '!' {
			m.Exclude = true
			continue
		}
		if ch == '/' {
			m.Top = true
			continue
		}
		if strings.IndexByte("\"#%&',-;<=>@_`~", ch) >= 0 {
			return m, "", fmt.Errorf("fatal: Unimplemented pathspec magic '%c' in '%s'", ch, it)
		}
		break
	}
	return m, strings.TrimPrefix(rest[i:], ":"), nil
}

// Error is a pathspec git refuses (an empty item, unknown magic, an item
// outside the repository): its message is git's.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

// Parse resolves items given relative to wd (repository-relative, "" or
// "." for the root). An item that leaves the repository is git's "outside
// repository" error. When check is not nil, each item is checked as it
// is parsed (git's parse_pathspec dies at the first item that fails, so
// an item after it is not looked at) and its error returned as it is;
// the pathspec's own errors are *Error.
func Parse(wd string, items []string, check func(Item) error) (Pathspec, error) {
	var ps Pathspec
	wd = strings.Trim(path.Clean("/"+wd), "/")
	for _, raw := range items {
		if raw == "" {
			return ps, &Error{Message: "fatal: empty string is not a valid pathspec. please use . instead if you meant to match all paths"}
		}
		m, it, err := ParseMagic(raw)
		if err != nil {
			return ps, &Error{Message: err.Error()}
		}
		var p string
		// normalize_path_copy keeps the slash before a last "." or ".."
		// component ("d/." is "d/", "a/b/.." is "a/", "." in directory d
		// is "d/"): a directory only.
		last := path.Base("/" + it)
		dirOnly := strings.HasSuffix(it, "/") || last == "." || last == ".."
		if m.Top {
			// From the top, git takes the path as written: not cleaned,
			// so ":/." or ":(top)./a" name nothing and ":/" everything.
			p = strings.TrimSuffix(it, "/")
		} else {
			if it == "" {
				it = "."
			}
			if rel := path.Join(wd, it); rel == ".." || strings.HasPrefix(rel, "../") {
				// git quotes the item as written, its magic off (and
				// names the repository's directory, left out here).
				return ps, &Error{Message: fmt.Sprintf("fatal: %s: '%s' is outside repository", raw, it)}
			}
			p = strings.TrimPrefix(path.Clean(path.Join("/", wd, it)), "/")
		}
		match := p
		if m.Top {
			match = it
		}
		if match == "" {
			match = "."
		}
		item := Item{Raw: raw, Pat: p, Match: match, Glob: !m.Literal && strings.ContainsAny(p, "*?[\\"), PathGlob: m.Glob, ICase: m.ICase, DirOnly: dirOnly && p != ""}
		if check != nil {
			if err := check(item); err != nil {
				return ps, err
			}
		}
		if m.Exclude {
			ps.Exclude = append(ps.Exclude, item)
			continue
		}
		ps.Items = append(ps.Items, item)
	}
	if len(ps.Items) == 0 && len(ps.Exclude) > 0 {
		ps.Items = []Item{{}} // only excludes: from the whole tree
	}
	return ps, nil
}

// Empty reports whether the pathspec has no items (it matches everything).
func (ps Pathspec) Empty() bool { return len(ps.Items) == 0 }

// Plain reports whether every item is a literal path with no magic: the
// fast paths that compare tree entries by name may be used.
func (ps Pathspec) Plain() bool {
	if len(ps.Exclude) > 0 {
		return false
	}
	for _, it := range ps.Items {
		if it.ICase || it.PathGlob {
			return false
		}
	}
	return true
}

// Match reports whether a repository path is selected.
func (ps Pathspec) Match(p string) bool {
	if len(ps.Items) == 0 {
		return true
	}
	for _, it := range ps.Exclude {
		if it.Matches(p) {
			return false
		}
	}
	for _, it := range ps.Items {
		if it.Matches(p) {
			return true
		}
	}
	return false
}

// IndexMatcher is ce_path_match as checkout_paths calls it over the
// index, in order, with a "seen" array (do_match_pathspec): an item that
// matched one path exactly is not tried on the paths after it. An item
// with wildcards that also names an existing path literally ("g/[ab].txt")
// then matches only that path among those after it ("g/a.txt" is left
// out; as an exclusion, "g/a.txt" is not excluded). Call match with the
// paths in index order.
type IndexMatcher struct {
	ps         Pathspec
	exact, exX []bool
}

// NewIndexMatcher starts a match over the index in order.
func NewIndexMatcher(ps Pathspec) *IndexMatcher {
	return &IndexMatcher{ps: ps, exact: make([]bool, len(ps.Items)), exX: make([]bool, len(ps.Exclude))}
}

// Match reports whether the index path p, the next in order, is selected.
func (m *IndexMatcher) Match(p string) bool {
	try := func(items []Item, exact []bool) bool {
		hit := false
		for i, it := range items {
			if exact[i] || !it.Matches(p) {
				continue
			}
			hit = true
			if it.Pat != "" && (p == it.Pat || it.ICase && strings.EqualFold(p, it.Pat)) {
				exact[i] = true
			}
		}
		return hit
	}
	if len(m.ps.Items) > 0 && !try(m.ps.Items, m.exact) {
		return false
	}
	return !try(m.ps.Exclude, m.exX)
}

// Matches reports whether the item alone selects the repository path p.
func (it Item) Matches(p string) bool {
	if it.Pat == "" {
		return true
	}
	pat := it.Pat
	if it.ICase {
		pat, p = asciiLower(pat), asciiLower(p)
	}
	if p == pat {
		return !it.DirOnly
	}
	if strings.HasPrefix(p, pat+"/") {
		return true
	}
	if !it.Glob {
		return false
	}
	if it.DirOnly {
		// git's item keeps its trailing slash ("*/", "d*/", "d/*/.")
		// and fnmatches the whole of it: no file's path ends in "/", so
		// such an item matches only a path under a directory literally
		// named by it (the prefix test above).
		pat += "/"
	}
	if it.PathGlob {
		return wildmatchPath(pat, p)
	}
	return wildmatch(pat, p)
}

// MatchesDir reports whether some path under directory dir could match:
// used to prune tree walks.
func (ps Pathspec) MatchesDir(dir string) bool {
	if len(ps.Items) == 0 {
		return true
	}
	for _, it := range ps.Items {
		d, pat := dir, it.Pat
		if it.ICase {
			d, pat = asciiLower(d), asciiLower(pat)
		}
		if pat == "" || it.Glob || d == pat || strings.HasPrefix(d, pat+"/") || strings.HasPrefix(pat, d+"/") {
			return true
		}
	}
	return false
}

// wildmatch is git's wildmatch without WM_PATHNAME: `*` and `?` match `/`
// too, `[...]` is a bracket expression (with `!`/`^` negation and ranges),
// and `\` quotes the next character.
func wildmatch(pat, s string) bool { return wildmatchMode(pat, s, false) }

// wildmatchPath is wildmatch with WM_PATHNAME (the glob magic): "*", "?"
// and brackets do not match "/", "**" between slashes (or at either end)
// matches any number of directories.
func wildmatchPath(pat, s string) bool { return wildmatchMode(pat, s, true) }

func wildmatchMode(pat, s string, pathname bool) bool {
	for len(pat) > 0 {
		switch {
		case pathname && strings.HasPrefix(pat, "**") && (len(pat) == 2 || pat[2] == '/'):
			if len(pat) == 2 {
				return true // trailing "**": everything below
			}
			// "**/" matches zero or more leading directories.
			rest := pat[3:]
			for i := 0; ; {
				if wildmatchMode(rest, s[i:], true) {
					return true
				}
				j := strings.IndexByte(s[i:], '/')
				if j < 0 {
					return false
				}
				i += j + 1
			}
		case pat[0] == '*':
			for len(pat) > 0 && pat[0] == '*' {
				pat = pat[1:]
			}
			if pat == "" && !pathname {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if wildmatchMode(pat, s[i:], pathname) {
					return true
				}
				if pathname && i < len(s) && s[i] == '/' {
					return false
				}
			}
			return false
		case pat[0] == '?':
			if s == "" || (pathname && s[0] == '/') {
				return false
			}
			pat, s = pat[1:], s[1:]
		case pat[0] == '[':
			if s == "" || (pathname && s[0] == '/') {
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
		default:
			if pat[0] == '\\' && len(pat) > 1 {
				pat = pat[1:]
			}
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

// asciiLower folds ASCII only, as strcasecmp does (icase magic:
// ":(icase)Ü.TXT" does not match "ü.txt").
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
