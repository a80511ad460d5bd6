package gittools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/gitattr"
	"github.com/tgp-go/tgp/internal/reflog"
	"github.com/tgp-go/tgp/internal/xdiff"
	"github.com/tgp-go/tgp/tools"
)

// Stashes are stored exactly as git stores them: refs/stash points at a
// worktree commit W (parents HEAD, I[, U]); I holds the index, U the
// untracked files; stash@{n} is read from the reflog .git/logs/refs/stash.
// So the git CLI and these tools see the same stashes.

type stashArgs struct {
	Action           string `json:"action,omitempty" default:"\"push\"" enum:"push,pop,apply,drop,list,show,clear" jsonschema:"Stash action to perform"`
	Message          string `json:"message,omitempty" jsonschema:"Stash message (for push only)"`
	Index            int    `json:"index,omitempty" default:"0" minimum:"0" jsonschema:"Stash index for pop/apply/drop/show"`
	IncludeUntracked bool   `json:"include_untracked,omitempty" default:"false" jsonschema:"Include untracked files (-u, for push only)"`
	TimeoutMS        int    `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir       string `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func stashTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[stashArgs]{
		Name:        "git_stash",
		Facts:       tools.Facts{Persists: true},
		Description: "Stash changes (push, with message and include_untracked) and list, show, apply, pop, drop or clear stashes, in git's own format.",
		Annotations: tools.Annotations{Destructive: true, Risk: tools.RiskHigh},
		Risk: func(a stashArgs) tools.Risk {
			switch a.Action {
			case "list", "show":
				return tools.RiskLow
			case "clear", "drop":
				return tools.RiskHigh
			}
			return tools.RiskMedium
		},
		Summary: func(a stashArgs) string {
			switch a.Action {
			case "clear":
				return "Clear all stashes (WARNING: stashed changes are lost)"
			case "push":
				return "Stash changes"
			}
			return fmt.Sprintf("Stash %s stash@{%d}", a.Action, a.Index)
		},
		Run: func(ctx context.Context, a stashArgs) (tools.Result, error) {
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, 0, func(ctx context.Context, r *git.Repository) (string, error) {
				cfg := d.settings(r)
				s := &stasher{r: r, d: d, cfg: cfg, eol: newEOLConverter(r, cfg)}
				// push resets and apply merges through unpack_trees: git's
				// new index keeps no resolve-undo records.
				noUndo := func(fn func() (string, error)) (out string, err error) {
					err = gitbackend.WithoutResolveUndo(r.Storer, func() error {
						out, err = fn()
						return err
					})
					return out, err
				}
				switch a.Action {
				case "push":
					return noUndo(func() (string, error) { return s.push(ctx, a, d.relDir(a.WorkingDir)) })
				case "list":
					return s.list()
				case "show":
					return s.show(a.Index, d.relDir(a.WorkingDir))
				case "apply":
					return noUndo(func() (string, error) { return s.apply(ctx, a.Index, false, d.relDir(a.WorkingDir)) })
				case "pop":
					return noUndo(func() (string, error) { return s.apply(ctx, a.Index, true, d.relDir(a.WorkingDir)) })
				case "drop":
					return s.drop(a.Index)
				case "clear":
					return s.clear()
				}
				return "", tools.BadArg("action", "unknown action %q", a.Action)
			})
		},
	})
}

type stasher struct {
	r   *git.Repository
	d   Deps
	cfg *settings
	eol *gitattr.EOL
}

// stashRef is the stash: its reflog is the list, stash@{0} the newest.
const stashRef = plumbing.ReferenceName("refs/stash")

func (s *stasher) wt() (*git.Worktree, error) { return worktreeOf(s.r) }

// dotgit is the repository's .git directory (go-git's worktree filesystem
// refuses .git paths).
func (s *stasher) dotgit() (billy.Filesystem, error) {
	fs, ok := s.r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return nil, fmt.Errorf("stash needs a filesystem-backed repository")
	}
	return fs.Filesystem(), nil
}

// entries reads the stash reflog, newest first.
func (s *stasher) entries() ([]reflog.Entry, error) {
	dg, err := s.dotgit()
	if err != nil {
		return nil, err
	}
	es, err := reflog.Read(dg, stashRef)
	if err != nil {
		return nil, err
	}
	slices.Reverse(es)
	return es, nil
}

// writeEntries makes es (newest first) the stash list as git's reflog
// delete --updateref --rewrite does: the log is replaced through its lock
// file, then refs/stash points at the newest entry (no entries: both go).
func (s *stasher) writeEntries(es []reflog.Entry) error {
	dg, err := s.dotgit()
	if err != nil {
		return err
	}
	oldestFirst := slices.Clone(es)
	slices.Reverse(oldestFirst)
	if err := reflog.Write(dg, stashRef, oldestFirst); err != nil {
		return err
	}
	if len(es) == 0 {
		err := s.r.Storer.RemoveReference(stashRef)
		if err != nil && err != plumbing.ErrReferenceNotFound {
			return err
		}
		return nil
	}
	return s.r.Storer.SetReference(plumbing.NewHashReference(stashRef, es[0].New))
}

func (s *stasher) entry(n int) (reflog.Entry, []reflog.Entry, error) {
	es, err := s.entries()
	if err != nil {
		return reflog.Entry{}, nil, err
	}
	if n >= len(es) {
		if len(es) == 0 {
			return reflog.Entry{}, nil, &tools.Error{Kind: tools.KindNotFound, Message: "No stash entries found."}
		}
		return reflog.Entry{}, nil, &tools.Error{Kind: tools.KindNotFound, Message: fmt.Sprintf("error: stash@{%d} is not a valid reference", n)}
	}
	return es[n], es, nil
}

// push is git stash push: the changes listed (pushChanges), I, W and U
// committed (pushCommits), the stash stored (store), then the stashed
// paths reset to HEAD and, with -u, the untracked files cleaned
// (resetPushed).
func (s *stasher) push(ctx context.Context, a stashArgs, wd string) (string, error) {
	head, err := s.r.Head()
	if err != nil {
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: "You do not have the initial commit yet"}
	}
	hc, err := object.GetCommit(s.r.Storer, head.Hash())
	if err != nil {
		return "", err
	}
	w, err := s.wt()
	if err != nil {
		return "", err
	}
	ch, err := s.pushChanges()
	if err != nil {
		return "", err
	}
	if !ch.counted && (!a.IncludeUntracked || len(ch.untracked) == 0) {
		return "No local changes to save\n", nil
	}
	// W is made by update-index from the paths diff-index finds changed
	// against HEAD: one of HEAD's whose directory is now a symbolic link
	// stops it (has_symlink_leading_path), before anything is saved.
	for _, p := range ch.tracked {
		if beyondSymlink(w.Filesystem, p) {
			if _, _, inHead := fileAtCommit(s.r.Storer, hc, p); inHead {
				return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf(
					"error: '%s' is beyond a symbolic link\nfatal: Unable to process path %s", p, p)}
			}
		}
	}
	sig, committer, err := s.d.signatures(s.r, time.Now())
	if err != nil {
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: err.Error(), Err: err}
	}
	branch, det := currentBranch(s.r)
	if det {
		branch = "(no branch)"
	}
	ab := newAbbrever(s.r)
	ref := fmt.Sprintf("%s: %s %s", branch, ab.Short(hc.Hash), subject(hc.Message))
	ab.Close()
	msg := "WIP on " + ref
	if a.Message != "" {
		msg = "On " + branch + ": " + a.Message
	}
	wCommit, flagged, err := s.pushCommits(w, hc, ch, a.IncludeUntracked, ref, msg, sig, committer)
	if err != nil {
		return "", err
	}
	if err := s.store(ctx, wCommit, msg, committer); err != nil {
		return "", err
	}
	if err := s.resetPushed(ctx, w, hc, ch, flagged, a.IncludeUntracked, wd); err != nil {
		return "", err
	}
	return "Saved working directory and index state " + msg + "\n", nil
}

// pushedChanges are what stash push saves.
type pushedChanges struct {
	// tracked are the paths changed in the index or the worktree;
	// untracked the untracked files (with -u).
	tracked, untracked []string
	// restored are the paths both: removed from the index (HEAD has
	// them) with their files still on disk. U saves the file, the reset
	// brings HEAD's back after the clean took it.
	restored map[string]bool
	// idx is the index as push found it.
	idx *index.Index
	// counted: some tracked change is one git's check for local changes
	// sees, which ignores submodules (see countsAsChange).
	counted bool
}

// countsAsChange reports whether the change of p (staged: HEAD against
// the index; worktree: the index against the worktree) is one git stash
// push's check for local changes sees: it looks with ignore_submodules,
// so a gitlink added, removed or moved in the index is no change
// (diff_addremove, diff_change), nor is anything at a gitlink's place in
// the worktree (match_stat_with_submodule).
func countsAsChange(staged, worktree bool, head, inIndex filemode.FileMode) bool {
	gitlink := func(m filemode.FileMode) bool { return m == filemode.Submodule }
	if staged && !((head == 0 && gitlink(inIndex)) || (inIndex == 0 && gitlink(head)) || (gitlink(head) && gitlink(inIndex))) {
		return true
	}
	return worktree && !gitlink(inIndex)
}

// pushChanges lists what stash push saves, or why it cannot.
func (s *stasher) pushChanges() (*pushedChanges, error) {
	if um := indexUnmerged(s.r); len(um) > 0 {
		return nil, needsMerge("", um)
	}
	// Untracked files as get_untracked_files lists them (fill_directory
	// with no flags): those in a directory that replaced a tracked file too.
	st, _, _, err := scanStatus(s.r, s.cfg, statusScan{untracked: true, underIndexFiles: true})
	if err != nil {
		return nil, err
	}
	ch := &pushedChanges{restored: map[string]bool{}}
	for p, fs := range st {
		switch {
		case fs.Staging == git.Untracked && fs.Worktree == git.Untracked:
			ch.untracked = append(ch.untracked, p)
		case fs.Worktree == git.Untracked:
			ch.untracked = append(ch.untracked, p)
			ch.tracked = append(ch.tracked, p)
			ch.restored[p] = true
		case fs.Staging != git.Unmodified || fs.Worktree != git.Unmodified:
			ch.tracked = append(ch.tracked, p)
		}
	}
	sort.Strings(ch.tracked)
	sort.Strings(ch.untracked)
	// An entry added with intent to add is a change to stash push (its
	// diff of the index shows it), and the stash's reset of a scratch
	// index to the index's tree, which lacks it, stops at the first one
	// before anything is saved: such an entry is never up to date
	// (ie_match_stat).
	if ch.idx, err = s.r.Storer.Index(); err != nil {
		return nil, err
	}
	for _, e := range ch.idx.Entries {
		if e.IntentToAdd {
			return nil, errNotUptodate(e.Name)
		}
	}
	head, err := headTreeFilesOf(s.r)
	if err != nil {
		return nil, err
	}
	modes := map[string]filemode.FileMode{}
	for _, e := range ch.idx.Entries {
		if e.Stage == 0 {
			modes[e.Name] = e.Mode
		}
	}
	for _, p := range ch.tracked {
		fs := st[p]
		staged := fs.Staging != git.Unmodified || ch.restored[p]
		worktree := fs.Worktree != git.Unmodified && !ch.restored[p]
		if countsAsChange(staged, worktree, head[p].mode, modes[p]) {
			ch.counted = true
			break
		}
	}
	return ch, nil
}

// headTreeFilesOf lists HEAD's files (none when HEAD is unborn).
func headTreeFilesOf(r *git.Repository) (map[string]side, error) {
	ht, err := headTree(r)
	if err != nil {
		return nil, err
	}
	return treeFiles(r, ht)
}

// pushCommits commits I (the index), U (the untracked files, with -u)
// and W (HEAD's tree with the worktree state of the tracked paths, its
// parents HEAD, I[, U]) with message msg, and returns W and the entries
// git takes as matching their files unlooked (skip-worktree,
// assume-unchanged).
func (s *stasher) pushCommits(w *git.Worktree, hc *object.Commit, ch *pushedChanges, withUntracked bool, ref, msg string, sig, committer object.Signature) (plumbing.Hash, map[string]bool, error) {
	// I: the index as a tree.
	files := map[string]gitbackend.TreeFile{}
	for _, e := range ch.idx.Entries {
		files[e.Name] = gitbackend.TreeFile{Mode: e.Mode, Hash: e.Hash}
	}
	iTree, err := gitbackend.WriteTree(s.r.Storer, plumbing.ZeroHash, files)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	iCommit, err := s.commit(iTree, []plumbing.Hash{hc.Hash}, "index on "+ref+"\n", sig, committer)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	// An entry git takes as matching its file unlooked (skip-worktree,
	// assume-unchanged) is in W as the index has it.
	flagged := gitbackend.AssumeUnchangedIn(s.r.Storer)
	for _, e := range ch.idx.Entries {
		if e.SkipWorktree {
			if flagged == nil {
				flagged = map[string]bool{}
			}
			flagged[e.Name] = true
		}
	}
	wTree, err := s.worktreeTree(w, hc, ch.tracked, files, flagged)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	parents := []plumbing.Hash{hc.Hash, iCommit}
	if withUntracked {
		uCommit, err := s.untrackedCommit(w, ch.untracked, ref, sig, committer)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		parents = append(parents, uCommit)
	}
	// W's message has no newline: git's do_create_stash hands
	// stash_msg_buf to commit_tree as it is (I's and U's end with one).
	wCommit, err := s.commit(wTree, parents, msg, sig, committer)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return wCommit, flagged, nil
}

// worktreeTree is W's tree: HEAD's with the worktree state of the
// tracked paths; files are the index's entries (I).
func (s *stasher) worktreeTree(w *git.Worktree, hc *object.Commit, tracked []string, files map[string]gitbackend.TreeFile, flagged map[string]bool) (plumbing.Hash, error) {
	wfiles := map[string]gitbackend.TreeFile{}
	for _, p := range tracked {
		if ie, inIndex := files[p]; inIndex && flagged[p] {
			wfiles[p] = ie
			continue
		}
		// HEAD's entries count with its gitlinks: git's diff-index of HEAD
		// against the worktree reports a gitlink the index replaced or
		// dropped, and W takes the path's worktree state as for a file.
		inHead := headHasEntry(s.r.Storer, hc, p)
		if _, inIndex := files[p]; !inIndex && !inHead {
			continue // staged-then-deleted, or not tracked at all
		}
		data, mode, err := readWorktree(w.Filesystem, p)
		if info, lerr := w.Filesystem.Lstat(p); err != nil && lerr == nil && info.IsDir() {
			// A file replaced by a directory: W keeps the index's version,
			// and a path the index no longer has (rm --cached) is not in W
			// either (git builds W from the index; update-index --remove
			// drops a path that is not a file).
			if ie, inIndex := files[p]; inIndex {
				wfiles[p] = ie
			} else {
				wfiles[p] = gitbackend.TreeFile{Delete: true}
			}
			continue
		}
		if err != nil {
			// A file added to the index and then deleted from the worktree
			// keeps its staged version in W: git's diff-index (HEAD against
			// the worktree) does not report a new file that is missing.
			if ie, inIndex := files[p]; inIndex && !inHead {
				wfiles[p] = ie
				continue
			}
			wfiles[p] = gitbackend.TreeFile{Delete: true}
			continue
		}
		data = s.eol.ToGit(p, data)
		// W is the index updated from the worktree (update-index --add):
		// without core.filemode a path the index lacks is 100644.
		idxMode := filemode.Empty
		if ie, inIndex := files[p]; inIndex {
			idxMode = ie.Mode
		}
		mode = s.cfg.worktreeMode(mode, idxMode)
		h, err := gitbackend.StoreBlob(s.r.Storer, data)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		wfiles[p] = gitbackend.TreeFile{Mode: mode, Hash: h}
	}
	return gitbackend.WriteTree(s.r.Storer, hc.TreeHash, wfiles)
}

// headHasEntry reports whether commit c's tree holds p as a file, a link
// or a gitlink (not a directory).
func headHasEntry(st storer.EncodedObjectStorer, c *object.Commit, p string) bool {
	t, err := c.Tree()
	if err != nil {
		return false
	}
	e := findEntry(st, t, p)
	return e != nil && e.Mode != filemode.Dir
}

// untrackedCommit is U: the untracked files, no parent. git 2.39's
// do_create_stash saves U with -u whatever it holds (an empty tree when
// nothing is untracked).
func (s *stasher) untrackedCommit(w *git.Worktree, untracked []string, ref string, sig, committer object.Signature) (plumbing.Hash, error) {
	ufiles := map[string]gitbackend.TreeFile{}
	for _, p := range untracked {
		data, mode, err := readWorktree(w.Filesystem, p)
		if err != nil {
			continue
		}
		data = s.eol.ToGit(p, data)
		mode = s.cfg.worktreeMode(mode, 0)
		h, err := gitbackend.StoreBlob(s.r.Storer, data)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		ufiles[p] = gitbackend.TreeFile{Mode: mode, Hash: h}
	}
	uTree, err := gitbackend.WriteTree(s.r.Storer, plumbing.ZeroHash, ufiles)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return s.commit(uTree, nil, "untracked files on "+ref+"\n", sig, committer)
}

// store is git stash store: update_ref with a log forced (the stash
// always has one), the entry appended.
func (s *stasher) store(ctx context.Context, wCommit plumbing.Hash, msg string, committer object.Signature) error {
	dg, err := s.dotgit()
	if err != nil {
		return err
	}
	old := plumbing.ZeroHash
	if ref, err := s.r.Storer.Reference(stashRef); err == nil {
		old = ref.Hash()
	}
	if err := beforeChange(ctx); err != nil {
		return err
	}
	e := reflog.Entry{Old: old, New: wCommit, Who: reflog.Ident(committer.Name, committer.Email, committer.When), Message: msg}
	if err := reflog.Append(dg, stashRef, e, true); err != nil {
		return err
	}
	return s.r.Storer.SetReference(plumbing.NewHashReference(stashRef, wCommit))
}

// resetPushed ends a push once the stash is stored: the stashed paths
// reset to HEAD (git's reset --hard) and, with -u, the saved untracked
// files cleaned (git clean -d). wd is the directory the call runs in.
func (s *stasher) resetPushed(ctx context.Context, w *git.Worktree, hc *object.Commit, ch *pushedChanges, flagged map[string]bool, withUntracked bool, wd string) error {
	// cleanUntracked is the stash's git clean: the untracked files it
	// saved go (with -u).
	// resetDone: the reset ran, so the paths it restored stay.
	cleanUntracked := func(resetDone bool) {
		if !withUntracked {
			return
		}
		// git's clean runs before the reset, on the index as it was: it
		// does not go into a directory where that index has a file, so
		// the untracked files in it, saved in U, stay.
		indexFile := map[string]bool{}
		for _, e := range ch.idx.Entries {
			indexFile[e.Name] = true
		}
		underIndexFile := func(p string) bool {
			for i := strings.IndexByte(p, '/'); i >= 0; {
				if indexFile[p[:i]] {
					return true
				}
				j := strings.IndexByte(p[i+1:], '/')
				if j < 0 {
					break
				}
				i += 1 + j
			}
			return false
		}
		for _, p := range ch.untracked {
			if (!resetDone || !ch.restored[p]) && !underIndexFile(p) {
				_ = w.Filesystem.Remove(p)
			}
		}
		// git stash -u ends with git clean -d: directories left empty, and
		// those that were empty already, go too.
		keep := map[string]bool{}
		if idx, err := s.r.Storer.Index(); err == nil {
			for _, e := range idx.Entries {
				if e.Mode == filemode.Submodule {
					keep[e.Name] = true // a submodule's directory is tracked
				}
			}
		}
		// The reset may have taken the directory the call runs in; the
		// clean spares it (git clean keeps the startup cwd).
		spare := ""
		if info, err := w.Filesystem.Lstat(wd); wd != "" && err == nil && info.IsDir() {
			spare = wd
		}
		// With no reset after it, only the clean's removals happened: a
		// directory holding entries of the index is not untracked to git
		// clean -d, and stays even when empty (its files deleted).
		var holds map[string]bool
		if !resetDone {
			holds = map[string]bool{}
			for _, e := range ch.idx.Entries {
				for d := path.Dir(e.Name); d != "." && !holds[d]; d = path.Dir(d) {
					holds[d] = true
				}
			}
		}
		removeEmptyDirs(w.Filesystem, "", keep, holds, spare)
	}
	// The final reset --hard checks a skip-worktree or assume-unchanged
	// entry it changes (the index's differs from HEAD's), whatever the
	// flag (verify_uptodate): one whose stat data are not the entry's
	// stops it, the stash saved.
	if ht, err := hc.Tree(); err == nil {
		for _, e := range ch.idx.Entries {
			if !e.SkipWorktree && !flagged[e.Name] {
				continue
			}
			if he := findEntry(s.r.Storer, ht, e.Name); he != nil && he.Hash == e.Hash && he.Mode == e.Mode {
				continue
			}
			if !flaggedUptodate(w.Filesystem, s.cfg, e, ch.idx.ModTime, s.eol.ToGit) {
				cleanUntracked(false) // git's clean ran before the reset stopped
				return errNotUptodate(e.Name)
			}
		}
	}
	// Reset the stashed paths to HEAD and remove stashed untracked files.
	if err := gitbackend.ApplyPathsSmudged(s.r.Storer, w.Filesystem, hc.TreeHash, ch.tracked, s.eol.ToWorktree); err != nil {
		return err
	}
	// The internal "reset --hard" ends a merge in progress, and runs
	// in a child git whose removals do not spare the directory stash was
	// started in.
	clearMergeState(s.r)
	mayRemoveCwd(ctx)
	if _, detached := currentBranch(s.r); !detached {
		// The reset logs HEAD's move to itself (a detached HEAD's is not
		// logged).
		s.d.reflogs(s.r).log(plumbing.HEAD, hc.Hash, hc.Hash, "reset: moving to HEAD")
	}
	cleanUntracked(true)
	return nil
}

// errNotUptodate is stash push stopped by an index entry its reset may
// not overwrite.
func errNotUptodate(p string) error {
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: "error: Entry '" + p + "' not uptodate. Cannot merge.\nCannot save the current worktree state"}
}

// commit writes one of the stash's commits with git's identities
// (commit_tree: the author's and the committer's, each from its own
// GIT_*_NAME/EMAIL/DATE). Unsigned, whatever the signing key: git's
// stash never signs its commits (they stay local, and a signature would
// make their hashes differ from git's).
func (s *stasher) commit(tree plumbing.Hash, parents []plumbing.Hash, msg string, author, committer object.Signature) (plumbing.Hash, error) {
	c := &object.Commit{Author: author, Committer: committer, Message: msg, TreeHash: tree, ParentHashes: parents}
	return gitbackend.EncodeCommit(s.r.Storer, c, nil)
}

func (s *stasher) list() (string, error) {
	es, err := s.entries()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, e := range es {
		fmt.Fprintf(&b, "stash@{%d}: %s\n", i, e.Message)
	}
	return b.String(), nil
}

// stashTrees are the two trees of a stash: its base (W's first parent,
// the HEAD it was made on) and W, the worktree it saved.
type stashTrees struct {
	base, saved map[string]side
	same        bool // one tree: a stash of untracked files only
}

// stashFiles reads the files of stash commit w's base and W. A stash
// whose commits or trees cannot be read is an error, not an empty stash.
func (s *stasher) stashFiles(w plumbing.Hash) (stashTrees, error) {
	var st stashTrees
	wc, err := object.GetCommit(s.r.Storer, w)
	if err != nil {
		return st, fmt.Errorf("stash %s: %w", w, err)
	}
	bc, err := wc.Parent(0)
	if err != nil {
		return st, fmt.Errorf("stash %s: base: %w", w, err)
	}
	read := func(c *object.Commit) (map[string]side, error) {
		t, err := c.Tree()
		if err != nil {
			return nil, fmt.Errorf("stash %s: tree of %s: %w", w, c.Hash, err)
		}
		files, err := treeFiles(s.r, t)
		if err != nil {
			return nil, fmt.Errorf("stash %s: tree of %s: %w", w, c.Hash, err)
		}
		return files, nil
	}
	if st.base, err = read(bc); err != nil {
		return st, err
	}
	if st.saved, err = read(wc); err != nil {
		return st, err
	}
	st.same = bc.TreeHash == wc.TreeHash
	return st, nil
}

func (s *stasher) show(n int, wd string) (string, error) {
	e, _, err := s.entry(n)
	if err != nil {
		return "", err
	}
	st, err := s.stashFiles(e.New)
	if err != nil {
		return "", err
	}
	from, to := st.base, st.saved
	// git stash show is git diff --stat of the stash: renames as
	// diff.renames finds them, diff.relative from where it runs.
	po := s.cfg.patch(diffTrees)
	// A diff of two trees reads the worktree's attributes, as git diff
	// does: a diff driver whose diff.<driver>.binary is set makes a file
	// binary ("Bin 360 -> 361 bytes").
	po.attr = loadAttributes(s.r, false)
	// diff.statGraphWidth is read only where --stat is given (its option
	// asks for the configured width); stash show sets the stat format
	// itself, so git ignores the setting there.
	po.statGraphWidth = 0
	var b strings.Builder
	writeStat(&b, s.cfg.relativize(po.detectRenames(diffSides(from, to, s.cfg.relativeMatch(wd, nil))), wd), po)
	return b.String(), nil
}

// apply merges stash n into the index's tree as git 2.39 does
// (do_apply_stash with merge-ort): a clean merge is written to the
// worktree with only new files staged; a merge with conflicts leaves
// conflict markers in the worktree, the cleanly merged paths staged and
// the conflicted ones as stages 1-3 in the index, prints the merge's
// messages and git status, and fails (exit 1) keeping the stash. A path
// the merge changes must be unchanged in the worktree, or the stash is
// not applied at all. The stash's untracked files are restored in every
// case.
func (s *stasher) apply(ctx context.Context, n int, pop bool, wd string) (string, error) {
	e, es, err := s.entry(n)
	if err != nil {
		return "", err
	}
	w, err := s.wt()
	if err != nil {
		return "", err
	}
	wc, err := object.GetCommit(s.r.Storer, e.New)
	if err != nil {
		return "", err
	}
	trees, err := s.stashFiles(e.New)
	if err != nil {
		return "", err
	}
	ours, conflictStages, err := stagedIndexFiles(s.r)
	if err != nil {
		return "", err
	}
	if len(conflictStages) > 0 {
		return "", &tools.Error{Kind: tools.KindConflict, Message: "error: cannot apply a stash in the middle of a merge"}
	}
	// The index's tree lacks the entries added with intent to add (git
	// add -N; cache-tree skips them), so the merge's checkout removes
	// them: below, one whose file has content is a local change.
	ita := map[string]side{}
	for p, o := range ours {
		if o.ita {
			ita[p] = o
			delete(ours, p)
		}
	}
	kept := ""
	if pop {
		kept = "The stash entry is kept in case you need it again.\n"
	}
	mres, err := s.mergeStash(ctx, trees, ours)
	if err != nil {
		return "", err
	}
	if mres.unsupported != "" {
		return "", &tools.Error{Kind: tools.KindConflict, Message: "git_stash does not rebuild this merge (" + mres.unsupported +
			"); nothing was changed and the stash is kept. Apply it with the git CLI.",
			Details: map[string]any{"unsupported": mres.unsupported}}
	}
	writes, dirty, untrackedInWay := s.mergeWrites(w, mres, ours, ita)
	untracked, err := s.stashedUntracked(wc)
	if err != nil {
		return "", err
	}
	if err := beforeChange(ctx); err != nil {
		return "", err
	}
	// git 2.39 merges first (refusing as a whole when a path it changes
	// is dirty), then restores the untracked files whatever the merge
	// did, with the attributes the worktree has by then; an untracked file
	// already there fails that restore but not the others.
	refused := len(dirty)+len(untrackedInWay) > 0
	var conflicted []string
	if !refused {
		if conflicted, err = s.writeMerge(w, mres, ours, writes); err != nil {
			return "", err
		}
	}
	inTheWay, fatalDir, err := s.restoreUntracked(w, untracked)
	if err != nil {
		return "", err
	}
	// git runs git status after the apply and ignores how it ends: a
	// status that stops (a symbolic link in a gitlink's place) prints
	// nothing and the apply stands.
	st, err := status(s.r, s.cfg, wd, statusArgs{Porcelain: false, Untracked: true}, nil)
	if err != nil {
		st = ""
	}
	var restoreErr string
	if len(inTheWay) > 0 || fatalDir != "" {
		var b strings.Builder
		for _, p := range inTheWay {
			b.WriteString(p + " already exists, no checkout\n")
		}
		if fatalDir != "" {
			b.WriteString("fatal: cannot create directory at '" + fatalDir + "': File exists\n")
		}
		b.WriteString("error: could not restore untracked files from stash\n")
		restoreErr = b.String()
	}
	if refused {
		msg := unpackMessage(
			unpackProblem{dirty, "Your local changes to the following files would be overwritten by merge:", "Please commit your changes or stash them before you merge."},
			unpackProblem{untrackedInWay, "The following untracked working tree files would be overwritten by merge:", "Please move or remove them before you merge."}) + "\n"
		all := append(append([]string{}, dirty...), untrackedInWay...)
		sort.Strings(all)
		return "", &tools.Error{Kind: tools.KindConflict, Message: strings.TrimSuffix(msg+restoreErr+kept, "\n"),
			Details: map[string]any{"paths": all}}
	}
	msgs := mres.output()
	if !mres.clean {
		// git prints the merge's messages and git status, and exits 1.
		return "", &tools.Error{Kind: tools.KindConflict, Message: strings.TrimSuffix(msgs+restoreErr+st+kept, "\n"),
			Details: map[string]any{"paths": conflicted}}
	}
	if restoreErr != "" {
		paths := inTheWay
		if fatalDir != "" {
			paths = append(paths, fatalDir)
		}
		return "", &tools.Error{Kind: tools.KindConflict, Message: strings.TrimSuffix(msgs+restoreErr+kept, "\n"), Details: map[string]any{"paths": paths}}
	}
	out := msgs + st
	if pop {
		rest := slices.Delete(slices.Clone(es), n, n+1)
		if err := s.writeEntries(rest); err != nil {
			return "", err
		}
		out += fmt.Sprintf("Dropped refs/stash@{%d} (%s)\n", n, e.New)
	}
	return out, nil
}

// mergeStash merges the stash's saved tree into ours (the index) from
// its base, as do_apply_stash's merge_ort_nonrecursive does, with
// merge.conflictStyle and the merge drivers configured.
func (s *stasher) mergeStash(ctx context.Context, trees stashTrees, ours map[string]side) (*ortMerge, error) {
	style := xdiff.StyleMerge
	switch strings.ToLower(s.cfg.orDefault().conf.String("merge.conflictStyle", "merge")) {
	case "diff3":
		style = xdiff.StyleDiff3
	case "zdiff3":
		style = xdiff.StyleZealousDiff3
	}
	conf := s.cfg.orDefault().conf
	mres, err := ortMergeTrees(ctx, trees.base, ours, trees.saved, ortOptions{
		ancestor: "Stash base", branch1: "Updated upstream", branch2: "Stashed changes", style: style,
		attrs:      loadAttributes(s.r, false),
		userDriver: func(name string) bool { return conf.String("merge."+name+".driver", "") != "" },
	})
	if err != nil {
		return nil, err
	}
	if trees.same {
		// merge_ort_nonrecursive: nothing to merge (a stash of untracked
		// files only).
		mres = &ortMerge{entries: map[string]*ortEntry{}, msgs: map[string][]string{"": {"Already up to date."}}, clean: true}
	}
	return mres, nil
}

// mergeWrites lists the paths whose result is not the index's version:
// the merge's checkout writes them, so each must be unchanged in the
// worktree (or missing; else it is dirty), and one the index lacks must
// not be there at all (untrackedInWay). ita are the index's entries added
// with intent to add.
func (s *stasher) mergeWrites(w *git.Worktree, mres *ortMerge, ours, ita map[string]side) (writes []mergeWrite, dirty, untrackedInWay []string) {
	var flaggedAt map[string]*index.Entry
	var indexTime time.Time
	flaggedEntry := func(p string) *index.Entry {
		if flaggedAt == nil {
			flaggedAt = map[string]*index.Entry{}
			if idx, err := s.r.Storer.Index(); err == nil {
				indexTime = idx.ModTime
				for _, e := range idx.Entries {
					if e.Stage == 0 {
						flaggedAt[e.Name] = e
					}
				}
			}
		}
		return flaggedAt[p]
	}
	for p, en := range mres.entries {
		o, inO := ours[p]
		if sameVersion(o, inO, en.result, en.resultOK) {
			continue
		}
		if inO && o.mode == filemode.Submodule {
			// A gitlink is never out of date, whatever stands at its
			// place (verify_uptodate_1).
		} else if inO && o.skip && flaggedEntry(p) != nil {
			// git's refresh before the merge skips a skip-worktree or
			// assume-unchanged entry, and verify_uptodate_1 judges it by
			// its stat data alone (ie_match_stat): one git smudged (size 0
			// after a racily clean write) is a local change whatever the
			// file holds.
			if !flaggedUptodate(w.Filesystem, s.cfg, flaggedEntry(p), indexTime, s.eol.ToGit) {
				dirty = append(dirty, p)
				continue
			}
		} else if cur, mode, err := readWorktree(w.Filesystem, p); err == nil {
			if !inO {
				untrackedInWay = append(untrackedInWay, p)
				continue
			}
			cur = s.eol.ToGit(p, cur)
			if blobHash(cur) != o.hash || s.cfg.worktreeMode(mode, o.mode) != o.mode {
				dirty = append(dirty, p)
				continue
			}
		} else if info, lerr := w.Filesystem.Lstat(p); lerr == nil && info.IsDir() && en.resultOK && holdsFiles(w.Filesystem, p) {
			// A directory with files where the result goes. An empty
			// one is absent to git's checks (verify_clean_subdirectory
			// finds nothing in it) and the checkout replaces it.
			dirty = append(dirty, p)
			continue
		}
		writes = append(writes, mergeWrite{path: p, res: en.result, del: !en.resultOK})
	}
	for p := range ita {
		if _, ok := mres.entries[p]; ok {
			continue
		}
		// An intent-to-add entry is never up to date (ie_match_stat).
		dirty = append(dirty, p)
	}
	return writes, dirty, untrackedInWay
}

// holdsFiles reports whether directory dir has anything but directories
// in it, at any depth (an unreadable one counts as holding some).
func holdsFiles(fsys billy.Filesystem, dir string) bool {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return true
	}
	for _, e := range entries {
		if !e.IsDir() || holdsFiles(fsys, path.Join(dir, e.Name())) {
			return true
		}
	}
	return false
}

// stashedUntracked are the files of the stash's U commit (none without
// one).
func (s *stasher) stashedUntracked(wc *object.Commit) ([]*object.File, error) {
	var untracked []*object.File
	if wc.NumParents() > 2 {
		if uc, err := wc.Parent(2); err == nil {
			ut, err := uc.Tree()
			if err != nil {
				return nil, err
			}
			// Every name git stored (tree.Files would stop at the first
			// one go-git's path check refuses, and the stash would be
			// dropped without it).
			wk := object.NewTreeWalker(ut, true, nil)
			wk.SkipPathValidation()
			for {
				name, e, err := wk.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					wk.Close()
					return nil, err
				}
				if e.Mode == filemode.Dir {
					continue
				}
				blob, err := object.GetBlob(s.r.Storer, e.Hash)
				if err != nil {
					wk.Close()
					return nil, err
				}
				untracked = append(untracked, object.NewFile(name, e.Mode, blob))
			}
			wk.Close()
		}
	}
	return untracked, nil
}

// restoreUntracked writes the stash's untracked files as git's
// checkout-index --all writes U's entries, in index order: one whose file
// exists is skipped ("already exists, no checkout": inTheWay), one whose
// directory cannot be made (a file stands at it: fatalDir) stops the rest
// (create_directories dies).
func (s *stasher) restoreUntracked(w *git.Worktree, untracked []*object.File) (inTheWay []string, fatalDir string, err error) {
	if len(untracked) == 0 {
		return nil, "", nil
	}
	sort.SliceStable(untracked, func(i, j int) bool { return untracked[i].Name < untracked[j].Name })
	eol := newEOLConverter(s.r, s.cfg)
	for _, f := range untracked {
		if d := blockedDir(w.Filesystem, f.Name); d != "" {
			fatalDir = d
			break
		}
		if _, err := w.Filesystem.Lstat(f.Name); err == nil {
			inTheWay = append(inTheWay, f.Name)
			continue
		}
		content, err := f.Contents()
		if err != nil {
			return nil, "", err
		}
		data := []byte(content)
		if f.Mode != filemode.Symlink {
			data = eol.ToWorktree(f.Name, data)
		}
		if err := gitbackend.WriteWorktreeFile(w.Filesystem, f.Name, f.Mode, data); err != nil {
			return nil, "", err
		}
	}
	return inTheWay, fatalDir, nil
}

// mergeWrite is a path the merge changes: its result, or a deletion.
type mergeWrite struct {
	path string
	res  side
	del  bool
}

// writeMerge writes a merge's result: the changed paths to the worktree
// (as checked out), then the index. A clean merge leaves the index as it
// was but for paths it did not have (unstage_changes_unless_new); with
// conflicts, every changed path is staged at its result and each
// conflicted path holds its stages instead (record_conflicted_index_entries).
// It returns the conflicted paths.
func (s *stasher) writeMerge(w *git.Worktree, mres *ortMerge, ours map[string]side, writes []mergeWrite) ([]string, error) {
	sort.Slice(writes, func(i, j int) bool { return writes[i].path < writes[j].path })
	eol := newEOLConverter(s.r, s.cfg) // read as the merge writes .gitattributes
	for _, wr := range writes {
		if wr.del {
			// unlink_entry: a file already gone counts as removed
			// (unlink_or_warn takes ENOENT for success), and the
			// directories left empty go too.
			if err := w.Filesystem.Remove(wr.path); err == nil || errors.Is(err, fs.ErrNotExist) {
				for d := path.Dir(wr.path); d != "." && d != "/"; d = path.Dir(d) {
					if w.Filesystem.Remove(d) != nil {
						break
					}
				}
			}
			continue
		}
		if wr.res.mode == filemode.Submodule {
			// A gitlink is checked out as an empty directory for the
			// submodule (what stood there goes).
			if err := gitbackend.WriteWorktreeFile(w.Filesystem, wr.path, wr.res.mode, nil); err != nil {
				return nil, err
			}
			continue
		}
		data, err := wr.res.load()
		if err != nil {
			return nil, err
		}
		if wr.res.mode != filemode.Symlink {
			if _, err := gitbackend.StoreBlob(s.r.Storer, data); err != nil {
				return nil, err
			}
			data = eol.ToWorktree(wr.path, data)
		}
		if err := gitbackend.WriteWorktreeFile(w.Filesystem, wr.path, wr.res.mode, data); err != nil {
			return nil, err
		}
	}
	idx, err := s.r.Storer.Index()
	if err != nil {
		return nil, err
	}
	byPath := map[string]*index.Entry{}
	for _, e := range idx.Entries {
		byPath[e.Name] = e
	}
	entry := func(p string, v side) *index.Entry {
		e := &index.Entry{Name: p, Mode: v.mode, Hash: v.hash}
		if info, err := w.Filesystem.Lstat(p); err == nil && !info.IsDir() {
			e.ModifiedAt, e.CreatedAt = info.ModTime(), info.ModTime()
			e.Size = uint32(info.Size())
		}
		return e
	}
	var conflicted []string
	var extra []*index.Entry
	for _, wr := range writes {
		_, inO := ours[wr.path]
		if mres.clean && inO {
			continue // unstaged again
		}
		if wr.del {
			delete(byPath, wr.path)
			continue
		}
		byPath[wr.path] = entry(wr.path, wr.res)
	}
	for p, en := range mres.entries {
		if !en.conflicts {
			continue
		}
		conflicted = append(conflicted, p)
		delete(byPath, p)
		for i := 0; i < 3; i++ {
			if en.has[i] && s.r.Storer.HasEncodedObject(en.st[i].hash) != nil {
				// A merged version (a rename's, before its add/add).
				data, err := en.st[i].load()
				if err != nil {
					return nil, err
				}
				if _, err := gitbackend.StoreBlob(s.r.Storer, data); err != nil {
					return nil, err
				}
			}
			if en.has[i] {
				extra = append(extra, &index.Entry{Name: p, Mode: en.st[i].mode, Hash: en.st[i].hash, Stage: index.Stage(i + 1)})
			}
		}
	}
	entries := make([]*index.Entry, 0, len(byPath)+len(extra))
	for _, e := range byPath {
		entries = append(entries, e)
	}
	entries = append(entries, extra...)
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].Name != entries[j].Name {
			return entries[i].Name < entries[j].Name
		}
		return entries[i].Stage < entries[j].Stage
	})
	idx.Entries = entries
	idx.Cache = nil
	if err := s.r.Storer.SetIndex(idx); err != nil {
		return nil, err
	}
	sort.Strings(conflicted)
	return conflicted, nil
}

func (s *stasher) drop(n int) (string, error) {
	e, es, err := s.entry(n)
	if err != nil {
		return "", err
	}
	rest := slices.Delete(slices.Clone(es), n, n+1)
	if err := s.writeEntries(rest); err != nil {
		return "", err
	}
	return fmt.Sprintf("Dropped refs/stash@{%d} (%s)\n", n, e.New), nil
}

func (s *stasher) clear() (string, error) {
	return "", s.writeEntries(nil)
}

// removeEmptyDirs removes every directory below dir that holds no file,
// deepest first (never .git nor a directory in keep, and not one in
// holds nor spare, though they are emptied); it reports whether dir
// itself is now empty.
func removeEmptyDirs(fsys billy.Filesystem, dir string, keep, holds map[string]bool, spare string) bool {
	list := dir
	if list == "" {
		list = "."
	}
	es, err := fsys.ReadDir(list)
	if err != nil {
		return false
	}
	empty := true
	for _, e := range es {
		p := path.Join(dir, e.Name())
		if dir == "" && e.Name() == ".git" {
			empty = false
			continue
		}
		if e.IsDir() && !keep[p] && removeEmptyDirs(fsys, p, keep, holds, spare) && p != spare && !holds[p] && fsys.Remove(p) == nil {
			continue
		}
		empty = false
	}
	return empty
}

// emptyBlob is the object id of the empty file.
var emptyBlob = plumbing.NewHash("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")

// renamedBetween pairs the paths tree a (the merge base) lost with those
// b (one side) gained, as merge-ort's detect_regular_renames does: source
// path → new path. Beyond exact renames, only the sources merge-ort finds
// relevant are looked for (relevant_sources: a source the other side
// changed or deleted too; one it left as it was is a plain deletion
// whatever it became), so that those do not take the destinations the
// relevant ones would pair with.
func renamedBetween(a, b, other map[string]side) map[string]string {
	var changes []*change
	for p, x := range a {
		if _, ok := b[p]; !ok {
			changes = append(changes, &change{path: p, oldMode: x.mode, oldHash: x.hash, oldLoaded: x.load})
		}
	}
	for p, x := range b {
		// merge-ort detects renames with rename_empty off: an empty
		// file is never a rename's destination.
		if _, ok := a[p]; !ok && x.hash != emptyBlob {
			changes = append(changes, &change{path: p, newMode: x.mode, newHash: x.hash, newLoad: x.load})
		}
	}
	out := map[string]string{}
	if len(changes) < 2 {
		return out
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].path < changes[j].path })
	relevant := func(c *change) bool {
		ov, ok := other[c.path]
		return !sameVersion(a[c.path], true, ov, ok)
	}
	for _, c := range detectRenamesIn(changes, false, relevant, nil) {
		if c.oldPath != "" {
			out[c.oldPath] = c.path
		}
	}
	return out
}

// blockedDir is the first directory above p that cannot be made because
// something other than a directory stands there ("" when none does).
func blockedDir(fsys billy.Filesystem, p string) string {
	for i := strings.IndexByte(p, '/'); i > 0; i = nextSlash(p, i) {
		if info, err := fsys.Lstat(p[:i]); err == nil && !info.IsDir() {
			return p[:i]
		}
	}
	return ""
}

// beyondSymlink reports whether a directory above p in the worktree is a
// symbolic link (git's has_symlink_leading_path): p is then no file of
// the worktree's, whatever the link points at.
func beyondSymlink(fsys billy.Filesystem, p string) bool {
	for i := strings.IndexByte(p, '/'); i >= 0; {
		if info, err := fsys.Lstat(p[:i]); err == nil && info.Mode()&os.ModeSymlink != 0 {
			return true
		} else if err != nil {
			return false
		}
		j := strings.IndexByte(p[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}
