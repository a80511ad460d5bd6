package pretty

// Pieces of git's pretty.c shared by the formatters: the message split
// into subject and body, the context placeholders need, relative dates
// and %f.

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Error is what git dies of while formatting; its message is git's.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

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

// Subject is git's %s of a commit message: the subject paragraph's lines
// joined by spaces.
func Subject(msg string) string { return parseMessage(msg).subject() }

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func blankLine(l string) bool { return strings.TrimRight(l, " \t\r\v\f\n") == "" }

// subject is git's %s: the subject paragraph's lines joined by spaces.
func (m message) subject() string { return strings.Join(m.subjectLines, " ") }

// Config is what git's configuration says of formatting.
type Config struct {
	Date         string // log.date ("": default)
	Decorate     string // log.decorate ("": auto, which is "no" off a terminal)
	Pretty       string // format.pretty ("": medium)
	AbbrevCommit bool   // log.abbrevCommit
}

// Context is what placeholders need beyond the commit.
type Context struct {
	r       *git.Repository
	mailmap Mailmap
	now     time.Time
	cfg     Config
	// Err is where a format stopped git as a whole (errTrustLevelBug).
	Err error
	// LeftSide are the commits of A...B's left side, which git flags
	// SYMMETRIC_LEFT and %m marks "<" (">" every other).
	LeftSide map[plumbing.Hash]bool
}

// NewContext formats r's commits under cfg, names and emails through
// mailmap (nil: none), relative dates against now.
func NewContext(r *git.Repository, cfg Config, mailmap Mailmap, now time.Time) *Context {
	return &Context{r: r, mailmap: mailmap, now: now, cfg: cfg}
}

// Format is the format of git log/show: format (a --format value),
// --oneline, else format.pretty, else medium; log.abbrevCommit
// abbreviates the hash of the builtin formats. A format git refuses is
// an *Error.
func (pc *Context) Format(format string, oneline bool) (Format, error) {
	cf := Format{kind: "medium"}
	switch {
	case format != "":
	case oneline:
		return Format{kind: "oneline", terminator: true, abbrev: true}, nil
	case pc.cfg.Pretty != "":
		format = pc.cfg.Pretty
	}
	if format != "" {
		var err error
		if cf, err = parseFormat(format); err != nil {
			return cf, &Error{Message: err.Error()}
		}
	}
	if pc.cfg.AbbrevCommit && cf.kind != "user" {
		cf.abbrev = true
	}
	return cf, nil
}

// AuthorHeader is the author line --author matches (after "author "),
// with the name and email rewritten by the mailmap as git log does.
func (pc *Context) AuthorHeader(c *object.Commit) string {
	rc := loadRawCommit(pc, c)
	id := splitIdent(rc.author)
	if !id.ok {
		return rc.author
	}
	name, email := pc.mailmap.MapUser(id.name, id.email)
	return name + " <" + email + ">" + rc.author[strings.LastIndexByte(rc.author, '>')+1:]
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
