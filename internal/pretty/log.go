package pretty

// log-tree.c's show_log and pretty.c's pretty_print_commit for the
// builtin formats, and the record separation rules git log and git show
// share.

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/revision"
)

// Abbreviator is find_unique_abbrev: objects' unique abbreviations, at
// core.abbrev's length or longer. Close releases what it opened.
type Abbreviator interface {
	Short(h plumbing.Hash) string
	Close()
}

// LogPrinter writes commits one after the other as show_log does.
type LogPrinter struct {
	pc        *Context
	f         Format
	newAbbrev func() Abbreviator
	decos     map[plumbing.Hash][]string // loaded on the first %d/%D
	ab        Abbreviator                // opened on the first abbreviation
	shallow   map[plumbing.Hash]bool     // grafted commits show no parents
	notes     map[plumbing.Hash]plumbing.Hash
	// ShownOne: a commit was shown before (the next is separated).
	ShownOne bool
	// ShowNotes: notes under builtin formats (no format was given).
	ShowNotes bool
}

// NewLogPrinter prints in format f, abbreviating with what newAbbrev
// opens on the first abbreviation. Close it when done.
func NewLogPrinter(pc *Context, f Format, newAbbrev func() Abbreviator) *LogPrinter {
	return &LogPrinter{pc: pc, f: f, newAbbrev: newAbbrev}
}

// note is the commit's note as %N (raw) or the builtin formats show it.
func (lp *LogPrinter) note(h plumbing.Hash, raw bool) string {
	if lp.notes == nil {
		lp.notes = loadNotes(lp.pc.r)
	}
	blob, ok := lp.notes[h]
	if !ok {
		return ""
	}
	return noteText(lp.pc.r, blob, raw)
}

func (lp *LogPrinter) abbrev(h plumbing.Hash) string {
	if lp.ab == nil {
		lp.ab = lp.newAbbrev()
	}
	return lp.ab.Short(h)
}

// Close releases what abbreviating opened.
func (lp *LogPrinter) Close() {
	if lp.ab != nil {
		lp.ab.Close()
	}
}

func (lp *LogPrinter) deco(h plumbing.Hash) []string {
	if lp.decos == nil {
		lp.decos = loadDecorations(lp.pc.r, lp.pc.cfg.Decorate == "full")
	}
	return lp.decos[h]
}

// Show writes one commit's log entry.
func (lp *LogPrinter) Show(b *strings.Builder, c *object.Commit) {
	if lp.ShownOne && !lp.f.terminator {
		b.WriteByte('\n')
	}
	lp.ShownOne = true
	rc := loadRawCommit(lp.pc, c)
	if lp.shallow == nil {
		lp.shallow = revision.Shallow(lp.pc.r)
	}
	if lp.shallow[c.Hash] {
		rc.parents = nil
	}
	var msg string
	switch lp.f.kind {
	case "user":
		msg = lp.pc.formatUser(rc, lp.f.template, lp.f.dateMode, lp.deco, lp.abbrev, func() string { return lp.note(c.Hash, true) })
	case "email", "mboxrd":
		fmt.Fprintf(b, "From %s Mon Sep 17 00:00:00 2001\n", c.Hash)
		msg = lp.pc.prettyBuiltin(rc, lp.f.kind, lp.abbrev)
		if lp.ShowNotes {
			if n := lp.note(c.Hash, false); n != "" {
				msg += "---\n" + n
			}
		}
	default:
		if lp.f.kind != "oneline" {
			b.WriteString("commit ")
		}
		if lp.f.abbrev {
			b.WriteString(lp.abbrev(c.Hash))
		} else {
			b.WriteString(c.Hash.String())
		}
		if d := lp.pc.cfg.Decorate; d == "short" || d == "full" {
			// log.decorate: show_decorations after the hash.
			if ds := lp.deco(c.Hash); len(ds) > 0 {
				b.WriteString(" (" + strings.Join(ds, ", ") + ")")
			}
		}
		if lp.f.kind == "oneline" {
			b.WriteByte(' ')
		} else {
			b.WriteByte('\n')
		}
		msg = lp.pc.prettyBuiltin(rc, lp.f.kind, lp.abbrev)
		if lp.ShowNotes {
			msg += lp.note(c.Hash, false)
		}
	}
	b.WriteString(msg)
	if lp.f.terminator && !lp.f.Empty() {
		b.WriteByte('\n')
	}
}

// BeforeDiff is what log_tree_diff_flush writes between a commit's log
// entry and its non-empty diff.
func (lp *LogPrinter) BeforeDiff(b *strings.Builder) {
	if lp.f.kind != "oneline" && !lp.f.Empty() {
		b.WriteByte('\n')
	}
}

// prettyBuiltin is pretty_print_commit for the builtin formats.
func (pc *Context) prettyBuiltin(rc rawCommit, kind string, abbrev func(plumbing.Hash) string) string {
	var sb strings.Builder
	mail := kind == "email" || kind == "mboxrd"
	indent := 4
	if kind == "oneline" || mail {
		indent = 0
	}
	expandTabs := kind == "medium" || kind == "full" || kind == "fuller"
	// pp_header
	if kind == "raw" {
		sb.WriteString(rc.header)
	} else {
		if len(rc.parents) > 1 && kind != "oneline" && !mail {
			sb.WriteString("Merge:")
			for _, p := range rc.parents {
				sb.WriteString(" " + abbrev(p))
			}
			sb.WriteByte('\n')
		}
		pc.userInfo(&sb, kind, "Author", rc.author)
		if kind == "full" || kind == "fuller" {
			pc.userInfo(&sb, kind, "Commit", rc.committer)
		}
	}
	if kind != "oneline" && !mail {
		sb.WriteByte('\n')
	}
	msg := skipBlankLines(rc.msg)
	if kind == "oneline" || mail {
		title, rest := formatSubject(msg, " ")
		msg = rest
		if mail {
			sb.WriteString("Subject: [PATCH] ")
			if needsRFC2047(title) {
				addRFC2047(&sb, title, false)
			} else {
				addWrapped(&sb, title, -lastLineLen(sb.String()), 1, 78)
			}
		} else {
			sb.WriteString(title)
		}
		sb.WriteByte('\n')
		if mail {
			if needs8bit(rc.msg) {
				sb.WriteString("MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n")
			}
			sb.WriteByte('\n')
		}
	}
	bodyStart := sb.Len()
	if kind != "oneline" {
		first := true
		for msg != "" {
			line := oneLine(msg)
			msg = msg[len(line):]
			t, blank := blankTrim(line)
			if blank {
				if first {
					continue
				}
				if kind == "short" {
					break
				}
			}
			first = false
			sb.WriteString(strings.Repeat(" ", indent))
			switch {
			case expandTabs:
				sb.WriteString(expandTabs8(t))
			case kind == "mboxrd" && strings.HasPrefix(strings.TrimLeft(t, ">"), "From "):
				sb.WriteString(">" + t)
			default:
				sb.WriteString(t)
			}
			sb.WriteByte('\n')
		}
	}
	out := strings.TrimRight(sb.String(), " \t\n\r")
	if kind != "oneline" {
		out += "\n"
	}
	if mail && len(out) <= bodyStart {
		out += "\n"
	}
	return out
}

// expandTabs8 is strbuf_add_tabexpand with 8 columns.
func expandTabs8(line string) string {
	if !strings.Contains(line, "\t") {
		return line
	}
	var b strings.Builder
	col := 0
	for {
		i := strings.IndexByte(line, '\t')
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		seg := line[:i]
		w := displayWidth(seg)
		if !utf8.ValidString(seg) {
			// git gives up on expansion for the rest of a broken line.
			b.WriteString(line)
			return b.String()
		}
		col += w
		b.WriteString(seg)
		n := 8 - col%8
		b.WriteString(strings.Repeat(" ", n))
		col += n
		line = line[i+1:]
	}
}

// Tagger writes the tagger line ident of a tag as f shows an author,
// with no mailmap (builtin/log.c's show_tag_object).
func (pc *Context) Tagger(sb *strings.Builder, f Format, ident string) {
	plain := *pc
	plain.mailmap = nil
	plain.userInfo(sb, f.kind, "Tagger", ident)
}

// userInfo is pp_user_info.
func (pc *Context) userInfo(sb *strings.Builder, kind, what, line string) {
	if kind == "oneline" {
		return
	}
	id := splitIdent(line)
	if !id.ok {
		return
	}
	name, email := pc.mailmap.MapUser(id.name, id.email)
	mail := kind == "email" || kind == "mboxrd"
	if mail {
		sb.WriteString("From: ")
		maxLen := 78
		switch {
		case needsRFC2047(name):
			addRFC2047(sb, name, true)
			maxLen = 76
		case needsRFC822Quoting(name):
			addWrapped(sb, rfc822Quote(name), -6, 1, maxLen)
		default:
			addWrapped(sb, name, -6, 1, maxLen)
		}
		if maxLen < lastLineLen(sb.String())+2+len(email)+1 {
			sb.WriteByte('\n')
		}
		fmt.Fprintf(sb, " <%s>\n", email)
	} else {
		sb.WriteString(what + ":")
		if kind == "fuller" {
			sb.WriteString("    ")
		}
		fmt.Fprintf(sb, " %s <%s>\n", name, email)
	}
	ts, tz := id.when()
	switch kind {
	case "medium":
		fmt.Fprintf(sb, "Date:   %s\n", pc.showDate(ts, tz, ""))
	case "email", "mboxrd":
		fmt.Fprintf(sb, "Date: %s\n", pc.showDate(ts, tz, "rfc"))
	case "fuller":
		fmt.Fprintf(sb, "%sDate: %s\n", what, pc.showDate(ts, tz, ""))
	}
}

func lastLineLen(s string) int { return len(s) - strings.LastIndexByte(s, '\n') - 1 }

func needs8bit(msg string) bool {
	for i := 0; i < len(msg); i++ {
		if msg[i] >= 0x80 {
			return true
		}
	}
	return false
}

func needsRFC2047(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] == '\n' || (s[i] == '=' && i+1 < len(s) && s[i+1] == '?') {
			return true
		}
	}
	return false
}

func needsRFC822Quoting(s string) bool {
	return strings.ContainsAny(s, "()<>@,;:\\\".[]")
}

func rfc822Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' || s[i] == '"' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// addRFC2047 is add_rfc2047 in UTF-8, q-encoding, lines of at most 76.
func addRFC2047(sb *strings.Builder, s string, address bool) {
	const maxLen = 76
	lineLen := lastLineLen(sb.String())
	sb.WriteString("=?UTF-8?q?")
	lineLen += len("UTF-8") + 5
	for s != "" {
		_, n := utf8.DecodeRuneInString(s)
		if n < 1 {
			n = 1
		}
		ch := s[0]
		special := n > 1 || ch >= 0x80 || ch < 0x20 || ch == 0x7f || ch == ' ' || ch == '=' || ch == '?' || ch == '_'
		if !special && address {
			special = !(isAlnum(ch) || strings.IndexByte("!*+-/", ch) >= 0)
		}
		encLen := 1
		if special {
			encLen = 3 * n
		}
		if lineLen+encLen+2 > maxLen {
			sb.WriteString("?=\n =?UTF-8?q?")
			lineLen = len("UTF-8") + 5 + 1
		}
		for i := 0; i < n; i++ {
			if special {
				fmt.Fprintf(sb, "=%02X", s[i])
			} else {
				sb.WriteByte(s[i])
			}
		}
		lineLen += encLen
		s = s[n:]
	}
	sb.WriteString("?=")
}
