package gitbackend

import (
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/gitconfig"
	"github.com/tgp-go/tgp/internal/gitident"
	"github.com/tgp-go/tgp/internal/reflog"
)

// logClone starts the reflogs of HEAD and the branch a clone checked out,
// as git clone does ("clone: from <remote>", credentials left out). No
// identity git could use: no log, as git would refuse to clone. A log
// that cannot be written leaves the clone as it is (git warns).
func (r *Repo) logClone(branch string, tip plumbing.Hash) {
	_, committer, err := gitident.Resolve(gitident.Sources{Configured: gitident.Person(r.cfg.Author), Environ: r.cfg.Environ}, time.Now())
	if err != nil {
		return
	}
	e := reflog.Entry{Old: plumbing.ZeroHash, New: tip, Who: reflog.Ident(committer.Name, committer.Email, committer.When),
		Message: "clone: from " + redact(r.cfg.Remote)}
	for _, ref := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(branch), plumbing.HEAD} {
		_ = reflog.Append(r.dot, ref, e, reflog.DefaultCreate(ref, "true"))
	}
}

// The kernel's own ref moves are logged as the git CLI logs the same
// operations (checked against it in reflog_test.go): a persist's commit
// moves HEAD and its branch ("commit: <first line>", "commit (initial):
// ..." for a root commit), a push the remote-tracking branch ("update by
// push"); a refresh's move to the remote's tip as git pull's
// fast-forward, a replay as git pull --rebase's finish, a conflict's
// reset as git reset's (moveBranch). A fetch's move of the
// remote-tracking branch is not logged.

// logMode is core.logAllRefUpdates as git reads it for the root (every
// scope; "" when unset). Read once per Repo, as eolSettings is.
func (r *Repo) logMode() string {
	r.logOnce.Do(func() {
		var repoConf []byte
		if r.dot != nil {
			if f, err := r.dot.Open("config"); err == nil {
				repoConf, _ = io.ReadAll(f)
				f.Close()
			}
		}
		r.logAll = gitconfig.Load(r.cfg.Environ, repoConf, "").String("core.logallrefupdates", "")
	})
	return r.logAll
}

// logMove appends old -> new with msg to the logs of refs in the name of
// who (reflog.Ident). A log that cannot be written leaves the move as it
// is (git warns).
func (r *Repo) logMove(old, new plumbing.Hash, who, msg string, refs ...plumbing.ReferenceName) {
	if r.dot == nil || old == new {
		return
	}
	e := reflog.Entry{Old: old, New: new, Who: who, Message: msg}
	mode := r.logMode()
	for _, ref := range refs {
		_ = reflog.Append(r.dot, ref, e, reflog.DefaultCreate(ref, mode))
	}
}

// committerOf is the committer of commit h, which git names in the
// reflog entries of the moves it makes with it (the same identity that
// made it; resolving it again would read every configuration scope).
func (r *Repo) committerOf(h plumbing.Hash) (object.Signature, bool) {
	c, err := object.GetCommit(r.objs(), h)
	if err != nil {
		return object.Signature{}, false
	}
	return c.Committer, true
}

// logCommit logs commit, just made on branch over parent with message
// msg: the branch's log, and HEAD's when onHead (HEAD is on branch).
func (r *Repo) logCommit(branch string, onHead bool, parent, commit plumbing.Hash, msg string) {
	who, ok := r.committerOf(commit)
	if !ok {
		return
	}
	what := "commit"
	if parent.IsZero() {
		what = "commit (initial)"
	}
	line, _, _ := strings.Cut(msg, "\n")
	ref := plumbing.NewBranchReferenceName(branch)
	refs := []plumbing.ReferenceName{ref}
	if onHead {
		refs = append(refs, plumbing.HEAD)
	}
	r.logMove(parent, commit, reflog.Ident(who.Name, who.Email, who.When), what+": "+line, refs...)
}

// logPush logs a push that moved the remote's branch from old to new, in
// the name of new's committer (the kernel, which made or replayed it),
// now.
func (r *Repo) logPush(branch string, old, new plumbing.Hash) {
	who, ok := r.committerOf(new)
	if !ok {
		return
	}
	r.logMove(old, new, reflog.Ident(who.Name, who.Email, time.Now()), "update by push", plumbing.NewRemoteReferenceName("origin", branch))
}

// moveBranch moves branch to h by a move other than a commit of the
// kernel's own (a refresh's fast-forward, a replay, a reset to the
// remote's tip), logged as git logs the command doing the same with msg:
// the branch's log, and HEAD's when HEAD is the branch, in the name of
// the committer git would use now.
func (r *Repo) moveBranch(branch string, h plumbing.Hash, msg string) error {
	ref := plumbing.NewBranchReferenceName(branch)
	old := plumbing.ZeroHash
	if cur, err := r.store.Reference(ref); err == nil {
		old = cur.Hash()
	}
	if err := r.setBranch(branch, h); err != nil {
		return err
	}
	_, who, err := r.Signatures(time.Now())
	if err != nil {
		return nil // no identity git could use: no entry
	}
	refs := []plumbing.ReferenceName{ref}
	if head, err := r.store.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference && head.Target() == ref {
		refs = append(refs, plumbing.HEAD)
	}
	r.logMove(old, h, reflog.Ident(who.Name, who.Email, who.When), msg, refs...)
	return nil
}

// replayReflog is how git pull --rebase logs the branch it moved onto
// the remote's tip: what a replay of local commits does.
func replayReflog(branch string, tip plumbing.Hash) string {
	return "pull --rebase (finish): " + plumbing.NewBranchReferenceName(branch).String() + " onto " + tip.String()
}
