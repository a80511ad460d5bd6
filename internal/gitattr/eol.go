package gitattr

// End-of-line conversion (convert.c's convert_to_git and
// convert_to_working_tree, end-of-line part): text, eol and crlf
// attributes and core.autocrlf / core.eol; with Ident, the ident
// attribute too. Clean/smudge filters are not run.

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
)

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

// EOL converts one repository's files. A nil *EOL converts nothing.
type EOL struct {
	Attrs *Attributes
	// AutoCRLF and CoreEOL are core.autocrlf and core.eol, lower case.
	AutoCRLF, CoreEOL string
	// CRLFInIndex says whether the staged blob of a path is text with
	// CRLF (has_crlf_in_index: the safer autocrlf); nil: never.
	CRLFInIndex func(path string) bool
	// Ident honours the ident attribute: "$Id$" is checked out as
	// "$Id: <blob> $" and read back as "$Id$" (convert.c's
	// ident_to_worktree and ident_to_git).
	Ident bool
}

var identKey = []byte("$Id")

// identOn reports whether p's ident conversion applies to data.
func (c *EOL) identOn(p string, data []byte) bool {
	return c != nil && c.Ident && bytes.Contains(data, identKey) && c.Attrs.Lookup(p, "ident")["ident"].Set
}

// countIdent is convert.c's count_ident: the "$Id$" and "$Id: ... $"
// (on one line) in b.
func countIdent(b []byte) int {
	n := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '$' {
			continue
		}
		rest := b[i+1:]
		if len(rest) < 3 {
			break
		}
		if rest[0] != 'I' || rest[1] != 'd' {
			continue
		}
		ch := rest[2]
		i += 3
		if ch == '$' {
			n++
		}
		if ch != ':' {
			continue
		}
		for i++; i < len(b); i++ {
			if b[i] == '$' {
				n++
				break
			}
			if b[i] == '\n' {
				break
			}
		}
	}
	return n
}

// identToGit is convert.c's ident_to_git: "$Id: ... $" on one line
// becomes "$Id$".
func identToGit(src []byte) []byte {
	if countIdent(src) == 0 {
		return src
	}
	out := make([]byte, 0, len(src))
	for {
		d := bytes.IndexByte(src, '$')
		if d < 0 {
			break
		}
		out, src = append(out, src[:d+1]...), src[d+1:]
		if len(src) > 3 && bytes.HasPrefix(src, []byte("Id:")) {
			e := bytes.IndexByte(src[3:], '$')
			if e < 0 {
				break
			}
			if bytes.IndexByte(src[3:3+e], '\n') >= 0 {
				continue // a line break before the next dollar
			}
			out, src = append(out, "Id$"...), src[3+e+1:]
		}
	}
	return append(out, src...)
}

// identToWorktree is convert.c's ident_to_worktree: "$Id$", and a
// "$Id:...$" on one line with no space inside but at its end, become
// "$Id: <the blob's hash> $".
func identToWorktree(src []byte) []byte {
	if countIdent(src) == 0 {
		return src
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(src))
	h.Write(src)
	id := "Id: " + hex.EncodeToString(h.Sum(nil)) + " $"
	out := make([]byte, 0, len(src)+len(id))
	for {
		d := bytes.IndexByte(src, '$')
		if d < 0 {
			break
		}
		out, src = append(out, src[:d+1]...), src[d+1:]
		if len(src) < 3 || src[0] != 'I' || src[1] != 'd' {
			continue
		}
		switch src[2] {
		case '$':
			src = src[3:]
		case ':':
			e := bytes.IndexByte(src[3:], '$')
			if e < 0 {
				return append(out, src...) // an incomplete keyword
			}
			dollar := 3 + e
			if bytes.IndexByte(src[3:dollar], '\n') >= 0 {
				continue // a line break before the next dollar
			}
			if dollar > 4 {
				if sp := bytes.IndexByte(src[4:dollar], ' '); sp >= 0 && 4+sp < dollar-1 {
					continue // spaces inside: another system's id, kept
				}
			}
			src = src[dollar+1:]
		default:
			continue
		}
		out = append(out, id...)
	}
	return append(out, src...)
}

// crlfOf is git_path_check_crlf.
func crlfOf(v Value) crlfAction {
	switch {
	case !v.Known:
	case v.Set:
		return crlfText
	case v.Unset:
		return crlfBinary
	case v.Str == "input":
		return crlfTextInput
	case v.Str == "auto":
		return crlfAuto
	}
	return crlfUndefined
}

func (c *EOL) autoCRLF() string {
	switch c.AutoCRLF {
	case "true", "yes", "on", "1":
		return "true"
	case "input":
		return "input"
	}
	return ""
}

// action is convert_attrs' decision for p, before the direction applies.
func (c *EOL) action(p string) crlfAction {
	attrs := c.Attrs.Lookup(p, "text", "crlf", "eol")
	action := crlfOf(attrs["text"])
	if action == crlfUndefined {
		action = crlfOf(attrs["crlf"])
	}
	if action != crlfBinary {
		eol := attrs["eol"].Str
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
	if action == crlfUndefined {
		switch c.autoCRLF() {
		case "true":
			action = crlfAutoCRLF
		case "input":
			action = crlfAutoInput
		default:
			action = crlfBinary
		}
	}
	return action
}

// textEOLIsCRLF is text_eol_is_crlf: core.autocrlf=true, else
// core.eol=crlf (native is LF here).
func (c *EOL) textEOLIsCRLF() bool {
	switch c.autoCRLF() {
	case "true":
		return true
	case "input":
		return false
	}
	return c.CoreEOL == "crlf"
}

// ToGit converts a worktree file's bytes to what git would store for p.
func (c *EOL) ToGit(p string, data []byte) []byte {
	data = c.eolToGit(p, data)
	if c.identOn(p, data) {
		data = identToGit(data)
	}
	return data
}

func (c *EOL) eolToGit(p string, data []byte) []byte {
	if c == nil || len(data) == 0 || bytes.IndexByte(data, '\r') < 0 {
		return data // nothing any rule would change
	}
	action := c.action(p)
	if action == crlfBinary {
		return data
	}
	st := textStats(data)
	if st.crlf == 0 {
		return data
	}
	if action == crlfAuto || action == crlfAutoInput || action == crlfAutoCRLF {
		if st.binary() || (c.CRLFInIndex != nil && c.CRLFInIndex(p)) {
			return data
		}
		return bytes.ReplaceAll(data, []byte{'\r'}, nil)
	}
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
}

// ToWorktree converts a blob's bytes to what a checkout writes for p: a
// text file whose output end of line is CRLF gets CR before each lone LF
// (for the auto modes only when it has no CR yet and is not binary).
func (c *EOL) ToWorktree(p string, data []byte) []byte {
	if c.identOn(p, data) {
		data = identToWorktree(data)
	}
	return c.eolToWorktree(p, data)
}

func (c *EOL) eolToWorktree(p string, data []byte) []byte {
	if c == nil || len(data) == 0 || bytes.IndexByte(data, '\n') < 0 {
		return data
	}
	action := c.action(p)
	crlf := false
	switch action {
	case crlfTextCRLF, crlfAutoCRLF:
		crlf = true
	case crlfText, crlfAuto:
		crlf = c.textEOLIsCRLF()
	}
	if !crlf {
		return data
	}
	st := textStats(data)
	if st.lonelf == 0 {
		return data
	}
	if action == crlfAuto || action == crlfAutoInput || action == crlfAutoCRLF {
		if st.lonecr > 0 || st.crlf > 0 || st.binary() {
			return data
		}
	}
	out := make([]byte, 0, len(data)+st.lonelf)
	for i, b := range data {
		if b == '\n' && (i == 0 || data[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, b)
	}
	return out
}

// IsTextWithCRLF is what has_crlf_in_index asks of a staged blob.
func IsTextWithCRLF(data []byte) bool {
	if bytes.IndexByte(data, '\r') < 0 {
		return false
	}
	st := textStats(data)
	return !st.binary() && st.crlf > 0
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
