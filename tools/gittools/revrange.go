package gittools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/revparse"
	"github.com/tgp-go/tgp/tools"
)

// revRange is a revision argument of the form A..B or A...B, its sides
// resolved (an empty side is HEAD; a tag peeled): commits, or a tree or a
// blob a ".." range may name.
type revRange struct {
	arg         string
	left, right object.Object
	symmetric   bool
	// leftName and rightName are the sides as written ("HEAD" for an
	// empty one); leftID and rightID the objects they name before a tag
	// is peeled: git flags those objects, so a tag side is never one of
	// A...B's merge bases.
	leftName, rightName string
	leftID, rightID     plumbing.Hash
}

// parseRevRange is setup_revisions' handle_dotdot: the argument split at
// its first ".." ("..." for a symmetric difference). ok is false when the
// argument holds no "..", or when a side does not resolve: git then takes
// the whole argument as one revision. A symmetric difference of anything
// but commits is git's error.
func parseRevRange(r *git.Repository, arg string) (revRange, bool, error) {
	a, b, symmetric, ok := revparse.SplitRange(arg)
	if !ok {
		return revRange{}, false, nil
	}
	rr := revRange{arg: arg, symmetric: symmetric}
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
	if rr.left, rr.leftID, ok = side(a); !ok {
		return revRange{}, false, nil
	}
	if rr.right, rr.rightID, ok = side(b); !ok {
		return revRange{}, false, nil
	}
	rr.leftName, rr.rightName = revparse.OrHead(a), revparse.OrHead(b)
	if rr.symmetric {
		for _, o := range []object.Object{rr.left, rr.right} {
			if o.Type() != plumbing.CommitObject {
				return revRange{}, false, &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf(
					"error: object %s is a %s, not a commit\nfatal: Invalid symmetric difference expression %s", o.ID(), o.Type(), arg)}
			}
		}
	}
	return rr, true, nil
}

// trees are the two sides of git diff A..B (A...B: the merge base and
// B) as trees.
func (rr revRange) trees(ctx context.Context, r *git.Repository) (from, to *object.Tree, err error) {
	tree := func(o object.Object) (*object.Tree, error) {
		switch o := o.(type) {
		case *object.Commit:
			return o.Tree()
		case *object.Tree:
			return o, nil
		}
		// A blob beside a commit is git diff's usage (two blobs,
		// which git compares, are not rebuilt).
		return nil, errDiffUsage
	}
	left := rr.left
	if rr.symmetric {
		mb, err := rr.mergeBase(ctx, r)
		if err != nil {
			return nil, nil, err
		}
		left = mb
	}
	if from, err = tree(left); err != nil {
		return nil, nil, err
	}
	to, err = tree(rr.right)
	return from, to, err
}

// mergeBase is the merge base git diff A...B uses: the first of
// get_merge_bases, newest first (git warns when there are several).
func (rr revRange) mergeBase(ctx context.Context, r *git.Repository) (*object.Commit, error) {
	bases, err := mergeBases(ctx, r, rr.left.(*object.Commit), rr.right.(*object.Commit))
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		return nil, &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: %s: no merge base", rr.arg)}
	}
	return bases[0], nil
}

// mergeBases are the best common ancestors of a and b, newest first: the
// commits reachable from both that no other such commit has as a parent
// (the common set holds every ancestor of its members, so a commit below
// another common one is the parent of one). A shallow boundary ends the
// history, as its grafts do for git.
func mergeBases(ctx context.Context, r *git.Repository, a, b *object.Commit) ([]*object.Commit, error) {
	ra, err := reachable(ctx, r, a)
	if err != nil {
		return nil, err
	}
	rb, err := reachable(ctx, r, b)
	if err != nil {
		return nil, err
	}
	shallow := shallowCommits(r)
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

// commits are the range's commits in git log's order: those git's
// limited walk keeps (see limitWalk), newest committer date first; left
// holds those of A...B's left side. A tree or a blob on the left
// excludes nothing, on the right shows nothing. It is git show's list:
// git log would walk A...B with no merge base.
func (rr revRange) commits(ctx context.Context, r *git.Repository) ([]*object.Commit, map[plumbing.Hash]bool, error) {
	w, kept, err := rangeWalk(ctx, r, rr, nil)
	if err != nil {
		return nil, nil, err
	}
	if !w.limited && rr.symmetric {
		// A...B of commits with no merge base names nothing
		// UNINTERESTING, so git show does not walk (no_walk stays set):
		// it shows A, then B.
		var out []*object.Commit
		for _, o := range []object.Object{rr.left, rr.right} {
			if c, ok := o.(*object.Commit); ok && (len(out) == 0 || out[0].Hash != c.Hash) {
				out = append(out, c)
			}
		}
		return out, map[plumbing.Hash]bool{rr.left.ID(): true}, nil
	}
	out, left := w.visible(kept)
	return out, left, nil
}

// reachable is every commit reachable from c (c too), .git/shallow's
// boundaries ending the walk.
func reachable(ctx context.Context, r *git.Repository, c *object.Commit) (map[plumbing.Hash]bool, error) {
	shallow := shallowCommits(r)
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

// resolveMergeBaseRev is git checkout's get_oid_mb: "A...B" (a side left
// out is HEAD) names the one merge base of A and B, and is no revision
// when they have none or several; ok is false for an argument without
// "...", which the caller resolves as it does any revision.
func resolveMergeBaseRev(ctx context.Context, r *git.Repository, rev string) (h plumbing.Hash, ok bool, err error) {
	a, b, found := strings.Cut(rev, "...")
	if !found {
		return plumbing.ZeroHash, false, nil
	}
	side := func(s string) (*object.Commit, error) {
		if s == "" {
			s = "HEAD"
		}
		o, err := revparse.Object(r, s)
		for err == nil {
			t, isTag := o.(*object.Tag)
			if !isTag {
				break
			}
			o, err = t.Object()
		}
		if err != nil {
			return nil, unknownRevision(rev)
		}
		c, isCommit := o.(*object.Commit)
		if !isCommit {
			return nil, unknownRevision(rev)
		}
		return c, nil
	}
	one, err := side(a)
	if err != nil {
		return plumbing.ZeroHash, true, err
	}
	two, err := side(b)
	if err != nil {
		return plumbing.ZeroHash, true, err
	}
	bases, err := mergeBases(ctx, r, one, two)
	if err != nil {
		return plumbing.ZeroHash, true, err
	}
	if len(bases) != 1 {
		return plumbing.ZeroHash, true, unknownRevision(rev)
	}
	return bases[0].Hash, true, nil
}
