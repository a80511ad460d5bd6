package gittools

import (
	"strconv"
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

// resolveRev is go-git's ResolveRevision after a leading "<ref>@{n}" has
// been read from the reflog (go-git reads no reflogs): "stash@{1}^2",
// "HEAD@{2}~1", "main@{0}:path".
func resolveRev(r *git.Repository, rev string) (*plumbing.Hash, error) {
	return r.ResolveRevision(plumbing.Revision(expandReflog(r, rev)))
}

// expandReflog replaces a leading "<ref>@{n}" of rev with the full id of
// the commit entry n of the ref's reflog names (newest first; the ref is
// found as git's dwim_log finds it, HEAD when empty); rev is returned as
// it is when it has none, or when the reflog has no such entry.
func expandReflog(r *git.Repository, rev string) string {
	ref, spec, rest, ok := splitReflogRev(rev)
	if !ok {
		return rev
	}
	n, err := strconv.Atoi(spec)
	if err != nil || n < 0 {
		return rev
	}
	h, _, ok := reflogAt(r, ref, n)
	if !ok {
		return rev
	}
	return h.String() + rest
}

// splitReflogRev reads "<ref>@{<spec>}<rest>" (get_oid_basic's reflog
// form): the ref before the first "@{" (HEAD when empty), what the braces
// hold and what follows them. ok is false when rev has no "@{...}", or
// when "@{" comes after a "^", "~" or ":" (then it is not a reflog of the
// revision's start).
func splitReflogRev(rev string) (ref, spec, rest string, ok bool) {
	i := strings.Index(rev, "@{")
	if i < 0 {
		return "", "", "", false
	}
	j := strings.IndexByte(rev[i:], '}')
	if j < 0 {
		return "", "", "", false
	}
	ref = rev[:i]
	if strings.ContainsAny(ref, "^~:") {
		return "", "", "", false
	}
	if ref == "" {
		ref = "HEAD"
	}
	return ref, rev[i+2 : i+j], rev[i+j+1:], true
}
