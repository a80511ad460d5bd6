package gittools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/pretty"
	"github.com/tgp-go/tgp/internal/revision"
	"github.com/tgp-go/tgp/internal/revparse"
	"github.com/tgp-go/tgp/tools"
)

type showArgs struct {
	Commit     string `json:"commit,omitempty" default:"\"HEAD\"" jsonschema:"Commit to show"`
	Stat       bool   `json:"stat,omitempty" default:"false" jsonschema:"Show diffstat only (--stat)"`
	NameOnly   bool   `json:"name_only,omitempty" default:"false" jsonschema:"Show changed file names only (--name-only)"`
	Format     string `json:"format,omitempty" jsonschema:"Custom pretty format for commit info"`
	MaxBytes   int    `json:"max_bytes,omitempty" minimum:"1" maximum:"5000000" jsonschema:"Maximum output bytes before truncation (default: tools.git.max_bytes in the configuration, 1048576)"`
	TimeoutMS  int    `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir string `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func showTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[showArgs]{
		Name:        "git_show",
		Facts:       tools.Facts{ReadsToolbox: true},
		Description: "Show a commit with its patch (git show), or its --stat / --name-only, with an optional --format.",
		Annotations: tools.Annotations{ReadOnly: true, Idempotent: true, Risk: tools.RiskLow},
		Summary:     func(a showArgs) string { return "Show commit " + a.Commit },
		Validate:    func(a showArgs) error { return checkArg("commit_ref", a.Commit) },
		Run: func(ctx context.Context, a showArgs) (tools.Result, error) {
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, a.MaxBytes, func(ctx context.Context, r *git.Repository) (string, error) {
				return showObject(ctx, r, d.settings(r), d.relDir(a.WorkingDir), a)
			})
		},
	})
}

// showObject shows what a revision names, as git show does: a commit with
// its patch, an annotated tag's header and then its target, a tree's
// entries, a blob's bytes.
func showObject(ctx context.Context, r *git.Repository, cfg *settings, wd string, a showArgs) (string, error) {
	pc := newPrettyContext(r, cfg, time.Now())
	rr, isRange, err := parseRevRange(r, a.Commit)
	if err != nil {
		return "", err
	}
	if isRange {
		// A range is walked: each commit as git show shows one, in git
		// log's order (git show A..B is git log -p --cc A..B).
		commits, left, err := rr.Commits(ctx, r)
		if err != nil {
			return "", err
		}
		pc.LeftSide = left
		var b strings.Builder
		for i, c := range commits {
			out, err := show(pc, cfg, wd, r, c, a, i > 0)
			if err != nil {
				return "", err
			}
			b.WriteString(out)
		}
		return b.String(), nil
	}
	obj, err := revparse.Object(r, a.Commit)
	if err != nil {
		return "", revisionError(r, a.Commit)
	}
	cf, err := commitFormat(pc, a.Format, false)
	if err != nil {
		return "", err
	}
	shownOne := false
	var b strings.Builder
	for {
		switch o := obj.(type) {
		case *object.Tag:
			// builtin/log.c: "tag <name>", the tagger as the format
			// shows an author (no mailmap), the rest of the object from
			// the blank line on; a blank line before a further tag or
			// tree, show_log's separator before a commit.
			if shownOne {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "tag %s\n", o.Name)
			raw, err := rawObject(r, o.Hash, plumbing.TagObject)
			if err != nil {
				return "", err
			}
			off := 0
			for off < len(raw) && raw[off] != '\n' {
				end := strings.IndexByte(raw[off:], '\n')
				next := len(raw)
				if end >= 0 {
					next = off + end + 1
				}
				if ident, ok := strings.CutPrefix(raw[off:next], "tagger "); ok {
					pc.Tagger(&b, cf, strings.TrimSuffix(ident, "\n"))
				}
				off = next
			}
			b.WriteString(raw[off:])
			shownOne = true
			next, err := o.Object()
			if err != nil {
				return "", err
			}
			obj = next
			continue
		case *object.Tree:
			if shownOne {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "tree %s\n\n", a.Commit)
			for _, e := range o.Entries {
				name := e.Name // git show prints tree entries unquoted
				if e.Mode == filemode.Dir {
					name += "/"
				}
				b.WriteString(name + "\n")
			}
			return b.String(), nil
		case *object.Blob:
			rd, err := o.Reader()
			if err != nil {
				return "", err
			}
			defer rd.Close()
			data, err := io.ReadAll(rd)
			if err != nil {
				return "", err
			}
			b.Write(data)
			return b.String(), nil
		case *object.Commit:
			out, err := show(pc, cfg, wd, r, o, a, shownOne)
			if err != nil {
				return "", err
			}
			return b.String() + out, nil
		default:
			return "", unknownRevision(a.Commit)
		}
	}
}

// revisionError is git's complaint about a revision that names nothing:
// "<rev>:<path>" whose commit resolves but whose tree lacks the path gets
// get_oid_with_context's wording, anything else "unknown revision".
func revisionError(r *git.Repository, rev string) error {
	base, p, ok := revparse.SplitPath(rev)
	if !ok || p == "" {
		return unknownRevision(rev)
	}
	if _, err := revparse.Commit(r, base); err != nil {
		return unknownRevision(rev)
	}
	msg := fmt.Sprintf("fatal: path '%s' does not exist in '%s'", p, base)
	if w, err := worktreeOf(r); err == nil {
		if _, err := w.Filesystem.Lstat(p); err == nil {
			msg = fmt.Sprintf("fatal: path '%s' exists on disk, but not in '%s'", p, base)
		}
	}
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: msg}
}

func show(pc *pretty.Context, cfg *settings, wd string, r *git.Repository, c *object.Commit, a showArgs, shownOne bool) (string, error) {
	cf, err := commitFormat(pc, a.Format, false)
	if err != nil {
		return "", err
	}
	// A shallow boundary is a root to git (its parents are grafted away).
	parents := c.ParentHashes
	if revision.Shallow(r)[c.Hash] {
		parents = nil
	}
	diff, err := showDiff(r, cfg, wd, c, parents, a)
	if err != nil {
		return "", err
	}
	lp := newLogPrinter(r, pc, cf)
	lp.ShownOne, lp.ShowNotes = shownOne, a.Format == ""
	defer lp.Close()
	var b strings.Builder
	lp.Show(&b, c)
	if pc.Err != nil {
		return "", prettyError(pc.Err)
	}
	switch {
	case len(parents) > 1:
		// diff_tree_combined ends the log entry whatever follows.
		if !cf.Empty() {
			b.WriteByte('\n')
		}
		b.WriteString(diff)
	case diff != "":
		lp.BeforeDiff(&b)
		b.WriteString(diff)
	}
	return b.String(), nil
}

// showDiff is the diff git show prints under a commit: the patch, --stat
// or --name-only against its parent; for a merge, git's dense combined
// diff (--stat against the first parent).
func showDiff(r *git.Repository, cfg *settings, wd string, c *object.Commit, parentHashes []plumbing.Hash, a showArgs) (string, error) {
	po := cfg.patch(diffTrees)
	po.ab = newAbbrever(r)
	defer po.ab.Close()
	po.attr = loadAttributes(r, false)
	if len(parentHashes) == 0 && !po.showRoot {
		return "", nil // log.showRoot=false: a root commit shows no diff
	}
	to, err := c.Tree()
	if err != nil {
		return "", err
	}
	toFiles, err := treeFiles(r, to)
	if err != nil {
		return "", err
	}
	if len(parentHashes) > 1 {
		var parents []map[string]side
		for _, ph := range parentHashes {
			pt, err := commitTree(r, ph)
			if err != nil {
				return "", err
			}
			files, err := treeFiles(r, pt)
			if err != nil {
				return "", err
			}
			parents = append(parents, files)
		}
		if a.Stat && !a.NameOnly {
			return render(po.detectRenames(diffSides(parents[0], toFiles, nil)), false, true, po), nil
		}
		var b strings.Builder
		paths, srcs := combinedPairs(parents, toFiles)
		for _, p := range paths {
			if a.NameOnly {
				b.WriteString(po.quote(p) + "\n")
				continue
			}
			ps := make([]side, len(parents))
			has := make([]bool, len(parents))
			for i := range parents {
				ps[i], has[i] = srcs[i][p].s, srcs[i][p].ok
			}
			res, hasRes := toFiles[p]
			writeCombined(&b, po, p, ps, has, res, hasRes, false)
		}
		return b.String(), nil
	}
	var from *object.Tree
	if len(parentHashes) == 1 {
		// A shallow clone's boundary commit has no parent object: git
		// shows it as a root.
		if from, err = commitTree(r, parentHashes[0]); err != nil && !errors.Is(err, plumbing.ErrObjectNotFound) {
			return "", err
		}
	}
	fromFiles, err := treeFiles(r, from)
	if err != nil {
		return "", err
	}
	changes := cfg.relativize(po.detectRenames(diffSides(fromFiles, toFiles, cfg.relativeMatch(wd, nil))), wd)
	if len(changes) == 0 {
		return "", nil
	}
	return render(changes, a.NameOnly, a.Stat, po), nil
}

// rawObject is an object's stored bytes.
func rawObject(r *git.Repository, h plumbing.Hash, t plumbing.ObjectType) (string, error) {
	obj, err := r.Storer.EncodedObject(t, h)
	if err != nil {
		return "", err
	}
	rd, err := obj.Reader()
	if err != nil {
		return "", err
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	return string(data), err
}

// commitTree is the tree of a commit given by hash.
func commitTree(r *git.Repository, h plumbing.Hash) (*object.Tree, error) {
	c, err := object.GetCommit(r.Storer, h)
	if err != nil {
		return nil, err
	}
	return c.Tree()
}

// parentSide is a merge result path's source in one parent.
type parentSide struct {
	s  side
	ok bool
}

// combinedPairs is combine-diff.c's find_paths_generic: each parent is
// diffed against the result with rename detection (diff.renames is on by
// default), and the paths changed against every parent are kept, in
// order, each with its source in every parent (a renamed file's source
// is the file it was renamed from).
func combinedPairs(parents []map[string]side, result map[string]side) ([]string, []map[string]parentSide) {
	srcs := make([]map[string]parentSide, len(parents))
	var paths []string
	for i, m := range parents {
		srcs[i] = map[string]parentSide{}
		for _, c := range detectRenames(diffSides(m, result, nil)) {
			ps := parentSide{}
			if c.oldMode != 0 {
				ps = parentSide{s: side{mode: c.oldMode, hash: c.oldHash, load: c.oldLoaded}, ok: true}
			}
			srcs[i][c.path] = ps
			if i == 0 {
				paths = append(paths, c.path)
			}
		}
	}
	kept := paths[:0]
	for _, p := range paths {
		in := true
		for i := 1; i < len(srcs); i++ {
			if _, ok := srcs[i][p]; !ok {
				in = false
				break
			}
		}
		if in {
			kept = append(kept, p)
		}
	}
	return kept, srcs
}
