package gittools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/pretty"
	"github.com/tgp-go/tgp/internal/revparse"
	"github.com/tgp-go/tgp/internal/xdiff"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
)

type diffArgs struct {
	Cached     bool     `json:"cached,omitempty" default:"false" jsonschema:"Diff staged changes (--cached)"`
	NameOnly   bool     `json:"name_only,omitempty" default:"false" jsonschema:"Show only changed file names (--name-only)"`
	Stat       bool     `json:"stat,omitempty" default:"false" jsonschema:"Show diffstat only (--stat)"`
	Unified    *int     `json:"unified,omitempty" minimum:"0" jsonschema:"Number of context lines (-U<N>)"`
	Paths      []string `json:"paths,omitempty" jsonschema:"Paths to diff (passed after --)"`
	FromRef    string   `json:"from_ref,omitempty" jsonschema:"Starting ref for ref-to-ref comparison"`
	ToRef      string   `json:"to_ref,omitempty" jsonschema:"Ending ref for ref-to-ref comparison"`
	OutputDir  string   `json:"output_dir,omitempty" jsonschema:"Directory to write per-file patches (requires from_ref AND to_ref)"`
	MaxBytes   int      `json:"max_bytes,omitempty" minimum:"1" maximum:"5000000" jsonschema:"Maximum output bytes before truncation (default: tools.git.max_bytes in the configuration, 1048576)"`
	TimeoutMS  int      `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir string   `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func diffTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[diffArgs]{
		Name:        "git_diff",
		Facts:       tools.Facts{ReadsToolbox: true},
		Description: "Show changes (git diff): worktree vs index, cached (index vs HEAD), or from_ref..to_ref; name_only, stat, unified, paths.",
		Annotations: tools.Annotations{ReadOnly: true, Idempotent: true, Risk: tools.RiskLow},
		Summary:     func(diffArgs) string { return "Show git diff" },
		Validate: func(a diffArgs) error {
			// The tool's specification makes cached and from_ref/to_ref
			// exclusive (FR-GIT-DIFF-03), where git diff --cached <commit>
			// compares the index with that commit.
			if a.Cached && (a.FromRef != "" || a.ToRef != "") {
				return tools.BadArg("cached", "cached cannot be used with from_ref/to_ref")
			}
			if a.OutputDir != "" && (a.FromRef == "" || a.ToRef == "") {
				return tools.BadArg("output_dir", "output_dir requires from_ref and to_ref")
			}
			if a.ToRef != "" && a.FromRef == "" {
				return tools.BadArg("to_ref", "to_ref requires from_ref")
			}
			for _, r := range []struct{ f, v string }{{"from_ref", a.FromRef}, {"to_ref", a.ToRef}} {
				if r.v != "" {
					if err := checkArg(r.f, r.v); err != nil {
						return err
					}
				}
			}
			for _, p := range a.Paths {
				if err := checkArg("paths", p); err != nil {
					return err
				}
			}
			return nil
		},
		Run: func(ctx context.Context, a diffArgs) (tools.Result, error) {
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, a.MaxBytes, func(ctx context.Context, r *git.Repository) (string, error) {
				st := d.settings(r)
				changes, err := collectChanges(ctx, r, st, d.relDir(a.WorkingDir), a)
				if err != nil && len(a.Paths) > 0 {
					return "", afterSeparator(err)
				}
				if err != nil {
					return "", err
				}
				changes = st.relativize(changes, d.relDir(a.WorkingDir))
				kind := diffSidesOf(a)
				if _, isRange, _ := parseRevRange(r, a.FromRef); isRange && a.ToRef == "" && !a.Cached {
					kind = diffTrees // A..B: two trees (a/ b/ under diff.mnemonicPrefix)
				}
				po := st.patch(kind)
				po.ab = newAbbrever(r)
				defer po.ab.Close()
				po.attr = loadAttributes(r, kind != diffTrees)
				if a.Unified != nil {
					po.ctx = *a.Unified
				}
				if a.OutputDir != "" {
					return writePatches(d, a.OutputDir, changes, po)
				}
				if a.Stat && !a.NameOnly && a.Unified != nil {
					// -U implies -p: git prints the combined diffs of
					// unmerged paths as it meets them, then the stat, a
					// blank line and the patch of everything else.
					var combined, rest []*change
					for _, c := range changes {
						if c.combined != nil {
							combined = append(combined, c)
						} else {
							rest = append(rest, c)
						}
					}
					out := render(combined, false, false, po)
					if stat := render(rest, false, true, po); stat != "" {
						out += stat + "\n" + render(rest, false, false, po)
					}
					return out, nil
				}
				return render(changes, a.NameOnly, a.Stat, po), nil
			})
		},
	})
}

// change is one file's difference; mode 0 means absent on that side.
type change struct {
	path               string
	oldPath            string // set for a rename
	score              int    // similarity of a rename
	oldMode, newMode   filemode.FileMode
	oldHash, newHash   plumbing.Hash
	oldData, newData   []byte
	oldLoaded, newLoad func() ([]byte, error)
	newWorktree        bool // the new side was read from the worktree
	copied             bool // oldPath is the source of a copy, not a rename
	// unmerged: git's "Unmerged" record of a conflicted path (no sides);
	// combined, when set, is printed as its --cc patch instead.
	unmerged bool
	combined *combinedRec
}

func (c *change) old() []byte {
	if c.oldData == nil && c.oldLoaded != nil {
		c.oldData, _ = c.oldLoaded()
	}
	return c.oldData
}

func (c *change) new() []byte {
	if c.newData == nil && c.newLoad != nil {
		c.newData, _ = c.newLoad()
	}
	return c.newData
}

type side struct {
	mode filemode.FileMode
	hash plumbing.Hash
	load func() ([]byte, error)
	// worktree: read from the worktree, whose object id git does not
	// compute for a diffstat (so equal binaries still show their sizes).
	worktree bool
	// ita: an index entry added with intent to add (git add -N), which
	// records no content: absent from what is staged, a new file in the
	// worktree. skip: an entry git takes as matching the worktree without
	// looking (skip-worktree, assume-unchanged).
	ita, skip bool
	// entry and indexTime: for an index side, its entry and when the
	// index was written, whose stat data tell whether the worktree file
	// can be taken as the entry unread (worktreeFiles).
	entry     *index.Entry
	indexTime time.Time
}

func blobLoader(r *git.Repository, h plumbing.Hash) func() ([]byte, error) {
	return func() ([]byte, error) {
		b, err := r.BlobObject(h)
		if err != nil {
			return nil, err
		}
		rd, err := b.Reader()
		if err != nil {
			return nil, err
		}
		defer rd.Close()
		return io.ReadAll(rd)
	}
}

// treeFiles lists a tree's files without loading their blobs (t.Files()
// would read every blob).
func treeFiles(r *git.Repository, t *object.Tree) (map[string]side, error) {
	out := map[string]side{}
	if t == nil {
		return out, nil
	}
	w := object.NewTreeWalker(t, true, nil)
	w.SkipPathValidation() // reading, not writing: every name git stores
	defer w.Close()
	for {
		name, e, err := w.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if e.Mode == filemode.Dir {
			continue
		}
		out[name] = side{mode: e.Mode, hash: e.Hash, load: entryLoader(r, e.Mode, e.Hash)}
	}
}

func indexFiles(r *git.Repository) (map[string]side, error) {
	idx, err := r.Storer.Index()
	if err != nil {
		return nil, err
	}
	valid := gitbackend.AssumeUnchangedIn(r.Storer)
	out := map[string]side{}
	for _, e := range idx.Entries {
		out[e.Name] = indexSide(r, e, valid, idx.ModTime)
	}
	return out, nil
}

// indexSide is an index entry as a side of a diff; valid names the
// entries marked assume-unchanged.
func indexSide(r *git.Repository, e *index.Entry, valid map[string]bool, indexTime time.Time) side {
	return side{mode: e.Mode, hash: e.Hash, load: entryLoader(r, e.Mode, e.Hash),
		ita: e.IntentToAdd, skip: e.SkipWorktree || valid[e.Name], entry: e, indexTime: indexTime}
}

// dropIntentToAdd removes the entries added with intent to add from an
// index side: they record nothing staged. From a worktree side too when
// the entry is also skip-worktree: git does not look at such a file.
func dropIntentToAdd(files, worktree map[string]side) {
	for p, s := range files {
		if s.ita {
			delete(files, p)
			if s.skip {
				delete(worktree, p)
			}
		}
	}
}

func worktreeFiles(r *git.Repository, s *settings, tracked map[string]side) (map[string]side, error) {
	w, err := worktreeOf(r)
	if err != nil {
		return nil, err
	}
	eol := newEOLConverter(r, s)
	cmp := &entryCompare{s: s, fs: w.Filesystem}
	out := map[string]side{}
	for p, t := range tracked {
		if t.skip {
			out[p] = t // git does not look at the file
			continue
		}
		if e := cmp.statClean(w.Filesystem, t); e != nil {
			// Stat data unchanged since the index recorded them: git
			// takes the index's object unread (diff-lib.c,
			// get_stat_data), even when the file would convert
			// otherwise now (an eol attribute added since).
			out[p] = side{mode: e.Mode, hash: e.Hash, load: entryLoader(r, e.Mode, e.Hash)}
			continue
		}
		if t.mode == filemode.Submodule {
			// A gitlink is unchanged while its directory exists (git
			// compares a checked-out submodule's HEAD, not its files).
			// A file or a link in its place is a type change.
			info, err := w.Filesystem.Lstat(p)
			if err != nil {
				continue
			}
			if info.IsDir() {
				out[p] = t
				continue
			}
		}
		data, mode, err := readWorktree(w.Filesystem, p)
		if err != nil {
			continue // deleted in the worktree
		}
		mode = s.worktreeMode(mode, t.mode)
		data = eol.ToGit(p, data)
		d := data
		h := blobHash(d)
		// git knows a worktree file's object id when the file matches its
		// index entry (clean stat data); only a changed file's id is unknown.
		out[p] = side{mode: mode, hash: h, load: func() ([]byte, error) { return d, nil }, worktree: h != t.hash || mode != t.mode}
	}
	return out, nil
}

// statClean returns the index entry of a side whose worktree file's stat
// data match it (and is not racily clean), as git's diff-files and
// diff-index test each entry before reading its file; nil when the file
// must be read (changed, missing, unmerged, intent to add, or not an
// index side).
func (c *entryCompare) statClean(fsys billy.Filesystem, t side) *index.Entry {
	e := t.entry
	if e == nil || e.Stage != 0 || e.IntentToAdd || e.Mode == filemode.Submodule {
		return nil
	}
	info, err := fsys.Lstat(e.Name)
	if err != nil {
		return nil
	}
	st := statOf(info)
	if st.kind == kindDir {
		return nil // a directory where the file was: deleted (read below)
	}
	c.indexTime = t.indexTime
	if c.stale(e, &st) {
		return nil
	}
	return e
}

// entryLoader loads a tree or index entry's text: a blob's bytes, or for a
// gitlink the line git diffs ("Subproject commit <hash>").
func entryLoader(r *git.Repository, mode filemode.FileMode, h plumbing.Hash) func() ([]byte, error) {
	if mode == filemode.Submodule {
		return func() ([]byte, error) { return []byte("Subproject commit " + h.String() + "\n"), nil }
	}
	return blobLoader(r, h)
}

func readWorktree(fsys billy.Filesystem, p string) ([]byte, filemode.FileMode, error) {
	info, err := fsys.Lstat(p)
	if err != nil {
		return nil, 0, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		t, err := fsys.Readlink(p)
		return []byte(t), filemode.Symlink, err
	}
	if info.IsDir() {
		return nil, 0, os.ErrNotExist
	}
	f, err := fsys.Open(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	mode := filemode.Regular
	if info.Mode()&0o111 != 0 {
		mode = filemode.Executable
	}
	return data, mode, err
}

func blobHash(b []byte) plumbing.Hash { return plumbing.NewHash(registry.BlobHash(b)) }

// resolveTree is the tree a diff's revision names (revparse.Tree): a
// commit's (a tag peeled), or a tree itself ("HEAD^{tree}").
func resolveTree(r *git.Repository, ref string) (*object.Tree, error) {
	t, err := revparse.Tree(r, ref)
	if err != nil {
		return nil, unknownRevision(ref)
	}
	return t, nil
}

func headTree(r *git.Repository) (*object.Tree, error) {
	head, err := r.Head()
	if err != nil {
		return nil, nil // unborn: empty tree
	}
	c, err := r.CommitObject(head.Hash())
	if err != nil {
		return nil, err
	}
	return c.Tree()
}

func collectChanges(ctx context.Context, r *git.Repository, s *settings, wd string, a diffArgs) ([]*change, error) {
	ps, err := parsePathspec(wd, a.Paths)
	if err != nil {
		return nil, err
	}
	match := s.relativeMatch(wd, ps.Match)
	// Renames are found with the diff attributes the patch is printed
	// with: they say which files hash as binary.
	renames := func(cs []*change) []*change {
		kind := diffSidesOf(a)
		if _, isRange, _ := parseRevRange(r, a.FromRef); isRange && a.ToRef == "" && !a.Cached {
			kind = diffTrees
		}
		po := s.patch(diffTrees)
		po.attr = loadAttributes(r, kind != diffTrees)
		return po.detectRenames(cs)
	}
	var from, to map[string]side
	// A..B and A...B (handle_dotdot): the trees of A (of the merge base)
	// and B; with a second revision git prints its usage.
	if a.ToRef != "" {
		for _, rev := range []string{a.FromRef, a.ToRef} {
			if _, ok, err := parseRevRange(r, rev); err != nil {
				return nil, err
			} else if ok {
				return nil, errDiffUsage
			}
		}
	}
	rr, isRange, err := parseRevRange(r, a.FromRef)
	if err != nil {
		return nil, err
	}
	if isRange && a.Cached {
		// --cached compares the index with one commit: a range is two.
		return nil, errDiffUsage
	}
	if isRange && a.ToRef == "" {
		ft, tt, err := rangeTrees(ctx, r, rr)
		if err != nil {
			return nil, err
		}
		if from, err = treeFiles(r, ft); err != nil {
			return nil, err
		}
		if to, err = treeFiles(r, tt); err != nil {
			return nil, err
		}
		return renames(diffSides(from, to, match)), nil
	}
	if a.Cached || a.ToRef == "" {
		// A patch against the worktree looks into submodules for
		// dirtiness (diff_setup_done sets dirty_submodules with -p).
		if !a.Cached && !a.NameOnly && (!a.Stat || a.Unified != nil) {
			idx, err := r.Storer.Index()
			if err != nil {
				return nil, err
			}
			if err := checkSubmodulePaths(r, idx, match); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case a.FromRef != "" && a.ToRef != "":
		ft, err := resolveTree(r, a.FromRef)
		if err != nil {
			return nil, err
		}
		tt, err := resolveTree(r, a.ToRef)
		if err != nil {
			return nil, err
		}
		if from, err = treeFiles(r, ft); err != nil {
			return nil, err
		}
		if to, err = treeFiles(r, tt); err != nil {
			return nil, err
		}
	case a.Cached:
		// The index against HEAD, or against the one revision given
		// (git diff --cached <commit>).
		ht, err := headTree(r)
		if a.FromRef != "" {
			ht, err = resolveTree(r, a.FromRef)
		}
		if err != nil {
			return nil, err
		}
		if from, err = treeFiles(r, ht); err != nil {
			return nil, err
		}
		var conflicts map[string]*conflictSides
		if to, conflicts, err = stagedIndexFiles(r); err != nil {
			return nil, err
		}
		for p := range conflicts {
			delete(from, p) // shown as unmerged, not as a change
		}
		dropIntentToAdd(to, nil)
		changes := renames(diffSides(from, to, match))
		return unmergedChanges(changes, conflicts, match, nil, false), nil
	case a.FromRef != "":
		ft, err := resolveTree(r, a.FromRef)
		if err != nil {
			return nil, err
		}
		if from, err = treeFiles(r, ft); err != nil {
			return nil, err
		}
		// git diff <commit> looks at the worktree files the index tracks:
		// a path only the commit has is deleted, even if an untracked file
		// of that name exists.
		idx, err := indexFiles(r)
		if err != nil {
			return nil, err
		}
		if to, err = worktreeFiles(r, s, idx); err != nil {
			return nil, err
		}
	default:
		var conflicts map[string]*conflictSides
		if from, conflicts, err = stagedIndexFiles(r); err != nil {
			return nil, err
		}
		// An unmerged path is diffed from its stage 2 (ours), when it
		// has one.
		for p, cs := range conflicts {
			if cs[2] != nil {
				from[p] = *cs[2]
			}
		}
		if to, err = worktreeFiles(r, s, from); err != nil {
			return nil, err
		}
		// A file added with intent to add is new in the worktree.
		dropIntentToAdd(from, to)
		// With a patch to print (-U makes --stat print one too), a path
		// with both sides is shown combined.
		patch := !a.NameOnly && (!a.Stat || a.Unified != nil)
		sides := diffSides(from, to, match)
		dsts := unmergedRenameDsts(r, s, conflicts, match, patch)
		for _, d := range dsts {
			sides = append(sides, d)
		}
		changes := renames(sides)
		if len(dsts) > 0 {
			kept := changes[:0]
			for _, c := range changes {
				if dsts[c.path] != c {
					kept = append(kept, c)
				}
			}
			changes = kept
		}
		// A combined diff's result mode is the file's own, core.filemode
		// notwithstanding (combine-diff.c canon_mode of the stat).
		if w, err := worktreeOf(r); err == nil {
			for p := range conflicts {
				if res, ok := to[p]; ok {
					if info, err := w.Filesystem.Lstat(p); err == nil {
						res.mode = modeOf(info)
						to[p] = res
					}
				}
			}
		}
		out := unmergedChanges(changes, conflicts, match, to, patch)
		for _, c := range out {
			if d := dsts[c.path]; d != nil && c.unmerged && d.oldPath != "" {
				c.oldPath, c.copied, c.score = d.oldPath, d.copied, d.score
			}
		}
		if w, err := worktreeOf(r); err == nil {
			for _, c := range out {
				if c.combined != nil && !c.combined.hasResult {
					info, err := w.Filesystem.Lstat(c.path)
					c.combined.dirInPlace = err == nil && info.IsDir()
				}
			}
		}
		return out, nil
	}
	return renames(diffSides(from, to, match)), nil
}

// errDiffUsage is git diff's usage, printed when a range comes with a
// second revision.
var errDiffUsage = &tools.Error{Kind: tools.KindBadArgs, Message: "usage: git diff [<options>] [<commit>] [--] [<path>...]\n" +
	"   or: git diff [<options>] --cached [--merge-base] [<commit>] [--] [<path>...]\n" +
	"   or: git diff [<options>] [--merge-base] <commit> [<commit>...] <commit> [--] [<path>...]\n" +
	"   or: git diff [<options>] <commit>...<commit> [--] [<path>...]\n" +
	"   or: git diff [<options>] <blob> <blob>\n" +
	"   or: git diff [<options>] --no-index [--] <path> <path>"}

// diffSides lists the differences of the paths match selects (nil: all).
func diffSides(from, to map[string]side, match func(string) bool) []*change {
	names := map[string]bool{}
	for p := range from {
		names[p] = true
	}
	for p := range to {
		names[p] = true
	}
	var out []*change
	for p := range names {
		if match != nil && !match(p) {
			continue
		}
		f, inF := from[p]
		t, inT := to[p]
		if inF && inT && f.hash == t.hash && f.mode == t.mode {
			continue
		}
		c := &change{path: p}
		if inF {
			c.oldMode, c.oldHash, c.oldLoaded = f.mode, f.hash, f.load
		}
		if inT {
			c.newMode, c.newHash, c.newLoad, c.newWorktree = t.mode, t.hash, t.load, t.worktree
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

func render(changes []*change, nameOnly, stat bool, po patchOpts) string {
	var b strings.Builder
	switch {
	case nameOnly:
		for _, c := range changes {
			b.WriteString(po.quote(c.path) + "\n")
		}
	case stat:
		writeStat(&b, changes, po)
	default:
		for _, c := range changes {
			switch {
			case c.combined != nil:
				cr := c.combined
				writeCombined(&b, po, c.path, cr.parents, cr.has, cr.result, cr.hasResult, cr.dirInPlace)
			case c.unmerged:
				// run_diff_cmd names the pair's first path: a rename's
				// source (unmergedRenameDsts).
				name := c.path
				if c.oldPath != "" {
					name = c.oldPath
				}
				b.WriteString("* Unmerged path " + name + "\n")
			default:
				writePatch(&b, c, po)
			}
		}
	}
	return b.String()
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "0000000"
	}
	return h.String()[:7]
}

// writePatch writes one file's patch in git's order (diff.c builtin_diff
// and fill_metainfo): the mode lines, then similarity and rename lines,
// then the index line (with the mode only when it did not change); the
// ---/+++ names only when there is a hunk to follow them.
func writePatch(b *strings.Builder, c *change, po patchOpts) {
	if typeChanged(c.oldMode, c.newMode) {
		// A file that became a link (or a gitlink, or the reverse) is
		// printed as its deletion, then its creation (diff.c run_diff).
		del, add := *c, *c
		del.newMode, del.newHash, del.newData, del.newLoad = 0, plumbing.ZeroHash, nil, nil
		add.oldMode, add.oldHash, add.oldData, add.oldLoaded = 0, plumbing.ZeroHash, nil, nil
		writeOnePatch(b, &del, po)
		writeOnePatch(b, &add, po)
		return
	}
	writeOnePatch(b, c, po)
}

// writeOnePatch is writePatch of a change that is not a type change.
func writeOnePatch(b *strings.Builder, c *change, po patchOpts) {
	from := c.path
	if c.oldPath != "" {
		from = c.oldPath
	}
	a, bb := po.aPrefix+from, po.bPrefix+c.path
	fmt.Fprintf(b, "diff --git %s %s\n", po.quote(a), po.quote(bb))
	var meta strings.Builder
	if c.oldPath != "" {
		verb := "rename"
		if c.copied {
			verb = "copy"
		}
		fmt.Fprintf(&meta, "similarity index %d%%\n%s from %s\n%s to %s\n", c.score, verb, po.quote(c.oldPath), verb, po.quote(c.path))
	}
	if c.oldHash != c.newHash {
		fmt.Fprintf(&meta, "index %s..%s", po.short(c.oldHash), po.short(c.newHash))
		if c.oldMode == c.newMode {
			fmt.Fprintf(&meta, " %06o", c.oldMode)
		}
		meta.WriteString("\n")
	}
	switch {
	case c.oldMode == 0:
		fmt.Fprintf(b, "new file mode %06o\n", c.newMode)
	case c.newMode == 0:
		fmt.Fprintf(b, "deleted file mode %06o\n", c.oldMode)
	case c.oldMode != c.newMode:
		fmt.Fprintf(b, "old mode %06o\nnew mode %06o\n", c.oldMode, c.newMode)
	}
	b.WriteString(meta.String())
	if c.oldHash == c.newHash {
		return
	}
	var oldData, newData []byte
	if c.oldMode != 0 {
		oldData = c.old()
	}
	if c.newMode != 0 {
		newData = c.new()
	}
	fromName, toName := po.quote(a), po.quote(bb)
	if c.oldMode == 0 {
		fromName = "/dev/null"
	}
	if c.newMode == 0 {
		toName = "/dev/null"
	}
	if po.binary(c, oldData, newData) {
		if bytes.Equal(oldData, newData) {
			return // builtin_diff's "quite common confusing case": same bytes
		}
		fmt.Fprintf(b, "Binary files %s and %s differ\n", fromName, toName)
		return
	}
	var hunks strings.Builder
	writeHunks(&hunks, oldData, newData, po, po.funcMatcherFor(c))
	if hunks.Len() == 0 {
		return
	}
	// git ends a ---/+++ name holding a space with a tab, for patch(1).
	tab := func(name string) string {
		if name != "/dev/null" && strings.Contains(name, " ") {
			return name + "\t"
		}
		return name
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n", tab(fromName), tab(toName))
	b.WriteString(hunks.String())
}

type op struct {
	kind byte // ' ', '-', '+'
	line []byte
	o, n int // line numbers (1-based) in old/new before this op
}

// editScript is the line edit script from a to b (their records) with
// git's own xdiff change script, so ties between equal lines break the way
// git breaks them.
func (po patchOpts) editScript(a, b [][]byte) []op {
	hs := po.changes(bytes.Join(a, nil), bytes.Join(b, nil))
	var ops []op
	i, j := 0, 0
	for _, h := range hs {
		for i < h.I1 && j < h.I2 {
			ops = append(ops, op{' ', a[i], i, j})
			i, j = i+1, j+1
		}
		for ; i < h.I1+h.Chg1; i++ {
			ops = append(ops, op{'-', a[i], i, j})
		}
		for ; j < h.I2+h.Chg2; j++ {
			ops = append(ops, op{'+', b[j], i, j})
		}
	}
	for i < len(a) && j < len(b) {
		ops = append(ops, op{' ', a[i], i, j})
		i, j = i+1, j+1
	}
	for ; i < len(a); i++ {
		ops = append(ops, op{'-', a[i], i, j})
	}
	for ; j < len(b); j++ {
		ops = append(ops, op{'+', b[j], i, j})
	}
	return ops
}

// lineChanges is xdiff's change script of a and b for a printed diff.
// Where xdiff gives up (histogram's chain limit, where git dies with
// "unable to generate diff", or an unknown diff.algorithm) Myers' script
// stands in, so a patch is always printed; Myers has no give-up and runs
// here without a deadline, so it cannot fail.
func lineChanges(a, b []byte, p xdiff.Params) []xdiff.Change {
	hs, err := xdiff.Diff(context.Background(), a, b, p)
	if err != nil {
		p.Algorithm = "myers"
		hs, _ = xdiff.Diff(context.Background(), a, b, p)
	}
	return hs
}

func writeHunks(b *strings.Builder, oldData, newData []byte, po patchOpts, fm funcMatcher) {
	ctx := po.ctx
	a, bl := xdiff.Records(oldData), xdiff.Records(newData)
	ops := po.editScript(a, bl)
	for start := 0; start < len(ops); {
		// find next change
		k := start
		for k < len(ops) && ops[k].kind == ' ' {
			k++
		}
		if k == len(ops) {
			break
		}
		hs := k - ctx
		if hs < start {
			hs = start
		}
		// extend through changes separated by at most 2*ctx context lines
		end := k
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run < len(ops) && run-end <= 2*ctx+po.interHunk {
				end = run
				continue
			}
			end = min(end+ctx, len(ops))
			break
		}
		oStart, nStart := ops[hs].o, ops[hs].n
		oCount, nCount := 0, 0
		for _, o := range ops[hs:end] {
			if o.kind != '+' {
				oCount++
			}
			if o.kind != '-' {
				nCount++
			}
		}
		b.WriteString(saneTruncateLine(fmt.Sprintf("@@ -%s +%s @@%s", hunkRange(oStart, oCount), hunkRange(nStart, nCount), funcName(a, oStart, fm))))
		b.WriteByte('\n')
		for _, o := range ops[hs:end] {
			line := o.line
			if o.kind != ' ' || !po.suppressBlankEmpty || !(len(line) == 1 && line[0] == '\n') {
				b.WriteByte(o.kind)
			}
			b.Write(line)
			if !bytes.HasSuffix(line, []byte("\n")) {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
		start = end
	}
}

// saneTruncateLine is diff.c's sane_truncate_line on a hunk header: the
// line ends before its first byte that does not start a whole UTF-8
// character as git's pick_one_utf8_char reads one (a function name cut
// at 80 bytes inside a character, a Latin-1 byte; U+FFFE and U+FFFF are
// refused too).
func saneTruncateLine(line string) string {
	for i := 0; i < len(line); {
		if line[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		if (r == utf8.RuneError && size <= 1) || r == 0xfffe || r == 0xffff {
			return line[:i]
		}
		i += size
	}
	return line
}

func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// funcName is git's default hunk-header context: the nearest line above
// the hunk that starts with a letter, '_' or '$'.
func funcName(lines [][]byte, before int, fm funcMatcher) string {
	for i := before - 1; i >= 0; i-- {
		l := lines[i]
		if fm != nil {
			// A driver's rule: the first group, else the match.
			if h, ok := fm.header(l); ok {
				if h == "" {
					return ""
				}
				return " " + h
			}
			continue
		}
		if len(l) > 0 && (l[0] == '_' || l[0] == '$' || (l[0]|0x20 >= 'a' && l[0]|0x20 <= 'z')) {
			// def_ff: at most 80 bytes, then trailing white space off.
			s := string(l)
			if len(s) > 80 {
				s = s[:80]
			}
			s = strings.TrimRight(s, " \t\r\n\v\f")
			if s == "" {
				return ""
			}
			return " " + s
		}
	}
	return ""
}

// counts is a file's diffstat: lines added and deleted, or for a binary
// file the new and old sizes (zero when the content is the same).
func counts(c *change, po patchOpts) (int, int, bool) {
	// builtin_diffstat diffs with the diff's own context: with none
	// (-U0) xdi_diff trims the common tail first, which can align the
	// lines otherwise, and counts with it.
	var oldData, newData []byte
	if c.oldMode != 0 {
		oldData = c.old()
	}
	if c.newMode != 0 {
		newData = c.new()
	}
	if po.binary(c, oldData, newData) {
		if c.oldHash == c.newHash && !c.newWorktree {
			return 0, 0, true
		}
		return len(newData), len(oldData), true
	}
	add, del := 0, 0
	for _, o := range po.editScript(xdiff.Records(oldData), xdiff.Records(newData)) {
		switch o.kind {
		case '+':
			add++
		case '-':
			del++
		}
	}
	return add, del, false
}

// writeStat is git's diffstat (diff.c show_stats) for an 80-column
// output: names cut from the left with "..." when they do not fit, the
// graph scaled with scale_linear, binary files as "Bin old -> new bytes".
func writeStat(b *strings.Builder, changes []*change, po patchOpts) {
	if len(changes) == 0 {
		return
	}
	type row struct {
		name     string
		add, del int
		bin      bool
		unmerged bool
	}
	rows := make([]row, 0, len(changes))
	maxLen, maxChange, numberW, binW := 0, 0, 0, 0
	files := 0
	for _, c := range changes {
		if c.unmerged {
			// "Unmerged" takes the place of the count (8 columns); the
			// row is named by the pair's first path (a rename's source).
			name := po.quote(c.path)
			if c.oldPath != "" {
				name = po.quote(c.oldPath)
			}
			rows = append(rows, row{name: name, unmerged: true})
			maxLen = max(maxLen, pretty.StrWidth(name))
			binW = max(binW, 8)
			continue
		}
		files++
		a, d, bin := counts(c, po)
		name := po.quote(c.path)
		if c.oldPath != "" {
			name = renameName(po.settings, c.oldPath, c.path)
		}
		rows = append(rows, row{name: name, add: a, del: d, bin: bin})
		maxLen = max(maxLen, pretty.StrWidth(name))
		if bin {
			binW = max(binW, 14+decimalWidth(a)+decimalWidth(d))
			numberW = 3
			continue
		}
		maxChange = max(maxChange, a+d)
	}
	width := 80
	numberW = max(numberW, decimalWidth(maxChange))
	if width < 16+6+numberW {
		width = 16 + 6 + numberW
	}
	graphW := maxChange
	if maxChange+4 <= binW {
		graphW = binW - 4
	}
	if po.statGraphWidth > 0 && po.statGraphWidth < graphW {
		graphW = po.statGraphWidth
	}
	nameW := maxLen
	if nameW+numberW+6+graphW > width {
		if graphW > width*3/8-numberW-6 {
			graphW = max(width*3/8-numberW-6, 6)
		}
		if nameW > width-numberW-6-graphW {
			nameW = width - numberW - 6 - graphW
		} else {
			graphW = width - numberW - 6 - nameW
		}
	}
	adds, dels := 0, 0
	for _, r := range rows {
		prefix, name := "", r.name
		if w := pretty.StrWidth(name); nameW < w {
			// Characters off the left until the rest fits, then from the
			// next '/' on (show_stats).
			prefix = "..."
			keep := max(nameW-3, 0)
			for w > keep && name != "" {
				_, size := utf8.DecodeRuneInString(name)
				w -= pretty.StrWidth(name[:size])
				name = name[size:]
			}
			if i := strings.IndexByte(name, '/'); i >= 0 {
				name = name[i:]
			}
		}
		padding := max(nameW-len(prefix)-pretty.StrWidth(name), 0)
		if r.unmerged {
			// git ends this record without a newline (show_stats).
			fmt.Fprintf(b, " %s%s%*s | Unmerged", prefix, name, padding, "")
			continue
		}
		if r.bin {
			fmt.Fprintf(b, " %s%s%*s | %*s", prefix, name, padding, "", numberW, "Bin")
			if r.add == 0 && r.del == 0 {
				b.WriteString("\n")
				continue
			}
			fmt.Fprintf(b, " %d -> %d bytes\n", r.del, r.add)
			continue
		}
		adds += r.add
		dels += r.del
		add, del := r.add, r.del
		if graphW <= maxChange {
			total := scaleLinear(add+del, graphW, maxChange)
			if total < 2 && add > 0 && del > 0 {
				total = 2
			}
			if add < del {
				add = scaleLinear(add, graphW, maxChange)
				del = total - add
			} else {
				del = scaleLinear(del, graphW, maxChange)
				add = total - del
			}
		}
		sep := ""
		if r.add+r.del > 0 {
			sep = " "
		}
		fmt.Fprintf(b, " %s%s%*s | %*d%s%s%s\n", prefix, name, padding, "", numberW, r.add+r.del, sep,
			strings.Repeat("+", add), strings.Repeat("-", del))
	}
	if files == 0 {
		b.WriteString(" 0 files changed\n") // print_stat_summary
		return
	}
	fmt.Fprintf(b, " %d file%s changed", files, plural(files))
	if adds > 0 || dels == 0 {
		fmt.Fprintf(b, ", %d insertion%s(+)", adds, plural(adds))
	}
	if dels > 0 || adds == 0 {
		fmt.Fprintf(b, ", %d deletion%s(-)", dels, plural(dels))
	}
	b.WriteString("\n")
}

// scaleLinear is git's: at least one column for any change.
func scaleLinear(it, width, maxChange int) int {
	if it == 0 {
		return 0
	}
	return 1 + it*(width-1)/maxChange
}

func decimalWidth(n int) int { return len(strconv.Itoa(n)) }

// writePatches writes one patch per file into dir (inside the jail), named
// NNNN-<path with / as ->.patch, and returns the list of written files.
func writePatches(d Deps, dir string, changes []*change, po patchOpts) (string, error) {
	rel, err := d.FS.Resolve(dir)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for i, c := range changes {
		var b strings.Builder
		writePatch(&b, c, po)
		name := fmt.Sprintf("%s/%04d-%s.patch", rel, i+1, strings.ReplaceAll(c.path, "/", "-"))
		if err := d.FS.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			return "", err
		}
		out.WriteString(name + "\n")
	}
	return out.String(), nil
}
