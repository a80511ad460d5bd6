package gittools

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/pathspec"
	"github.com/tgp-go/tgp/internal/pretty"
	"github.com/tgp-go/tgp/internal/revision"
	"github.com/tgp-go/tgp/tools"
)

type logArgs struct {
	MaxCount   *int   `json:"max_count,omitempty" minimum:"1" jsonschema:"Limit number of commits"`
	Oneline    bool   `json:"oneline,omitempty" default:"false" jsonschema:"Single-line format (--oneline)"`
	Format     string `json:"format,omitempty" jsonschema:"Custom pretty format (--format=<string>)"`
	Author     string `json:"author,omitempty" jsonschema:"Filter by author (--author=<pattern>)"`
	Since      string `json:"since,omitempty" jsonschema:"Commits after date (--since=<date>)"`
	Until      string `json:"until,omitempty" jsonschema:"Commits before date (--until=<date>)"`
	Grep       string `json:"grep,omitempty" jsonschema:"Filter by message pattern (--grep=<pattern>)"`
	Path       string `json:"path,omitempty" jsonschema:"Show commits affecting path"`
	Follow     *bool  `json:"follow,omitempty" jsonschema:"Continue listing the history of path beyond renames and copies (--follow; false is --no-follow). Unset: log.follow from the git configuration decides"`
	MaxBytes   int    `json:"max_bytes,omitempty" minimum:"1" maximum:"5000000" jsonschema:"Maximum output bytes before truncation (default: tools.git.max_bytes in the configuration, 1048576)"`
	TimeoutMS  int    `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir string `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func logTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[logArgs]{
		Name:        "git_log",
		Facts:       tools.Facts{ReadsToolbox: true},
		Description: "Show commit logs (git log): medium format by default, oneline, or a --format string; filter by author, dates, message and path; follow a file across renames (follow, or log.follow in the git configuration).",
		Annotations: tools.Annotations{ReadOnly: true, Idempotent: true, Risk: tools.RiskLow},
		Summary:     func(logArgs) string { return "Show git log" },
		Validate: func(a logArgs) error {
			if a.MaxCount != nil && *a.MaxCount < 1 {
				return tools.BadArg("max_count", "max_count must be at least 1")
			}
			if a.Path != "" {
				return checkArg("path", a.Path)
			}
			return nil
		},
		Run: func(ctx context.Context, a logArgs) (tools.Result, error) {
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, a.MaxBytes, func(ctx context.Context, r *git.Repository) (string, error) {
				return d.gitLog(ctx, r, d.relDir(a.WorkingDir), a)
			})
		},
	})
}

func (d Deps) gitLog(ctx context.Context, r *git.Repository, wd string, a logArgs) (string, error) {
	head, err := r.Head()
	if err != nil {
		b, _ := currentBranch(r)
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: your current branch '%s' does not have any commits yet", b)}
	}
	now := time.Now()
	var since, until time.Time
	if a.Since != "" {
		var ok bool
		if since, ok = pretty.ParseDate(a.Since, now); !ok {
			return "", tools.BadArg("since", "cannot read date %q (try 2026-01-31, 2026-01-31 10:00:00, @<unix seconds>, \"2 weeks ago\" or \"last friday\")", a.Since)
		}
	}
	if a.Until != "" {
		var ok bool
		if until, ok = pretty.ParseDate(a.Until, now); !ok {
			return "", tools.BadArg("until", "cannot read date %q (try 2026-01-31, 2026-01-31 10:00:00, @<unix seconds>, \"2 weeks ago\" or \"last friday\")", a.Until)
		}
	}
	var authorRe, grepRe *regexp.Regexp
	if a.Author != "" {
		if authorRe, err = revision.CompileBRE(a.Author); err != nil {
			return "", tools.BadArg("author", "invalid pattern: %v", err)
		}
	}
	if a.Grep != "" {
		if grepRe, err = revision.CompileBRE(a.Grep); err != nil {
			return "", tools.BadArg("grep", "invalid pattern: %v", err)
		}
	}
	var ps pathspec.Pathspec
	if a.Path != "" {
		if ps, err = d.logPathspec(wd, a.Path); err != nil {
			return "", err
		}
	}
	st := d.settings(r)
	var fl *logFollow
	if follow, err := logFollows(st, a, ps); err != nil {
		return "", err
	} else if follow {
		fl = newLogFollow(r, st, wd, ps, followMagic(a.Path))
	}
	var walk interface {
		Run(context.Context, plumbing.Hash, func(*object.Commit) bool) error
	}
	if fl != nil {
		// Every commit, unsimplified: the path followed changes.
		rw := revision.NewWalk(r, pathspec.Pathspec{})
		rw.Since = since
		walk = rw
	} else if lw := revision.NewLiteralWalk(r, ps, gitbackend.CommitGraph(r.Storer), rawReader(r)); lw != nil {
		lw.Since = since
		walk = lw
	} else {
		rw := revision.NewWalk(r, ps)
		rw.Since = since
		walk = rw
	}
	pc := newPrettyContext(r, st, now)
	cf, err := commitFormat(pc, a.Format, a.Oneline)
	if err != nil {
		return "", err
	}
	lp := newLogPrinter(r, pc, cf)
	lp.ShowNotes = a.Format == "" && !a.Oneline
	defer lp.Close()
	var b strings.Builder
	n := 0
	var followErr error
	err = walk.Run(ctx, head.Hash(), func(c *object.Commit) bool {
		if a.MaxCount != nil && n >= *a.MaxCount {
			return false
		}
		if !until.IsZero() && c.Committer.When.After(until) {
			return true
		}
		if authorRe != nil && !authorRe.MatchString(pc.AuthorHeader(c)) {
			return true
		}
		if grepRe != nil && !grepRe.MatchString(c.Message) {
			return true
		}
		if fl != nil {
			show, err := fl.shows(c)
			if err != nil {
				followErr = err
				return false
			}
			if !show {
				return true
			}
		}
		n++
		lp.Show(&b, c)
		if pc.Err != nil {
			followErr = prettyError(pc.Err) // git dies (its output unflushed)
			return false
		}
		return true
	})
	if err != nil {
		return b.String(), err // on a timeout, the commits shown so far
	}
	if followErr != nil {
		return "", followErr // git aborts (what it printed stays in its buffer)
	}
	return b.String(), nil
}

// logFollows decides --follow as git log does: the follow argument
// (--follow / --no-follow), else log.follow when the pathspec has exactly
// one item (a pathspec of one exclude has two: git adds "."); --follow
// with any other number is fatal.
func logFollows(st *settings, a logArgs, ps pathspec.Pathspec) (bool, error) {
	items := len(ps.Items) + len(ps.Exclude)
	if a.Path == "" {
		items = 0
	}
	if a.Follow == nil {
		return items == 1 && st.orDefault().conf != nil && st.conf.Bool("log.follow", false), nil
	}
	if *a.Follow && items != 1 {
		return false, &tools.Error{Kind: tools.KindBadArgs, Message: "fatal: --follow requires exactly one pathspec"}
	}
	return *a.Follow, nil
}

// subject is git's %s of a message.
func subject(msg string) string { return pretty.Subject(msg) }
