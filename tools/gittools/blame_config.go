package gittools

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// blameConfig is what the repository's configuration changes in git
// blame's default output (builtin/blame.c's git_blame_config and the core
// and diff settings it falls through to).
type blameConfig struct {
	showRoot, blankBoundary, showEmail bool
	date                               string // DATE_* name: iso, iso-strict, rfc, short, raw, unix, default
	local                              bool   // a "-local" date format
	abbrev                             int    // core.abbrev; -1 for auto
	indentHeuristic                    bool
}

func readBlameConfig(r *git.Repository) blameConfig {
	c := blameConfig{date: "iso", abbrev: -1, indentHeuristic: true}
	cfg, err := r.Config()
	if err != nil || cfg.Raw == nil {
		return c
	}
	boolOpt := func(s *format.Section, key string, def bool) bool {
		if !s.HasOption(key) {
			return def
		}
		v := strings.ToLower(strings.TrimSpace(s.Option(key)))
		switch v {
		case "", "true", "yes", "on":
			return true
		case "false", "no", "off":
			return false
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return def
		}
		return n != 0
	}
	b := cfg.Raw.Section("blame")
	c.showRoot = boolOpt(b, "showRoot", false)
	c.blankBoundary = boolOpt(b, "blankBoundary", false)
	c.showEmail = boolOpt(b, "showEmail", false)
	if v := b.Option("date"); v != "" {
		name, local := strings.CutSuffix(v, "-local")
		switch name {
		case "iso", "iso8601":
			c.date = "iso"
		case "iso-strict", "iso8601-strict":
			c.date = "iso-strict"
		case "rfc", "rfc2822":
			c.date = "rfc"
		case "short", "raw", "unix", "default":
			c.date = name
		}
		c.local = local
	}
	c.indentHeuristic = boolOpt(cfg.Raw.Section("diff"), "indentHeuristic", true)
	if v := strings.TrimSpace(cfg.Raw.Section("core").Option("abbrev")); v != "" {
		switch strings.ToLower(v) {
		case "auto":
		case "false", "no", "off", "0":
			c.abbrev = 40
		default:
			if n, err := strconv.Atoi(v); err == nil && n >= 4 && n <= 40 {
				c.abbrev = n
			}
		}
	}
	return c
}

// dateWidth is blame_date_width for the format.
func (c blameConfig) dateWidth() int {
	switch c.date {
	case "rfc":
		return len("Thu, 19 Oct 2006 16:00:04 -0700")
	case "iso-strict":
		return len("2006-10-19T16:00:04-07:00")
	case "raw":
		return len("1161298804 -0700")
	case "unix":
		return len("1161298804")
	case "short":
		return len("2006-10-19")
	case "default":
		return len("Thu Oct 19 16:00:04 2006 -0700")
	}
	return len("2006-10-19 16:00:04 -0700")
}

// formatDate is date.c's show_date of a time and git's raw zone (-0330
// is -330) for the supported formats, padded to the format's width as
// blame's format_time does.
func (c blameConfig) formatDate(ts int64, tz int) string {
	var t time.Time
	if c.local {
		t = time.Unix(ts, 0).In(time.Local)
		_, off := t.Zone()
		m := abs(off) / 60
		tz = m/60*100 + m%60
		if off < 0 {
			tz = -tz
		}
	} else {
		// time_to_tm: the zone's digits as hours and minutes.
		m := abs(tz)/100*60 + abs(tz)%100
		if tz < 0 {
			m = -m
		}
		t = time.Unix(ts, 0).In(time.FixedZone("", m*60))
	}
	tzs := fmt.Sprintf("%+05d", tz)
	var s string
	switch c.date {
	case "unix":
		s = strconv.FormatInt(ts, 10)
	case "raw":
		s = strconv.FormatInt(ts, 10) + " " + tzs
	case "short":
		s = fmt.Sprintf("%04d-%02d-%02d", t.Year(), t.Month(), t.Day())
	case "iso-strict":
		sign := '+'
		if tz < 0 {
			sign = '-'
		}
		s = fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), sign, abs(tz)/100, abs(tz)%100)
	case "rfc":
		s = fmt.Sprintf("%.3s, %d %.3s %d %02d:%02d:%02d %s", t.Weekday().String(), t.Day(), t.Month().String(), t.Year(), t.Hour(), t.Minute(), t.Second(), tzs)
	case "default":
		s = fmt.Sprintf("%.3s %.3s %d %02d:%02d:%02d %d", t.Weekday().String(), t.Month().String(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Year())
		if !c.local {
			s += " " + tzs
		}
	default:
		s = fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d %s", t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), tzs)
	}
	if w := c.dateWidth(); len(s) < w {
		s += strings.Repeat(" ", w-len(s))
	}
	return s
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
