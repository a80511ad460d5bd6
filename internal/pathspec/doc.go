// Package pathspec is git's pathspec (pathspec.c) with the wildmatch it
// matches wildcards by (wildmatch.c): the paths a command is limited to,
// given relative to the working directory, with their magic (":/",
// ":!", ":(top,literal,glob,icase,exclude)"). Every command that takes
// paths (log, diff, status, add, checkout, restore) and the revision
// walk's history simplification select paths here, so they select the
// paths git selects.
//
// It is hand-written from git's behaviour and sources rather than taken
// from go-git, whose matching differs from git's (no magic, "*" never
// crossing "/"); the tools' tests compare it with the git CLI. It knows
// nothing of repositories: it matches repository-relative path strings.
package pathspec
