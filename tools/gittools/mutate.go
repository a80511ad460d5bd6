package gittools

import (
	"context"
	"fmt"
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

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/gitident"
	"github.com/tgp-go/tgp/internal/pathspec"
	"github.com/tgp-go/tgp/tools"
)

// ---- git_add ----

type addArgs struct {
	Paths      []string `json:"paths,omitempty" jsonschema:"Files to stage (pathspecs; globs as git treats them)"`
	All        bool     `json:"all,omitempty" default:"false" jsonschema:"Stage all changes (-A)"`
	Update     bool     `json:"update,omitempty" default:"false" jsonschema:"Stage modified/deleted only (-u)"`
	TimeoutMS  int      `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir string   `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func addTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[addArgs]{
		Name:        "git_add",
		Facts:       tools.Facts{Persists: true},
		Description: "Stage files (git add): paths, all (-A, deletions included) or update (-u: modified and deleted tracked files).",
		Annotations: tools.Annotations{Risk: tools.RiskMedium},
		Summary: func(a addArgs) string {
			switch {
			case a.All:
				return "Stage all changes"
			case a.Update:
				return "Stage modified/deleted files"
			}
			return fmt.Sprintf("Stage %d file(s): %s", len(a.Paths), strings.Join(a.Paths, ", "))
		},
		Validate: func(a addArgs) error {
			if len(a.Paths) == 0 && !a.All && !a.Update {
				return tools.BadArg("paths", "At least one of paths, all, or update must be specified")
			}
			if a.All && a.Update {
				return tools.BadArg("all", "all and update are mutually exclusive")
			}
			for _, p := range a.Paths {
				if err := checkArg("paths", p); err != nil {
					return err
				}
			}
			return nil
		},
		Run: func(ctx context.Context, a addArgs) (tools.Result, error) {
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, 0, func(ctx context.Context, r *git.Repository) (string, error) {
				n, err := add(ctx, r, d.settings(r), d.relDir(a.WorkingDir), a)
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("Staged %d file(s)", n), nil
			})
		},
	})
}

func indexSnapshot(r *git.Repository) map[string]plumbing.Hash {
	if idx, err := r.Storer.Index(); err == nil {
		return entrySnapshot(idx.Entries)
	}
	return map[string]plumbing.Hash{}
}

func entrySnapshot(ents []*index.Entry) map[string]plumbing.Hash {
	out := make(map[string]plumbing.Hash, len(ents))
	for _, e := range ents {
		out[e.Name] = e.Hash
	}
	return out
}

// add is git add: the paths to stage chosen (addTargets), every
// pathspec item checked before anything is staged (sparseOnlyItems,
// checkPathspecMatches, ignoredNamed), the files staged in one index
// write, then the items that named only sparse or ignored paths reported.
// It returns how many index entries changed.
func add(ctx context.Context, r *git.Repository, cfg *settings, wd string, a addArgs) (int, error) {
	w, err := worktreeOf(r)
	if err != nil {
		return 0, err
	}
	ps, err := parsePathspecChecked(wd, a.Paths, pathspecBeyondSymlink(w.Filesystem))
	if err != nil {
		return 0, err
	}
	st, idx, ignored, err := fastStatusIgnored(r, cfg, true, true)
	if err != nil {
		return 0, err
	}
	// The index as the status read it (a refresh there changes stat data
	// only).
	before := entrySnapshot(idx.Entries)
	targets := addTargets(idx, st, ps, a.Update)
	// git add checks every named path before it stages anything: one that
	// matches nothing is fatal; one that names only ignored files is
	// reported after the others are staged.
	sparseItems := sparseOnlyItems(idx, st, ps, before)
	if err := checkPathspecMatches(w.Filesystem, st, ps, before, sparseItems, a.Update); err != nil {
		return 0, err
	}
	var ignoredItems []string
	if !a.Update {
		ignoredItems = ignoredNamed(ps, ignored)
	}
	sort.Strings(targets)
	// git add stores what convert_to_git makes of each file, with the mode
	// ce_mode_from_stat gives it (core.filemode=false keeps the entry's).
	modes := map[string]filemode.FileMode{}
	for _, e := range idx.Entries {
		modes[e.Name] = e.Mode
	}
	eol := newEOLConverter(r, cfg)
	clean := func(p string, data []byte, mode filemode.FileMode) ([]byte, filemode.FileMode) {
		return eol.ToGit(p, data), cfg.worktreeMode(mode, modes[p])
	}
	// One index write for all paths (go-git's Add rewrites it per file).
	if err := gitbackend.StageFiles(ctx, r.Storer, w.Filesystem, targets, clean); err != nil {
		return 0, err
	}
	if len(sparseItems) > 0 {
		return 0, &tools.Error{Kind: tools.KindExecutionFailed, Message: "The following paths and/or pathspecs matched paths that exist\n" +
			"outside of your sparse-checkout definition, so will not be\nupdated in the index:\n" +
			strings.Join(sparseItems, "\n") + "\nhint: If you intend to update such entries, try one of the following:\n" +
			"hint: * Use the --sparse option.\nhint: * Disable or modify the sparsity rules.\n" +
			"hint: Disable this message with \"git config advice.updateSparsePath false\""}
	}
	if len(ignoredItems) > 0 {
		sort.Strings(ignoredItems)
		ignoredItems = slices.Compact(ignoredItems)
		return 0, &tools.Error{Kind: tools.KindExecutionFailed, Message: "The following paths are ignored by one of your .gitignore files:\n" +
			strings.Join(ignoredItems, "\n") + "\nhint: Use -f if you really want to add them.\n" +
			"hint: Turn this message off by running\nhint: \"git config advice.addIgnoredFile false\""}
	}
	after := indexSnapshot(r)
	n := 0
	for p, h := range after {
		if before[p] != h {
			n++
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			n++
		}
	}
	return n, nil
}

// addTargets are the paths git add stages: the unmerged ones the
// pathspec names (staging resolves them), and the changed ones it names
// (with -u, no untracked one). st loses the unmerged paths.
func addTargets(idx *index.Index, st git.Status, ps pathspec.Pathspec, update bool) []string {
	var targets []string
	// An unmerged path is always staged when named: that resolves it.
	for p := range unmergedStages(idx) {
		if ps.Match(p) {
			delete(st, p)
			targets = append(targets, p)
		}
	}
	for p, s := range st {
		untracked := s.Worktree == git.Untracked
		changed := s.Worktree != git.Unmodified
		if changed && ps.Match(p) && (!update || !untracked) {
			targets = append(targets, p)
		}
	}
	return targets
}

// sparseOnlyItems are the pathspec items that name only entries outside
// the sparse checkout (skip-worktree): those are never staged, and such an
// item is reported after the others are staged, whatever the mode.
// before are the index's entries. The whole tree counts too: "." at the
// top, or the item a pathspec of excludes only starts from, which git
// names ".".
func sparseOnlyItems(idx *index.Index, st git.Status, ps pathspec.Pathspec, before map[string]plumbing.Hash) []string {
	var sparseItems []string
	sparse := map[string]bool{}
	for _, e := range idx.Entries {
		if e.SkipWorktree {
			sparse[e.Name] = true
		}
	}
	for i, it := range ps.Items {
		if len(sparse) == 0 {
			break
		}
		raw := it.Raw
		if raw == "" {
			raw = "."
		}
		one := pathspec.Pathspec{Items: ps.Items[i : i+1]}
		found, hitSparse := false, false
		for p := range before {
			m := one.Match(p)
			found = found || m && !sparse[p]
			hitSparse = hitSparse || m && sparse[p]
		}
		for p, s := range st {
			found = found || (s.Worktree != git.Unmodified && !sparse[p] && one.Match(p))
		}
		if hitSparse && !found {
			sparseItems = append(sparseItems, raw)
		}
	}
	return sparseItems
}

// checkPathspecMatches is git add's fatal check: an item (but those
// sparseOnlyItems reports) that matches no index entry and no changed
// file. With -A and -u too: git checks the pathspec whatever the mode
// (-u finds no untracked files, and no ignored ones).
func checkPathspecMatches(fsys billy.Filesystem, st git.Status, ps pathspec.Pathspec, before map[string]plumbing.Hash, sparseItems []string, update bool) error {
	for i, it := range ps.Items {
		if it.Pat == "" || slices.Contains(sparseItems, it.Raw) {
			continue // "." at the top matches even an empty tree
		}
		one := pathspec.Pathspec{Items: ps.Items[i : i+1]}
		found := false
		for p := range before {
			found = found || one.Match(p)
		}
		for p, s := range st {
			found = found || (s.Worktree != git.Unmodified && (!update || s.Worktree != git.Untracked) && one.Match(p))
		}
		if found {
			continue
		}
		// git dies only when the item's path, as matched (":(top)."
		// and ":/./d" uncleaned), is not there: an item naming an
		// existing directory with nothing to add, or the top, is no
		// error unless it has glob or icase magic.
		match := it.Match
		if it.DirOnly && !strings.HasSuffix(match, "/") {
			match += "/" // git's item keeps the slash ("d/." is "d/")
		}
		if !it.PathGlob && !it.ICase && existsFromTop(fsys, match) {
			continue
		}
		return &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: pathspec '%s' did not match any files", ps.Items[i].Raw)}
	}
	return nil
}

// ignoredNamed are the ignored paths git add reports (add_files'
// dir->ignored): the top-most ignored entries its walk meets (an
// excluded directory, or a file) that an item's literal part names or
// lies inside (exclude_matches_pathspec). git collects them before it
// looks at the exclusions: an exclusion that covers one does not spare
// it.
func ignoredNamed(ps pathspec.Pathspec, ignored ignoredPaths) []string {
	var ignoredItems []string
	for e := range ignored.top {
		for _, it := range ps.Items {
			if collectsIgnored(it, e) {
				ignoredItems = append(ignoredItems, e)
				break
			}
		}
	}
	// git collects an ignored path an exclude item names (or lies in)
	// as one a pathspec item names: exclude_matches_pathspec does not
	// look at the exclude magic.
	for _, it := range ps.Exclude {
		if it.Glob || it.Pat == "" {
			continue
		}
		for e := range ignored.top {
			if collectsIgnored(it, e) {
				ignoredItems = append(ignoredItems, e)
			}
		}
	}
	return ignoredItems
}

// existsFromTop is git's file_exists on a pathspec item's path from the
// top of the worktree. Above the top (the jail's root) only ".." and
// its repetitions are known to exist.
func existsFromTop(fsys billy.Filesystem, p string) bool {
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return strings.Trim(strings.ReplaceAll(c, "..", ""), "/") == ""
	}
	if strings.HasSuffix(p, "/") {
		// lstat("f/") fails on a file (ENOTDIR) and follows a link.
		fi, err := fsys.Stat(p)
		return err == nil && fi.IsDir()
	}
	_, err := fsys.Lstat(p)
	return err == nil
}

// ---- git_commit ----

type commitArgs struct {
	Type       string `json:"type" pattern:"^[a-z]+$" jsonschema:"Commit type: feat, fix, docs, style, refactor, test, chore, etc."`
	Scope      string `json:"scope,omitempty" pattern:"^[a-z0-9_-]+$" jsonschema:"Scope/area of change"`
	Message    string `json:"message" minLength:"1" jsonschema:"Commit description"`
	TimeoutMS  int    `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir string `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func commitMessage(a commitArgs) string {
	if a.Scope != "" {
		return fmt.Sprintf("%s(%s): %s", a.Type, a.Scope, a.Message)
	}
	return fmt.Sprintf("%s: %s", a.Type, a.Message)
}

func commitTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[commitArgs]{
		Name:        "git_commit",
		Facts:       tools.Facts{Persists: true},
		Description: "Commit the staged changes with a conventional message `type(scope): message`, then push it like every change.",
		Annotations: tools.Annotations{Risk: tools.RiskMedium},
		Summary:     func(a commitArgs) string { return "Commit: " + commitMessage(a) },
		Validate: func(a commitArgs) error {
			if strings.TrimSpace(a.Message) == "" {
				return tools.BadArg("message", "message must not be empty")
			}
			return nil
		},
		Run: func(ctx context.Context, a commitArgs) (tools.Result, error) {
			out, err := d.run(ctx, a.WorkingDir, a.TimeoutMS, func(ctx context.Context, r *git.Repository) (string, error) {
				return commit(ctx, d, r, commitMessage(a), d.relDir(a.WorkingDir))
			})
			if err != nil {
				return tools.Result{}, err
			}
			detached := false
			if repo := d.Repo(); repo != nil {
				_ = repo.Do(ctx, func(r *git.Repository) error { _, detached = currentBranch(r); return nil })
			}
			if detached {
				// git commits on a detached HEAD; there is no branch to push.
				out += "\nPersisted: no (HEAD is detached: check out a branch to push)"
			} else if d.Persister != nil {
				per, err := d.Persister.Persist(ctx, tools.Change{Tool: "git_commit", Message: commitMessage(a)})
				if err != nil {
					return tools.Result{}, err
				}
				if per.Persisted {
					out += fmt.Sprintf("\nPersisted: pushed %s to the remote branch %s", short(plumbing.NewHash(per.Commit)), per.Branch)
				} else if per.Note != "" {
					out += "\nPersisted: no (" + per.Note + ")"
				}
			}
			return tools.Result{Value: out}, nil
		},
	})
}

// ErrIdentity is the git tools' message when no identity is configured.

// commit commits the index with msg; wd is the directory the call runs
// in, which diff.relative limits the summary to.
func commit(ctx context.Context, d Deps, r *git.Repository, msg, wd string) (string, error) {
	baseTree, unborn, err := headTreeHash(r)
	if err != nil {
		return "", err
	}
	changes, unmerged, err := stagedChanges(r, baseTree)
	if err != nil {
		return "", err
	}
	if unmerged {
		return "", errUnmergedCommit()
	}
	merges := mergeHeads(r)
	if len(changes) == 0 && len(merges) == 0 {
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: "nothing to commit"}
	}
	author, committer, err := d.signatures(r, time.Now())
	if err != nil {
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: err.Error(), Err: err}
	}
	msg = cleanupMessage(msg)
	if msg == "" {
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: "Aborting commit due to empty commit message."}
	}
	// Build only the trees on changed paths from HEAD's tree (go-git's
	// Commit rebuilds every tree of the index).
	files := map[string]gitbackend.TreeFile{}
	for _, c := range changes {
		if c.newMode == 0 {
			files[c.path] = gitbackend.TreeFile{Delete: true}
		} else {
			files[c.path] = gitbackend.TreeFile{Mode: c.newMode, Hash: c.newHash}
		}
	}
	var parents []plumbing.Hash
	if !unborn {
		head, _ := r.Head()
		parents = []plumbing.Hash{head.Hash()}
	}
	// Concluding a merge: MERGE_HEAD's commits are the other parents.
	parents = append(parents, merges...)
	tree, err := gitbackend.WriteTree(r.Storer, baseTree, files)
	if err != nil {
		return "", err
	}
	signer, err := d.signer(r)
	if err != nil {
		return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: err.Error(), Err: err}
	}
	h, err := gitbackend.EncodeCommit(r.Storer, &object.Commit{Author: author, Committer: committer, Message: msg, TreeHash: tree, ParentHashes: parents}, signer)
	if err != nil {
		return "", err
	}
	headRef, err := r.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", err
	}
	target := plumbing.HEAD
	if headRef.Type() == plumbing.SymbolicReference {
		target = headRef.Target()
	}
	if err := beforeChange(ctx); err != nil {
		return "", err
	}
	if err := r.Storer.SetReference(plumbing.NewHashReference(target, h)); err != nil {
		return "", err
	}
	if len(merges) > 0 {
		clearMergeState(r)
	}
	// commit, commit (initial) or commit (merge), as git logs them.
	what := "commit"
	switch {
	case len(parents) == 0:
		what = "commit (initial)"
	case len(parents) > 1:
		what = "commit (merge)"
	}
	var oldHead plumbing.Hash
	if len(parents) > 0 {
		oldHead = parents[0]
	}
	rl := d.reflogs(r)
	// The reflog takes the message's first line.
	line, _, _ := strings.Cut(msg, "\n")
	rl.log(plumbing.HEAD, oldHead, h, what+": "+line)
	if target != plumbing.HEAD {
		rl.log(target, oldHead, h, what+": "+line)
	}
	branch, detached := currentBranch(r)
	if detached {
		branch = "detached HEAD"
	}
	root := ""
	if unborn {
		root = " (root-commit)"
	}
	var b strings.Builder
	cfg := d.settings(r)
	po := cfg.patch(diffTrees)
	po.attr = loadAttributes(r, true)
	ab := newAbbrever(r)
	defer ab.Close()
	fmt.Fprintf(&b, "[%s%s %s] %s\n", branch, root, ab.Short(h), subject(msg))
	if author.Name != committer.Name || author.Email != committer.Email {
		fmt.Fprintf(&b, " Author: %s <%s>\n", author.Name, author.Email)
	}
	if len(parents) > 1 {
		// log_tree_commit shows no diff of a merge (no -m, no --cc).
		return strings.TrimRight(b.String(), "\n"), nil
	}
	writeCommitSummary(&b, r, cfg, po, cfg.relativeFilter(changes, wd))
	return strings.TrimRight(b.String(), "\n"), nil
}

// writeCommitSummary is the diff print_commit_summary shows: renames
// detected (never copies, whatever diff.renames says), a --shortstat line
// (binary files counted as files, their bytes not as lines), then the
// --summary lines in the queue's order.
//
// No change at all (a commit whose changes diff.relative leaves out of
// the directory it runs in) prints nothing: diff_flush has no queue.
func writeCommitSummary(b *strings.Builder, r *git.Repository, cfg *settings, po patchOpts, changes []*change) {
	if len(changes) == 0 {
		return
	}
	prefetchBlobs(r, changes)
	changes = detectRenamesIn(changes, false, nil, po.driverBinary)
	adds, dels := 0, 0
	for _, c := range changes {
		a, d, bin := counts(c, po)
		if !bin {
			adds += a
			dels += d
		}
	}
	fmt.Fprintf(b, " %d file%s changed", len(changes), plural(len(changes)))
	if adds > 0 || dels == 0 {
		fmt.Fprintf(b, ", %d insertion%s(+)", adds, plural(adds))
	}
	if dels > 0 || adds == 0 {
		fmt.Fprintf(b, ", %d deletion%s(-)", dels, plural(dels))
	}
	b.WriteString("\n")
	for _, c := range changes {
		switch {
		case c.oldPath != "":
			verb := "rename"
			if c.copied {
				verb = "copy"
			}
			fmt.Fprintf(b, " %s %s (%d%%)\n", verb, renameName(cfg, c.oldPath, c.path), c.score)
			if c.oldMode != c.newMode {
				fmt.Fprintf(b, " mode change %06o => %06o\n", c.oldMode, c.newMode)
			}
		case c.oldMode == 0:
			fmt.Fprintf(b, " create mode %06o %s\n", c.newMode, cfg.quote(c.path))
		case c.newMode == 0:
			fmt.Fprintf(b, " delete mode %06o %s\n", c.oldMode, cfg.quote(c.path))
		case c.oldMode != c.newMode:
			fmt.Fprintf(b, " mode change %06o => %06o %s\n", c.oldMode, c.newMode, cfg.quote(c.path))
		}
	}
}

// prefetchBlobs reads the blobs of changes that are loose objects on
// disk (a git add's) on several goroutines, for the diffstat; the others
// are read when it asks for them.
func prefetchBlobs(r *git.Repository, changes []*change) {
	var hashes []plumbing.Hash
	var slots []*[]byte
	for _, c := range changes {
		if c.newMode != 0 && c.newMode != filemode.Submodule && c.newData == nil {
			hashes, slots = append(hashes, c.newHash), append(slots, &c.newData)
		}
		if c.oldMode != 0 && c.oldMode != filemode.Submodule && c.oldData == nil {
			hashes, slots = append(hashes, c.oldHash), append(slots, &c.oldData)
		}
	}
	if len(hashes) < 16 {
		return
	}
	data, found := gitbackend.ReadLooseBlobs(r.Storer, hashes)
	for i, ok := range found {
		if ok {
			*slots[i] = data[i]
		}
	}
}

// headTreeHash is HEAD's tree (unborn: no commit yet, zero hash).
func headTreeHash(r *git.Repository) (tree plumbing.Hash, unborn bool, err error) {
	head, err := r.Head()
	if err != nil {
		return plumbing.ZeroHash, true, nil
	}
	c, err := r.CommitObject(head.Hash())
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	return c.TreeHash, false, nil
}

// stagedChanges is what a commit records: the index's entries against
// the tree, as diffSides(treeFiles, stagedIndexFiles) lists them, found
// by gitbackend.DiffIndex (only the subtrees that differ are read);
// unmerged is true when a path has conflict stages.
func stagedChanges(r *git.Repository, tree plumbing.Hash) ([]*change, bool, error) {
	idx, err := r.Storer.Index()
	if err != nil {
		return nil, false, err
	}
	ents := idx.Entries
	for _, e := range ents {
		if e.Stage >= 1 && e.Stage <= 3 {
			return nil, true, nil
		}
	}
	sort.SliceStable(ents, func(i, j int) bool { return ents[i].Name < ents[j].Name })
	head, deleted, err := gitbackend.DiffIndex(r.Storer, tree, ents)
	if err != nil {
		return nil, false, err
	}
	var out []*change
	for i, e := range ents {
		if i+1 < len(ents) && ents[i+1].Name == e.Name {
			continue // as in a map of the entries, the last one of a name counts
		}
		h := head[i]
		if e.IntentToAdd {
			// Nothing staged (git add -N): HEAD's file, if any, goes.
			if h.Mode != 0 {
				out = append(out, &change{path: e.Name, oldMode: h.Mode, oldHash: h.Hash, oldLoaded: entryLoader(r, h.Mode, h.Hash)})
			}
			continue
		}
		if h.Mode != 0 && h.Hash == e.Hash && h.Mode == e.Mode {
			continue
		}
		c := &change{path: e.Name, newMode: e.Mode, newHash: e.Hash, newLoad: entryLoader(r, e.Mode, e.Hash)}
		if h.Mode != 0 {
			c.oldMode, c.oldHash, c.oldLoaded = h.Mode, h.Hash, entryLoader(r, h.Mode, h.Hash)
		}
		out = append(out, c)
	}
	for _, h := range deleted {
		out = append(out, &change{path: h.Path, oldMode: h.Mode, oldHash: h.Hash, oldLoaded: entryLoader(r, h.Mode, h.Hash)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, false, nil
}

// signatures resolves author and committer through the kernel's one
// resolver (gitbackend.Signatures, package gitident): git.author, the
// identity variables, the git config scopes, then the bot identity.
func (d Deps) signatures(r *git.Repository, now time.Time) (author, committer object.Signature, err error) {
	return gitbackend.Signatures(r, gitident.Person{Name: d.AuthorName, Email: d.AuthorEmail}, d.Environ, now)
}

// signer is the key that signs the commits of git_commit and git_stash,
// resolved as a persist's is (gitbackend.ResolveSigner): git.signing_key,
// else git's commit.gpgsign + gpg.format=ssh + user.signingkey.
func (d Deps) signer(r *git.Repository) (gitbackend.CommitSigner, error) {
	return gitbackend.ResolveSigner(d.SigningKey, r, d.Environ)
}

// cleanupMessage is git commit's default cleanup for a message given with
// -m ("whitespace"): trailing whitespace removed from every line, leading
// and trailing blank lines dropped, runs of blank lines collapsed to one,
// and a final newline.
func cleanupMessage(msg string) string {
	var out []string
	blank := false
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimRight(l, " \t\r\v\f")
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

// ---- git_restore ----

type restoreArgs struct {
	Paths      []string `json:"paths" jsonschema:"Files to restore"`
	Staged     bool     `json:"staged,omitempty" default:"false" jsonschema:"Restore the index/staging area (--staged)"`
	Worktree   bool     `json:"worktree,omitempty" default:"true" jsonschema:"Restore the working tree (--worktree)"`
	TimeoutMS  int      `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir string   `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func restoreTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[restoreArgs]{
		Name:        "git_restore",
		Facts:       tools.Facts{Persists: true},
		Description: "Restore files: the worktree from the index (default), the index from HEAD (staged), or both. Discards changes.",
		Annotations: tools.Annotations{Destructive: true, Risk: tools.RiskHigh},
		Summary: func(a restoreArgs) string {
			switch {
			case a.Staged && a.Worktree:
				return fmt.Sprintf("Restore and unstage %d file(s)", len(a.Paths))
			case a.Staged:
				return fmt.Sprintf("Unstage %d file(s)", len(a.Paths))
			}
			return fmt.Sprintf("Restore %d file(s) to worktree", len(a.Paths))
		},
		Validate: func(a restoreArgs) error {
			if len(a.Paths) == 0 {
				return tools.BadArg("paths", "paths must contain at least one element")
			}
			if !a.Staged && !a.Worktree {
				return tools.BadArg("worktree", "At least one of staged or worktree must be true")
			}
			for _, p := range a.Paths {
				if err := checkArg("paths", p); err != nil {
					return err
				}
			}
			return nil
		},
		Run: func(ctx context.Context, a restoreArgs) (tools.Result, error) {
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, 0, func(ctx context.Context, r *git.Repository) (string, error) {
				return "", restore(ctx, r, d.settings(r), d.relDir(a.WorkingDir), a)
			})
		},
	})
}

func restore(ctx context.Context, r *git.Repository, cfg *settings, wd string, a restoreArgs) error {
	w, err := worktreeOf(r)
	if err != nil {
		return err
	}
	ps, err := parsePathspec(wd, a.Paths)
	if err != nil {
		return err
	}
	idx, err := r.Storer.Index()
	if err != nil {
		return err
	}
	ht, err := headTree(r)
	if err != nil {
		return err
	}
	head, err := treeFiles(r, ht)
	if err != nil {
		return err
	}
	inIndex := map[string]*index.Entry{}
	// Entries outside the sparse checkout (skip-worktree) are out of a
	// restore's reach: no pathspec matches them (checkout_paths). From
	// HEAD, one HEAD has otherwise is replaced by HEAD's entry first
	// (read_tree_some), which is matched like any.
	sparse := map[string]bool{}
	for _, e := range idx.Entries {
		inIndex[e.Name] = e
		if e.SkipWorktree {
			if h, ok := head[e.Name]; a.Staged && ok && (h.hash != e.Hash || h.mode != e.Mode) {
				continue
			}
			sparse[e.Name] = true
		}
	}
	match := func(p string) bool { return !sparse[p] && ps.Match(p) }
	// Every pathspec item must match something the restore knows about
	// (report_path_error): the index's entries, with HEAD's that the
	// pathspec reads into it first when restoring from HEAD.
	known := map[string]bool{}
	for p := range inIndex {
		known[p] = !sparse[p]
	}
	if a.Staged {
		for p := range head {
			if match(p) {
				known[p] = known[p] || !sparse[p]
			}
		}
	}
	if err := reportPathError(a.Paths, ps, known); err != nil {
		return err
	}
	if err := beforeChange(ctx); err != nil {
		return err
	}
	if a.Staged {
		// From HEAD, an unmerged path HEAD has is resolved to it; one HEAD
		// lacks keeps its stages, which git refuses (checkout_paths).
		var stuck []string
		for p := range unmergedStages(idx) {
			if _, ok := head[p]; !ok && match(p) {
				stuck = append(stuck, p)
			}
		}
		if err := errPathsUnmerged(stuck); err != nil {
			return err
		}
	}
	// checkout_paths matches twice: HEAD's tree by the pathspec
	// (read_tree_some: these entries take HEAD's version, "updated"),
	// then the index, in order, through a seen array (indexMatcher): a
	// matched entry that was not updated goes, a matched one is written
	// to the worktree.
	indexMatched := func(updated map[string]bool) map[string]bool {
		names := make([]string, 0, len(inIndex)+len(updated))
		for p := range inIndex {
			names = append(names, p)
		}
		for p := range updated {
			if inIndex[p] == nil {
				names = append(names, p)
			}
		}
		sort.Strings(names)
		im, out := pathspec.NewIndexMatcher(ps), map[string]bool{}
		for _, p := range names {
			if !sparse[p] && im.Match(p) {
				out[p] = true
			}
		}
		return out
	}
	switch {
	case a.Staged && a.Worktree:
		// Both from HEAD; paths HEAD lacks leave index and worktree.
		updated := map[string]bool{}
		for p := range head {
			if match(p) {
				updated[p] = true
			}
		}
		matched := indexMatched(updated)
		files := map[string]gitbackend.TreeFile{}
		var indexOnly []string
		for p := range updated {
			if matched[p] {
				files[p] = gitbackend.TreeFile{Mode: head[p].mode, Hash: head[p].hash}
			} else {
				indexOnly = append(indexOnly, p)
			}
		}
		for p := range matched {
			if !updated[p] {
				files[p] = gitbackend.TreeFile{Delete: true}
			}
		}
		if err := gitbackend.ApplyFilesSmudged(r.Storer, w.Filesystem, files, newEOLConverter(r, cfg).ToWorktree); err != nil {
			return err
		}
		// Read from HEAD but matched in the index by no item that was
		// still tried: HEAD's version in the index, the file untouched.
		only := map[string]side{}
		for _, p := range indexOnly {
			only[p] = head[p]
		}
		return setIndexEntries(r, only)
	case a.Staged:
		// From HEAD, an unmerged path's stages give way to HEAD's entry.
		idx.Entries = withoutStages(idx.Entries, match)
		inIndex = map[string]*index.Entry{}
		for _, e := range idx.Entries {
			inIndex[e.Name] = e
		}
		for p, s := range head {
			if !match(p) {
				continue
			}
			e, ok := inIndex[p]
			if !ok {
				e = idx.Add(p)
			}
			if e.Hash != s.hash || e.Mode != s.mode {
				e.Hash, e.Mode = s.hash, s.mode
				e.ModifiedAt = time.Time{} // force a re-check of the worktree file
			}
		}
		updated := map[string]bool{}
		for p := range head {
			if match(p) {
				updated[p] = true
			}
		}
		for p := range indexMatched(updated) {
			if !updated[p] {
				_, _ = idx.Remove(p) // a new file: unstaged, kept in the worktree
			}
		}
		return r.Storer.SetIndex(idx)
	default:
		// From the index, an unmerged path has nothing to restore: git
		// refuses the whole command (checkout_paths).
		var unmergedPaths []string
		for p, mask := range unmergedStages(idx) {
			if mask != 0 && match(p) {
				unmergedPaths = append(unmergedPaths, p)
			}
		}
		if err := errPathsUnmerged(unmergedPaths); err != nil {
			return err
		}
		files := map[string]gitbackend.TreeFile{}
		matched := indexMatched(nil)
		for p, e := range inIndex {
			if matched[p] && e.Stage == 0 { // go-git decodes a merged entry as stage 0, not index.Merged (1)
				files[p] = gitbackend.TreeFile{Mode: e.Mode, Hash: e.Hash}
			}
		}
		return gitbackend.ApplyFilesSmudged(r.Storer, w.Filesystem, files, newEOLConverter(r, cfg).ToWorktree)
	}
}

// collectsIgnored is exclude_matches_pathspec for one item: its part
// before the first wildcard (all of it when literal) is the ignored entry
// e or a path inside it; with icase magic compared case-insensitively.
func collectsIgnored(it pathspec.Item, e string) bool {
	lit := it.Match
	if it.Glob || it.PathGlob {
		if i := strings.IndexAny(lit, "*?[\\"); i >= 0 {
			lit = lit[:i]
		}
	}
	eq := func(a, b string) bool {
		if it.ICase {
			return strings.EqualFold(a, b)
		}
		return a == b
	}
	switch {
	case len(lit) == len(e):
		return eq(lit, e)
	case len(lit) > len(e):
		return lit[len(e)] == '/' && eq(lit[:len(e)], e)
	}
	return false
}

// setIndexEntries gives index entries new versions without touching
// their files (an entry that changes is compared with its file anew).
func setIndexEntries(r *git.Repository, entries map[string]side) error {
	if len(entries) == 0 {
		return nil
	}
	idx, err := r.Storer.Index()
	if err != nil {
		return err
	}
	for p, s := range entries {
		e, err := idx.Entry(p)
		if err != nil {
			e = idx.Add(p)
		}
		if e.Hash != s.hash || e.Mode != s.mode {
			e.Hash, e.Mode, e.ModifiedAt = s.hash, s.mode, time.Time{}
		}
	}
	sort.SliceStable(idx.Entries, func(i, j int) bool { return cmpEntry(idx.Entries[i], idx.Entries[j]) < 0 })
	return r.Storer.SetIndex(idx)
}
