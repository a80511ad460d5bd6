package gittools

// The diff attribute from .gitattributes (binary, -diff, diff,
// diff=<driver>), resolved by internal/gitattr, and what it changes in a
// patch: binary or text, and the hunk-header rule of the driver.

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

	"github.com/tgp-go/tgp/internal/gitattr"
	"github.com/tgp-go/tgp/internal/gitconfig"
	"github.com/tgp-go/tgp/internal/xdiff"
)

// loadAttributes prepares attribute lookups for repository r: each
// directory's .gitattributes from the worktree, else (withIndex) the
// index. A diff of two commits (git show, git diff A B) does not read the
// index, so git finds only the worktree's files there.
func loadAttributes(r *git.Repository, withIndex bool) *gitattr.Attributes {
	var wt billy.Filesystem
	if w, err := worktreeOf(r); err == nil {
		wt = w.Filesystem
	}
	var idx map[string]plumbing.Hash
	read := func(name string) ([]byte, bool) {
		if wt != nil {
			if fh, err := wt.Open(name); err == nil {
				data, err := io.ReadAll(fh)
				fh.Close()
				return data, err == nil
			}
		}
		if !withIndex {
			return nil, false
		}
		if idx == nil {
			idx = map[string]plumbing.Hash{}
			if ix, err := r.Storer.Index(); err == nil {
				for _, e := range ix.Entries {
					if path.Base(e.Name) == ".gitattributes" {
						idx[e.Name] = e.Hash
					}
				}
			}
		}
		if h, ok := idx[name]; ok {
			data, err := blobLoader(r, h)()
			return data, err == nil
		}
		return nil, false
	}
	var info []byte
	if dot, ok := r.Storer.(interface{ Filesystem() billy.Filesystem }); ok {
		if fh, err := dot.Filesystem().Open("info/attributes"); err == nil {
			info, _ = io.ReadAll(fh)
			fh.Close()
		}
	}
	return gitattr.New(read, info)
}

// diffAttr is a path's diff attribute.
type diffAttr struct {
	state  int    // 0 unspecified, 1 set (text), -1 unset (binary)
	driver string // diff=<driver>
}

// diffAttrOf resolves the diff attribute of a repository path.
func diffAttrOf(a *gitattr.Attributes, p string) diffAttr {
	v := a.Lookup(p, "diff")["diff"]
	switch {
	case !v.Known:
		return diffAttr{}
	case v.Set:
		return diffAttr{state: 1}
	case v.Unset:
		return diffAttr{state: -1}
	case v.Str != "":
		return diffAttr{state: 1, driver: v.Str}
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
		return xdiff.IsBinary(data)
	}
	oldPath := c.path
	if c.oldPath != "" {
		oldPath = c.oldPath
	}
	return side(oldPath, c.oldMode, old) || side(c.path, c.newMode, new)
}

// driverBinary is what a path's diff attribute says about binary-ness.
func (po patchOpts) driverBinary(p string) (binary, decided bool) {
	d := diffAttrOf(po.attr, p)
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
	d := diffAttrOf(po.attr, c.path)
	if d.driver == "" {
		return nil
	}
	// Each driver's rule is compiled once per diff, not once per file.
	if m, ok := po.funcs[d.driver]; ok {
		return m
	}
	m := po.compileDriver(d.driver)
	if po.funcs != nil {
		po.funcs[d.driver] = m
	}
	return m
}

// compileDriver is a driver's hunk-header rule: diff.<driver>.xfuncname
// (ERE) or funcname from the configuration, else git's builtin pattern.
func (po patchOpts) compileDriver(driver string) funcMatcher {
	if po.drivers != nil {
		if pat, ok := po.drivers.Get("diff." + driver + ".xfuncname"); ok {
			return compileFuncname(pat, false)
		}
		if pat, ok := po.drivers.Get("diff." + driver + ".funcname"); ok {
			return compileFuncname(pat, false)
		}
	}
	if b, ok := builtinFuncnames[driver]; ok {
		return compileFuncname(b.pattern, b.icase)
	}
	return nil
}
