package git

import (
	"bytes"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Worktree files are read as git would store them (convert.c's
// convert_to_git, end-of-line part): with text, eol or crlf attributes or
// core.autocrlf, CRLF becomes LF, so a file checked out with CRLF is not
// shown as changed (or blamed as all "Not Committed Yet"). Clean filters
// and ident are not run.

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

// eolConverter is convert_to_git's end-of-line step for one repository:
// core.autocrlf (every configuration scope) and the text, crlf and eol
// attributes. It serves blame's working-tree side and the worktree reads
// of status, diff, add and stash.
type eolConverter struct {
	r        *git.Repository
	attrs    *attributes
	autocrlf string
	eol      string                   // core.eol
	index    map[string]plumbing.Hash // stage-0 entries, read on first need
}

func newEOLConverter(r *git.Repository, s *settings) *eolConverter {
	c := &eolConverter{r: r}
	if s != nil && s.conf != nil {
		c.autocrlf = strings.ToLower(s.conf.String("core.autocrlf", ""))
		c.eol = strings.ToLower(s.conf.String("core.eol", ""))
	} else if cfg, err := r.Config(); err == nil && cfg.Raw != nil {
		c.autocrlf = strings.ToLower(cfg.Raw.Section("core").Option("autocrlf"))
	}
	return c
}

// toWorktree is convert_to_working_tree's end-of-line step: a text file
// whose output end of line is CRLF gets CR before each lone LF (for the
// auto modes only when it has no CR yet and is not binary).
func (c *eolConverter) toWorktree(p string, data []byte) []byte {
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

// textEOLIsCRLF is text_eol_is_crlf: core.autocrlf=true, else
// core.eol=crlf (native is LF here).
func (c *eolConverter) textEOLIsCRLF() bool {
	switch c.autocrlf {
	case "true", "yes", "on", "1":
		return true
	case "input":
		return false
	}
	return c.eol == "crlf"
}

// action is convert_attrs' decision for p, before the direction applies.
func (c *eolConverter) action(p string) crlfAction {
	if c.attrs == nil {
		c.attrs = loadAttributes(c.r)
	}
	attrs := c.attrs.lookup(p, "text", "crlf", "eol")
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
	if action == crlfUndefined {
		switch c.autocrlf {
		case "true", "yes", "on", "1":
			action = crlfAutoCRLF
		case "input":
			action = crlfAutoInput
		default:
			action = crlfBinary
		}
	}
	return action
}

// toGit converts a worktree file's bytes to what git would store for p.
func (c *eolConverter) toGit(p string, data []byte) []byte {
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
	auto := action == crlfAuto || action == crlfAutoInput || action == crlfAutoCRLF
	if auto {
		if st.binary() || c.crlfInIndex(p) {
			return data
		}
		return bytes.ReplaceAll(data, []byte{'\r'}, nil)
	}
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
}

// crlfInIndex is has_crlf_in_index: the staged blob is text with CRLF.
func (c *eolConverter) crlfInIndex(p string) bool {
	if c.index == nil {
		c.index = map[string]plumbing.Hash{}
		if idx, err := c.r.Storer.Index(); err == nil {
			for _, e := range idx.Entries {
				if e.Stage == 0 {
					c.index[e.Name] = e.Hash
				}
			}
		}
	}
	h, ok := c.index[p]
	if !ok {
		return false
	}
	data, err := blobLoader(c.r, h)()
	if err != nil || bytes.IndexByte(data, '\r') < 0 {
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
