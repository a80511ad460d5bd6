package git

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
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
				return gitLog(ctx, r, a)
			})
		},
	})
}

func gitLog(ctx context.Context, r *git.Repository, a logArgs) (string, error) {
	head, err := r.Head()
	if err != nil {
		b, _ := currentBranch(r)
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: your current branch '%s' does not have any commits yet", b)}
	}
	var since, until time.Time
	if a.Since != "" {
		if since, err = parseDate(a.Since, time.Now()); err != nil {
			return "", tools.BadArg("since", "%v", err)
		}
	}
	if a.Until != "" {
		if until, err = parseDate(a.Until, time.Now()); err != nil {
			return "", tools.BadArg("until", "%v", err)
		}
	}
	var authorRe, grepRe *regexp.Regexp
	if a.Author != "" {
		if authorRe, err = regexp.Compile(a.Author); err != nil {
			return "", tools.BadArg("author", "invalid pattern: %v", err)
		}
	}
	if a.Grep != "" {
		if grepRe, err = regexp.Compile(a.Grep); err != nil {
			return "", tools.BadArg("grep", "invalid pattern: %v", err)
		}
	}
	iter, err := r.Log(&git.LogOptions{From: head.Hash(), Order: git.LogOrderCommitterTime})
	if err != nil {
		return "", err
	}
	defer iter.Close()
	var b strings.Builder
	n := 0
	first := true
	pathCache := &pathLookup{r: r, byTree: map[plumbing.Hash]plumbing.Hash{}}
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		c, err := iter.Next()
		if err != nil {
			break
		}
		if a.MaxCount != nil && n >= *a.MaxCount {
			break
		}
		if !since.IsZero() && c.Committer.When.Before(since) {
			continue
		}
		if !until.IsZero() && c.Committer.When.After(until) {
			continue
		}
		if authorRe != nil && !authorRe.MatchString(c.Author.Name+" <"+c.Author.Email+">") {
			continue
		}
		if grepRe != nil && !grepRe.MatchString(c.Message) {
			continue
		}
		if a.Path != "" && !touches(r, c, strings.TrimSuffix(a.Path, "/"), pathCache) {
			continue
		}
		n++
		switch {
		case a.Format != "":
			b.WriteString(formatCommit(r, c, a.Format))
			b.WriteByte('\n')
		case a.Oneline:
			fmt.Fprintf(&b, "%s %s\n", c.Hash.String()[:7], subject(c.Message))
		default:
			if !first {
				b.WriteByte('\n')
			}
			b.WriteString(mediumHeader(c))
		}
		first = false
	}
	return b.String(), nil
}

// touches reports whether c changed path (a file or a directory) against
// its first parent, git's default history simplification for linear
// history.
func touches(r *git.Repository, c *object.Commit, p string, cache *pathLookup) bool {
	cur := cache.entry(c.TreeHash, p)
	if c.NumParents() == 0 {
		return !cur.IsZero()
	}
	for _, ph := range c.ParentHashes {
		pc, err := object.GetCommit(r.Storer, ph)
		if err != nil {
			return true
		}
		if cache.entry(pc.TreeHash, p) == cur {
			return false // TREESAME to a parent: git hides it
		}
	}
	return true
}

// pathLookup finds a path's entry hash in trees, memoised per (sub)tree:
// consecutive commits share most subtrees, so each is decoded once.
type pathLookup struct {
	r      *git.Repository
	byTree map[plumbing.Hash]plumbing.Hash
}

func (l *pathLookup) entry(tree plumbing.Hash, p string) plumbing.Hash {
	parts := strings.Split(p, "/")
	return l.walk(tree, parts)
}

func (l *pathLookup) walk(tree plumbing.Hash, parts []string) plumbing.Hash {
	// The memo is valid because one pathLookup serves one path: the key
	// tree plus the depth (len(parts)) identifies the lookup.
	key := tree
	key[0] ^= byte(len(parts))
	if h, ok := l.byTree[key]; ok {
		return h
	}
	var out plumbing.Hash
	if t, err := object.GetTree(l.r.Storer, tree); err == nil {
		for _, e := range t.Entries {
			if e.Name == parts[0] {
				if len(parts) == 1 {
					out = e.Hash
				} else if e.Mode == 0o040000 {
					out = l.walk(e.Hash, parts[1:])
				}
				break
			}
		}
	}
	l.byTree[key] = out
	return out
}

func entryHash(c *object.Commit, p string) plumbing.Hash {
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

// gitDate is git's default date format.
const gitDate = "Mon Jan 2 15:04:05 2006 -0700"

func mediumHeader(c *object.Commit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "commit %s\n", c.Hash)
	if c.NumParents() > 1 {
		b.WriteString("Merge:")
		for _, p := range c.ParentHashes {
			b.WriteString(" " + p.String()[:7])
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "Author: %s <%s>\n", c.Author.Name, c.Author.Email)
	fmt.Fprintf(&b, "Date:   %s\n\n", c.Author.When.Format(gitDate))
	for _, line := range strings.Split(strings.TrimRight(c.Message, "\n"), "\n") {
		b.WriteString("    " + line + "\n")
	}
	return b.String()
}

func subject(msg string) string {
	msg = strings.TrimLeft(msg, "\n")
	para := msg
	if i := strings.Index(msg, "\n\n"); i >= 0 {
		para = msg[:i]
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(para, "\n", " ")), " ")
}

func body(msg string) string {
	msg = strings.TrimLeft(msg, "\n")
	if i := strings.Index(msg, "\n\n"); i >= 0 {
		return strings.TrimLeft(msg[i+2:], "\n")
	}
	return ""
}

// formatCommit expands git's pretty-format placeholders.
func formatCommit(r *git.Repository, c *object.Commit, f string) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		rest := f[i+1:]
		two := func(s string) bool { return strings.HasPrefix(rest, s) }
		switch {
		case two("%"):
			b.WriteByte('%')
			i++
		case two("H"):
			b.WriteString(c.Hash.String())
			i++
		case two("h"):
			b.WriteString(c.Hash.String()[:7])
			i++
		case two("T"):
			b.WriteString(c.TreeHash.String())
			i++
		case two("t"):
			b.WriteString(c.TreeHash.String()[:7])
			i++
		case two("P"), two("p"):
			var ps []string
			for _, p := range c.ParentHashes {
				if rest[0] == 'P' {
					ps = append(ps, p.String())
				} else {
					ps = append(ps, p.String()[:7])
				}
			}
			b.WriteString(strings.Join(ps, " "))
			i++
		case two("an"):
			b.WriteString(c.Author.Name)
			i += 2
		case two("ae"):
			b.WriteString(c.Author.Email)
			i += 2
		case two("ad"):
			b.WriteString(c.Author.When.Format(gitDate))
			i += 2
		case two("aI"):
			b.WriteString(c.Author.When.Format("2006-01-02T15:04:05-07:00"))
			i += 2
		case two("at"):
			b.WriteString(strconv.FormatInt(c.Author.When.Unix(), 10))
			i += 2
		case two("cn"):
			b.WriteString(c.Committer.Name)
			i += 2
		case two("ce"):
			b.WriteString(c.Committer.Email)
			i += 2
		case two("cd"):
			b.WriteString(c.Committer.When.Format(gitDate))
			i += 2
		case two("cI"):
			b.WriteString(c.Committer.When.Format("2006-01-02T15:04:05-07:00"))
			i += 2
		case two("ct"):
			b.WriteString(strconv.FormatInt(c.Committer.When.Unix(), 10))
			i += 2
		case two("s"):
			b.WriteString(subject(c.Message))
			i++
		case two("b"):
			b.WriteString(body(c.Message))
			i++
		case two("B"):
			b.WriteString(strings.TrimLeft(c.Message, "\n"))
			i++
		case two("n"):
			b.WriteByte('\n')
			i++
		case two("d"), two("D"):
			if decs := decorations(r, c.Hash); len(decs) > 0 {
				if rest[0] == 'd' {
					b.WriteString(" (" + strings.Join(decs, ", ") + ")")
				} else {
					b.WriteString(strings.Join(decs, ", "))
				}
			}
			i++
		case two("x") && len(rest) >= 3:
			if v, err := strconv.ParseUint(rest[1:3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
			} else {
				b.WriteByte('%')
			}
		default:
			b.WriteByte('%')
		}
	}
	return b.String()
}

// decorations lists the refs pointing at h as git's %D does.
func decorations(r *git.Repository, h plumbing.Hash) []string {
	var out, tags []string
	headRef, _ := r.Storer.Reference(plumbing.HEAD)
	headTarget := ""
	if headRef != nil && headRef.Type() == plumbing.SymbolicReference {
		headTarget = headRef.Target().String()
	}
	iter, err := r.References()
	if err != nil {
		return nil
	}
	var branches, remotes []string
	_ = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference || ref.Hash() != h {
			return nil
		}
		name := ref.Name()
		switch {
		case name.IsBranch():
			if name.String() == headTarget {
				out = append(out, "HEAD -> "+name.Short())
			} else {
				branches = append(branches, name.Short())
			}
		case name.IsRemote():
			remotes = append(remotes, name.Short())
		case name.IsTag():
			tags = append(tags, "tag: "+name.Short())
		}
		return nil
	})
	if headRef != nil && headRef.Type() == plumbing.HashReference && headRef.Hash() == h {
		out = append([]string{"HEAD"}, out...)
	}
	sort.Strings(branches)
	sort.Strings(remotes)
	sort.Strings(tags)
	out = append(out, branches...)
	out = append(out, remotes...)
	return append(out, tags...)
}

var relRe = regexp.MustCompile(`^(\d+)\s+(second|minute|hour|day|week|month|year)s?\s+ago$`)

// parseDate reads absolute ISO dates and git's relative "N units ago".
func parseDate(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if m := relRe.FindStringSubmatch(strings.ToLower(s)); m != nil {
		n, _ := strconv.Atoi(m[1])
		switch m[2] {
		case "second":
			return now.Add(-time.Duration(n) * time.Second), nil
		case "minute":
			return now.Add(-time.Duration(n) * time.Minute), nil
		case "hour":
			return now.Add(-time.Duration(n) * time.Hour), nil
		case "day":
			return now.AddDate(0, 0, -n), nil
		case "week":
			return now.AddDate(0, 0, -7*n), nil
		case "month":
			return now.AddDate(0, -n, 0), nil
		case "year":
			return now.AddDate(-n, 0, 0), nil
		}
	}
	switch strings.ToLower(s) {
	case "yesterday":
		return now.AddDate(0, 0, -1), nil
	case "now":
		return now, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02", gitDate} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot parse date %q (use 2026-01-31, 2026-01-31T10:00:00 or \"2 weeks ago\")", s)
}
