package pretty

// %(trailers[:options]): trailer.c's trailer block detection and
// format_trailer_info, as git log's pretty formats use them (no "---"
// divider, no trailer configuration).

import (
	"strings"
)

type trailerOpts struct {
	only, unfold, keyOnly, valueOnly bool
	keys                             []string
	sep, kvsep                       string
	sepSet, kvsepSet                 bool
}

// parseTrailerOpts is format_set_trailers_options: it returns the text
// after the options (at the closing parenthesis).
func parseTrailerOpts(s string, o *trailerOpts, uf *userFormatter) (string, bool) {
	boolArg := func(v string, set bool) (bool, bool) {
		if !set {
			return true, true
		}
		switch strings.ToLower(v) {
		case "true", "yes", "on", "1":
			return true, true
		case "false", "no", "off", "0", "":
			return false, true
		}
		return false, false
	}
	for {
		end := strings.IndexAny(s, ",)")
		if end < 0 {
			return s, false
		}
		opt := s[:end]
		name, val, hasVal := strings.Cut(opt, "=")
		ok := true
		switch name {
		case "only":
			o.only, ok = boolArg(val, hasVal)
		case "unfold":
			o.unfold, ok = boolArg(val, hasVal)
		case "keyonly":
			o.keyOnly, ok = boolArg(val, hasVal)
		case "valueonly":
			o.valueOnly, ok = boolArg(val, hasVal)
		case "key":
			if !hasVal || val == "" {
				return s, false
			}
			o.keys = append(o.keys, strings.TrimSuffix(val, ":"))
			o.only = true
		case "separator", "key_value_separator":
			if !hasVal {
				return s, false
			}
			var b strings.Builder
			for val != "" {
				i := strings.IndexByte(val, '%')
				if i < 0 {
					b.WriteString(val)
					break
				}
				b.WriteString(val[:i])
				val = val[i+1:]
				switch {
				case strings.HasPrefix(val, "n"):
					b.WriteByte('\n')
					val = val[1:]
				case len(val) >= 3 && val[0] == 'x' && isHex(val[1]) && isHex(val[2]):
					n := 0
					for _, c := range val[1:3] {
						n = n*16 + hexVal(byte(c))
					}
					b.WriteByte(byte(n))
					val = val[3:]
				default:
					b.WriteByte('%')
				}
			}
			if name == "separator" {
				o.sep, o.sepSet = b.String(), true
			} else {
				o.kvsep, o.kvsepSet = b.String(), true
			}
		default:
			return s, false
		}
		if !ok {
			return s, false
		}
		s = s[end:]
		if s[0] == ')' {
			return s, true
		}
		s = s[1:]
	}
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// trailerItem is one line of the trailer block (with its continuation
// lines); token is empty for a line that is not a trailer.
type trailerItem struct {
	raw, token, value string
}

// trailerSeparator is find_separator: the index of the ':' ending a
// token (letters, digits, '-', then optional blanks), or -1.
func trailerSeparator(line string) int {
	ws := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == ':' {
			return i
		}
		if !ws && (isAlnum(c) || c == '-') {
			continue
		}
		if i > 0 && (c == ' ' || c == '\t') {
			ws = true
			continue
		}
		break
	}
	return -1
}

// trailerBlock finds the trailer block of a message given from its
// subject on (find_trailer_block_start/end): the last paragraph, not
// the first, made only of trailers, or at least a quarter of them with
// a git-generated one among them.
func trailerBlock(msg string) (string, []trailerItem) {
	// The end: trailing blank lines and comment lines are not part of it.
	lines := strings.SplitAfter(msg, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	// git's trailer_end: what ignore_non_trailer leaves out (a run of
	// comment and empty lines at the end, the old "Conflicts:" block, all
	// from the scissors line on) is not part of it.
	blockEnd := ignoreNonTrailer(lines)
	end := blockEnd
	for end > 0 {
		if _, blank := blankTrim(lines[end-1]); blank || strings.HasPrefix(lines[end-1], "#") {
			end--
			continue
		}
		break
	}
	// The title paragraph is not a trailer block.
	title := 0
	for title < end {
		if _, blank := blankTrim(lines[title]); blank {
			break
		}
		title++
	}
	start := end
	for start > title {
		if _, blank := blankTrim(lines[start-1]); blank {
			break
		}
		start--
	}
	if start <= title || start >= end {
		return "", nil
	}
	block := lines[start:end]
	trailers, others, recognized := 0, 0, false
	possibleCont := false
	for _, l := range block {
		if strings.HasPrefix(l, "#") {
			continue
		}
		if possibleCont && (l[0] == ' ' || l[0] == '\t') {
			continue
		}
		if strings.HasPrefix(l, "Signed-off-by: ") || strings.HasPrefix(l, "(cherry picked from commit ") {
			recognized = true
			trailers++
			possibleCont = true
			continue
		}
		if trailerSeparator(l) >= 1 {
			trailers++
			possibleCont = true
		} else {
			others++
			possibleCont = false
		}
	}
	if !(trailers > 0 && others == 0) && !(recognized && trailers*3 >= others) {
		return "", nil
	}
	// The block runs to trailer_end (blank and comment lines before it
	// included); its items are trailer_info_get's: a line starting with
	// white space continues the trailer before it, any other line is an
	// item of its own (a comment line a non-trailer one).
	block = lines[start:blockEnd]
	var items []trailerItem
	lastTrailer := false
	for _, l := range block {
		if lastTrailer && strings.IndexByte(" \t\n\v\f\r", l[0]) >= 0 {
			items[len(items)-1].raw += l
			continue
		}
		items = append(items, trailerItem{raw: l})
		lastTrailer = trailerSeparator(strings.TrimSuffix(l, "\n")) >= 1
	}
	for i := range items {
		l := strings.TrimSuffix(items[i].raw, "\n")
		if k := trailerSeparator(l); k >= 1 {
			items[i].token = strings.TrimRight(l[:k], " \t")
			items[i].value = strings.TrimSpace(l[k+1:])
		}
	}
	return strings.Join(block, ""), items
}

// formatTrailers is format_trailers_from_commit.
func formatTrailers(msg string, o trailerOpts) string {
	raw, items := trailerBlock(msg)
	if raw == "" {
		return ""
	}
	if !o.only && !o.unfold && len(o.keys) == 0 && !o.sepSet && !o.keyOnly && !o.valueOnly && !o.kvsepSet {
		return raw
	}
	var b strings.Builder
	for _, it := range items {
		if it.token != "" {
			if len(o.keys) > 0 {
				match := false
				for _, k := range o.keys {
					if strings.EqualFold(k, it.token) {
						match = true
					}
				}
				if !match {
					continue
				}
			}
			val := it.value
			if o.unfold {
				val = unfoldValue(val)
			}
			if o.sepSet && b.Len() > 0 {
				b.WriteString(o.sep)
			}
			if !o.valueOnly {
				b.WriteString(it.token)
			}
			if !o.keyOnly && !o.valueOnly {
				if o.kvsepSet {
					b.WriteString(o.kvsep)
				} else {
					b.WriteString(": ")
				}
			}
			if !o.keyOnly {
				b.WriteString(val)
			}
			if !o.sepSet {
				b.WriteByte('\n')
			}
		} else if !o.only {
			if o.sepSet && b.Len() > 0 {
				b.WriteString(o.sep)
			}
			line := it.raw
			if o.unfold {
				line = unfoldValue(strings.TrimSuffix(line, "\n")) + "\n"
			}
			if o.sepSet {
				line = strings.TrimSuffix(line, "\n")
			}
			b.WriteString(line)
			if !o.sepSet && !strings.HasSuffix(line, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// unfoldValue joins continuation lines with single spaces.
func unfoldValue(v string) string {
	if !strings.Contains(v, "\n") {
		return v
	}
	var b strings.Builder
	for i, l := range strings.Split(v, "\n") {
		l = strings.TrimSpace(l)
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l)
	}
	return b.String()
}

// cutLine is git's scissors line (wt-status.c cut_line) after the
// comment character.
const cutLine = "# ------------------------ >8 ------------------------\n"

// ignoreNonTrailer is commit.c's ignore_non_trailer on a message's lines:
// the index of the first line of what it ignores at the end. From the
// scissors line on (wt_status_locate_end), and a final run of comment
// lines, empty lines and the "Conflicts:" block old git merges wrote
// (its lines of paths start with a tab). A run that starts at the first
// line does not count (git's boc of 0 means none).
func ignoreNonTrailer(lines []string) int {
	cutoff := len(lines)
	for i, l := range lines {
		if l == cutLine {
			cutoff = i
			break
		}
	}
	boc, inConflicts := 0, false
	for i := 0; i < cutoff; i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "#") || l == "\n":
			if boc == 0 {
				boc = i
			}
		case l == "Conflicts:\n":
			inConflicts = true
			if boc == 0 {
				boc = i
			}
		case inConflicts && strings.HasPrefix(l, "\t"):
		case boc != 0:
			boc, inConflicts = 0, false
		}
	}
	if boc != 0 {
		return boc
	}
	return cutoff
}
