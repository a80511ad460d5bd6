package git

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

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
	MaxBytes   int    `json:"max_bytes,omitempty" default:"200000" minimum:"1" maximum:"5000000" jsonschema:"Maximum output bytes before truncation"`
	TimeoutMS  int    `json:"timeout_ms,omitempty" default:"30000" minimum:"100" jsonschema:"Timeout in milliseconds"`
	WorkingDir string `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func logTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[logArgs]{
		Name:        "git_log",
		Description: "Show commit logs (git log): medium format by default, oneline, or a --format string; filter by author, dates, message and path.",
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
				return gitLog(ctx, r, d.relDir(a.WorkingDir), a)
			})
		},
	})
}

func gitLog(ctx context.Context, r *git.Repository, wd string, a logArgs) (string, error) {
	head, err := r.Head()
	if err != nil {
		b, _ := currentBranch(r)
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: your current branch '%s' does not have any commits yet", b)}
	}
	now := time.Now()
	var since, until time.Time
	if a.Since != "" {
		if since, err = approxidate(a.Since, now); err != nil {
			return "", tools.BadArg("since", "%v", err)
		}
	}
	if a.Until != "" {
		if until, err = approxidate(a.Until, now); err != nil {
			return "", tools.BadArg("until", "%v", err)
		}
	}
	var authorRe, grepRe *regexp.Regexp
	if a.Author != "" {
		if authorRe, err = breToRE(a.Author); err != nil {
			return "", tools.BadArg("author", "invalid pattern: %v", err)
		}
	}
	if a.Grep != "" {
		if grepRe, err = breToRE(a.Grep); err != nil {
			return "", tools.BadArg("grep", "invalid pattern: %v", err)
		}
	}
	var ps pathspec
	if a.Path != "" {
		if ps, err = parsePathspec(wd, []string{a.Path}); err != nil {
			return "", err
		}
	}
	walk := newRevWalk(r, ps)
	walk.since = since
	pc := &prettyContext{r: r, mailmap: readMailmap(r), now: now}
	cf := commitFormat{kind: "medium"}
	switch {
	case a.Format != "":
		if cf, err = parseCommitFormat(a.Format); err != nil {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: err.Error()}
		}
	case a.Oneline:
		cf = commitFormat{kind: "oneline", terminator: true, abbrev: true}
	}
	lp := &logPrinter{pc: pc, f: cf}
	var b strings.Builder
	n := 0
	err = walk.run(ctx, head.Hash(), func(c *object.Commit) bool {
		if a.MaxCount != nil && n >= *a.MaxCount {
			return false
		}
		if !until.IsZero() && c.Committer.When.After(until) {
			return true
		}
		if authorRe != nil && !authorRe.MatchString(c.Author.Name+" <"+c.Author.Email+">") {
			return true
		}
		if grepRe != nil && !grepRe.MatchString(c.Message) {
			return true
		}
		n++
		lp.show(&b, c)
		return true
	})
	if err != nil {
		return b.String(), err // on a timeout, the commits shown so far
	}
	return b.String(), nil
}

// gitDate is git's default date format.
const gitDate = "Mon Jan 2 15:04:05 2006 -0700"

// subject is git's %s of a message.
func subject(msg string) string { return parseMessage(msg).subject() }

// decorations lists the refs pointing at h as git's %D does: HEAD first
// ("HEAD -> <branch>" when HEAD is on one of them), then every other ref
// to h (annotated tags peeled, symbolic refs resolved) in descending
// refname order.
func decorations(r *git.Repository, h plumbing.Hash) []string {
	headRef, _ := r.Storer.Reference(plumbing.HEAD)
	headBranch := plumbing.ReferenceName("")
	if headRef != nil && headRef.Type() == plumbing.SymbolicReference {
		headBranch = headRef.Target()
	}
	iter, err := r.References()
	if err != nil {
		return nil
	}
	type dec struct {
		full plumbing.ReferenceName
		show string
	}
	var decs []dec
	onHead := false
	_ = iter.ForEach(func(ref *plumbing.Reference) error {
		name := ref.Name()
		if name == plumbing.HEAD {
			return nil
		}
		target := ref
		if ref.Type() == plumbing.SymbolicReference {
			resolved, err := r.Reference(name, true)
			if err != nil {
				return nil
			}
			target = resolved
		}
		th := target.Hash()
		if tag, err := object.GetTag(r.Storer, th); err == nil {
			th = tag.Target
		}
		if th != h {
			return nil
		}
		show := name.String()
		switch {
		case name == headBranch:
			onHead = true
			return nil
		case name.IsBranch(), name.IsRemote():
			show = name.Short()
		case name.IsTag():
			show = "tag: " + name.Short()
		}
		decs = append(decs, dec{full: name, show: show})
		return nil
	})
	sort.Slice(decs, func(i, j int) bool { return decs[i].full > decs[j].full })
	var out []string
	switch {
	case onHead:
		out = append(out, "HEAD -> "+headBranch.Short())
	case headRef != nil && headRef.Type() == plumbing.HashReference && headRef.Hash() == h:
		out = append(out, "HEAD")
	}
	for _, d := range decs {
		out = append(out, d.show)
	}
	return out
}
