package git

import (
	"bytes"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing/format/gitattributes"
)

// The working tree file is blamed as git would store it (convert.c's
// convert_to_git, end-of-line part): with text, eol or crlf attributes or
// core.autocrlf, CRLF becomes LF, so a file checked out with CRLF is not
// shown as all "Not Committed Yet". Clean filters and ident are not run.

type crlfAction int

const (
	crlfUndefined crlfAction = iota
	crlfBinary
	crlfText
	crlfTextInput
	crlfTextCRLF
	crlfAuto
	crlfAutoInput
	crlfAutoCRLF
)

// attrValue is one attribute's state: unspecified, set, unset or a value.
type attrValue struct {
	known bool // decided by some line (even as unspecified)
	set   bool
	unset bool
	value string
}

// checkinAttrs reads the attributes git consults when storing p: the
// root .gitattributes (macros allowed), those of p's directories, then
// .git/info/attributes, in rising priority.
func (sb *scoreboard) checkinAttrs(p string, names ...string) map[string]attrValue {
	w, err := worktreeOf(sb.r)
	if err != nil {
		return nil
	}
	var stack []gitattributes.MatchAttribute
	parts := strings.Split(p, "/")
	for i := 0; i < len(parts); i++ {
		// A copy: go-git appends the file name to it.
		dir := append([]string(nil), parts[:i]...)
		as, err := gitattributes.ReadAttributesFile(w.Filesystem, dir, ".gitattributes", i == 0)
		if err == nil {
			stack = append(stack, as...)
		}
	}
	if dot, ok := sb.r.Storer.(interface{ Filesystem() billy.Filesystem }); ok {
		// info/attributes patterns are relative to the top.
		if f, err := dot.Filesystem().Open("info/attributes"); err == nil {
			as, err := gitattributes.ReadAttributes(f, nil, true)
			f.Close()
			if err == nil {
				stack = append(stack, as...)
			}
		}
	}
	if len(stack) == 0 {
		return nil
	}
	macros := map[string][]gitattributes.Attribute{}
	for _, m := range stack {
		if m.Pattern == nil {
			macros[m.Name] = m.Attributes
		}
	}
	out := map[string]attrValue{}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var fill func(attrs []gitattributes.Attribute)
	fill = func(attrs []gitattributes.Attribute) {
		// The last attribute of a line wins, as git's fill_one.
		for i := len(attrs) - 1; i >= 0; i-- {
			a := attrs[i]
			name := a.Name()
			if _, done := out[name]; !done {
				v := attrValue{known: true, set: a.IsSet(), unset: a.IsUnset()}
				if a.IsValueSet() {
					v.value = a.Value()
				}
				out[name] = v
				if a.IsSet() {
					if name == "binary" {
						fill(binaryMacro())
					} else if m, ok := macros[name]; ok {
						fill(m)
					}
				}
			}
		}
	}
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].Pattern == nil || !stack[i].Pattern.Match(parts) {
			continue
		}
		fill(stack[i].Attributes)
	}
	for n := range out {
		if !want[n] {
			delete(out, n)
		}
	}
	return out
}

func binaryMacro() []gitattributes.Attribute {
	m, err := gitattributes.ParseAttributesLine("[attr]binary -diff -merge -text", nil, true)
	if err != nil {
		return nil
	}
	return m.Attributes
}

// crlfOf is git_path_check_crlf.
func crlfOf(v attrValue) crlfAction {
	switch {
	case !v.known:
	case v.set:
		return crlfText
	case v.unset:
		return crlfBinary
	case v.value == "input":
		return crlfTextInput
	case v.value == "auto":
		return crlfAuto
	}
	return crlfUndefined
}

// convertToGit is convert_to_git's end-of-line conversion for p.
func (sb *scoreboard) convertToGit(p string, data []byte) []byte {
	autocrlf := ""
	if cfg, err := sb.r.Config(); err == nil && cfg.Raw != nil {
		autocrlf = strings.ToLower(cfg.Raw.Section("core").Option("autocrlf"))
	}
	attrs := sb.checkinAttrs(p, "text", "crlf", "eol")
	if len(attrs) == 0 && (autocrlf == "" || autocrlf == "false") {
		return data
	}
	action := crlfOf(attrs["text"])
	if action == crlfUndefined {
		action = crlfOf(attrs["crlf"])
	}
	if action != crlfBinary {
		eol := attrs["eol"].value
		switch {
		case action == crlfAuto && eol == "lf":
			action = crlfAutoInput
		case action == crlfAuto && eol == "crlf":
			action = crlfAutoCRLF
		case eol == "lf":
			action = crlfTextInput
		case eol == "crlf":
			action = crlfTextCRLF
		}
	}
	if action == crlfText {
		action = crlfTextInput // either way CRLF is stored as LF
	}
	if action == crlfUndefined {
		switch autocrlf {
		case "true", "yes", "on", "1":
			action = crlfAutoCRLF
		case "input":
			action = crlfAutoInput
		default:
			action = crlfBinary
		}
	}
	if action == crlfBinary || len(data) == 0 {
		return data
	}
	st := textStats(data)
	if st.crlf == 0 {
		return data
	}
	auto := action == crlfAuto || action == crlfAutoInput || action == crlfAutoCRLF
	if auto {
		if st.binary() || sb.crlfInIndex(p) {
			return data
		}
		return bytes.ReplaceAll(data, []byte{'\r'}, nil)
	}
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
}

// crlfInIndex is has_crlf_in_index: the staged blob is text with CRLF.
func (sb *scoreboard) crlfInIndex(p string) bool {
	idx, err := sb.r.Storer.Index()
	if err != nil {
		return false
	}
	for _, e := range idx.Entries {
		if e.Name != p || e.Stage != 0 {
			continue
		}
		data, err := readBlob(sb.s, e.Hash)
		if err != nil || bytes.IndexByte(data, '\r') < 0 {
			return false
		}
		st := textStats(data)
		return !st.binary() && st.crlf > 0
	}
	return false
}

type textStat struct{ nul, lonecr, lonelf, crlf, printable, nonprintable int }

// textStats is convert.c's gather_stats.
func textStats(b []byte) textStat {
	var s textStat
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				s.crlf++
				i++
			} else {
				s.lonecr++
			}
		case c == '\n':
			s.lonelf++
		case c == 127:
			s.nonprintable++
		case c < 32:
			switch c {
			case '\b', '\t', '\033', '\014':
				s.printable++
			case 0:
				s.nul++
				s.nonprintable++
			default:
				s.nonprintable++
			}
		default:
			s.printable++
		}
	}
	if len(b) >= 1 && b[len(b)-1] == '\032' {
		s.nonprintable--
	}
	return s
}

// binary is convert_is_binary.
func (s textStat) binary() bool {
	return s.lonecr > 0 || s.nul > 0 || (s.printable>>7) < s.nonprintable
}
