package pretty

// git_log and git_show's commit rendering, ported from git 2.39's
// pretty.c, log-tree.c, utf8.c and date.c: the named formats (oneline,
// short, medium, full, fuller, raw, reference, email, mboxrd), --format
// strings with every placeholder git documents, and log-tree's rules for
// separating or terminating records. The output has to be byte-identical
// to git's, so identities and dates come from the raw commit header (as
// split_ident_line reads it), not from go-git's parsed signatures (which
// lose the sign of a -00xx zone and trim names git keeps).

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/width"
)

// Format is a --format/--pretty argument resolved as git's
// get_commit_format does.
type Format struct {
	kind       string // "user", or a builtin: oneline short medium full fuller raw email mboxrd
	template   string // user format
	terminator bool   // rev->use_terminator: tformat and oneline
	abbrev     bool   // --oneline's --abbrev-commit
	dateMode   string // "" (default) or "short" (reference)
}

// parseFormat resolves a format argument. A string naming no
// builtin format and holding no '%' is refused by git with "invalid
// --pretty format"; the tool's callers get that message too.
func parseFormat(f string) (Format, error) {
	switch {
	case strings.HasPrefix(f, "format:"):
		return Format{kind: "user", template: f[len("format:"):]}, nil
	case strings.HasPrefix(f, "tformat:"):
		return Format{kind: "user", template: f[len("tformat:"):], terminator: true}, nil
	}
	switch f {
	case "oneline":
		return Format{kind: f, terminator: true}, nil
	case "short", "medium", "full", "fuller", "raw", "email", "mboxrd":
		return Format{kind: f}, nil
	case "reference":
		return Format{kind: "user", template: "%C(auto)%h (%s, %ad)", terminator: true, dateMode: "short"}, nil
	}
	if strings.Contains(f, "%") {
		return Format{kind: "user", template: f, terminator: true}, nil
	}
	// git also takes an unambiguous prefix of a builtin name.
	for _, n := range []string{"oneline", "short", "medium", "full", "fuller", "reference", "email", "mboxrd", "raw"} {
		if f != "" && strings.HasPrefix(n, f) {
			return parseFormat(n)
		}
	}
	return Format{}, fmt.Errorf("fatal: invalid --pretty format: %s", f)
}

// Empty is commit_format_is_empty: a user format with no template.
func (f Format) Empty() bool { return f.kind == "user" && f.template == "" }

// rawCommit is a commit's raw header and message.
type rawCommit struct {
	c                 *object.Commit
	header            string // header lines, each ending in '\n'
	msg               string // everything after the blank line
	author, committer string // ident lines without the keyword
	encoding          string
	parents           []plumbing.Hash // none for a shallow boundary (a graft)
}

func loadRawCommit(pc *Context, c *object.Commit) rawCommit {
	rc := rawCommit{c: c, parents: c.ParentHashes}
	obj, err := pc.r.Storer.EncodedObject(plumbing.CommitObject, c.Hash)
	var raw []byte
	if err == nil {
		if rd, err := obj.Reader(); err == nil {
			raw, _ = io.ReadAll(rd)
			rd.Close()
		}
	}
	if raw == nil {
		rc.msg = c.Message
		return rc
	}
	hdr, msg, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		hdr, msg = bytes.TrimSuffix(raw, []byte("\n")), nil
	}
	rc.header, rc.msg = string(hdr)+"\n", string(msg)
	reencode(&rc)
	for _, l := range strings.Split(rc.header, "\n") {
		switch {
		case strings.HasPrefix(l, "author ") && rc.author == "":
			rc.author = l[len("author "):]
		case strings.HasPrefix(l, "committer ") && rc.committer == "":
			rc.committer = l[len("committer "):]
		case strings.HasPrefix(l, "encoding "):
			rc.encoding = l[len("encoding "):]
		}
	}
	return rc
}

// reencode is logmsg_reencode for UTF-8 output: a commit whose encoding
// header names another charset is converted as a whole (header and
// message) and loses that header line; one that cannot be converted is
// shown as stored.
func reencode(rc *rawCommit) {
	var enc string
	for _, l := range strings.Split(rc.header, "\n") {
		if v, ok := strings.CutPrefix(l, "encoding "); ok {
			enc = v
		}
	}
	rc.encoding = enc
	if enc == "" || strings.EqualFold(enc, "utf-8") || strings.EqualFold(enc, "utf8") {
		return
	}
	e, err := ianaindex.IANA.Encoding(enc)
	if err != nil || e == nil {
		return
	}
	hdr, err1 := e.NewDecoder().String(rc.header)
	msg, err2 := e.NewDecoder().String(rc.msg)
	if err1 != nil || err2 != nil {
		return
	}
	var kept []string
	for _, l := range strings.SplitAfter(hdr, "\n") {
		if !strings.HasPrefix(l, "encoding ") {
			kept = append(kept, l)
		}
	}
	rc.header, rc.msg = strings.Join(kept, ""), msg
}

// identLine is split_ident_line's result.
type identLine struct {
	name, email string
	date, tz    string // as written; date "" when missing
	ok          bool
}

func splitIdent(line string) identLine {
	var id identLine
	lt := strings.IndexByte(line, '<')
	if lt < 0 {
		return id
	}
	ne := 0
	for k := lt - 1; k >= 0; k-- {
		if !gitIsSpace(line[k]) {
			ne = k + 1
			break
		}
	}
	gt := strings.IndexByte(line[lt+1:], '>')
	if gt < 0 {
		return id
	}
	id.name, id.email, id.ok = line[:ne], line[lt+1:lt+1+gt], true
	rest := line[strings.LastIndexByte(line, '>')+1:]
	rest = strings.TrimLeft(rest, " \t\r\n")
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 {
		return id
	}
	date := rest[:n]
	rest = strings.TrimLeft(rest[n:], " \t\r\n")
	if len(rest) < 2 || (rest[0] != '+' && rest[0] != '-') || rest[1] < '0' || rest[1] > '9' {
		return id
	}
	m := 1
	for m < len(rest) && rest[m] >= '0' && rest[m] <= '9' {
		m++
	}
	id.date, id.tz = date, rest[:m]
	return id
}

// when is the ident's timestamp and zone (show_ident_date).
func (id identLine) when() (int64, int) {
	ts, err := strconv.ParseUint(id.date, 10, 64)
	if err != nil || ts > 1<<62 {
		return 0, 0
	}
	tz, _ := strconv.Atoi(id.tz)
	return int64(ts), tz
}

var weekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
var months = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// zoneTime is time_to_tm: the zone's digits read as hours and minutes.
func zoneTime(ts int64, tz int) time.Time {
	m := abs(tz)/100*60 + abs(tz)%100
	if tz < 0 {
		m = -m
	}
	return time.Unix(ts, 0).In(time.FixedZone("", m*60))
}

// showDate is date.c's show_date for the modes the formats use.
func (pc *Context) showDate(ts int64, tz int, mode string) string {
	if mode == "" {
		mode = pc.cfg.Date // log.date
	}
	if m, ok := strings.CutSuffix(mode, "-local"); ok || mode == "local" {
		// The date in the local zone (TZ), as git's *-local modes show it.
		if !ok {
			m = ""
		}
		_, off := time.Unix(ts, 0).In(time.Local).Zone()
		hm := abs(off) / 60
		tz = hm/60*100 + hm%60
		if off < 0 {
			tz = -tz
		}
		mode = m
	}
	switch mode {
	case "iso8601":
		mode = "iso"
	case "iso8601-strict":
		mode = "iso-strict"
	case "rfc2822":
		mode = "rfc"
	case "default":
		mode = ""
	}
	if f, ok := strings.CutPrefix(mode, "format:"); ok {
		return strftime(f, zoneTime(ts, tz), tz)
	}
	switch mode {
	case "raw":
		return fmt.Sprintf("%d %+05d", ts, tz)
	case "relative":
		return relativeDate(time.Unix(ts, 0), pc.now)
	case "unix":
		return strconv.FormatInt(ts, 10)
	}
	t := zoneTime(ts, tz)
	tzs := fmt.Sprintf("%+05d", tz)
	switch mode {
	case "short":
		return fmt.Sprintf("%04d-%02d-%02d", t.Year(), t.Month(), t.Day())
	case "iso":
		return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d %s", t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), tzs)
	case "iso-strict":
		sign := byte('+')
		if tz < 0 {
			sign = '-'
		}
		return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), sign, abs(tz)/100, abs(tz)%100)
	case "rfc":
		return fmt.Sprintf("%s, %d %s %d %02d:%02d:%02d %s", weekdays[t.Weekday()], t.Day(), months[t.Month()-1], t.Year(), t.Hour(), t.Minute(), t.Second(), tzs)
	case "human":
		return pc.humanDate(ts, tz, t)
	}
	return fmt.Sprintf("%s %s %d %02d:%02d:%02d %d %s", weekdays[t.Weekday()], months[t.Month()-1], t.Day(), t.Hour(), t.Minute(), t.Second(), t.Year(), tzs)
}

// humanDate is show_date_normal with the human mode's hiding rules,
// against now in the local zone.
func (pc *Context) humanDate(ts int64, tz int, t time.Time) string {
	now := pc.now.In(time.Local)
	_, off := now.Zone()
	hm := abs(off) / 60
	humanTZ := hm/60*100 + hm%60
	if off < 0 {
		humanTZ = -humanTZ
	}
	hideTZ := tz == humanTZ
	hideYear := t.Year() == now.Year()
	hideDate, hideWday := false, false
	if hideYear && t.Month() == now.Month() {
		switch {
		case t.Day() > now.Day():
		case t.Day() == now.Day():
			hideDate, hideWday = true, true
		case t.Day()+5 > now.Day():
			hideDate = true
		}
	}
	if hideWday {
		return relativeDate(time.Unix(ts, 0), pc.now)
	}
	hideTZ = hideTZ || !hideDate
	hideTime := !hideYear
	hideWday = !hideYear
	var b strings.Builder
	if !hideWday {
		b.WriteString(weekdays[t.Weekday()] + " ")
	}
	if !hideDate {
		fmt.Fprintf(&b, "%s %d ", months[t.Month()-1], t.Day())
	}
	if !hideTime {
		fmt.Fprintf(&b, "%02d:%02d", t.Hour(), t.Minute())
	} else {
		s := strings.TrimSuffix(b.String(), " ")
		b.Reset()
		b.WriteString(s)
	}
	if !hideYear {
		fmt.Fprintf(&b, " %d", t.Year())
	}
	if !hideTZ {
		fmt.Fprintf(&b, " %+05d", tz)
	}
	return b.String()
}

// gitIsSpace is git's isspace: space, \t, \n and \r only.
func gitIsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// oneLine is get_one_line: the line at the start of s with its newline.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return s
}

// blankTrim is is_blank_line: the line without trailing whitespace and
// whether nothing is left.
func blankTrim(line string) (string, bool) {
	n := len(line)
	for n > 0 && gitIsSpace(line[n-1]) {
		n--
	}
	return line[:n], n == 0
}

func skipBlankLines(s string) string {
	for s != "" {
		l := oneLine(s)
		if _, blank := blankTrim(l); !blank {
			break
		}
		s = s[len(l):]
	}
	return s
}

// formatSubject is format_subject: the first paragraph's lines, trimmed,
// joined by sep; it returns the text and the rest of the message.
func formatSubject(msg, sep string) (string, string) {
	var b strings.Builder
	first := true
	for msg != "" {
		l := oneLine(msg)
		msg = msg[len(l):]
		t, blank := blankTrim(l)
		if blank {
			break
		}
		if !first {
			b.WriteString(sep)
		}
		b.WriteString(t)
		first = false
	}
	return b.String(), msg
}

// ansiLen is display_mode_esc_sequence_len.
func ansiLen(s string) int {
	if len(s) < 2 || s[0] != '\033' || s[1] != '[' {
		return 0
	}
	i := 2
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == ';') {
		i++
	}
	if i < len(s) && s[i] == 'm' {
		return i + 1
	}
	return 0
}

// runeWidth is git_wcwidth for one rune; controls are 0 here as the
// callers that matter (utf8_strnwidth, strbuf_utf8_replace) skip them.
func runeWidth(r rune) int { return StrWidth(string(r)) }

// displayWidth is utf8_strnwidth with ANSI sequences skipped; invalid
// UTF-8 counts bytes.
func displayWidth(s string) int {
	if !utf8.ValidString(s) {
		return len(s)
	}
	w := 0
	for i := 0; i < len(s); {
		if n := ansiLen(s[i:]); n > 0 {
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w += runeWidth(r)
		i += size
	}
	return w
}

// utf8Replace is strbuf_utf8_replace: the glyphs in columns [pos,
// pos+width) are replaced by subst.
func utf8Replace(s string, pos, width int, subst string) string {
	if !utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	w := 0
	for i := 0; i < len(s); {
		if n := ansiLen(s[i:]); n > 0 {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n := runeWidth(r)
		if n != 0 && w >= pos && w < pos+width {
			b.WriteString(subst)
			subst = ""
			w += n
			i += size
			continue
		}
		b.WriteString(s[i : i+size])
		w += n
		i += size
	}
	return b.String()
}

// addIndented is strbuf_add_indented_text.
func addIndented(b *strings.Builder, text string, indent, indent2 int) {
	if indent < 0 {
		indent = 0
	}
	for text != "" {
		l := oneLine(text)
		b.WriteString(strings.Repeat(" ", indent))
		b.WriteString(l)
		text = text[len(l):]
		indent = indent2
	}
}

// addWrapped is strbuf_add_wrapped_text: words filled into lines of
// width columns, the first indented by indent1 and the rest by indent2;
// a newline followed by an alphanumeric joins lines, a blank line stays.
func addWrapped(b *strings.Builder, text string, indent1, indent2, width int) {
	if width <= 0 {
		addIndented(b, text, indent1, indent2)
		return
	}
	assumeUTF8 := true
	orig := b.Len()
	saved := b.String()
retry:
	bol, pos := 0, 0
	w, indent := indent1, indent1
	space := -1
	if indent < 0 {
		w = -indent
		space = 0
	}
	at := func(i int) byte {
		if i < len(text) {
			return text[i]
		}
		return 0
	}
	for {
		for {
			n := ansiLen(text[pos:])
			if n == 0 {
				break
			}
			pos += n
		}
		c := at(pos)
		if c == 0 || gitIsSpace(c) {
			if w <= width || space < 0 {
				start := bol
				if c == 0 && pos == start {
					return
				}
				if space >= 0 {
					start = space
				} else {
					b.WriteString(strings.Repeat(" ", max(indent, 0)))
				}
				b.WriteString(text[start:pos])
				if c == 0 {
					return
				}
				space = pos
				if c == '\t' {
					w |= 0x07
				} else if c == '\n' {
					space++
					nc := at(space)
					if nc == '\n' {
						b.WriteByte('\n')
						goto newLine
					} else if !isAlnum(nc) {
						goto newLine
					} else {
						b.WriteByte(' ')
					}
				}
				w++
				pos++
				continue
			}
		newLine:
			b.WriteByte('\n')
			pos = space
			if gitIsSpace(at(space)) {
				pos++
			}
			bol = pos
			space = -1
			w, indent = indent2, indent2
			continue
		}
		if assumeUTF8 {
			r, size := utf8.DecodeRuneInString(text[pos:])
			if r == utf8.RuneError && size <= 1 {
				assumeUTF8 = false
				b.Reset()
				b.WriteString(saved[:orig])
				goto retry
			}
			if rw := runeWidth(r); rw > 0 {
				w += rw
			} else if r < 32 || (r >= 0x7f && r < 0xa0) {
				w-- // git_wcwidth's -1 for controls
			}
			pos += size
		} else {
			w++
			pos++
		}
	}
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// StrWidth is git's utf8_strwidth: East Asian wide and fullwidth runes
// count two columns, combining marks and other zero-width runes none.
func StrWidth(s string) int {
	if !utf8.ValidString(s) {
		return len(s)
	}
	w := 0
	for _, r := range s {
		switch {
		case r == 0:
		case r < 32 || (r >= 0x7f && r < 0xa0):
			// git's wcwidth gives -1 for controls; utf8_strwidth skips them.
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || (unicode.Is(unicode.Cf, r) && r != 0xAD) ||
			r == 0x200B || (r >= 0x1160 && r <= 0x11FF):
			// git's zero-width table: Mn, Me, Cf but the soft hyphen,
			// Hangul medial vowels and final consonants.
		default:
			switch width.LookupRune(r).Kind() {
			case width.EastAsianWide, width.EastAsianFullwidth:
				w += 2
			default:
				w++
			}
		}
	}
	return w
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
