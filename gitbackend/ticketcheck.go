package gitbackend

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/reflog"
)

// Anything in the machine queue is written by someone else until proven
// otherwise: any process of the user can write a ticket naming any clone
// and any commit in it, and the leader would push it to the remote. So the
// spool is this user's alone (0700, its files 0600), and a ticket is taken
// only when it proves where it comes from: it carries the id of a root
// this machine's tgp registered (a random id tgp wrote under the root's
// .git), and its commits are on that root's branch (its tip or its
// reflog) and descend from the base the ticket names. Anything else is
// refused, removed with its result, and reported, never pushed.

// ErrForged matches *ForgedError.
var ErrForged = errors.New("forged machine-queue file")

// ForgedError: a file of the machine queue (or a root id) that tgp did
// not write, or a ticket that does not prove where it comes from.
type ForgedError struct {
	Path   string
	Reason string
}

func (e *ForgedError) Error() string {
	return fmt.Sprintf("machine queue: %s refused: %s", e.Path, e.Reason)
}

func (e *ForgedError) Is(t error) bool { return t == ErrForged }

// rootIDFile is where a root's id lives, under its .git.
const rootIDFile = "tgp-root-id"

// checkPrivate says whether p is a regular file (a directory when dir)
// that only this user can have written; a symlink is never one.
func checkPrivate(p string, dir bool) error {
	info, err := os.Lstat(p)
	if err != nil {
		return err
	}
	return privateInfo(p, info, dir)
}

// privateInfo is checkPrivate on what Lstat said of p.
func privateInfo(p string, info fs.FileInfo, dir bool) error {
	want, ok := "regular file", info.Mode().IsRegular()
	if dir {
		want, ok = "directory", info.IsDir()
	}
	if !ok {
		return &ForgedError{Path: p, Reason: fmt.Sprintf("not a %s (%v)", want, info.Mode().Type())}
	}
	if why := ownerProblem(info); why != "" {
		return &ForgedError{Path: p, Reason: why}
	}
	return nil
}

// readPrivate reads p once checkPrivate accepts it; the file read is the
// file checked (not a symlink or file swapped in between).
func readPrivate(p string) ([]byte, error) {
	before, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if err := privateInfo(p, before, false); err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(before, after) {
		return nil, &ForgedError{Path: p, Reason: "replaced while being read"}
	}
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// readRootID reads the id of the root whose .git is gitdir.
func readRootID(gitdir string) (string, error) {
	p := filepath.Join(gitdir, rootIDFile)
	b, err := readPrivate(p)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if len(id) != 32 {
		return "", &ForgedError{Path: p, Reason: "not a root id"}
	}
	if _, err := hex.DecodeString(id); err != nil {
		return "", &ForgedError{Path: p, Reason: "not a root id"}
	}
	return id, nil
}

// ensureRootID returns the root's id, writing a new one (0600) when the
// .git has none, or one tgp did not write.
func ensureRootID(gitdir string) (string, error) {
	id, err := readRootID(gitdir)
	if err == nil {
		return id, nil
	}
	p := filepath.Join(gitdir, rootIDFile)
	if !errors.Is(err, fs.ErrNotExist) {
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return "", fmt.Errorf("root id %s: %w", p, rerr)
		}
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("root id %s: %w", p, err)
	}
	id = hex.EncodeToString(b)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("root id %s: %w", p, err)
	}
	_, werr := f.WriteString(id + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(p)
		return "", fmt.Errorf("root id %s: %w", p, werr)
	}
	return id, nil
}

// rootIDLocked is this root's id (written now if it has none); "" for a
// root in memory, or when it cannot be written: its pushes then go alone.
func (r *Repo) rootIDLocked() string {
	gd := r.gitDirPath()
	if gd == "" {
		return ""
	}
	id, err := ensureRootID(gd)
	if err != nil {
		r.progressf("machine queue: %v", err)
		return ""
	}
	return id
}

// maxTicketWalk bounds the commits walked from a ticket's head to its
// base: a root's unpushed commits are a handful.
const maxTicketWalk = 10000

// checkTicket is the leader's proof that t comes from a root of this
// machine (see the comment at the top of the file).
func (r *Repo) checkTicket(q *machineQueue, t *ticket) error {
	forged := func(format string, args ...any) error {
		return &ForgedError{Path: q.ticketPath(t.ID), Reason: fmt.Sprintf(format, args...)}
	}
	base, ok1 := hashFromHex(t.Base)
	head, ok2 := hashFromHex(t.Head)
	if !ok1 || !ok2 || head.IsZero() {
		return forged("unreadable commits (%q, %q)", t.Base, t.Head)
	}
	if t.Remote != redact(r.cfg.Remote) {
		return forged("names another remote")
	}
	if t.GitDir == "" || !filepath.IsAbs(t.GitDir) || filepath.Clean(t.GitDir) != t.GitDir {
		return forged("gitdir %q is not an absolute, clean path", t.GitDir)
	}
	if !registeredRoot(t.GitDir, t.RootID) {
		return forged("%s is not a root this machine's tgp registered", t.GitDir)
	}
	if !onBranch(t.GitDir, t.Branch, head) {
		return forged("commit %s is not on branch %s of %s (its tip or reflog)", short(head), t.Branch, t.GitDir)
	}
	if base.IsZero() || base == head {
		return nil
	}
	ok, err := descends(t.GitDir, head, base)
	if err != nil {
		return forged("reading its commits in %s: %v", t.GitDir, err)
	}
	if !ok {
		return forged("commit %s does not descend from its base %s in %s", short(head), short(base), t.GitDir)
	}
	return nil
}

// registeredRoot says whether gitdir is a root of this machine whose id
// is id.
func registeredRoot(gitdir, id string) bool {
	if gitdir == "" || id == "" || !filepath.IsAbs(gitdir) {
		return false
	}
	got, err := readRootID(gitdir)
	return err == nil && len(got) == len(id) && subtle.ConstantTimeCompare([]byte(got), []byte(id)) == 1
}

// onBranch says whether h is branch's tip in gitdir, or was (its reflog).
func onBranch(gitdir, branch string, h plumbing.Hash) bool {
	ref := plumbing.NewBranchReferenceName(branch)
	if tip, err := readRef(gitdir, ref.String()); err == nil && tip == h {
		return true
	}
	entries, err := reflog.Read(osfs.New(gitdir), ref)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.New == h {
			return true
		}
	}
	return false
}

// descends says whether base is an ancestor of head in gitdir's objects.
func descends(gitdir string, head, base plumbing.Hash) (bool, error) {
	s, err := openGitDir(gitdir)
	if err != nil {
		return false, err
	}
	defer s.Close()
	seen := map[plumbing.Hash]bool{head: true}
	queue := []plumbing.Hash{head}
	for len(queue) > 0 && len(seen) <= maxTicketWalk {
		c, err := object.GetCommit(s, queue[0])
		queue = queue[1:]
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			continue // a shallow root's boundary: a dead end
		}
		if err != nil {
			return false, err
		}
		for _, p := range c.ParentHashes {
			if p == base {
				return true, nil
			}
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, nil
}

// queueWarnings are the refusals the machine queue of branch logged in
// the day before now (tgp status shows them).
func (r *Repo) queueWarnings(branch string, now time.Time) []string {
	if _, ok := r.remote.(*netRemote); !ok || r.cfg.LockDir == "" || branch == "" {
		return nil
	}
	var out []string
	for _, l := range machineQueueFor(r.cfg.LockDir, r.cfg.Remote, branch).refusals() {
		at, msg, _ := strings.Cut(l, " ")
		if t, err := time.Parse(time.RFC3339, at); err == nil && now.Sub(t) < 24*time.Hour {
			out = append(out, msg+" ("+at+"; removed, not pushed)")
		}
	}
	return out
}

// maxResultWalk bounds the first-parent walk from the remote's tip to a
// result's commit: other pushes may have landed on it since.
const maxResultWalk = 1000

// remoteHolds fetches branch and says whether final is its tip or below
// it (first parents): a result not from a root of this machine must be
// what the remote has.
func (r *Repo) remoteHolds(ctx context.Context, branch string, final plumbing.Hash) error {
	tip, err := r.remote.Fetch(ctx, branch, 0)
	if err != nil {
		return r.wrapRemoteErr("fetch", err)
	}
	s := r.objs()
	for h, n := tip, 0; !h.IsZero() && n < maxResultWalk; n++ {
		if h == final {
			return nil
		}
		c, err := object.GetCommit(s, h)
		if err != nil || len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return &ForgedError{Path: "the result of this root's ticket", Reason: fmt.Sprintf("it names commit %s, which the remote's %s does not hold, and no root of this machine wrote it", short(final), branch)}
}
