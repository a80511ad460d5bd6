package gitbackend

import (
	"time"

	"github.com/go-git/go-git/v5/plumbing"

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
