package git

// git's pretty formats (pretty.c) for git_log and git_show: the medium
// format, oneline, and --format strings with every placeholder git 2.39
// documents. Written by hand: no Go library renders git's formats, and the
// output has to be byte-identical to git's.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// message splits a commit message as git's pretty code does: the subject
// paragraph's lines (trailing whitespace trimmed), the body after it and
// the raw message from the subject on.
type message struct {
	subjectLines []string
	body, raw    string
}

func parseMessage(msg string) message {
	raw := msg
	for strings.HasPrefix(raw, "\n") || blankLine(firstLine(raw)) && raw != "" {
		_, rest, ok := strings.Cut(raw, "\n")
		if !ok {
			raw = ""
			break
		}
		raw = rest
	}
	m := message{raw: raw}
	rest := raw
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		if blankLine(line) {
			break
		}
		m.subjectLines = append(m.subjectLines, strings.TrimRight(line, " \t\r\v\f"))
		rest = after
	}
	// The body starts after the blank lines that end the subject.
	for rest != "" {
		line, after, ok := strings.Cut(rest, "\n")
		if !blankLine(line) {
			break
		}
		if !ok {
			rest = ""
			break
		}
		rest = after
	}
	m.body = rest
	return m
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func blankLine(l string) bool { return strings.TrimRight(l, " \t\r\v\f\n") == "" }

// subject is git's %s: the subject paragraph's lines joined by spaces.
func (m message) subject() string { return strings.Join(m.subjectLines, " ") }

// expandTabs replaces tabs with spaces to the next multiple of 8 columns,
// counted from the start of the text (git's strbuf_add_tabexpand).
func expandTabs(line string) string {
	if !strings.Contains(line, "\t") {
		return line
	}
	var b strings.Builder
	col := 0
	for _, seg := range strings.SplitAfter(line, "\t") {
		text := strings.TrimSuffix(seg, "\t")
		b.WriteString(text)
		col += strWidth(text)
		if strings.HasSuffix(seg, "\t") {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
		}
	}
	return b.String()
}

// mediumMessage is the message as the medium format prints it: every line
// indented by four spaces, tabs expanded, trailing whitespace and
// trailing blank lines removed.
func mediumMessage(msg string) string {
	m := parseMessage(msg)
	lines := strings.Split(m.raw, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " \t\r\v\f")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    " + expandTabs(l) + "\n")
	}
	return b.String()
}

// prettyFormat is a --format argument: the template and whether each
// commit's output is terminated (tformat) or separated (format:).
type prettyFormat struct {
	template   string
	terminated bool
	named      string // oneline, short, medium, full, fuller, raw, reference
}

func parsePrettyFormat(f string) prettyFormat {
	switch {
	case strings.HasPrefix(f, "format:"):
		return prettyFormat{template: strings.TrimPrefix(f, "format:")}
	case strings.HasPrefix(f, "tformat:"):
		return prettyFormat{template: strings.TrimPrefix(f, "tformat:"), terminated: true}
	}
	switch f {
	case "oneline", "short", "medium", "full", "fuller", "raw", "reference":
		return prettyFormat{named: f, terminated: true}
	}
	return prettyFormat{template: f, terminated: true}
}

// prettyContext is what placeholders need beyond the commit.
type prettyContext struct {
	r       *git.Repository
	mailmap mailmap
	now     time.Time
	shallow map[plumbing.Hash]bool
}

func newPrettyContext(r *git.Repository) *prettyContext {
	return &prettyContext{r: r, mailmap: readMailmap(r), now: time.Now(), shallow: shallowCommits(r)}
}

// view is the commit as git shows it: a shallow clone's boundary commit
// is grafted to have no parents.
func (pc *prettyContext) view(c *object.Commit) *object.Commit {
	if !pc.shallow[c.Hash] || len(c.ParentHashes) == 0 {
		return c
	}
	cp := *c
	cp.ParentHashes = nil
	return &cp
}

// expand renders a --format template for one commit (pretty.c
// format_commit_message): %w wrapping, %< %> padding, and the %+ %- "% "
// magic around placeholders.
func (pc *prettyContext) expand(c *object.Commit, tmpl string) string {
	var out strings.Builder
	wrap := wrapSpec{}
	var wrapStart int
	var pad padSpec
	msg := parseMessage(c.Message)
	for i := 0; i < len(tmpl); {
		if tmpl[i] != '%' || i+1 >= len(tmpl) {
			out.WriteByte(tmpl[i])
			i++
			continue
		}
		j := i + 1
		magic := byte(0)
		if tmpl[j] == '+' || tmpl[j] == '-' || tmpl[j] == ' ' {
			if j+1 < len(tmpl) {
				magic = tmpl[j]
				j++
			}
		}
		text, n, kind := pc.placeholder(c, msg, tmpl[j:])
		switch kind {
		case phLiteral:
			out.WriteByte('%')
			i++
			continue
		case phWrap:
			w, ok := parseWrap(tmpl[j : j+n])
			if ok {
				s := out.String()
				out.Reset()
				out.WriteString(s[:wrapStart] + wrap.apply(s[wrapStart:]))
				wrap, wrapStart = w, out.Len()
			}
			i = j + n
			continue
		case phPad:
			if p, ok := parsePad(tmpl[j : j+n]); ok {
				pad = p
			}
			i = j + n
			continue
		}
		if pad.width > 0 {
			text = pad.apply(text, out.String())
			pad = padSpec{}
		}
		switch magic {
		case '+':
			if text != "" {
				text = "\n" + text
			}
		case '-':
			if text == "" {
				s := strings.TrimRight(out.String(), "\n")
				out.Reset()
				out.WriteString(s)
			}
		case ' ':
			if text != "" {
				text = " " + text
			}
		}
		out.WriteString(text)
		i = j + n
	}
	s := out.String()
	if wrap.set {
		s = s[:wrapStart] + wrap.apply(s[wrapStart:])
	}
	return s
}

type phKind int

const (
	phText phKind = iota
	phLiteral
	phWrap
	phPad
)

// placeholder expands the placeholder at the start of p and returns its
// text and length.
func (pc *prettyContext) placeholder(c *object.Commit, m message, p string) (string, int, phKind) {
	if p == "" {
		return "", 0, phLiteral
	}
	one := func(s string) (string, int, phKind) { return s, 1, phText }
	two := func(s string) (string, int, phKind) { return s, 2, phText }
	switch p[0] {
	case '%':
		return one("%")
	case 'n':
		return one("\n")
	case 'H':
		return one(c.Hash.String())
	case 'h':
		return one(c.Hash.String()[:7])
	case 'T':
		return one(c.TreeHash.String())
	case 't':
		return one(c.TreeHash.String()[:7])
	case 'P', 'p':
		var ps []string
		for _, h := range c.ParentHashes {
			if p[0] == 'P' {
				ps = append(ps, h.String())
			} else {
				ps = append(ps, h.String()[:7])
			}
		}
		return one(strings.Join(ps, " "))
	case 'm':
		return one(">")
	case 's':
		return one(m.subject())
	case 'f':
		return one(sanitizedSubject(firstLine(m.raw)))
	case 'b':
		return one(m.body)
	case 'B':
		return one(m.raw)
	case 'N', 'e':
		return one("") // no notes; no encoding header
	case 'd', 'D':
		decs := decorations(pc.r, c.Hash)
		if pc.shallow[c.Hash] {
			decs = append([]string{"grafted"}, decs...)
		}
		if len(decs) == 0 {
			return one("")
		}
		if p[0] == 'd' {
			return one(" (" + strings.Join(decs, ", ") + ")")
		}
		return one(strings.Join(decs, ", "))
	case 'x':
		if len(p) >= 3 {
			if v, err := strconv.ParseUint(p[1:3], 16, 8); err == nil {
				return string([]byte{byte(v)}), 3, phText
			}
		}
		return "", 0, phLiteral
	case 'a', 'c':
		if len(p) < 2 {
			return "", 0, phLiteral
		}
		sig := c.Author
		if p[0] == 'c' {
			sig = c.Committer
		}
		if s, ok := pc.person(sig, p[1]); ok {
			return two(s)
		}
		return "", 0, phLiteral
	case 'G':
		if len(p) < 2 {
			return "", 0, phLiteral
		}
		switch p[1] {
		case '?':
			return two("N") // not signed
		case 'G', 'S', 'K', 'F', 'P', 'T':
			return two("")
		}
		return "", 0, phLiteral
	case 'g':
		// Reflog placeholders expand to nothing without --walk-reflogs.
		if len(p) >= 2 && strings.IndexByte("dDnNeEs", p[1]) >= 0 {
			return two("")
		}
		return "", 0, phLiteral
	case 'C':
		// Colours are off when the output is not a terminal.
		switch {
		case strings.HasPrefix(p, "C("):
			if k := strings.IndexByte(p, ')'); k > 0 {
				return "", k + 1, phText
			}
		case strings.HasPrefix(p, "Cred"):
			return "", 4, phText
		case strings.HasPrefix(p, "Cblue"):
			return "", 5, phText
		case strings.HasPrefix(p, "Cgreen"), strings.HasPrefix(p, "Creset"):
			return "", 6, phText
		}
		return "", 0, phLiteral
	case 'w':
		if strings.HasPrefix(p, "w(") {
			if k := strings.IndexByte(p, ')'); k > 0 {
				return "", k + 1, phWrap
			}
		}
		return "", 0, phLiteral
	case '<', '>':
		if k := strings.IndexByte(p, ')'); k > 0 && strings.IndexByte(p[:k], '(') > 0 {
			return "", k + 1, phPad
		}
		return "", 0, phLiteral
	case '(':
		if strings.HasPrefix(p, "(trailers") {
			if k := strings.IndexByte(p, ')'); k > 0 {
				return trailers(m), k + 1, phText
			}
		}
		return "", 0, phLiteral
	}
	return "", 0, phLiteral
}

// person expands %a? / %c? for one field letter.
func (pc *prettyContext) person(sig object.Signature, f byte) (string, bool) {
	name, email := sig.Name, sig.Email
	local, _, _ := strings.Cut(email, "@")
	switch f {
	case 'n':
		return name, true
	case 'N':
		return pc.mailmap.mapName(name, email), true
	case 'e':
		return email, true
	case 'E':
		return email, true
	case 'l':
		return local, true
	case 'L':
		return local, true
	case 'd':
		return sig.When.Format(gitDate), true
	case 'D':
		return sig.When.Format("Mon, 2 Jan 2006 15:04:05 -0700"), true
	case 'r':
		return relativeDate(sig.When, pc.now), true
	case 't':
		return strconv.FormatInt(sig.When.Unix(), 10), true
	case 'i':
		return sig.When.Format("2006-01-02 15:04:05 -0700"), true
	case 'I':
		return sig.When.Format("2006-01-02T15:04:05-07:00"), true
	case 's':
		return sig.When.Format("2006-01-02"), true
	case 'h':
		return humanDate(sig.When, pc.now), true
	}
	return "", false
}

// relativeDate is git's show_date_relative.
func relativeDate(t, now time.Time) string {
	if now.Before(t) {
		return "in the future"
	}
	diff := int64(now.Sub(t) / time.Second)
	unit := func(n int64, what string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s ago", n, what)
		}
		return fmt.Sprintf("%d %ss ago", n, what)
	}
	if diff < 90 {
		return unit(diff, "second")
	}
	diff = (diff + 30) / 60
	if diff < 90 {
		return unit(diff, "minute")
	}
	diff = (diff + 30) / 60
	if diff < 36 {
		return unit(diff, "hour")
	}
	diff = (diff + 12) / 24
	if diff < 14 {
		return unit(diff, "day")
	}
	if diff < 70 {
		return unit((diff+3)/7, "week")
	}
	if diff < 365 {
		return unit((diff+15)/30, "month")
	}
	if diff < 1825 {
		total := (diff*12*2 + 365) / (365 * 2)
		years, months := total/12, total%12
		if months == 0 {
			return unit(years, "year")
		}
		y := fmt.Sprintf("%d year", years)
		if years != 1 {
			y += "s"
		}
		if months == 1 {
			return fmt.Sprintf("%s, %d month ago", y, months)
		}
		return fmt.Sprintf("%s, %d months ago", y, months)
	}
	return unit((diff+183)/365, "year")
}

// humanDate is git's --date=human for dates not from today.
func humanDate(t, now time.Time) string {
	now = now.In(time.Local)
	if t.Year() != now.Year() {
		return t.Format("Jan 2 2006")
	}
	if t.Month() == now.Month() && t.Day() == now.Day() {
		return relativeDate(t, now)
	}
	if t.Month() == now.Month() && t.Day() < now.Day() && t.Day()+5 > now.Day() {
		return t.Format("Mon 15:04")
	}
	return t.Format("Mon Jan 2 15:04")
}

// sanitizedSubject is git's %f: runs of characters other than letters,
// digits, '.' and '_' become one '-', repeated dots one, and trailing '.'
// and '-' are dropped.
func sanitizedSubject(s string) string {
	var b strings.Builder
	space := 2
	for i := 0; i < len(s); i++ {
		c := s[i]
		title := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_'
		if !title {
			space |= 1
			continue
		}
		if space == 1 {
			b.WriteByte('-')
		}
		space = 0
		b.WriteByte(c)
		if c == '.' {
			for i+1 < len(s) && s[i+1] == '.' {
				i++
			}
		}
	}
	return strings.TrimRight(b.String(), ".-")
}

// trailers is %(trailers): the "Token: value" lines of the message's last
// paragraph when it is not the subject and every line is a trailer (or a
// continuation line).
func trailers(m message) string {
	if m.body == "" {
		return ""
	}
	paras := strings.Split(strings.TrimRight(m.body, "\n"), "\n\n")
	last := paras[len(paras)-1]
	var out strings.Builder
	for _, l := range strings.Split(last, "\n") {
		if l != "" && (l[0] == ' ' || l[0] == '\t') && out.Len() > 0 {
			out.WriteString(l + "\n")
			continue
		}
		tok, _, ok := strings.Cut(l, ":")
		if !ok || tok == "" || strings.ContainsAny(tok, " \t") {
			return ""
		}
		out.WriteString(l + "\n")
	}
	return out.String()
}

// wrapSpec is %w(width,indent1,indent2).
type wrapSpec struct {
	set                     bool
	width, indent1, indent2 int
}

func parseWrap(p string) (wrapSpec, bool) {
	args := strings.Split(strings.TrimSuffix(strings.TrimPrefix(p, "w("), ")"), ",")
	w := wrapSpec{set: true}
	vals := []*int{&w.width, &w.indent1, &w.indent2}
	for i, a := range args {
		if i >= 3 {
			return w, false
		}
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		v, err := strconv.Atoi(a)
		if err != nil {
			return w, false
		}
		*vals[i] = v
	}
	if w.width == 0 && w.indent1 == 0 && w.indent2 == 0 {
		w.set = false // %w() turns wrapping off
	}
	return w, true
}

// apply is git's strbuf_add_wrapped_text over the text of each line.
func (w wrapSpec) apply(s string) string {
	if !w.set {
		return s
	}
	var out strings.Builder
	lines := strings.SplitAfter(s, "\n")
	for _, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\n")
		out.WriteString(wrapLine(l, w.width, w.indent1, w.indent2))
		if nl {
			out.WriteString("\n")
		}
	}
	return out.String()
}

// wrapLine fills words into lines of at most width columns, the first
// indented by indent1 and the others by indent2 (width 0: no wrapping,
// indentation only).
func wrapLine(text string, width, indent1, indent2 int) string {
	if text == "" {
		return ""
	}
	// Words are separated by spaces only (a tab stays inside its word).
	var words []string
	for _, w := range strings.Split(text, " ") {
		if w != "" {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return strings.Repeat(" ", indent1)
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", indent1))
	col := indent1
	for i, w := range words {
		ww := utf8.RuneCountInString(w)
		if i > 0 {
			if width > 0 && col+1+ww > width {
				b.WriteString("\n" + strings.Repeat(" ", indent2))
				col = indent2
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(w)
		col += ww
	}
	return b.String()
}

// padSpec is %<(N[,trunc|ltrunc|mtrunc]), %>(N), %><(N) and their |(N)
// column forms: the next placeholder is padded (or cut) to N columns.
type padSpec struct {
	width  int
	align  byte // '<' left, '>' right, 'c' centre
	column bool
	trunc  string
}

func parsePad(p string) (padSpec, bool) {
	var ps padSpec
	switch {
	case strings.HasPrefix(p, "<|("), strings.HasPrefix(p, ">|("), strings.HasPrefix(p, "><|("):
		ps.column = true
	}
	switch {
	case strings.HasPrefix(p, "><"):
		ps.align = 'c'
	case strings.HasPrefix(p, ">>"), strings.HasPrefix(p, ">"):
		ps.align = '>'
	default:
		ps.align = '<'
	}
	open := strings.IndexByte(p, '(')
	args := strings.Split(strings.TrimSuffix(p[open+1:], ")"), ",")
	v, err := strconv.Atoi(strings.TrimSpace(args[0]))
	if err != nil || v < 0 {
		return ps, false
	}
	ps.width = v
	if len(args) > 1 {
		ps.trunc = strings.TrimSpace(args[1])
	}
	return ps, true
}

func (ps padSpec) apply(text, sofar string) string {
	width := ps.width
	if ps.column {
		line := sofar[strings.LastIndexByte(sofar, '\n')+1:]
		width -= strWidth(line)
	}
	w := strWidth(text)
	if w > width {
		runes := []rune(text)
		switch ps.trunc {
		case "trunc":
			if width >= 2 {
				return string(runes[:width-2]) + ".."
			}
		case "ltrunc":
			if width >= 2 {
				return ".." + string(runes[len(runes)-(width-2):])
			}
		case "mtrunc":
			if width >= 2 {
				left := (width - 2) / 2
				right := width - 2 - left
				return string(runes[:left]) + ".." + string(runes[len(runes)-right:])
			}
		}
		return text
	}
	gap := width - w
	switch ps.align {
	case '>':
		return strings.Repeat(" ", gap) + text
	case 'c':
		l := gap / 2
		return strings.Repeat(" ", l) + text + strings.Repeat(" ", gap-l)
	}
	return text + strings.Repeat(" ", gap)
}
