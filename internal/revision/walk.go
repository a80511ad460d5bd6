package revision

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/pathspec"
)

// Walk is git rev-list's default walk (revision.c): commits newest
// committer date first (first-in first-out among equal dates), parents
// after children; with a pathspec, git's default history simplification:
// a commit TREESAME to a parent on the pathspec is hidden, and a merge
// TREESAME to one of its parents is followed down that parent only. A
// shallow repository's boundary commits have no parents.
type Walk struct {
	r       *git.Repository
	ps      pathspec.Pathspec
	shallow map[plumbing.Hash]bool
	prints  map[plumbing.Hash]string // tree → pathspec fingerprint
	// Since is --since: older commits are neither shown nor walked past.
	Since time.Time
}

func NewWalk(r *git.Repository, ps pathspec.Pathspec) *Walk {
	return &Walk{r: r, ps: ps, shallow: Shallow(r), prints: map[plumbing.Hash]string{}}
}

// Shallow reads .git/shallow.
func Shallow(r *git.Repository) map[plumbing.Hash]bool {
	out := map[plumbing.Hash]bool{}
	fs, ok := r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return out
	}
	f, err := fs.Filesystem().Open("shallow")
	if err != nil {
		return out
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return out
	}
	for _, l := range strings.Fields(string(data)) {
		out[plumbing.NewHash(l)] = true
	}
	return out
}

// parents are a commit's parents as the walk sees them.
func (w *Walk) parents(c *object.Commit) []plumbing.Hash {
	if w.shallow[c.Hash] {
		return nil
	}
	return c.ParentHashes
}

// Run calls visit for each commit git log would show, in git's order,
// until visit returns false.
func (w *Walk) Run(ctx context.Context, start plumbing.Hash, visit func(*object.Commit) bool) error {
	seen := map[plumbing.Hash]bool{start: true}
	first, err := object.GetCommit(w.r.Storer, start)
	if err != nil {
		return err
	}
	var q DateQueue[*object.Commit]
	q.Push(first, first.Committer.When.Unix())
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := q.Pop()
		if !w.Since.IsZero() && c.Committer.When.Before(w.Since) {
			continue // older than --since: neither shown nor walked past
		}
		follow, show := w.simplify(c)
		for _, ph := range follow {
			if seen[ph] {
				continue
			}
			seen[ph] = true
			pc, err := object.GetCommit(w.r.Storer, ph)
			if err != nil {
				if errors.Is(err, plumbing.ErrObjectNotFound) {
					continue // a missing parent ends the history there
				}
				return err
			}
			q.Push(pc, pc.Committer.When.Unix())
		}
		if show && !visit(c) {
			return nil
		}
	}
	return nil
}

// simplify returns the parents to walk and whether c is shown.
func (w *Walk) simplify(c *object.Commit) ([]plumbing.Hash, bool) {
	parents := w.parents(c)
	if w.ps.Empty() {
		return parents, true
	}
	mine := w.fingerprint(c.TreeHash)
	if len(parents) == 0 {
		return nil, mine != ""
	}
	for _, ph := range parents {
		pc, err := object.GetCommit(w.r.Storer, ph)
		if err != nil {
			continue
		}
		if w.fingerprint(pc.TreeHash) == mine {
			return []plumbing.Hash{ph}, false // TREESAME: follow this parent only
		}
	}
	return parents, true
}

// fingerprint lists the entries of tree the pathspec selects (path, mode,
// hash), memoised per tree.
func (w *Walk) fingerprint(tree plumbing.Hash) string {
	if fp, ok := w.prints[tree]; ok {
		return fp
	}
	var b strings.Builder
	t, err := object.GetTree(w.r.Storer, tree)
	if err == nil {
		w.collect(t, "", &b)
	}
	w.prints[tree] = b.String()
	return b.String()
}

func (w *Walk) collect(t *object.Tree, prefix string, b *strings.Builder) {
	for _, e := range t.Entries {
		p := e.Name
		if prefix != "" {
			p = prefix + "/" + e.Name
		}
		if w.ps.Plain() && w.ps.Match(p) && !w.globOnly() {
			// A literal item naming this entry (file or directory): its
			// hash and mode say everything below it.
			fmt.Fprintf(b, "%s %o %s\n", p, e.Mode, e.Hash)
			continue
		}
		if e.Mode == filemode.Dir {
			if !w.ps.MatchesDir(p) {
				continue
			}
			sub, err := object.GetTree(w.r.Storer, e.Hash)
			if err == nil {
				w.collect(sub, p, b)
			}
			continue
		}
		if w.ps.Match(p) {
			fmt.Fprintf(b, "%s %o %s\n", p, e.Mode, e.Hash)
		}
	}
}

// globOnly reports whether every pathspec item is a wildcard (then matches
// are made on leaves, as git's tree diff does).
func (w *Walk) globOnly() bool {
	for _, it := range w.ps.Items {
		if !it.Glob {
			return false
		}
	}
	return true
}

// CompileBRE turns a POSIX basic regular expression (git's default for
// --grep and --author, with GNU's \+ \? \| extensions) into Go syntax,
// matching per line.
func CompileBRE(bre string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("(?m)")
	for i := 0; i < len(bre); i++ {
		c := bre[i]
		switch {
		case c == '\\' && i+1 < len(bre):
			i++
			switch n := bre[i]; n {
			case '(', ')', '{', '}', '|', '+', '?':
				b.WriteByte(n)
			default:
				if n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z' || n >= '0' && n <= '9' {
					b.WriteString(`\` + string(n)) // \w, \s, \b keep GNU's meaning
				} else {
					b.WriteString(regexp.QuoteMeta(string(n)))
				}
			}
		case strings.IndexByte("(){}|+?", c) >= 0:
			b.WriteString(`\` + string(c))
		case c == '*' && (i == 0 || bre[i-1] == '^' && i == 1):
			b.WriteString(`\*`)
		case c == '[':
			// Copy a bracket expression verbatim.
			j := i + 1
			if j < len(bre) && bre[j] == '^' {
				j++
			}
			if j < len(bre) && bre[j] == ']' {
				j++
			}
			for j < len(bre) && bre[j] != ']' {
				j++
			}
			if j >= len(bre) {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString(bre[i : j+1])
			i = j
		default:
			b.WriteByte(c)
		}
	}
	return regexp.Compile(b.String())
}
