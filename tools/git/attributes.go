package git

// The diff attribute from .gitattributes (binary, -diff, diff, diff=<driver>)
// as git's attr.c resolves it: each directory's .gitattributes (read from
// the worktree, else the index), the deeper directory over the shallower,
// $GIT_DIR/info/attributes over all; within a file the last matching line
// wins, within a line the last attribute; the "binary" macro unsets diff.
// go-git's gitattributes matcher lets a lower-priority line overwrite a
// higher one, so only its line parser and pattern matcher are used.

import (
	"bytes"
	"io"
	"path"
	"regexp"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitattributes"

	"github.com/tgp-go/tgp/internal/gitconfig"
)

type attrRule struct {
	pattern gitattributes.Pattern
	attrs   []gitattributes.Attribute
}

// attributes reads each directory's .gitattributes once, when a path
// below it is first asked about.
type attributes struct {
	r      *git.Repository
	wt     billy.Filesystem // nil: a bare repository
	idx    map[string]plumbing.Hash
	dirs   map[string][]attrRule // directory ("" is the top) → its rules
	info   []attrRule            // $GIT_DIR/info/attributes
	macros map[string][]gitattributes.Attribute
}

// attrValue is one attribute's state: unspecified, set, unset or a value.
type attrValue struct {
	known bool // decided by some line (even as unspecified)
	set   bool
	unset bool
	value string
}

// diffAttr is a path's diff attribute.
type diffAttr struct {
	state  int    // 0 unspecified, 1 set (text), -1 unset (binary)
	driver string // diff=<driver>
}

// loadAttributes prepares attribute lookups for repository r.
func loadAttributes(r *git.Repository) *attributes {
	a := &attributes{r: r, dirs: map[string][]attrRule{}, macros: map[string][]gitattributes.Attribute{}}
	if m, err := gitattributes.ParseAttributesLine("[attr]binary -diff -merge -text", nil, true); err == nil {
		a.macros["binary"] = m.Attributes
	}
	if w, err := worktreeOf(r); err == nil {
		a.wt = w.Filesystem
	}
	if dot, ok := r.Storer.(interface{ Filesystem() billy.Filesystem }); ok {
		if fh, err := dot.Filesystem().Open("info/attributes"); err == nil {
			data, _ := io.ReadAll(fh)
			fh.Close()
			a.info = a.parse(data, nil, true)
		}
	}
	return a
}

// rulesOf is dir's .gitattributes, from the worktree, else the index (as
// git reads them for a diff or a check-in).
func (a *attributes) rulesOf(dir string) []attrRule {
	if rules, ok := a.dirs[dir]; ok {
		return rules
	}
	name := ".gitattributes"
	var domain []string
	if dir != "" {
		name = dir + "/.gitattributes"
		domain = strings.Split(dir, "/")
	}
	var data []byte
	if a.wt != nil {
		if fh, err := a.wt.Open(name); err == nil {
			data, _ = io.ReadAll(fh)
			fh.Close()
		}
	}
	if data == nil {
		if a.idx == nil {
			a.idx = map[string]plumbing.Hash{}
			if idx, err := a.r.Storer.Index(); err == nil {
				for _, e := range idx.Entries {
					if path.Base(e.Name) == ".gitattributes" {
						a.idx[e.Name] = e.Hash
					}
				}
			}
		}
		if h, ok := a.idx[name]; ok {
			data, _ = blobLoader(a.r, h)()
		}
	}
	rules := a.parse(data, domain, dir == "")
	a.dirs[dir] = rules
	return rules
}

// parse reads one attributes file; macro definitions (allowed at the top
// and in info/attributes) are kept for lookups.
func (a *attributes) parse(data []byte, domain []string, allowMacro bool) []attrRule {
	var rules []attrRule
	for _, line := range bytes.Split(data, []byte("\n")) {
		m, err := gitattributes.ParseAttributesLine(strings.TrimRight(string(line), "\r"), domain, allowMacro)
		switch {
		case err != nil:
		case m.Pattern == nil && m.Name != "":
			a.macros[m.Name] = m.Attributes
		case m.Pattern != nil:
			rules = append(rules, attrRule{pattern: m.Pattern, attrs: m.Attributes})
		}
	}
	return rules
}

// lookup resolves the named attributes of a repository path as git's
// fill does: info/attributes, then the deepest directory's file up to the
// top's; within a file the last matching line first, within a line the
// last attribute; a set macro (binary, or one defined at the top) fills in
// what it stands for.
func (a *attributes) lookup(p string, names ...string) map[string]attrValue {
	out := map[string]attrValue{}
	if a == nil {
		return out
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	parts := strings.Split(p, "/")
	stack := [][]attrRule{a.info}
	for i := len(parts) - 1; i >= 0; i-- {
		stack = append(stack, a.rulesOf(strings.Join(parts[:i], "/")))
	}
	var fill func(attrs []gitattributes.Attribute, depth int)
	fill = func(attrs []gitattributes.Attribute, depth int) {
		for i := len(attrs) - 1; i >= 0; i-- {
			at := attrs[i]
			name := at.Name()
			if _, done := out[name]; done {
				continue
			}
			v := attrValue{known: true, set: at.IsSet(), unset: at.IsUnset()}
			if at.IsValueSet() {
				v.value = at.Value()
			}
			out[name] = v
			if m, ok := a.macros[name]; ok && at.IsSet() && depth < 8 {
				fill(m, depth+1)
			}
		}
	}
	for _, rules := range stack {
		for i := len(rules) - 1; i >= 0; i-- {
			if rules[i].pattern.Match(parts) {
				fill(rules[i].attrs, 0)
			}
		}
	}
	for n := range out {
		if !want[n] {
			delete(out, n)
		}
	}
	return out
}

// diff resolves the diff attribute of a repository path.
func (a *attributes) diff(p string) diffAttr {
	v := a.lookup(p, "diff")["diff"]
	switch {
	case !v.known:
		return diffAttr{}
	case v.set:
		return diffAttr{state: 1}
	case v.unset:
		return diffAttr{state: -1}
	case v.value != "":
		return diffAttr{state: 1, driver: v.value}
	}
	return diffAttr{}
}

// binary decides whether a change shows as binary: either side is,
// where a regular file's side follows its diff attribute (or
// diff.<driver>.binary) when one is set, and any other side (a symlink,
// a gitlink) or an undecided one has a NUL in its first 8000 bytes
// (diff_filespec_is_binary; non-regular files get the default driver).
func (po patchOpts) binary(c *change, old, new []byte) bool {
	side := func(p string, mode filemode.FileMode, data []byte) bool {
		if mode == 0 {
			return false
		}
		if mode == filemode.Regular || mode == filemode.Executable {
			if b, ok := po.driverBinary(p); ok {
				return b
			}
		}
		return isBinary(data)
	}
	oldPath := c.path
	if c.oldPath != "" {
		oldPath = c.oldPath
	}
	return side(oldPath, c.oldMode, old) || side(c.path, c.newMode, new)
}

// driverBinary is what a path's diff attribute says about binary-ness.
func (po patchOpts) driverBinary(p string) (binary, decided bool) {
	d := po.attr.diff(p)
	switch {
	case d.driver != "":
		if po.drivers != nil {
			if v, ok := po.drivers.Get("diff." + d.driver + ".binary"); ok {
				if b, ok := gitconfig.ParseBool(v); ok {
					return b, true
				}
			}
		}
		return false, false // a driver without binary: decided by content
	case d.state < 0:
		return true, true
	case d.state > 0:
		return false, true
	}
	return false, false
}

// funcMatcher is a driver's hunk-header rule: patterns tried in order,
// a negated one that matches rejects the line (xdiff-interface.c
// ff_regexp).
type funcMatcher []funcPattern

type funcPattern struct {
	re     *regexp.Regexp
	negate bool
}

// header is the hunk-header text a line gives, and whether it gives one.
func (m funcMatcher) header(line []byte) (string, bool) {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	for _, p := range m {
		sub := p.re.FindSubmatch(line)
		if sub == nil {
			continue
		}
		if p.negate {
			return "", false
		}
		s := sub[0]
		if len(sub) > 1 && sub[1] != nil {
			s = sub[1]
		}
		if len(s) > 80 {
			s = s[:80]
		}
		return strings.TrimRight(string(s), " \t\r\n\v\f"), true
	}
	return "", false
}

// compileFuncname reads a newline-separated funcname/xfuncname value;
// POSIX leftmost-longest matching, case-insensitive for icase.
func compileFuncname(pat string, icase bool) funcMatcher {
	var m funcMatcher
	for _, l := range strings.Split(pat, "\n") {
		neg := strings.HasPrefix(l, "!")
		if neg {
			l = l[1:]
		}
		if icase {
			l = "(?i)" + l
		}
		re, err := regexp.Compile(l)
		if err != nil {
			return nil // git would refuse the pattern; the default rule
		}
		re.Longest()
		m = append(m, funcPattern{re: re, negate: neg})
	}
	return m
}

// builtinFuncnames are git's userdiff.c patterns for the drivers most
// repositories name (diff=golang, diff=python, ...).
var builtinFuncnames = map[string]struct {
	pattern string
	icase   bool
}{
	"golang": {`^[ \t]*(func[ \t]*.*(\{[ \t]*)?)` + "\n" + `^[ \t]*(type[ \t].*(struct|interface)[ \t]*(\{[ \t]*)?)`, false},
	"python": {`^[ \t]*((class|(async[ \t]+)?def)[ \t].*)$`, false},
	"rust":   {`^[\t ]*((pub(\([^\)]+\))?[\t ]+)?((async|const|unsafe|extern([\t ]+"[^"]+"))[\t ]+)?(struct|enum|union|mod|trait|fn|impl|macro_rules!)[< \t]+[^;]*)$`, false},
	"java":   {`!^[ \t]*(catch|do|for|if|instanceof|new|return|switch|throw|while)` + "\n" + `^[ \t]*(([a-z-]+[ \t]+)*(class|enum|interface|record)[ \t]+.*)$` + "\n" + `^[ \t]*(([A-Za-z_<>&\]\[][?&<>.,A-Za-z_0-9\]\[]*[ \t]+)+[A-Za-z_][A-Za-z_0-9]*[ \t]*\([^;]*)$`, false},
	"cpp":    {`!^[ \t]*[A-Za-z_][A-Za-z_0-9]*:[[:space:]]*($|/[/*])` + "\n" + `^((::[[:space:]]*)?[A-Za-z_].*)$`, false},
	// git's bash pattern closes its capture before the compound command
	// (its parentheses group so), so the header is "name()".
	"bash":     {`^[ \t]*(([a-zA-Z_][a-zA-Z0-9_]*[ \t]*\([ \t]*\))|(function[ \t]+[a-zA-Z_][a-zA-Z0-9_]*(([ \t]*\([ \t]*\))|([ \t]+))))[ \t]*(\{|\(\(?|\[\[)`, false},
	"markdown": {`^ {0,3}#{1,6}[ \t].*`, false},
	"ruby":     {`^[ \t]*((class|module|def)[ \t].*)$`, false},
	"php":      {`^[\t ]*(((public|protected|private|static|abstract|final)[\t ]+)*function.*)$` + "\n" + `^[\t ]*((((final|abstract)[\t ]+)?class|enum|interface|trait).*)$`, false},
	"kotlin":   {`^[ \t]*(([a-z]+[ \t]+)*(fun|class|interface)[ \t]+.*)$`, false},
	"html":     {`^[ \t]*(<[Hh][1-6]([ \t].*)?>.*)$`, false},
	"tex":      {`^(\\((sub)*section|chapter|part)\*{0,1}\{.*)$`, false},
	"css":      {`![:;][[:space:]]*$` + "\n" + `^[:\[@.#]?[_a-z0-9].*$`, true},
}

// funcMatcherFor is the hunk-header rule of a path's diff driver:
// diff.<driver>.xfuncname (ERE) or funcname from the configuration, else
// git's builtin pattern for the driver; nil for git's default rule.
func (po patchOpts) funcMatcherFor(c *change) funcMatcher {
	// builtin_diff asks the old side's driver, then the new side's;
	// only regular files have one.
	regular := func(m filemode.FileMode) bool { return m == filemode.Regular || m == filemode.Executable }
	if !regular(c.oldMode) && !regular(c.newMode) {
		return nil
	}
	d := po.attr.diff(c.path)
	if d.driver == "" {
		return nil
	}
	if po.drivers != nil {
		if pat, ok := po.drivers.Get("diff." + d.driver + ".xfuncname"); ok {
			return compileFuncname(pat, false)
		}
		if pat, ok := po.drivers.Get("diff." + d.driver + ".funcname"); ok {
			return compileFuncname(pat, false)
		}
	}
	if b, ok := builtinFuncnames[d.driver]; ok {
		return compileFuncname(b.pattern, b.icase)
	}
	return nil
}
