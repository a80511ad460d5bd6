package git

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend/merge"
	"github.com/tgp-go/tgp/tools"
)

type blameArgs struct {
	Path       string `json:"path" minLength:"1" jsonschema:"File path to blame"`
	StartLine  *int   `json:"start_line,omitempty" minimum:"1" jsonschema:"Start line number for range (1-indexed)"`
	EndLine    *int   `json:"end_line,omitempty" minimum:"1" jsonschema:"End line number for range (1-indexed)"`
	Commit     string `json:"commit,omitempty" jsonschema:"Blame at specific commit instead of HEAD"`
	MaxBytes   int    `json:"max_bytes,omitempty" default:"200000" minimum:"1" maximum:"5000000" jsonschema:"Maximum output bytes before truncation"`
	TimeoutMS  int    `json:"timeout_ms,omitempty" default:"30000" minimum:"100" jsonschema:"Timeout in milliseconds"`
	WorkingDir string `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func blameTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[blameArgs]{
		Name:        "git_blame",
		Description: "Show which commit last changed each line of a file (git blame), optionally for a line range or at a commit.",
		Annotations: tools.Annotations{ReadOnly: true, Idempotent: true, Risk: tools.RiskLow},
		Summary:     func(a blameArgs) string { return "Blame " + a.Path },
		Validate: func(a blameArgs) error {
			if a.StartLine != nil && a.EndLine != nil && *a.StartLine > *a.EndLine {
				return tools.BadArg("start_line", "start_line must be <= end_line")
			}
			if err := checkArg("path", a.Path); err != nil {
				return err
			}
			if a.Commit != "" {
				return checkArg("commit_ref", a.Commit)
			}
			return nil
		},
		Run: func(ctx context.Context, a blameArgs) (tools.Result, error) {
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, a.MaxBytes, func(ctx context.Context, r *git.Repository) (string, error) {
				return blame(ctx, r, a)
			})
		},
	})
}

type blamed struct {
	commit   *object.Commit
	boundary bool
	line     []byte
	origLine int
}

func blame(ctx context.Context, r *git.Repository, a blameArgs) (string, error) {
	rev := a.Commit
	if rev == "" {
		rev = "HEAD"
	}
	h, err := r.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return "", unknownRevision(rev)
	}
	start, err := r.CommitObject(*h)
	if err != nil {
		return "", unknownRevision(rev)
	}
	p := strings.TrimPrefix(a.Path, "./")
	content, ok := fileAt(start, p)
	if !ok {
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: no such path '%s' in %s", p, rev)}
	}
	lines := merge.Lines(content)
	out := make([]blamed, len(lines))
	for i, l := range lines {
		out[i].line = l
	}
	// pending[i] = index in the current commit's version of line i of the
	// blamed file, or -1 when already assigned.
	pending := make([]int, len(lines))
	for i := range pending {
		pending[i] = i
	}
	cur, curLines, curHash := start, lines, blobAt(start, p)
	left := len(lines)
	for left > 0 {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		var parent *object.Commit
		if cur.NumParents() > 0 {
			parent, _ = cur.Parent(0)
		}
		if parent == nil {
			for i, pi := range pending {
				if pi >= 0 {
					out[i].commit, out[i].boundary, out[i].origLine = cur, true, pi+1
				}
			}
			break
		}
		ph := blobAt(parent, p)
		if ph.IsZero() {
			for i, pi := range pending {
				if pi >= 0 {
					out[i].commit, out[i].origLine = cur, pi+1
				}
			}
			break
		}
		if ph == curHash {
			cur = parent
			continue
		}
		pc, _ := fileAt(parent, p)
		pLines := merge.Lines(pc)
		m := merge.Matches(curLines, pLines)
		for i, pi := range pending {
			if pi < 0 {
				continue
			}
			if m[pi] < 0 {
				out[i].commit, out[i].origLine = cur, pi+1
				pending[i] = -1
				left--
			} else {
				pending[i] = m[pi]
			}
		}
		cur, curLines, curHash = parent, pLines, ph
	}
	from, to := 1, len(lines)
	if a.StartLine != nil {
		from = *a.StartLine
	}
	if a.EndLine != nil {
		to = min(*a.EndLine, len(lines))
	}
	if from > len(lines) {
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: file %s has only %d line%s", p, len(lines), plural(len(lines)))}
	}
	nameW, numW := 0, len(fmt.Sprint(to))
	for i := from - 1; i < to; i++ {
		nameW = max(nameW, len([]rune(out[i].commit.Author.Name)))
	}
	var b strings.Builder
	for i := from - 1; i < to; i++ {
		o := out[i]
		hash := o.commit.Hash.String()[:8]
		if o.boundary {
			hash = "^" + o.commit.Hash.String()[:7]
		}
		name := o.commit.Author.Name
		pad := strings.Repeat(" ", nameW-len([]rune(name)))
		when := o.commit.Author.When.Format("2006-01-02 15:04:05 -0700")
		fmt.Fprintf(&b, "%s (%s%s %s %*d) %s", hash, name, pad, when, numW, i+1, strings.TrimSuffix(string(o.line), "\n"))
		b.WriteByte('\n')
	}
	return b.String(), nil
}

func blobAt(c *object.Commit, p string) plumbing.Hash {
	t, err := c.Tree()
	if err != nil {
		return plumbing.ZeroHash
	}
	e, err := t.FindEntry(p)
	if err != nil {
		return plumbing.ZeroHash
	}
	return e.Hash
}

func fileAt(c *object.Commit, p string) ([]byte, bool) {
	f, err := c.File(p)
	if err != nil {
		return nil, false
	}
	s, err := f.Contents()
	if err != nil {
		return nil, false
	}
	return []byte(s), true
}
