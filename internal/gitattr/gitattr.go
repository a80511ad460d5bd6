// Package gitattr resolves .gitattributes and applies git's end-of-line
// conversion (convert.c), for the git tools (status, diff, add, stash,
// restore, checkout, blame) and for the kernel's own checkouts (boot), so
// both write and read files as git does.
//
// Attributes are resolved as git's attr.c does: each directory's
// .gitattributes (read through a caller's function: the worktree, else the
// index, else a tree being checked out), the deeper directory over the
// shallower, $GIT_DIR/info/attributes over all; within a file the last
// matching line first, within a line the last attribute; a set macro
// (binary, or one defined at the top) fills in what it stands for.
// go-git's gitattributes matcher lets a lower-priority line overwrite a
// higher one, so only its line parser and pattern matcher are used.
package gitattr

import (
	"bytes"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitattributes"
)

type rule struct {
	pattern gitattributes.Pattern
	attrs   []gitattributes.Attribute
}

// Attributes reads each directory's .gitattributes once, when a path
// below it is first asked about. A nil *Attributes has no attributes.
type Attributes struct {
	read   func(name string) ([]byte, bool)
	dirs   map[string][]rule // directory ("" is the top) → its rules
	info   []rule            // $GIT_DIR/info/attributes
	macros map[string][]gitattributes.Attribute
}

// New returns attributes whose files read returns (name is
// "<dir>/.gitattributes" or ".gitattributes"); info is
// $GIT_DIR/info/attributes (nil: none).
func New(read func(name string) ([]byte, bool), info []byte) *Attributes {
	a := &Attributes{read: read, dirs: map[string][]rule{}, macros: map[string][]gitattributes.Attribute{}}
	if m, err := gitattributes.ParseAttributesLine("[attr]binary -diff -merge -text", nil, true); err == nil {
		a.macros["binary"] = m.Attributes
	}
	a.info = a.parse(info, nil, true)
	return a
}

// Value is one attribute's state: unspecified, set, unset or a value.
type Value struct {
	Known bool // decided by some line (even as unspecified)
	Set   bool
	Unset bool
	Str   string
}

func (a *Attributes) rulesOf(dir string) []rule {
	if rules, ok := a.dirs[dir]; ok {
		return rules
	}
	name := ".gitattributes"
	var domain []string
	if dir != "" {
		name = dir + "/.gitattributes"
		domain = strings.Split(dir, "/")
	}
	var rules []rule
	if a.read != nil {
		if data, ok := a.read(name); ok {
			rules = a.parse(data, domain, dir == "")
		}
	}
	a.dirs[dir] = rules
	return rules
}

// parse reads one attributes file; macro definitions (allowed at the top
// and in info/attributes) are kept for lookups.
func (a *Attributes) parse(data []byte, domain []string, allowMacro bool) []rule {
	var rules []rule
	for _, line := range bytes.Split(data, []byte("\n")) {
		m, err := gitattributes.ParseAttributesLine(strings.TrimRight(string(line), "\r"), domain, allowMacro)
		switch {
		case err != nil:
		case m.Pattern == nil && m.Name != "":
			a.macros[m.Name] = m.Attributes
		case m.Pattern != nil:
			rules = append(rules, rule{pattern: m.Pattern, attrs: m.Attributes})
		}
	}
	return rules
}

// Lookup resolves the named attributes of a repository path.
func (a *Attributes) Lookup(p string, names ...string) map[string]Value {
	out := map[string]Value{}
	if a == nil {
		return out
	}
	// The rules of info/attributes, then of each directory from p's own
	// up to the top; most trees have none, and then nothing else is made
	// (a commit's diffstat looks up every file).
	stack := make([][]rule, 1, 8)
	stack[0] = a.info
	any := len(a.info) > 0
	for dir := p; ; {
		i := strings.LastIndexByte(dir, '/')
		if i < 0 {
			dir = ""
		} else {
			dir = dir[:i]
		}
		rules := a.rulesOf(dir)
		any = any || len(rules) > 0
		stack = append(stack, rules)
		if dir == "" {
			break
		}
	}
	if !any {
		return out
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	parts := strings.Split(p, "/")
	var fill func(attrs []gitattributes.Attribute, depth int)
	fill = func(attrs []gitattributes.Attribute, depth int) {
		for i := len(attrs) - 1; i >= 0; i-- {
			at := attrs[i]
			name := at.Name()
			if _, done := out[name]; done {
				continue
			}
			v := Value{Known: true, Set: at.IsSet(), Unset: at.IsUnset()}
			if at.IsValueSet() {
				v.Str = at.Value()
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
