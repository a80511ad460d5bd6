package pretty

// --format strings: pretty.c's format_commit_message, placeholder by
// placeholder, with %w wrapping, %< %> padding and truncation, the
// %+ %- "% " magic and %C colours (off, as when git writes to a pipe,
// except %C(always,...)).

import (
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

const formattingLimit = 16 * 1024

const (
	noFlush = iota
	flushRight
	flushLeft
	flushLeftAndSteal
	flushBoth
)

const (
	truncNone = iota
	truncLeft
	truncMiddle
	truncRight
)

type userFormatter struct {
	pc       *Context
	rc       rawCommit
	dateMode string
	// wrapping (rewrap_message_tail)
	width, indent1, indent2, wrapStart int
	// padding of the next placeholder
	padding, flush, trunc int
	parsedMsg             bool
	subject, body         string // message from the subject on; body
	deco                  func(plumbing.Hash) []string
	abbrev                func(plumbing.Hash) string
	note                  func() string
	// err stops the command (what git dies of while formatting).
	err error
}

// errTrustLevelBug is git 2.39's BUG on %GT of a signature gpg could not
// check: the trust level is left unset (gpg-interface.c).
var errTrustLevelBug = &Error{Message: "BUG: gpg-interface.c:915: invalid trust level requested -1"}

// formatUser is format_commit_message.
func (pc *Context) formatUser(rc rawCommit, tmpl, dateMode string, deco func(plumbing.Hash) []string, abbrev func(plumbing.Hash) string, note func() string) string {
	uf := &userFormatter{pc: pc, rc: rc, dateMode: dateMode, deco: deco, abbrev: abbrev, note: note}
	var sb strings.Builder
	f := tmpl
	for {
		i := strings.IndexByte(f, '%')
		if i < 0 {
			sb.WriteString(f)
			break
		}
		sb.WriteString(f[:i])
		f = f[i+1:]
		if strings.HasPrefix(f, "%") {
			sb.WriteByte('%')
			f = f[1:]
			continue
		}
		n := uf.item(&sb, f)
		if n > 0 {
			f = f[n:]
		} else {
			sb.WriteByte('%')
		}
	}
	uf.rewrap(&sb, 0, 0, 0)
	if uf.err != nil && pc.Err == nil {
		pc.Err = uf.err
	}
	return sb.String()
}

// rewrap is rewrap_message_tail.
func (uf *userFormatter) rewrap(sb *strings.Builder, width, indent1, indent2 int) {
	if uf.width == width && uf.indent1 == indent1 && uf.indent2 == indent2 {
		return
	}
	if uf.wrapStart < sb.Len() {
		s := sb.String()
		tail := s[uf.wrapStart:]
		sb.Reset()
		sb.WriteString(s[:uf.wrapStart])
		addWrapped(sb, tail, uf.indent1, uf.indent2, uf.width)
	}
	uf.wrapStart = sb.Len()
	uf.width, uf.indent1, uf.indent2 = width, indent1, indent2
}

// item is format_commit_item: magic prefixes, then one placeholder.
func (uf *userFormatter) item(sb *strings.Builder, p string) int {
	magic := byte(0)
	if p != "" && (p[0] == '-' || p[0] == '+' || p[0] == ' ') {
		magic = p[0]
		p = p[1:]
		if strings.HasPrefix(p, "w") {
			return 0
		}
	}
	orig := sb.Len()
	var consumed int
	if uf.flush == noFlush {
		consumed = uf.one(sb, p)
	} else {
		consumed = uf.pad(sb, p)
	}
	if magic == 0 {
		return consumed
	}
	s := sb.String()
	switch {
	case orig == len(s) && magic == '-':
		t := strings.TrimRight(s, "\n")
		sb.Reset()
		sb.WriteString(t)
		if uf.wrapStart > sb.Len() {
			uf.wrapStart = sb.Len()
		}
	case orig != len(s) && magic == '+':
		sb.Reset()
		sb.WriteString(s[:orig] + "\n" + s[orig:])
	case orig != len(s) && magic == ' ':
		sb.Reset()
		sb.WriteString(s[:orig] + " " + s[orig:])
	}
	return consumed + 1
}

// pad is format_and_pad_commit.
func (uf *userFormatter) pad(sb *strings.Builder, p string) int {
	var local strings.Builder
	total := 0
	padding := uf.padding
	if padding < 0 {
		s := sb.String()
		occupied := displayWidth(s[strings.LastIndexByte(s, '\n')+1:])
		padding = -padding - occupied
	}
	for {
		modifier := strings.HasPrefix(p, "C")
		consumed := uf.one(&local, p)
		total += consumed
		if !modifier {
			break
		}
		p = p[consumed:]
		if !strings.HasPrefix(p, "%") {
			break
		}
		p = p[1:]
		total++
	}
	text := local.String()
	n := displayWidth(text)
	if uf.flush == flushLeftAndSteal {
		s := sb.String()
		cut := len(s)
		for n > padding && cut > 0 {
			ch := s[cut-1]
			if ch == ' ' {
				cut--
				padding++
				continue
			}
			if ch != 'm' {
				break
			}
			q := cut - 2
			for q > 0 && cut-1-q < 10 && s[q] != '\033' {
				q--
			}
			if q < 0 || s[q] != '\033' || ansiLen(s[q:cut]) != cut-q {
				break
			}
			text = s[q:cut] + text
			cut = q
		}
		sb.Reset()
		sb.WriteString(s[:cut])
		uf.flush = flushLeft
	}
	if n > padding {
		switch uf.trunc {
		case truncLeft:
			text = utf8Replace(text, 0, n-(padding-2), "..")
		case truncMiddle:
			text = utf8Replace(text, padding/2-1, n-(padding-2), "..")
		case truncRight:
			text = utf8Replace(text, padding-2, n-(padding-2), "..")
		}
		sb.WriteString(text)
	} else {
		gap := padding - n
		offset := 0
		switch uf.flush {
		case flushLeft:
			offset = gap
		case flushBoth:
			offset = gap / 2
		}
		sb.WriteString(strings.Repeat(" ", offset) + text + strings.Repeat(" ", gap-offset))
	}
	uf.flush = noFlush
	return total
}

// parsePadding is parse_padding_placeholder.
func (uf *userFormatter) parsePadding(p string) int {
	i := 0
	var flush int
	switch p[0] {
	case '<':
		flush = flushRight
		i = 1
	case '>':
		i = 1
		switch {
		case strings.HasPrefix(p[1:], "<"):
			flush, i = flushBoth, 2
		case strings.HasPrefix(p[1:], ">"):
			flush, i = flushLeftAndSteal, 2
		default:
			flush = flushLeft
		}
	default:
		return 0
	}
	toColumn := false
	if i < len(p) && p[i] == '|' {
		toColumn = true
		i++
	}
	if i >= len(p) || p[i] != '(' {
		return 0
	}
	start := i + 1
	end := start
	for end < len(p) && p[end] != ',' && p[end] != ')' {
		end++
	}
	if end >= len(p) || end == start {
		return 0
	}
	width, nlen := strtol(p[start:end])
	if width < -formattingLimit || width > formattingLimit || nlen == 0 || width == 0 {
		return 0
	}
	if width < 0 {
		if toColumn {
			width += 80 // term_columns() when not on a terminal
		}
		if width < 0 {
			return 0
		}
	}
	trunc := truncNone
	if p[end] == ',' {
		s := p[end+1:]
		k := strings.IndexByte(s, ')')
		if k <= 0 {
			return 0
		}
		switch {
		case strings.HasPrefix(s, "trunc)"):
			trunc = truncRight
		case strings.HasPrefix(s, "ltrunc)"):
			trunc = truncLeft
		case strings.HasPrefix(s, "mtrunc)"):
			trunc = truncMiddle
		default:
			return 0
		}
		end = end + 1 + k
	}
	uf.padding = width
	if toColumn {
		uf.padding = -width
	}
	uf.flush, uf.trunc = flush, trunc
	return end + 1
}

// strtol reads a leading (signed) decimal number after optional
// whitespace and returns it with the length read (0 when none).
func strtol(s string) (int, int) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == j {
		return 0, 0
	}
	v, err := strconv.Atoi(s[i:k])
	if err != nil {
		v = formattingLimit + 1
	}
	return v, k
}

// strtoul is strtoul's prefix parse for %w (a '-' number wraps around,
// so it is over the limit).
func strtoul(s string) (int, int) {
	v, n := strtol(s)
	if v < 0 {
		v = formattingLimit + 1
	}
	return v, n
}

func (uf *userFormatter) message() {
	if uf.parsedMsg {
		return
	}
	uf.parsedMsg = true
	uf.subject = skipBlankLines(uf.rc.msg)
	_, rest := formatSubject(uf.subject, " ")
	uf.body = skipBlankLines(rest)
}

// one is format_commit_one.
func (uf *userFormatter) one(sb *strings.Builder, p string) int {
	if p == "" {
		return 0
	}
	if n, ok := uf.control(sb, p); ok {
		return n
	}
	if n, ok := uf.commitField(sb, p); ok {
		return n
	}
	uf.message()
	return uf.messageField(sb, p)
}

// control is a placeholder that formats rather than shows the commit
// (%n, %x, %C, %w, %< and %>); ok is false for any other.
func (uf *userFormatter) control(sb *strings.Builder, p string) (n int, ok bool) {
	switch p[0] {
	case 'n':
		sb.WriteByte('\n')
		return 1, true
	case 'x':
		if len(p) >= 3 && isHex(p[1]) && isHex(p[2]) {
			v, _ := strconv.ParseUint(p[1:3], 16, 8)
			sb.WriteByte(byte(v))
			return 3, true
		}
		return 0, true
	case 'C':
		if strings.HasPrefix(p[1:], "(auto)") {
			return 7, true
		}
		return parseColor(sb, p), true
	case 'w':
		return uf.wrap(sb, p), true
	case '<', '>':
		return uf.parsePadding(p), true
	}
	return 0, false
}

// wrap is %w(width,indent1,indent2): the rest is rewrapped so.
func (uf *userFormatter) wrap(sb *strings.Builder, p string) int {
	if len(p) < 2 || p[1] != '(' {
		return 0
	}
	end := strings.IndexByte(p[2:], ')')
	if end < 0 {
		return 0
	}
	end += 2
	var width, indent1, indent2 int
	if end > 2 {
		args := p[2:end]
		var n int
		width, n = strtoul(args)
		args = args[n:]
		if strings.HasPrefix(args, ",") {
			indent1, n = strtoul(args[1:])
			args = args[1+n:]
			if strings.HasPrefix(args, ",") {
				indent2, n = strtoul(args[1:])
				args = args[1+n:]
			}
		}
		if args != "" {
			return 0
		}
	}
	if width > formattingLimit || indent1 > formattingLimit || indent2 > formattingLimit {
		return 0
	}
	uf.rewrap(sb, width, indent1, indent2)
	return end + 1
}

// commitField is a placeholder of the commit's header (hashes,
// decorations, notes, signature, people, encoding, raw message); ok is
// false for any other.
func (uf *userFormatter) commitField(sb *strings.Builder, p string) (n int, ok bool) {
	c := uf.rc.c
	switch p[0] {
	case 'H':
		sb.WriteString(c.Hash.String())
		return 1, true
	case 'h':
		sb.WriteString(uf.abbrev(c.Hash))
		return 1, true
	case 'T':
		sb.WriteString(c.TreeHash.String())
		return 1, true
	case 't':
		sb.WriteString(uf.abbrev(c.TreeHash))
		return 1, true
	case 'P', 'p':
		for i, h := range uf.rc.parents {
			if i > 0 {
				sb.WriteByte(' ')
			}
			if p[0] == 'P' {
				sb.WriteString(h.String())
			} else {
				sb.WriteString(uf.abbrev(h))
			}
		}
		return 1, true
	case 'm':
		if uf.pc.LeftSide[c.Hash] {
			sb.WriteString("<")
		} else {
			sb.WriteString(">")
		}
		return 1, true
	case 'd', 'D':
		decs := uf.deco(c.Hash)
		if len(decs) > 0 {
			if p[0] == 'd' {
				sb.WriteString(" (" + strings.Join(decs, ", ") + ")")
			} else {
				sb.WriteString(strings.Join(decs, ", "))
			}
		}
		return 1, true
	case 'g':
		if len(p) >= 2 && strings.IndexByte("dDsnNeE", p[1]) >= 0 {
			return 2, true // reflog placeholders are empty without --walk-reflogs
		}
		return 0, true
	case 'N':
		sb.WriteString(uf.note())
		return 1, true
	case 'G':
		return uf.signature(sb, p), true
	case 'a', 'c':
		line := uf.rc.author
		if p[0] == 'c' {
			line = uf.rc.committer
		}
		if len(p) < 2 {
			return 0, true
		}
		return uf.person(sb, p[1], line), true
	case 'e':
		sb.WriteString(uf.rc.encoding)
		return 1, true
	case 'B':
		sb.WriteString(uf.rc.msg)
		return 1, true
	}
	return 0, false
}

// signature is %G?, %GT, %GK and the %G placeholders left empty
// (signature.go: git with gpg and without the signer's key).
func (uf *userFormatter) signature(sb *strings.Builder, p string) int {
	c := uf.rc.c
	if len(p) < 2 {
		return 0
	}
	kind := kindOfSignature(c.PGPSignature)
	switch p[1] {
	case '?':
		if kind == sigNone || kind == sigSSH {
			sb.WriteByte('N')
		} else {
			sb.WriteByte('E') // no key to check it with
		}
	case 'T':
		if kind != sigNone {
			uf.err = errTrustLevelBug
			return 2
		}
		sb.WriteString("undefined")
	case 'K':
		if kind == sigOpenPGP {
			sb.WriteString(openPGPKeyID(c.PGPSignature))
		}
	case 'G', 'S', 'F', 'P':
	default:
		return 0
	}
	return 2
}

// messageField is a placeholder of the message: %s, %f, %b, %(trailers).
func (uf *userFormatter) messageField(sb *strings.Builder, p string) int {
	switch p[0] {
	case 's':
		s, _ := formatSubject(uf.subject, " ")
		sb.WriteString(s)
		return 1
	case 'f':
		sb.WriteString(sanitizedSubject(strings.SplitN(uf.subject, "\n", 2)[0]))
		return 1
	case 'b':
		sb.WriteString(uf.body)
		return 1
	}
	if strings.HasPrefix(p, "(trailers") {
		arg := p[len("(trailers"):]
		opts := trailerOpts{sep: "\n", kvsep: ": "}
		if strings.HasPrefix(arg, ":") {
			rest, ok := parseTrailerOpts(arg[1:], &opts, uf)
			if !ok {
				return 0
			}
			arg = rest
		}
		if strings.HasPrefix(arg, ")") {
			sb.WriteString(formatTrailers(uf.subject, opts))
			return len(p) - len(arg) + 1
		}
		return 0
	}
	return 0
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// person is format_person_part.
func (uf *userFormatter) person(sb *strings.Builder, part byte, line string) int {
	id := splitIdent(line)
	if !id.ok {
		return skipPerson(part)
	}
	name, email := id.name, id.email
	if part == 'N' || part == 'E' || part == 'L' {
		name, email = uf.pc.mailmap.MapUser(name, email)
	}
	switch part {
	case 'n', 'N':
		sb.WriteString(name)
		return 2
	case 'e', 'E':
		sb.WriteString(email)
		return 2
	case 'l', 'L':
		if i := strings.IndexByte(email, '@'); i >= 0 {
			email = email[:i]
		}
		sb.WriteString(email)
		return 2
	}
	if id.date == "" {
		return skipPerson(part)
	}
	ts, tz := id.when()
	mode := ""
	switch part {
	case 't':
		sb.WriteString(id.date)
		return 2
	case 'd':
		mode = uf.dateMode
	case 'D':
		mode = "rfc"
	case 'r':
		mode = "relative"
	case 'i':
		mode = "iso"
	case 'I':
		mode = "iso-strict"
	case 'h':
		mode = "human"
	case 's':
		mode = "short"
	default:
		return skipPerson(part)
	}
	sb.WriteString(uf.pc.showDate(ts, tz, mode))
	return 2
}

func skipPerson(part byte) int {
	if strings.IndexByte("netdDri", part) >= 0 {
		return 2
	}
	return 0
}

// parseColor is parse_color with colours off: only %C(always,...) is
// written.
func parseColor(sb *strings.Builder, p string) int {
	if strings.HasPrefix(p, "C(") {
		end := strings.IndexByte(p, ')')
		if end < 0 {
			return 0
		}
		spec, ok := strings.CutPrefix(p[2:end], "always,")
		if ok {
			if esc, good := colorParse(spec); good {
				sb.WriteString(esc)
			}
		}
		return end + 1
	}
	for _, c := range []string{"red", "green", "blue", "reset"} {
		if strings.HasPrefix(p[1:], c) {
			return 1 + len(c)
		}
	}
	return 1
}

// colorParse is color_parse_mem: attributes and up to two colours into
// one SGR sequence.
func colorParse(s string) (string, bool) {
	words := strings.Fields(s)
	if len(words) == 0 || (len(words) == 1 && words[0] == "reset") {
		return "\033[m", true
	}
	var attrs []string
	var fg, bg string
	colors := 0
	names := []string{"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"}
	attrCodes := map[string]int{"bold": 1, "dim": 2, "italic": 3, "ul": 4, "blink": 5, "reverse": 7, "strike": 9}
	for _, w := range words {
		code := ""
		switch {
		case w == "normal":
			code = "-"
		case w == "default":
			code = "9"
		case strings.HasPrefix(w, "bright"):
			for i, n := range names {
				if w == "bright"+n {
					code = "b" + strconv.Itoa(i)
				}
			}
		default:
			for i, n := range names {
				if w == n {
					code = strconv.Itoa(i)
				}
			}
			if v, err := strconv.Atoi(w); err == nil && v >= -1 && v <= 255 {
				code = "n" + strconv.Itoa(v)
			}
		}
		if code != "" {
			sgr := func(base int) string {
				switch {
				case code == "-":
					return ""
				case code == "9":
					return strconv.Itoa(base + 9)
				case code[0] == 'b':
					n, _ := strconv.Atoi(code[1:])
					return strconv.Itoa(base + 60 + n)
				case code[0] == 'n':
					n, _ := strconv.Atoi(code[1:])
					if n < 0 {
						return ""
					}
					if n < 8 {
						return strconv.Itoa(base + n)
					}
					return strconv.Itoa(base+8) + ";5;" + strconv.Itoa(n)
				}
				n, _ := strconv.Atoi(code)
				return strconv.Itoa(base + n)
			}
			switch colors {
			case 0:
				fg = sgr(30)
			case 1:
				bg = sgr(40)
			default:
				return "", false
			}
			colors++
			continue
		}
		neg := false
		a := w
		if rest, ok := strings.CutPrefix(a, "no-"); ok {
			neg, a = true, rest
		} else if rest, ok := strings.CutPrefix(a, "no"); ok {
			neg, a = true, rest
		}
		v, ok := attrCodes[a]
		if !ok {
			return "", false
		}
		if neg {
			if v == 1 {
				v = 22
			} else {
				v += 20
			}
		}
		attrs = append(attrs, strconv.Itoa(v))
	}
	parts := append([]string(nil), attrs...)
	if fg != "" {
		parts = append(parts, fg)
	}
	if bg != "" {
		parts = append(parts, bg)
	}
	if len(parts) == 0 {
		return "", true
	}
	return "\033[" + strings.Join(parts, ";") + "m", true
}
