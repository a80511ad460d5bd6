package gittools

import (
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/reflog"
)

// The tools move refs as git does and so keep their reflogs as git does
// (go-git keeps none): HEAD and refs/heads/* get an entry for every move
// while core.logAllRefUpdates is true (git's default in a repository
// with a worktree), a deleted branch loses its log and a renamed one
// takes it along. "HEAD@{1}", a detached HEAD's "detached from" and
// `git reflog` then read what git would have written.

// reflogger appends entries under one identity and time.
type reflogger struct {
	dot  billy.Filesystem
	who  object.Signature
	mode string // core.logAllRefUpdates: "true", "false" or "always"
}

// reflogs returns the repository's reflogger, or nil when nothing is to
// be logged (no identity git could use, logging turned off, no .git
// directory to write in).
func (d Deps) reflogs(r *git.Repository) *reflogger {
	fsr, ok := r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return nil
	}
	mode := "true"
	if cfg, err := r.Config(); err == nil && cfg.Raw != nil {
		if v := strings.ToLower(cfg.Raw.Section("core").Option("logallrefupdates")); v != "" {
			mode = v
		}
		if cfg.Core.IsBare {
			mode = "false"
		}
	}
	switch mode {
	case "false", "no", "off", "0":
		return nil
	}
	_, committer, err := d.signatures(r, time.Now())
	if err != nil {
		return nil
	}
	return &reflogger{dot: fsr.Filesystem(), who: committer, mode: mode}
}

// log appends one entry to ref's log. A log that cannot be written does
// not undo the move it records (git warns and keeps the ref too).
func (l *reflogger) log(ref plumbing.ReferenceName, old, new plumbing.Hash, msg string) {
	if l != nil {
		e := reflog.Entry{Old: old, New: new, Who: reflog.Ident(l.who.Name, l.who.Email, l.who.When), Message: msg}
		_ = reflog.Append(l.dot, ref, e, reflog.DefaultCreate(ref, l.mode))
	}
}

// drop removes ref's log (a deleted branch).
func (l *reflogger) drop(ref plumbing.ReferenceName) {
	if l != nil {
		_ = reflog.Remove(l.dot, ref)
	}
}

// move renames ref's log (a renamed branch).
func (l *reflogger) move(from, to plumbing.ReferenceName) {
	if l != nil {
		_ = reflog.Rename(l.dot, from, to)
	}
}

// headDesc is how a checkout names where HEAD was: the branch's short
// name, or the full commit id when detached.
func headDesc(r *git.Repository) (string, plumbing.Hash) {
	head, err := r.Head()
	if err != nil {
		return "", plumbing.ZeroHash
	}
	if b, detached := currentBranch(r); !detached {
		return b, head.Hash()
	}
	return head.Hash().String(), head.Hash()
}
