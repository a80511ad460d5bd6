package git

import (
	"context"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/tools"
)

type showArgs struct {
	Commit     string `json:"commit,omitempty" default:"\"HEAD\"" jsonschema:"Commit to show"`
	Stat       bool   `json:"stat,omitempty" default:"false" jsonschema:"Show diffstat only (--stat)"`
	NameOnly   bool   `json:"name_only,omitempty" default:"false" jsonschema:"Show changed file names only (--name-only)"`
	Format     string `json:"format,omitempty" jsonschema:"Custom pretty format for commit info"`
	MaxBytes   int    `json:"max_bytes,omitempty" default:"200000" minimum:"1" maximum:"5000000" jsonschema:"Maximum output bytes before truncation"`
	TimeoutMS  int    `json:"timeout_ms,omitempty" default:"30000" minimum:"100" jsonschema:"Timeout in milliseconds"`
	WorkingDir string `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func showTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[showArgs]{
		Name:        "git_show",
		Description: "Show a commit with its patch (git show), or its --stat / --name-only, with an optional --format.",
		Annotations: tools.Annotations{ReadOnly: true, Idempotent: true, Risk: tools.RiskLow},
		Summary:     func(a showArgs) string { return "Show commit " + a.Commit },
		Validate:    func(a showArgs) error { return checkArg("commit_ref", a.Commit) },
		Run: func(ctx context.Context, a showArgs) (tools.Result, error) {
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, a.MaxBytes, func(ctx context.Context, r *git.Repository) (string, error) {
				h, err := r.ResolveRevision(plumbing.Revision(a.Commit))
				if err != nil {
					return "", unknownRevision(a.Commit)
				}
				c, err := r.CommitObject(*h)
				if err != nil {
					return "", unknownRevision(a.Commit)
				}
				return show(r, c, a)
			})
		},
	})
}

func show(r *git.Repository, c *object.Commit, a showArgs) (string, error) {
	var b strings.Builder
	if a.Format != "" {
		b.WriteString(formatCommit(r, c, a.Format) + "\n")
	} else {
		b.WriteString(mediumHeader(c))
	}
	if c.NumParents() > 1 {
		// git's default for merges is the combined diff, which is empty
		// for a merge that resolved nothing by hand (git still ends the
		// header with a blank line).
		if a.Format == "" {
			b.WriteString("\n")
		}
		return b.String(), nil
	}
	to, err := c.Tree()
	if err != nil {
		return "", err
	}
	var from *object.Tree
	if c.NumParents() == 1 {
		p, err := c.Parent(0)
		if err != nil {
			return "", err
		}
		if from, err = p.Tree(); err != nil {
			return "", err
		}
	}
	fromFiles, err := treeFiles(r, from)
	if err != nil {
		return "", err
	}
	toFiles, err := treeFiles(r, to)
	if err != nil {
		return "", err
	}
	changes := detectRenames(diffSides(fromFiles, toFiles, nil))
	if len(changes) == 0 {
		return b.String(), nil
	}
	if a.Format == "" || a.Stat || a.NameOnly {
		b.WriteString("\n")
	}
	b.WriteString(render(changes, a.NameOnly, a.Stat, 3))
	return b.String(), nil
}
