package gittools

import (
	"container/heap"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/tools"
)

// revRange is a revision argument of the form A..B or A...B, its sides
// resolved (an empty side is HEAD; a tag peeled): commits, or a tree or a
// blob a ".." range may name.
type revRange struct {
	arg         string
	left, right object.Object
	symmetric   bool
}

// parseRevRange is setup_revisions' handle_dotdot: the argument split at
// its first ".." ("..." for a symmetric difference). ok is false when the
// argument holds no "..", or when a side does not resolve: git then takes
// the whole argument as one revision. A symmetric difference of anything
// but commits is git's error.
func parseRevRange(r *git.Repository, arg string) (revRange, bool, error) {
	i := strings.Index(arg, "..")
	if i < 0 {
		return revRange{}, false, nil
	}
	rr := revRange{arg: arg}
	a, b := arg[:i], arg[i+2:]
	if strings.HasPrefix(b, ".") {
		rr.symmetric, b = true, b[1:]
	}
	if a == "" && b == "" && !rr.symmetric {
		return revRange{}, false, nil // ".." is a path to git
	}
	side := func(rev string) (object.Object, bool) {
		if rev == "" {
			rev = "HEAD"
		}
		o, err := resolveObject(r, rev)
		for err == nil {
			t, ok := o.(*object.Tag)
			if !ok {
				break
			}
			o, err = t.Object()
		}
		return o, err == nil
	}
	var ok bool
	if rr.left, ok = side(a); !ok {
		return revRange{}, false, nil
	}
	if rr.right, ok = side(b); !ok {
		return revRange{}, false, nil
	}
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
func (rr revRange) trees() (from, to *object.Tree, err error) {
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
		mb, err := rr.mergeBase()
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
func (rr revRange) mergeBase() (*object.Commit, error) {
	bases, err := rr.left.(*object.Commit).MergeBase(rr.right.(*object.Commit))
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		return nil, &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: %s: no merge base", rr.arg)}
	}
	sort.SliceStable(bases, func(i, j int) bool { return bases[i].Committer.When.After(bases[j].Committer.When) })
	return bases[0], nil
}

// commits are the range's commits in git log's order (committer date,
// newest first; among equal dates the one queued first): those reachable
// from the right side and not from the left (A..B), or from either side
// and not from both (A...B). A shallow boundary has no parents. A tree or
// a blob on the left excludes nothing, on the right shows nothing.
func (rr revRange) commits(ctx context.Context, r *git.Repository) ([]*object.Commit, error) {
	right, ok := rr.right.(*object.Commit)
	if !ok {
		return nil, nil
	}
	shallow := shallowCommits(r)
	parents := func(c *object.Commit) []plumbing.Hash {
		if shallow[c.Hash] {
			return nil
		}
		return c.ParentHashes
	}
	reach := func(from *object.Commit) (map[plumbing.Hash]bool, error) {
		seen := map[plumbing.Hash]bool{from.Hash: true}
		stack := []*object.Commit{from}
		for len(stack) > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, ph := range parents(c) {
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
	fromLeft := map[plumbing.Hash]bool{}
	left, isCommit := rr.left.(*object.Commit)
	if isCommit {
		var err error
		if fromLeft, err = reach(left); err != nil {
			return nil, err
		}
	}
	exclude := fromLeft
	starts := []*object.Commit{right}
	if rr.symmetric {
		fromRight, err := reach(right)
		if err != nil {
			return nil, err
		}
		exclude = map[plumbing.Hash]bool{}
		for h := range fromLeft {
			if fromRight[h] {
				exclude[h] = true
			}
		}
		starts = []*object.Commit{left, right}
	}
	q := &walkQueue{}
	seen := map[plumbing.Hash]bool{}
	seq := 0
	for _, c := range starts {
		if !seen[c.Hash] {
			seen[c.Hash] = true
			heap.Push(q, walkItem{c: c, seq: seq})
			seq++
		}
	}
	var out []*object.Commit
	for q.Len() > 0 {
		c := heap.Pop(q).(walkItem).c
		if exclude[c.Hash] {
			continue // its ancestors are excluded too
		}
		out = append(out, c)
		for _, ph := range parents(c) {
			if seen[ph] || exclude[ph] {
				continue
			}
			seen[ph] = true
			if pc, err := object.GetCommit(r.Storer, ph); err == nil {
				heap.Push(q, walkItem{c: pc, seq: seq})
				seq++
			}
		}
	}
	return out, nil
}
