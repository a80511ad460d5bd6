package revision

import (
	"context"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/revparse"
)

// Range is a revision argument of the form A..B or A...B, its sides
// resolved (an empty side is HEAD; a tag peeled): commits, or a tree or a
// blob a ".." range may name.
type Range struct {
	Arg         string        // as given
	Left, Right object.Object // the sides, tags peeled
	Symmetric   bool          // A...B
	// LeftName and RightName are the sides as written ("HEAD" for an
	// empty one); LeftID and RightID the objects they name before a tag
	// is peeled: git flags those objects, so a tag side is never one of
	// A...B's merge bases.
	LeftName, RightName string
	LeftID, RightID     plumbing.Hash
}

// Error is a revision argument git refuses; its message is git's.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

// ParseRange is setup_revisions' handle_dotdot: the argument split at
// its first ".." ("..." for a symmetric difference). ok is false when the
// argument holds no "..", or when a side does not resolve: git then takes
// the whole argument as one revision. A symmetric difference of anything
// but commits is git's error (an *Error).
func ParseRange(r *git.Repository, arg string) (Range, bool, error) {
	a, b, symmetric, ok := revparse.SplitRange(arg)
	if !ok {
		return Range{}, false, nil
	}
	rr := Range{Arg: arg, Symmetric: symmetric}
	side := func(rev string) (object.Object, plumbing.Hash, bool) {
		o, err := revparse.Object(r, revparse.OrHead(rev))
		if err != nil {
			return nil, plumbing.ZeroHash, false
		}
		id := o.ID()
		for err == nil {
			t, ok := o.(*object.Tag)
			if !ok {
				break
			}
			o, err = t.Object()
		}
		return o, id, err == nil
	}
	if rr.Left, rr.LeftID, ok = side(a); !ok {
		return Range{}, false, nil
	}
	if rr.Right, rr.RightID, ok = side(b); !ok {
		return Range{}, false, nil
	}
	rr.LeftName, rr.RightName = revparse.OrHead(a), revparse.OrHead(b)
	if rr.Symmetric {
		for _, o := range []object.Object{rr.Left, rr.Right} {
			if o.Type() != plumbing.CommitObject {
				return Range{}, false, &Error{Message: fmt.Sprintf(
					"error: object %s is a %s, not a commit\nfatal: Invalid symmetric difference expression %s", o.ID(), o.Type(), arg)}
			}
		}
	}
	return rr, true, nil
}

// MergeBases are the best common ancestors of a and b, newest first: the
// commits reachable from both that no other such commit has as a parent
// (the common set holds every ancestor of its members, so a commit below
// another common one is the parent of one). A shallow boundary ends the
// history, as its grafts do for git.
func MergeBases(ctx context.Context, r *git.Repository, a, b *object.Commit) ([]*object.Commit, error) {
	ra, err := reachable(ctx, r, a)
	if err != nil {
		return nil, err
	}
	rb, err := reachable(ctx, r, b)
	if err != nil {
		return nil, err
	}
	shallow := Shallow(r)
	common := map[plumbing.Hash]*object.Commit{}
	for h := range ra {
		if rb[h] {
			if c, err := object.GetCommit(r.Storer, h); err == nil {
				common[h] = c
			}
		}
	}
	below := map[plumbing.Hash]bool{}
	for h, c := range common {
		if shallow[h] {
			continue
		}
		for _, ph := range c.ParentHashes {
			below[ph] = true
		}
	}
	var out []*object.Commit
	for h, c := range common {
		if !below[h] {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if ti, tj := out[i].Committer.When, out[j].Committer.When; !ti.Equal(tj) {
			return ti.After(tj)
		}
		return out[i].Hash.String() < out[j].Hash.String()
	})
	return out, nil
}

// Commits are the range's commits in git log's order: those git's
// limited walk keeps (see LimitWalk), newest committer date first; left
// holds those of A...B's left side. A tree or a blob on the left
// excludes nothing, on the right shows nothing. It is git show's list:
// git log would walk A...B with no merge base.
func (rr Range) Commits(ctx context.Context, r *git.Repository) ([]*object.Commit, map[plumbing.Hash]bool, error) {
	w, kept, err := WalkRange(ctx, r, rr, nil)
	if err != nil {
		return nil, nil, err
	}
	if !w.limited && rr.Symmetric {
		// A...B of commits with no merge base names nothing
		// UNINTERESTING, so git show does not walk (no_walk stays set):
		// it shows A, then B.
		var out []*object.Commit
		for _, o := range []object.Object{rr.Left, rr.Right} {
			if c, ok := o.(*object.Commit); ok && (len(out) == 0 || out[0].Hash != c.Hash) {
				out = append(out, c)
			}
		}
		return out, map[plumbing.Hash]bool{rr.Left.ID(): true}, nil
	}
	out, left := w.visible(kept)
	return out, left, nil
}

// reachable is every commit reachable from c (c too), .git/shallow's
// boundaries ending the walk.
func reachable(ctx context.Context, r *git.Repository, c *object.Commit) (map[plumbing.Hash]bool, error) {
	shallow := Shallow(r)
	seen := map[plumbing.Hash]bool{c.Hash: true}
	stack := []*object.Commit{c}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if shallow[x.Hash] {
			continue
		}
		for _, ph := range x.ParentHashes {
			if seen[ph] {
				continue
			}
			seen[ph] = true
			if pc, err := object.GetCommit(r.Storer, ph); err == nil {
				stack = append(stack, pc)
			}
		}
	}
	return seen, nil
}
