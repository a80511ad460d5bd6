package gittools

// The revision arguments of the tools over internal/revision: its errors
// as the tools report them, and what diff and checkout make of a range.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/revision"
	"github.com/tgp-go/tgp/internal/revparse"
	"github.com/tgp-go/tgp/tools"
)

// parseRevRange is revision.ParseRange, a range git refuses failing the
// command.
func parseRevRange(r *git.Repository, arg string) (revision.Range, bool, error) {
	rr, ok, err := revision.ParseRange(r, arg)
	if re := (*revision.Error)(nil); errors.As(err, &re) {
		return rr, ok, &tools.Error{Kind: tools.KindExecutionFailed, Message: re.Message}
	}
	return rr, ok, err
}

// rawReader reads r's objects raw through the backend's caches.
func rawReader(r *git.Repository) revision.RawReader {
	return func(t plumbing.ObjectType, h plumbing.Hash, buf []byte) ([]byte, error) {
		return gitbackend.ReadRaw(r.Storer, t, h, buf)
	}
}

// rangeTrees are the two sides of git diff A..B (A...B: the merge base and
// B) as trees.
func rangeTrees(ctx context.Context, r *git.Repository, rr revision.Range) (from, to *object.Tree, err error) {
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
	left := rr.Left
	if rr.Symmetric {
		mb, err := rangeMergeBase(ctx, r, rr)
		if err != nil {
			return nil, nil, err
		}
		left = mb
	}
	if from, err = tree(left); err != nil {
		return nil, nil, err
	}
	to, err = tree(rr.Right)
	return from, to, err
}

// rangeMergeBase is the merge base git diff A...B uses: the first of
// get_merge_bases, newest first (git warns when there are several).
func rangeMergeBase(ctx context.Context, r *git.Repository, rr revision.Range) (*object.Commit, error) {
	bases, err := revision.MergeBases(ctx, r, rr.Left.(*object.Commit), rr.Right.(*object.Commit))
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		return nil, &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: %s: no merge base", rr.Arg)}
	}
	return bases[0], nil
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
	bases, err := revision.MergeBases(ctx, r, one, two)
	if err != nil {
		return plumbing.ZeroHash, true, err
	}
	if len(bases) != 1 {
		return plumbing.ZeroHash, true, unknownRevision(rev)
	}
	return bases[0].Hash, true, nil
}
