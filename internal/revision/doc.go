// Package revision is git's revision walk (revision.c, with the merge
// base search of commit-reach.c): the commits git log lists, newest
// committer date first, with git's default history simplification on a
// pathspec (Walk, and LiteralWalk, its fast form for literal paths); the
// A..B and A...B ranges (Range, MergeBases) and the flags git's limited
// walk leaves on a range's commits (LimitWalk), which git show's and git
// blame's answers depend on; and a shallow repository's boundaries
// (Shallow).
//
// It is hand-written rather than go-git's log iterators because git's
// answers depend on details those do not keep: the order among equal
// dates, TREESAME parents, limit_list's stop once only UNINTERESTING
// commits are queued ("slop"), and the marks git spreads as it parses.
// The tools' differential tests compare it with the git CLI. It reads
// repositories and knows nothing of the tools' arguments or output.
package revision
