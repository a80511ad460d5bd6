package gittools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/pathspec"
	"github.com/tgp-go/tgp/internal/revparse"
	"github.com/tgp-go/tgp/tools"
)

type checkoutArgs struct {
	Branch       string   `json:"branch,omitempty" jsonschema:"Switch to existing branch"`
	CreateBranch string   `json:"create_branch,omitempty" jsonschema:"Create and switch to new branch (-b)"`
	Commit       string   `json:"commit,omitempty" jsonschema:"Checkout specific commit (detached HEAD)"`
	Paths        []string `json:"paths,omitempty" jsonschema:"Restore files from the index, or from commit when given"`
	TimeoutMS    int      `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir   string   `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func checkoutTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[checkoutArgs]{
		Name:  "git_checkout",
		Facts: tools.Facts{Persists: true},
		Description: "Switch branches (branch, create_branch = -b, commit = detached HEAD) carrying compatible local changes over, " +
			"or restore paths from the index (or from commit).",
		Annotations: tools.Annotations{Risk: tools.RiskMedium},
		Risk: func(a checkoutArgs) tools.Risk {
			if len(a.Paths) > 0 {
				return tools.RiskHigh // discards worktree changes to those paths
			}
			return tools.RiskMedium
		},
		Summary: func(a checkoutArgs) string {
			switch {
			case len(a.Paths) > 0:
				return fmt.Sprintf("Restore %d path(s)", len(a.Paths))
			case a.CreateBranch != "":
				return "Create and switch to branch " + a.CreateBranch
			case a.Branch != "":
				return "Switch to branch " + a.Branch
			}
			return "Checkout commit " + a.Commit
		},
		Validate: func(a checkoutArgs) error {
			if a.Branch == "" && a.CreateBranch == "" && a.Commit == "" && len(a.Paths) == 0 {
				return tools.BadArg("branch", "At least one of branch, create_branch, commit, or paths must be specified")
			}
			if a.Branch != "" && a.CreateBranch != "" {
				return tools.BadArg("branch", "branch and create_branch are mutually exclusive")
			}
			for _, f := range []struct{ n, v string }{{"branch", a.Branch}, {"commit_ref", a.Commit}} {
				if f.v != "" {
					if err := checkArg(f.n, f.v); err != nil {
						return err
					}
				}
			}
			if a.CreateBranch != "" {
				if err := CheckRefFormat(a.CreateBranch); err != nil {
					return tools.BadArg("create_branch", "%v", err)
				}
			}
			for _, p := range a.Paths {
				if err := checkArg("paths", p); err != nil {
					return err
				}
			}
			return nil
		},
		Run: func(ctx context.Context, a checkoutArgs) (tools.Result, error) {
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, 0, func(ctx context.Context, r *git.Repository) (string, error) {
				fromDesc, fromHash := headDesc(r)
				var out string
				run := func() (err error) {
					out, err = checkout(ctx, r, d.settings(r), d.relDir(a.WorkingDir), a)
					return err
				}
				var err error
				if len(a.Paths) == 0 {
					// A switch is unpack_trees: git's new index keeps no
					// resolve-undo records.
					err = gitbackend.WithoutResolveUndo(r.Storer, run)
				} else {
					err = run()
				}
				if err == nil && len(a.Paths) == 0 {
					logSwitch(r, d.reflogs(r), a, fromDesc, fromHash)
				}
				return out, err
			})
		},
	})
}

func checkout(ctx context.Context, r *git.Repository, s *settings, wd string, a checkoutArgs) (string, error) {
	w, err := worktreeOf(r)
	if err != nil {
		return "", err
	}
	if len(a.Paths) > 0 {
		return checkoutPaths(ctx, r, s, w, wd, a)
	}
	head, _ := r.Head()
	var target plumbing.Hash
	switch {
	case a.CreateBranch != "":
		if _, err := r.Storer.Reference(plumbing.NewBranchReferenceName(a.CreateBranch)); err == nil {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: a branch named '%s' already exists", a.CreateBranch)}
		}
		from := a.Commit
		if from == "" {
			if head == nil {
				// An unborn branch: HEAD moves to the new name, which
				// stays unborn (switch_unborn_to_new_branch).
				name := plumbing.NewBranchReferenceName(a.CreateBranch)
				if err := beforeChange(ctx); err != nil {
					return "", err
				}
				if err := r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, name)); err != nil {
					return "", err
				}
				return fmt.Sprintf("Switched to a new branch '%s'\n", a.CreateBranch), nil
			}
			target = head.Hash()
		} else if mb, ok, err := resolveMergeBaseRev(ctx, r, from); ok {
			if err != nil {
				return "", err
			}
			target = mb
		} else {
			h, err := revparse.Commit(r, from)
			if err != nil {
				return "", unknownRevision(from)
			}
			target = *h
		}
	case a.Branch != "":
		ref, err := r.Storer.Reference(plumbing.NewBranchReferenceName(a.Branch))
		if err != nil {
			return "", &tools.Error{Kind: tools.KindNotFound, Message: fmt.Sprintf("error: pathspec '%s' did not match any file(s) known to git", a.Branch)}
		}
		target = ref.Hash()
	default:
		var o object.Object
		var err error
		if mb, ok, mbErr := resolveMergeBaseRev(ctx, r, a.Commit); ok {
			if mbErr != nil {
				return "", mbErr
			}
			o, err = object.GetCommit(r.Storer, mb)
		} else {
			o, err = revparse.Object(r, a.Commit)
		}
		if err != nil {
			return "", unknownRevision(a.Commit)
		}
		if tag, ok := o.(*object.Tag); ok {
			if o, err = tag.Object(); err != nil {
				return "", unknownRevision(a.Commit)
			}
		}
		c, ok := o.(*object.Commit)
		if !ok {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: Cannot switch branch to a non-commit '%s'", a.Commit)}
		}
		target = c.Hash
	}
	// git merges the index into the new tree (unpack_trees), which an
	// unmerged index refuses. Only "-b <new>" from HEAD, not quiet (as
	// the tool is), skips the merge in git 2.39: index and worktree are
	// left as they are, unwritten (resolve-undo records kept, a checkout
	// never made stays unmade).
	if !(a.CreateBranch != "" && a.Commit == "") {
		if um := indexUnmerged(r); len(um) > 0 {
			return "", needsMerge("error: you need to resolve your current index first", um)
		}
		if err := switchTree(ctx, r, s, w, wd, head, target); err != nil {
			return "", err
		}
	} else if err := beforeChange(ctx); err != nil {
		return "", err
	}
	// A switch ends a merge in progress (remove_branch_state).
	clearMergeState(r)
	switch {
	case a.CreateBranch != "":
		name := plumbing.NewBranchReferenceName(a.CreateBranch)
		// git finds the name taken by a ref above or below it only when
		// it makes the branch, after the switch (update_refs_for_switch):
		// the worktree and index have moved, HEAD has not.
		if err := refAvailable(r, name, ""); err != nil {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: cannot lock ref '%s': %v", name, err)}
		}
		if err := r.Storer.SetReference(plumbing.NewHashReference(name, target)); err != nil {
			return "", err
		}
		if err := r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, name)); err != nil {
			return "", err
		}
		return fmt.Sprintf("Switched to a new branch '%s'\n", a.CreateBranch), nil
	case a.Branch != "":
		cur, det := currentBranch(r)
		if err := r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(a.Branch))); err != nil {
			return "", err
		}
		if !det && cur == a.Branch {
			return fmt.Sprintf("Already on '%s'\n", a.Branch), nil
		}
		return fmt.Sprintf("Switched to branch '%s'\n", a.Branch), nil
	}
	if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, target)); err != nil {
		return "", err
	}
	c, _ := object.GetCommit(r.Storer, target)
	ab := newAbbrever(r)
	defer ab.Close()
	return fmt.Sprintf("Note: switching to '%s'.\n\n"+
		"You are in 'detached HEAD' state. You can look around, make experimental\n"+
		"changes and commit them, and you can discard any commits you make in this\n"+
		"state without impacting any branches by switching back to a branch.\n\n"+
		"If you want to create a new branch to retain commits you create, you may\n"+
		"do so (now or later) by using -c with the switch command. Example:\n\n"+
		"  git switch -c <new-branch-name>\n\n"+
		"Or undo this operation with:\n\n"+
		"  git switch -\n\n"+
		"Turn off this advice by setting config variable advice.detachedHead to false\n\n"+
		"HEAD is now at %s %s\n", a.Commit, ab.Short(target), subject(c.Message)), nil
}

// switchTree moves worktree and index from HEAD to target with git's
// two-way merge (unpack-trees.c twoway_merge): per path, with the index
// entry I, HEAD's entry H and the target's T, the entry is kept when H and
// T agree or I already is T; it becomes T (or goes, if T lacks it) when I
// is H and the worktree file matches I; anything else, a local change in
// the way or an untracked file where T puts one, aborts with git's message
// and nothing is changed.
func switchTree(ctx context.Context, r *git.Repository, s *settings, w *git.Worktree, wd string, head *plumbing.Reference, target plumbing.Hash) error {
	oldFiles, newFiles, err := switchTrees(r, head, target)
	if err != nil {
		return err
	}
	idx, err := indexFiles(r)
	if err != nil {
		return err
	}
	// Untracked files inside a directory that replaced a tracked file
	// count too: git status hides them, but a switch would lose them.
	// Files marked assume-unchanged or skip-worktree are looked at too:
	// the switch's checks ignore both flags (verify_uptodate).
	st, _, ignored, err := scanStatus(r, s, statusScan{untracked: true, underIndexFiles: true, ignored: true, lookAtFlagged: true})
	if err != nil {
		return err
	}
	var exclude []gitignore.Pattern
	if dot, ok := r.Storer.(interface{ Filesystem() billy.Filesystem }); ok {
		exclude = readIgnore(dot.Filesystem(), "info/exclude", nil)
	}
	plan, err := twowayMerge(ctx, w, st, ignored, exclude, idx, oldFiles, newFiles)
	if err != nil {
		return err
	}
	if msg := unpackErrors(plan.dirty, plan.lostDirs, plan.untracked, plan.removed); msg != "" {
		return &tools.Error{Kind: tools.KindConflict, Message: msg}
	}
	// A file to be written where the working directory (or a directory
	// above it) stands: git refuses to remove the directory it runs in.
	if wd != "" {
		for p, f := range plan.files {
			if !f.Delete && (p == wd || strings.HasPrefix(wd, p+"/")) {
				return &tools.Error{Kind: tools.KindConflict, Message: "error: Refusing to remove the current working directory:\n" + wd}
			}
		}
	}
	if err := beforeChange(ctx); err != nil {
		return err
	}
	return gitbackend.ApplyFilesSmudged(r.Storer, w.Filesystem, plan.files, newEOLConverter(r, s).ToWorktree)
}

// switchTrees reads the files of HEAD's tree (none when head is nil: an
// unborn branch) and of target's.
func switchTrees(r *git.Repository, head *plumbing.Reference, target plumbing.Hash) (oldFiles, newFiles map[string]side, err error) {
	if head != nil {
		c, err := object.GetCommit(r.Storer, head.Hash())
		if err != nil {
			return nil, nil, err
		}
		t, err := c.Tree()
		if err != nil {
			return nil, nil, err
		}
		if oldFiles, err = treeFiles(r, t); err != nil {
			return nil, nil, err
		}
	}
	tc, err := object.GetCommit(r.Storer, target)
	if err != nil {
		return nil, nil, err
	}
	tt, err := tc.Tree()
	if err != nil {
		return nil, nil, err
	}
	if newFiles, err = treeFiles(r, tt); err != nil {
		return nil, nil, err
	}
	return oldFiles, newFiles, nil
}

// switchPlan is what a switch writes (files) or why it refuses: local
// changes in the way (dirty), directories of untracked files it would
// lose (lostDirs), untracked files where the target puts a file
// (untracked) or where HEAD had one the switch deletes (removed).
type switchPlan struct {
	files                               map[string]gitbackend.TreeFile
	dirty, lostDirs, untracked, removed []string
}

// twowayMerge decides each path of the index (idx), HEAD's tree
// (oldFiles) and the target's (newFiles) as twoway_merge does, with the
// worktree's status st and its ignored untracked files.
func twowayMerge(ctx context.Context, w *git.Worktree, st git.Status, ignored ignoredPaths, exclude []gitignore.Pattern, idx, oldFiles, newFiles map[string]side) (*switchPlan, error) {
	same := func(a, b side) bool { return a.hash == b.hash && a.mode == b.mode }
	uptodate := func(p string) bool {
		if idx[p].mode == filemode.Submodule {
			// A gitlink is never out of date: a submodule may be out of
			// sync with the index (verify_uptodate_1), whatever is at
			// its place.
			return true
		}
		s, listed := st[p]
		if !listed || s.Worktree == git.Unmodified {
			return true
		}
		if s.Worktree != git.Deleted {
			return false
		}
		// Missing is up to date (git's verify_uptodate takes ENOENT); a
		// directory in the file's place, even an empty one, is not (one
		// holding untracked files is refused as losing them, below).
		info, err := w.Filesystem.Lstat(p)
		return err != nil || !info.IsDir() || idx[p].mode == filemode.Submodule || untrackedUnder(st, p)
	}
	paths := map[string]bool{}
	for _, m := range []map[string]side{oldFiles, newFiles, idx} {
		for p := range m {
			paths[p] = true
		}
	}
	files := map[string]gitbackend.TreeFile{}
	var dirty, untracked, removed, lostDirDeleted, dfDeleted []string
	// Paths the index lacks that the switch deletes (HEAD has them) or
	// writes (the target adds them) and whose place in the worktree has a
	// file or a link for a leading directory: checked once every path is
	// decided (below).
	var beyondRemoved, beyondWritten []string
	leading := leadingNonDir(w.Filesystem)
	// A file the target adds where the worktree has a directory: git's
	// merged_entry checks the place (verify_absent), and
	// verify_clean_subdirectory takes every index entry below it out of
	// the merge, in index order, removed if up to date (a staged change,
	// a gitlink or a new file with it). The first that is not is the one
	// local change reported there: the check stops, and unpack_callback
	// does not go down into the directory, nor are its untracked files
	// looked at (failed).
	cleaned, failed := map[string]bool{}, map[string]bool{}
	for p := range newFiles {
		if _, hasCur := idx[p]; hasCur {
			continue
		}
		if _, hasOld := oldFiles[p]; hasOld || leading(p) != "" || ignored.top[p] {
			continue
		}
		if info, err := w.Filesystem.Lstat(p); err != nil || !info.IsDir() {
			continue
		}
		var below []string
		for q := range idx {
			if strings.HasPrefix(q, p+"/") {
				below = append(below, q)
				cleaned[q] = true
			}
		}
		sort.Strings(below)
		for _, q := range below {
			if !uptodate(q) {
				dirty = append(dirty, q)
				failed[p] = true
				break
			}
			files[q] = gitbackend.TreeFile{Delete: true}
		}
	}
	for p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if cleaned[p] {
			continue
		}
		cur, hasCur := idx[p]
		old, hasOld := oldFiles[p]
		nw, hasNew := newFiles[p]
		switch {
		case hasCur:
			switch {
			case (!hasOld && !hasNew) || (!hasOld && same(cur, nw)) || (hasOld && hasNew && same(old, nw)) || (hasNew && same(cur, nw)):
				// keep the index entry and the worktree as they are
			case hasOld && !hasNew && same(cur, old):
				switch {
				case !uptodate(p):
					dirty = append(dirty, p)
				case untrackedUnder(st, p):
					// The file became a directory of untracked files.
					lostDirDeleted = append(lostDirDeleted, p)
				default:
					// The mode says a gitlink's path goes with rmdir only.
					files[p] = gitbackend.TreeFile{Delete: true, Mode: cur.mode}
				}
			case hasOld && hasNew && same(cur, old):
				if !uptodate(p) {
					dirty = append(dirty, p)
				} else {
					files[p] = gitbackend.TreeFile{Mode: nw.mode, Hash: nw.hash}
				}
			default:
				dirty = append(dirty, p)
			}
		case hasOld && !hasNew:
			// HEAD has it, the index and the target do not: git checks
			// that nothing is in the way (deleted_entry's verify_absent),
			// so an untracked file there is one the switch would lose.
			if leading(p) != "" {
				beyondRemoved = append(beyondRemoved, p)
			} else if s, listed := st[p]; listed && s.Worktree == git.Untracked {
				removed = append(removed, p)
			} else if untrackedUnder(st, p) {
				lostDirDeleted = append(lostDirDeleted, p)
			}
			dfDeleted = append(dfDeleted, p)
		case hasNew:
			if hasOld {
				// The deletion of the path was staged.
				if !same(old, nw) {
					dirty = append(dirty, p)
				}
				continue
			}
			if leading(p) != "" {
				beyondWritten = append(beyondWritten, p)
			} else if s, listed := st[p]; listed && s.Worktree == git.Untracked {
				untracked = append(untracked, p)
				continue
			}
			files[p] = gitbackend.TreeFile{Mode: nw.mode, Hash: nw.hash}
		}
	}
	// verify_absent of a path below a file or a link: git's
	// check_leading_path finds that leading path, and check_ok_to_remove
	// lets it go only when it is ignored or the switch deletes it (its
	// entry is CE_REMOVE in the result); otherwise the leading path is
	// reported, once per path below it, as an untracked file the switch
	// would remove or overwrite, even when the index tracks it.
	// The exclusion is git's is_excluded, which asks the patterns
	// whether or not the path is tracked (a staged link info/exclude
	// names is expendable). Where the leading path's own entry was
	// refused (a local change), git never walks the directory below it
	// (unpack_callback returns before traverse_trees_recursive): those
	// paths are not judged at all.
	refused := map[string]bool{}
	for _, p := range dirty {
		refused[p] = true
	}
	okToRemove := func(lead string) bool {
		if ignored.files[lead] || ignored.top[lead] || excludedPath(w.Filesystem, exclude, lead) {
			return true
		}
		f, decided := files[lead]
		return decided && f.Delete
	}
	for _, p := range beyondRemoved {
		if lead := leading(p); !refused[lead] && !okToRemove(lead) {
			removed = append(removed, lead)
		}
	}
	for _, p := range beyondWritten {
		if lead := leading(p); !refused[lead] && !okToRemove(lead) {
			untracked = append(untracked, lead)
		}
	}
	// A file the switch deletes whose path the index now holds as a
	// directory: git's deleted_entry replaces the entries below it
	// (verify_clean_subdirectory: each must be up to date), so they leave
	// the index and the worktree with it.
	for _, d := range dfDeleted {
		for q := range idx {
			if !strings.HasPrefix(q, d+"/") {
				continue
			}
			if !uptodate(q) {
				dirty = append(dirty, q)
				continue
			}
			files[q] = gitbackend.TreeFile{Delete: true}
		}
	}
	// A file the switch deletes or rewrites that is now a directory holding
	// files: git refuses rather than lose them.
	lostDirs := lostDirDeleted
	for p, f := range files {
		if f.Mode == filemode.Submodule || failed[p] {
			continue
		}
		// Tracked files in it go with the switch (or were refused as local
		// changes) and ignored ones are expendable, as in git's
		// verify_clean_subdirectory: only untracked files are lost.
		if info, err := w.Filesystem.Lstat(p); err == nil && info.IsDir() && untrackedUnder(st, p) {
			lostDirs = append(lostDirs, p)
		}
	}
	return &switchPlan{files: files, dirty: dirty, lostDirs: lostDirs, untracked: untracked, removed: removed}, nil
}

// leadingNonDir returns git's check_leading_path for the worktree: the
// first leading path of p (p itself excluded) that stands there as
// something other than a directory (a file, a link, even one to a
// directory), "" when every leading path is a directory or one is
// missing. What each leading path is, is looked up once.
func leadingNonDir(fsys billy.Filesystem) func(p string) string {
	const isDir, missing, other = 1, 2, 3
	kind := map[string]int{}
	return func(p string) string {
		for i := 0; i < len(p); i++ {
			if p[i] != '/' {
				continue
			}
			lead := p[:i]
			k := kind[lead]
			if k == 0 {
				switch info, err := fsys.Lstat(lead); {
				case err != nil:
					k = missing
				case info.IsDir():
					k = isDir
				default:
					k = other
				}
				kind[lead] = k
			}
			switch k {
			case missing:
				return ""
			case other:
				return lead
			}
		}
		return ""
	}
}

// untrackedUnder says whether dir holds an untracked file that is not
// ignored (git's verify_clean_subdirectory: ignored files are expendable).
func untrackedUnder(st git.Status, dir string) bool {
	prefix := dir + "/"
	for p, s := range st {
		if s.Worktree == git.Untracked && strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// unpackErrors is git's refusal of a branch switch (unpack-trees.c
// display_error_msgs): every kind of problem found, in git's order, each
// with its sorted paths, then one "Aborting".
func unpackErrors(dirty, lostDirs, untracked, removed []string) string {
	return unpackMessage(
		unpackProblem{dirty, "Your local changes to the following files would be overwritten by checkout:", "Please commit your changes or stash them before you switch branches."},
		unpackProblem{lostDirs, "Updating the following directories would lose untracked files in them:", ""},
		unpackProblem{untracked, "The following untracked working tree files would be overwritten by checkout:", "Please move or remove them before you switch branches."},
		unpackProblem{removed, "The following untracked working tree files would be removed by checkout:", "Please move or remove them before you switch branches."})
}

// unpackProblem is one kind of path unpack-trees refuses to touch, with
// git's lines before and after the paths.
type unpackProblem struct {
	paths      []string
	head, tail string
}

// unpackMessage is display_error_msgs: each problem with paths, its paths
// sorted, then "Aborting" ("" when no problem has paths).
func unpackMessage(problems ...unpackProblem) string {
	var b strings.Builder
	for _, e := range problems {
		if len(e.paths) == 0 {
			continue
		}
		sort.Strings(e.paths)
		b.WriteString("error: " + e.head + "\n")
		for _, p := range e.paths {
			b.WriteString("\t" + p + "\n")
		}
		b.WriteString(e.tail + "\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return b.String() + "Aborting"
}

func checkoutPaths(ctx context.Context, r *git.Repository, cfg *settings, w *git.Worktree, wd string, a checkoutArgs) (string, error) {
	if a.Commit == "" {
		if err := restore(ctx, r, cfg, wd, restoreArgs{Paths: a.Paths, Worktree: true}); err != nil {
			return "", err
		}
		return fmt.Sprintf("Updated %d path%s from the index\n", len(a.Paths), plural(len(a.Paths))), nil
	}
	h, err := revparse.Commit(r, a.Commit)
	if mb, ok, mbErr := resolveMergeBaseRev(ctx, r, a.Commit); ok {
		h, err = &mb, mbErr
	}
	if err != nil {
		return "", unknownRevision(a.Commit)
	}
	c, err := object.GetCommit(r.Storer, *h)
	if err != nil {
		return "", unknownRevision(a.Commit)
	}
	ps, err := parsePathspec(wd, a.Paths)
	if err != nil {
		return "", err
	}
	tree, err := c.Tree()
	if err != nil {
		return "", err
	}
	all, err := treeFiles(r, tree)
	if err != nil {
		return "", err
	}
	// Overlay: matching paths of the commit go to index and worktree;
	// nothing is deleted. Every item must match something in the commit.
	// An entry outside the sparse checkout (skip-worktree) that the
	// commit has as it is stays as it is, and no pathspec matches it
	// (read_tree_some keeps such an entry; checkout_paths skips it).
	idx, err := r.Storer.Index()
	if err != nil {
		return "", err
	}
	for _, e := range idx.Entries {
		if s, ok := all[e.Name]; ok && e.SkipWorktree && e.Stage == 0 && s.hash == e.Hash && s.mode == e.Mode {
			delete(all, e.Name)
		}
	}
	files := map[string]gitbackend.TreeFile{}
	for p, s := range all {
		if ps.Match(p) {
			files[p] = gitbackend.TreeFile{Mode: s.mode, Hash: s.hash}
		}
	}
	// git reads the commit's entries the whole pathspec selects
	// (read_tree_some honours exclusions) and marks items on those
	// only: a positive item must match one of them, and an exclusion
	// counts as matched once anything was selected.
	known := map[string]bool{}
	for p := range files {
		known[p] = true
	}
	if err := reportPathError(a.Paths, ps, known); err != nil {
		return "", err
	}
	if err := beforeChange(ctx); err != nil {
		return "", err
	}
	// The commit's entries go into the index; those the index then
	// matches (in order, through git's seen array: indexMatcher) go to
	// the worktree too.
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	im, only := pathspec.NewIndexMatcher(ps), map[string]side{}
	for _, p := range names {
		if !im.Match(p) {
			only[p] = all[p]
			delete(files, p)
		}
	}
	if err := gitbackend.ApplyFilesSmudged(r.Storer, w.Filesystem, files, newEOLConverter(r, cfg).ToWorktree); err != nil {
		return "", err
	}
	if err := setIndexEntries(r, only); err != nil {
		return "", err
	}
	ab := newAbbrever(r)
	defer ab.Close()
	n := len(files) + len(only)
	return fmt.Sprintf("Updated %d path%s from %s\n", n, plural(n), ab.Short(c.Hash)), nil
}

// logSwitch writes the reflog entries of a branch switch: the new
// branch's creation (-b), then HEAD's "checkout: moving from A to B",
// B as the agent named it.
func logSwitch(r *git.Repository, rl *reflogger, a checkoutArgs, fromDesc string, fromHash plumbing.Hash) {
	head, err := r.Head()
	if err != nil || rl == nil {
		return
	}
	to := a.Branch
	switch {
	case a.CreateBranch != "":
		start := a.Commit
		if start == "" {
			start = "HEAD"
		}
		rl.log(plumbing.NewBranchReferenceName(a.CreateBranch), plumbing.ZeroHash, head.Hash(), "branch: Created from "+start)
		to = a.CreateBranch
	case a.Branch == "":
		to = a.Commit
	}
	if _, detached := currentBranch(r); detached && fromDesc == fromHash.String() && head.Hash() == fromHash {
		return // a detached HEAD that did not move: git writes no entry
	}
	rl.log(plumbing.HEAD, fromHash, head.Hash(), "checkout: moving from "+fromDesc+" to "+to)
}

// excludedPath reports whether the exclude patterns (info/exclude) or a
// .gitignore above p name it, as git's is_excluded does for a path in
// the way of a switch, tracked or not.
func excludedPath(fs billy.Filesystem, exclude []gitignore.Pattern, p string) bool {
	ps := append([]gitignore.Pattern(nil), exclude...)
	parts := strings.Split(p, "/")
	for i := 0; i < len(parts); i++ {
		name := ".gitignore"
		if i > 0 {
			name = strings.Join(parts[:i], "/") + "/.gitignore"
		}
		ps = append(ps, readIgnore(fs, name, parts[:i])...)
	}
	return len(ps) > 0 && gitignore.NewMatcher(ps).Match(parts, false)
}
