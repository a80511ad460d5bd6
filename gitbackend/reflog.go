package gitbackend

import (
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/gitident"
)

// AppendReflog appends "old new name <email> time zone\tmsg" to the reflog
// of ref in the .git directory dot, as git does with core.logAllRefUpdates
// (its default where there is a worktree): a log is started for HEAD and
// branches, and for other refs only when always is set. The message is
// condensed as git's copy_reflog_msg condenses it (runs of white space to
// one space). go-git keeps no reflogs; this is what `git reflog`,
// "HEAD@{1}" and a detached HEAD's "detached from" then read.
func AppendReflog(dot billy.Filesystem, ref plumbing.ReferenceName, old, new plumbing.Hash, who object.Signature, msg string, always bool) error {
	name := "logs/" + ref.String()
	if _, err := dot.Stat(name); err != nil {
		if ref != plumbing.HEAD && !ref.IsBranch() && !always {
			return nil
		}
		if err := dot.MkdirAll(path.Dir(name), 0o755); err != nil {
			return err
		}
	}
	f, err := dot.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %s %s <%s> %d %s\t%s\n", old, new, who.Name, who.Email, who.When.Unix(), who.When.Format("-0700"), strings.Join(strings.Fields(msg), " "))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// logClone starts the reflogs of HEAD and the branch a clone checked out,
// as git clone does ("clone: from <remote>", credentials left out). No
// identity git could use: no log, as git would refuse to clone.
func (r *Repo) logClone(branch string, tip plumbing.Hash) {
	_, committer, err := gitident.Resolve(gitident.Sources{Configured: gitident.Person(r.cfg.Author), Environ: r.cfg.Environ}, time.Now())
	if err != nil {
		return
	}
	who := object.Signature{Name: committer.Name, Email: committer.Email, When: committer.When}
	msg := "clone: from " + redact(r.cfg.Remote)
	_ = AppendReflog(r.dot, plumbing.NewBranchReferenceName(branch), plumbing.ZeroHash, tip, who, msg, false)
	_ = AppendReflog(r.dot, plumbing.HEAD, plumbing.ZeroHash, tip, who, msg, false)
}
