package gittools

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-billy/v5"

	"github.com/tgp-go/tgp/tools"
)

// pathspec is git's pathspec: each item is relative to the working
// directory; an item matches a path equal to it, a path under it (a leading
// directory), or, when it holds a wildcard, a path fnmatch-ing it with `*`
// crossing `/` (git's default: no FNM_PATHNAME). No item matches all.
// Magic is read as git's pathspec.c does: the short form (":/" top, ":!" or
// ":^" exclude) and the long form ":(top,literal,glob,icase,exclude)"; a
// path is selected when some positive item matches it and no exclude item
// does, and a pathspec of excludes only starts from the whole tree.
type pathspec struct {
	items   []specItem
	exclude []specItem
}

type specItem struct {
	raw     string // as given (for error messages)
	pat     string // repository-relative, cleaned; "" is the whole tree
	match   string // the path as git's pathspec item holds it (from the top: as written)
	glob    bool   // holds a wildcard (and is not literal)
	pathGlb bool   // :(glob): wildmatch with WM_PATHNAME ("*" stays in a directory, "**" crosses)
	icase   bool
	dirOnly bool
}

// specMagic is one item's magic.
type specMagic struct {
	top, literal, glob, icase, exclude bool
}

// parseMagic splits an item into its magic and the path that follows.
func parseMagic(it string) (specMagic, string, error) {
	var m specMagic
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
				m.top = true
			case "literal":
				m.literal = true
			case "glob":
				m.glob = true
			case "icase":
				m.icase = true
			case "exclude":
				m.exclude = true
			case "":
			default:
				return m, "", fmt.Errorf("fatal: Invalid pathspec magic '%s' in '%s'", strings.TrimSpace(w), it)
			}
		}
		if m.literal && m.glob {
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
			m.exclude = true
			continue
		}
		if ch == '/' {
			m.top = true
			continue
		}
		if strings.IndexByte("\"#%&',-;<=>@_`~", ch) >= 0 {
			return m, "", fmt.Errorf("fatal: Unimplemented pathspec magic '%c' in '%s'", ch, it)
		}
		break
	}
	return m, strings.TrimPrefix(rest[i:], ":"), nil
}

// parsePathspec resolves items given relative to wd (repository-relative,
// "" or "." for the root). An item that leaves the repository is git's
// "outside repository" error.
func parsePathspec(wd string, items []string) (pathspec, error) {
	return parsePathspecChecked(wd, items, nil)
}

// parsePathspecChecked is parsePathspec with a check of each item as it
// is parsed (git's parse_pathspec dies at the first item that fails, so
// an item after it is not looked at).
func parsePathspecChecked(wd string, items []string, check func(specItem) error) (pathspec, error) {
	var ps pathspec
	wd = strings.Trim(path.Clean("/"+wd), "/")
	for _, raw := range items {
		if raw == "" {
			return ps, &tools.Error{Kind: tools.KindBadArgs, Message: "fatal: empty string is not a valid pathspec. please use . instead if you meant to match all paths"}
		}
		m, it, err := parseMagic(raw)
		if err != nil {
			return ps, &tools.Error{Kind: tools.KindBadArgs, Message: err.Error()}
		}
		var p string
		// normalize_path_copy keeps the slash before a last "." or ".."
		// component ("d/." is "d/", "a/b/.." is "a/", "." in directory d
		// is "d/"): a directory only.
		last := path.Base("/" + it)
		dirOnly := strings.HasSuffix(it, "/") || last == "." || last == ".."
		if m.top {
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
				return ps, &tools.Error{Kind: tools.KindBadArgs, Message: fmt.Sprintf("fatal: %s: '%s' is outside repository", raw, it)}
			}
			p = strings.TrimPrefix(path.Clean(path.Join("/", wd, it)), "/")
		}
		match := p
		if m.top {
			match = it
		}
		if match == "" {
			match = "."
		}
		item := specItem{raw: raw, pat: p, match: match, glob: !m.literal && strings.ContainsAny(p, "*?[\\"), pathGlb: m.glob, icase: m.icase, dirOnly: dirOnly && p != ""}
		if check != nil {
			if err := check(item); err != nil {
				return ps, err
			}
		}
		if m.exclude {
			ps.exclude = append(ps.exclude, item)
			continue
		}
		ps.items = append(ps.items, item)
	}
	if len(ps.items) == 0 && len(ps.exclude) > 0 {
		ps.items = []specItem{{}} // only excludes: from the whole tree
	}
	return ps, nil
}

// pathspecBeyondSymlink is git add's PATHSPEC_SYMLINK_LEADING_PATH
// check: an item (an exclude too) whose path goes through a symbolic link
// in the worktree (has_symlink_leading_path over the item's path, its
// last component included when it ends with a slash) is fatal.
func pathspecBeyondSymlink(fsys billy.Filesystem) func(specItem) error {
	return func(it specItem) error {
		p := it.match
		if it.dirOnly {
			p += "/"
		}
		if beyondSymlink(fsys, p) {
			return &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: pathspec '%s' is beyond a symbolic link", it.raw)}
		}
		return nil
	}
}

// empty reports whether the pathspec has no items (it matches everything).
func (ps pathspec) empty() bool { return len(ps.items) == 0 }

// plain reports whether every item is a literal path with no magic: the
// fast paths that compare tree entries by name may be used.
func (ps pathspec) plain() bool {
	if len(ps.exclude) > 0 {
		return false
	}
	for _, it := range ps.items {
		if it.icase || it.pathGlb {
			return false
		}
	}
	return true
}

// match reports whether a repository path is selected.
func (ps pathspec) match(p string) bool {
	if len(ps.items) == 0 {
		return true
	}
	for _, it := range ps.exclude {
		if it.matches(p) {
			return false
		}
	}
	for _, it := range ps.items {
		if it.matches(p) {
			return true
		}
	}
	return false
}

// indexMatcher is ce_path_match as checkout_paths calls it over the
// index, in order, with a "seen" array (do_match_pathspec): an item that
// matched one path exactly is not tried on the paths after it. An item
// with wildcards that also names an existing path literally ("g/[ab].txt")
// then matches only that path among those after it ("g/a.txt" is left
// out; as an exclusion, "g/a.txt" is not excluded). Call match with the
// paths in index order.
type indexMatcher struct {
	ps         pathspec
	exact, exX []bool
}

func newIndexMatcher(ps pathspec) *indexMatcher {
	return &indexMatcher{ps: ps, exact: make([]bool, len(ps.items)), exX: make([]bool, len(ps.exclude))}
}

func (m *indexMatcher) match(p string) bool {
	try := func(items []specItem, exact []bool) bool {
		hit := false
		for i, it := range items {
			if exact[i] || !it.matches(p) {
				continue
			}
			hit = true
			if it.pat != "" && (p == it.pat || it.icase && strings.EqualFold(p, it.pat)) {
				exact[i] = true
			}
		}
		return hit
	}
	if len(m.ps.items) > 0 && !try(m.ps.items, m.exact) {
		return false
	}
	return !try(m.ps.exclude, m.exX)
}

func (it specItem) matches(p string) bool {
	if it.pat == "" {
		return true
	}
	pat := it.pat
	if it.icase {
		pat, p = asciiLower(pat), asciiLower(p)
	}
	if p == pat {
		return !it.dirOnly
	}
	if strings.HasPrefix(p, pat+"/") {
		return true
	}
	if !it.glob {
		return false
	}
	if it.dirOnly {
		// git's item keeps its trailing slash ("*/", "d*/", "d/*/.")
		// and fnmatches the whole of it: no file's path ends in "/", so
		// such an item matches only a path under a directory literally
		// named by it (the prefix test above).
		pat += "/"
	}
	if it.pathGlb {
		return wildmatchPath(pat, p)
	}
	return wildmatch(pat, p)
}

// matchesDir reports whether some path under directory dir could match:
// used to prune tree walks.
func (ps pathspec) matchesDir(dir string) bool {
	if len(ps.items) == 0 {
		return true
	}
	for _, it := range ps.items {
		d, pat := dir, it.pat
		if it.icase {
			d, pat = asciiLower(d), asciiLower(pat)
		}
		if pat == "" || it.glob || d == pat || strings.HasPrefix(d, pat+"/") || strings.HasPrefix(pat, d+"/") {
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

// reportPathError is git's report_path_error after checkout_paths
// matched the paths it knows (known: the index's entries, with what it
// read from a tree): an item is seen when it matches one of them; an
// exclusion when any of them is matched by a positive item (only then
// are exclusions tried). Every item not seen is named, in the order
// given, unless the same item given twice was seen.
func reportPathError(raws []string, ps pathspec, known map[string]bool) error {
	seenItem := make([]bool, len(ps.items))
	anyPositive := false
	for p, ok := range known {
		if !ok {
			continue
		}
		for i, it := range ps.items {
			if it.matches(p) {
				seenItem[i], anyPositive = true, true
			}
		}
		anyPositive = anyPositive || len(ps.items) == 0
	}
	seenRaw := map[string]bool{}
	var notSeen []string
	for _, raw := range raws {
		seen := anyPositive // an exclusion
		for i, it := range ps.items {
			if it.raw == raw {
				seen = seenItem[i]
			}
		}
		if seen {
			seenRaw[raw] = true
		} else {
			notSeen = append(notSeen, raw)
		}
	}
	var report []string
	for _, raw := range notSeen {
		if !seenRaw[raw] {
			report = append(report, fmt.Sprintf("error: pathspec '%s' did not match any file(s) known to git", raw))
		}
	}
	if len(report) == 0 {
		return nil
	}
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: strings.Join(report, "\n")}
}
