package gittools

// Pieces of git's pretty.c shared by the log/show formatters (format_*.go):
// the message split into subject and body, the context placeholders need,
// relative dates and %f. Written by hand: no Go library renders git's
// formats, and the output has to be byte-identical to git's.

import (
	"github.com/tgp-go/tgp/tools"

	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
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

// prettyContext is what placeholders need beyond the commit.
type prettyContext struct {
	r       *git.Repository
	mailmap mailmap
	now     time.Time
	cfg     *settings
	wd      string // the working directory (diff.relative)
	// err is where a format stopped git as a whole (errTrustLevelBug).
	err error
	// leftSide are the commits of A...B's left side, which git flags
	// SYMMETRIC_LEFT and %m marks "<" (">" every other).
	leftSide map[plumbing.Hash]bool
}

// newPrettyContext reads what formatting needs: the mailmap (unless
// log.mailmap=false) and the settings.
func newPrettyContext(r *git.Repository, cfg *settings, now time.Time) *prettyContext {
	cfg = cfg.orDefault()
	pc := &prettyContext{r: r, now: now, cfg: cfg}
	if cfg.mailmap {
		pc.mailmap = readMailmap(r)
	}
	return pc
}

// commitFormat is the format of git log/show: format (a --format value),
// --oneline, else format.pretty, else medium; log.abbrevCommit
// abbreviates the hash of the builtin formats.
func (pc *prettyContext) commitFormat(format string, oneline bool) (commitFormat, error) {
	cf := commitFormat{kind: "medium"}
	switch {
	case format != "":
	case oneline:
		return commitFormat{kind: "oneline", terminator: true, abbrev: true}, nil
	case pc.cfg.orDefault().pretty != "":
		format = pc.cfg.pretty
	}
	if format != "" {
		var err error
		if cf, err = parseCommitFormat(format); err != nil {
			return cf, &tools.Error{Kind: tools.KindExecutionFailed, Message: err.Error()}
		}
	}
	if pc.cfg.orDefault().abbrevCommit && cf.kind != "user" {
		cf.abbrev = true
	}
	return cf, nil
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
