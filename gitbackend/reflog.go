package gitbackend

import (
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

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

// logMove appends the reflog entries git writes when a branch moves: the
// branch's and, when HEAD is that branch, HEAD's, under who (nil: the
// committer git would use now; none it could use, no entry). Nothing is
// written when core.logAllRefUpdates is false; a log that cannot be
// written leaves the move as it is, as git warns.
func (r *Repo) logMove(branch string, old, new plumbing.Hash, msg string, who *object.Signature) {
	mode := r.logAllRefUpdates()
	switch mode {
	case "false", "no", "off", "0":
		return
	}
	if who == nil {
		_, committer, err := r.Signatures(time.Now())
		if err != nil {
			return
		}
		who = &committer
	}
	e := reflog.Entry{Old: old, New: new, Who: reflog.Ident(who.Name, who.Email, who.When), Message: msg}
	ref := plumbing.NewBranchReferenceName(branch)
	_ = reflog.Append(r.dot, ref, e, reflog.DefaultCreate(ref, mode))
	if head, err := r.store.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference && head.Target() == ref {
		_ = reflog.Append(r.dot, plumbing.HEAD, e, true)
	}
}

// logAllRefUpdates is core.logAllRefUpdates ("true" unset; "false" in a
// bare repository), read again only when .git/config changed.
func (r *Repo) logAllRefUpdates() string {
	info, err := r.dot.Stat("config")
	if err != nil {
		return "true"
	}
	if r.logMode != "" && info.Size() == r.logModeSize && info.ModTime().Equal(r.logModeTime) {
		return r.logMode
	}
	mode := "true"
	if cfg, err := r.repo.Config(); err == nil && cfg.Raw != nil {
		if v := strings.ToLower(cfg.Raw.Section("core").Option("logallrefupdates")); v != "" {
			mode = v
		}
		if cfg.Core.IsBare {
			mode = "false"
		}
	}
	r.logMode, r.logModeSize, r.logModeTime = mode, info.Size(), info.ModTime()
	return mode
}

// commitReflog is git commit's reflog message: "commit: " or "commit
// (initial): " and the message's first line.
func commitReflog(parents int, msg string) string {
	line, _, _ := strings.Cut(strings.TrimLeft(msg, "\n"), "\n")
	if parents == 0 {
		return "commit (initial): " + line
	}
	return "commit: " + line
}
