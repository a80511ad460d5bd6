package gittools

// git_blame is git 2.39's blame (blame.c, builtin/blame.c) rebuilt on
// go-git: a scoreboard of "origins" (a path in a commit) holding the lines
// still to be explained, processed newest commit first; each origin hands
// the lines it did not change to every parent in turn (the whole file when
// the blob is identical, else through git's xdiff of the two blobs), looks
// for a whole-file rename when the path is absent from a parent, and keeps
// the rest. With no commit the working tree file is blamed through git's
// fake "Not Committed Yet" commit whose parents are HEAD (and MERGE_HEAD),
// diffed against the index with the file's entry replaced. The text is
// git's default format: abbreviated names one longer than unique (boundary
// commits '^' and one shorter), the original file name when any line came
// from another path, authors padded to the widest among the lines shown.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/commitgraph"
	"github.com/tgp-go/tgp/internal/gitformat/rawobj"
	"github.com/tgp-go/tgp/internal/revision"
	"github.com/tgp-go/tgp/internal/revparse"
	"github.com/tgp-go/tgp/internal/xdiff"
	"github.com/tgp-go/tgp/tools"
)

type blameArgs struct {
	Path       string `json:"path" minLength:"1" jsonschema:"File path to blame"`
	StartLine  *int   `json:"start_line,omitempty" minimum:"1" jsonschema:"Start line number for range (1-indexed)"`
	EndLine    *int   `json:"end_line,omitempty" minimum:"1" jsonschema:"End line number for range (1-indexed)"`
	Commit     string `json:"commit,omitempty" jsonschema:"Blame at specific commit instead of HEAD"`
	MaxBytes   int    `json:"max_bytes,omitempty" minimum:"1" maximum:"5000000" jsonschema:"Maximum output bytes before truncation (default: tools.git.max_bytes in the configuration, 1048576)"`
	TimeoutMS  int    `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir string `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func blameTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[blameArgs]{
		Name:        "git_blame",
		Facts:       tools.Facts{ReadsToolbox: true},
		Description: "Show which commit last changed each line of a file (git blame), optionally for a line range or at a commit.",
		Annotations: tools.Annotations{ReadOnly: true, Idempotent: true, Risk: tools.RiskLow},
		Summary:     func(a blameArgs) string { return "Blame " + a.Path },
		Validate: func(a blameArgs) error {
			if a.StartLine != nil && a.EndLine != nil && *a.StartLine > *a.EndLine {
				return tools.BadArg("start_line", "start_line must be <= end_line")
			}
			if err := checkArg("path", a.Path); err != nil {
				return err
			}
			if a.Commit != "" {
				return checkArg("commit_ref", a.Commit)
			}
			return nil
		},
		Run: func(ctx context.Context, a blameArgs) (tools.Result, error) {
			prefix := d.relDir(a.WorkingDir)
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, a.MaxBytes, func(ctx context.Context, r *git.Repository) (string, error) {
				return blame(ctx, r, prefix, a)
			})
		},
	})
}

func fatalf(format string, args ...any) error {
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: "fatal: " + fmt.Sprintf(format, args...)}
}

// bcommit is a commit of the scoreboard (the zero hash: the working tree).
type bcommit struct {
	hash     plumbing.Hash
	parents  []plumbing.Hash
	date     int64 // committer time: the queue's order
	author   string
	email    string
	ts       int64 // author time and git's raw zone (-0330 is -330)
	tz       int
	treeHash plumbing.Hash
	tree     *object.Tree // decoded when rename detection needs it
	boundary bool
	// pos is the commit's position in the commit-graph (inGraph).
	pos     uint32
	inGraph bool
	origins []*borigin
	fake    bool
}

// borigin is one path in one commit and the lines it still answers for.
type borigin struct {
	c        *bcommit
	path     string
	blob     plumbing.Hash
	mode     filemode.FileMode
	data     []byte
	loaded   bool
	suspects []bentry
}

// bentry is a run of n lines: lno in the final file, slno in the origin.
type bentry struct {
	lno, slno, n int
	o            *borigin
}

type scoreboard struct {
	ctx     context.Context
	r       *git.Repository
	s       storer.EncodedObjectStorer
	commits map[plumbing.Hash]*bcommit
	shallow map[plumbing.Hash]bool
	// walk holds a range's UNINTERESTING marks (A of A..B and the
	// ancestors git marked), the boundaries of the blame; nil without a
	// range.
	walk   *revision.LimitWalk
	queue  revision.DateQueue[*bcommit]
	guilty []bentry
	// index holds the paths of the index (for the fake commit), read
	// lazily; fakePath's entry is replaced by the working tree's.
	index     map[string]struct{}
	fakePath  string
	fakeEntry indexEntry
	// abbrevs finds unique abbreviations (opened by output).
	abbrevs *abbrevIndex
	cfg     blameConfig
	// graph is the root's commit-graph (nil: none); keys are the
	// changed-path filter keys of the paths asked about (filters false:
	// the graph has none); looks remembers the entries found in trees.
	graph   *commitgraph.Graph
	filters bool
	keys    map[string]*commitgraph.Key
	looks   map[lookKey]lookVal
	buf     []byte
}

// lookKey is an entry looked up by name in a raw tree, lookVal what was
// found.
type lookKey struct {
	tree plumbing.Hash
	name string
}

type lookVal struct {
	mode filemode.FileMode
	hash plumbing.Hash
	ok   bool
}

type indexEntry struct {
	hash plumbing.Hash
	mode filemode.FileMode
}

func blame(ctx context.Context, r *git.Repository, prefix string, a blameArgs) (string, error) {
	p, err := blamePath(r, prefix, a.Path)
	if err != nil {
		return "", err
	}
	sb := &scoreboard{ctx: ctx, r: r, s: r.Storer, commits: map[plumbing.Hash]*bcommit{}, shallow: map[plumbing.Hash]bool{}, cfg: readBlameConfig(r),
		graph: gitbackend.CommitGraph(r.Storer), keys: map[string]*commitgraph.Key{}, looks: map[lookKey]lookVal{}}
	sb.filters = sb.graph.HasFilters()
	if sh, err := r.Storer.Shallow(); err == nil {
		for _, h := range sh {
			sb.shallow[h] = true
		}
	}
	var final *borigin
	commit, name := a.Commit, a.Commit
	rangeArg := commit
	if rangeArg == ".." {
		// The revision blame takes is never a path: ".." is HEAD..HEAD.
		rangeArg = "HEAD..HEAD"
	}
	rr, isRange, err := parseRevRange(r, rangeArg)
	if err != nil {
		return "", err
	}
	if isRange {
		if commit, name, err = rangeFinal(ctx, r, rr); err != nil {
			return "", err
		}
	}
	if commit == "" {
		final, err = sb.fakeWorkingTree(p)
	} else {
		final, err = sb.finalAt(commit, name, p)
	}
	if err == nil && isRange {
		// The working tree's commit is one more commit of the walk, the
		// newest (added to git's pending objects when nothing else is
		// the final).
		var fake *revision.Node
		if final.c.fake {
			fake = revision.WorktreeNode(time.Now().Unix(), final.c.parents)
		}
		sb.walk, _, err = revision.WalkRange(ctx, r, rr, fake)
	}
	if err != nil {
		return "", err
	}
	data := final.data
	nl := countLines(data)
	from, to := 1, nl
	if a.StartLine != nil || a.EndLine != nil {
		bottom, top := 0, 0
		if a.StartLine != nil {
			bottom = *a.StartLine
		}
		if a.EndLine != nil {
			top = *a.EndLine
		}
		if (nl == 0 && (top != 0 || bottom != 0)) || nl < bottom {
			return "", fatalf("file %s has only %d line%s", p, nl, plural(nl))
		}
		if bottom < 1 {
			bottom = 1
		}
		if top < 1 || nl < top {
			top = nl
		}
		from, to = bottom, top
	}
	if nl == 0 {
		return "", nil
	}
	final.suspects = []bentry{{lno: from - 1, slno: from - 1, n: to - from + 1}}
	sb.push(final.c)
	if err := sb.assign(); err != nil {
		return "", err
	}
	return sb.output(p, data), nil
}

// blamePath is git's add_prefix: the path joined to the working
// directory's prefix and normalized like normalize_path_copy (a trailing
// "/", "." or ".." leaves a trailing slash); leaving the repository is an
// error.
func blamePath(r *git.Repository, prefix, p string) (string, error) {
	outside := func() error {
		top := ""
		if r != nil {
			if w, err := worktreeOf(r); err == nil {
				top = w.Filesystem.Root()
			}
		}
		return fatalf("'%s' is outside repository at '%s'", p, top)
	}
	if strings.HasPrefix(p, "/") {
		return "", outside()
	}
	src := p
	if prefix != "" {
		src = prefix + "/" + p
	}
	src = strings.TrimLeft(src, "/")
	var dst []byte
	for {
		if strings.HasPrefix(src, ".") {
			switch {
			case len(src) == 1:
				return string(dst), nil
			case src[1] == '/':
				src = strings.TrimLeft(src[2:], "/")
				continue
			case src[1] == '.' && (len(src) == 2 || src[2] == '/'):
				if len(src) == 2 {
					src = ""
				} else {
					src = strings.TrimLeft(src[3:], "/")
				}
				// Up one: dst ends with '/'.
				if len(dst) == 0 {
					return "", outside()
				}
				dst = dst[:len(dst)-1]
				for len(dst) > 0 && dst[len(dst)-1] != '/' {
					dst = dst[:len(dst)-1]
				}
				if src == "" {
					return string(dst), nil
				}
				continue
			}
		}
		i := strings.IndexByte(src, '/')
		if i < 0 {
			return string(append(dst, src...)), nil
		}
		dst = append(dst, src[:i+1]...)
		src = strings.TrimLeft(src[i+1:], "/")
		if src == "" {
			return string(dst), nil
		}
	}
}

// finalAt sets up the origin of path p at the revision rev, which git
// names name (a range's side) in its messages.
func (sb *scoreboard) finalAt(rev, name, p string) (*borigin, error) {
	h, err := resolveBlameRev(sb.r, rev)
	if err != nil {
		return nil, err
	}
	c, err := sb.commit(h)
	if err != nil {
		return nil, badRevision(rev)
	}
	e := sb.entry(c, p)
	if e == nil || e.mode == filemode.Submodule {
		return nil, fatalf("no such path %s in %s", p, name)
	}
	o := sb.origin(c, p, e.hash, e.mode)
	if _, err := sb.load(o); err != nil {
		return nil, fatalf("cannot read blob %s for path %s", e.hash, p)
	}
	return o, nil
}

// badRevision is setup_revisions' refusal of a revision after which
// "--" follows.
func badRevision(rev string) error { return fatalf("bad revision '%s'", rev) }

// resolveBlameRev resolves a revision to a commit the way blame's
// find_single_final does (revparse.FinalCommit), saying its refusals as
// git does.
func resolveBlameRev(r *git.Repository, rev string) (plumbing.Hash, error) {
	h, err := revparse.FinalCommit(r, rev)
	var short *revparse.ShortLogError
	switch {
	case err == nil:
		return h, nil
	case errors.As(err, &short):
		return plumbing.ZeroHash, fatalf("%s", short.Error())
	case errors.Is(err, revparse.ErrNotCommit):
		return plumbing.ZeroHash, fatalf("Non commit %s?", rev)
	}
	return plumbing.ZeroHash, badRevision(rev)
}

// commit loads a commit into the scoreboard (parents from .git/shallow
// cut as git's grafts do): from the commit-graph when it has it.
func (sb *scoreboard) commit(h plumbing.Hash) (*bcommit, error) {
	if c, ok := sb.commits[h]; ok {
		return c, nil
	}
	var c *bcommit
	if pos, ok := sb.graph.Find(h); ok {
		d := sb.graph.Commit(pos)
		c = &bcommit{hash: h, date: d.Time, treeHash: d.Tree, pos: pos, inGraph: true}
		if !sb.shallow[h] {
			for _, p := range d.Parents {
				c.parents = append(c.parents, sb.graph.Hash(p))
			}
		}
	} else {
		co, err := object.GetCommit(sb.s, h)
		if err != nil {
			return nil, err
		}
		c = &bcommit{hash: h, date: co.Committer.When.Unix(), treeHash: co.TreeHash}
		if !sb.shallow[h] {
			c.parents = co.ParentHashes
		}
	}
	sb.commits[h] = c
	return c, nil
}

// treeOf is c's decoded tree (rename detection walks it).
func (sb *scoreboard) treeOf(c *bcommit) (*object.Tree, error) {
	if c.tree == nil {
		t, err := object.GetTree(sb.s, c.treeHash)
		if err != nil {
			return nil, err
		}
		c.tree = t
	}
	return c.tree, nil
}

// lookTree finds name in the raw tree h, remembered.
func (sb *scoreboard) lookTree(h plumbing.Hash, name string) lookVal {
	k := lookKey{h, name}
	if v, ok := sb.looks[k]; ok {
		return v
	}
	var v lookVal
	if b, err := gitbackend.ReadRaw(sb.s, plumbing.TreeObject, h, sb.buf[:0]); err == nil {
		sb.buf = b
		v.mode, v.hash, v.ok = rawobj.FindTreeEntry(b, name)
	}
	sb.looks[k] = v
	return v
}

// entry is the non-tree entry at p in c (nil when absent or a tree).
func (sb *scoreboard) entry(c *bcommit, p string) *indexEntry {
	if c.fake {
		// The fake commit's index holds the working tree's entry at
		// the blamed path; no other path of it is ever looked up.
		if p == sb.fakePath {
			e := sb.fakeEntry
			return &e
		}
		if _, ok := sb.indexNames()[p]; ok {
			return &indexEntry{}
		}
		return nil
	}
	v := lookVal{mode: filemode.Dir, hash: c.treeHash, ok: true}
	for rest := p; ; {
		if v.mode != filemode.Dir {
			return nil
		}
		name, more, found := strings.Cut(rest, "/")
		if name == "" {
			return nil
		}
		if v = sb.lookTree(v.hash, name); !v.ok {
			return nil
		}
		if !found {
			break
		}
		rest = more // "" after a trailing slash: names no file
	}
	if v.mode == filemode.Dir {
		return nil
	}
	return &indexEntry{hash: v.hash, mode: v.mode}
}

// unchanged reports whether c's changed-path filter says for certain
// that c left path p as its first parent has it (git's
// maybe_changed_path).
func (sb *scoreboard) unchanged(c *bcommit, p string) bool {
	if !sb.filters || !c.inGraph {
		return false
	}
	k, ok := sb.keys[p]
	if !ok {
		k = commitgraph.NewKey(p)
		sb.keys[p] = k
	}
	return !sb.graph.MaybeChanged(c.pos, k)
}

// origin is git's get_origin: one origin per commit and path.
func (sb *scoreboard) origin(c *bcommit, p string, blob plumbing.Hash, mode filemode.FileMode) *borigin {
	for _, o := range c.origins {
		if o.path == p {
			o.blob, o.mode = blob, mode
			return o
		}
	}
	o := &borigin{c: c, path: p, blob: blob, mode: mode}
	c.origins = append(c.origins, o)
	return o
}

func (sb *scoreboard) load(o *borigin) ([]byte, error) {
	if o.loaded {
		return o.data, nil
	}
	data, err := readBlob(sb.s, o.blob)
	if err != nil {
		return nil, err
	}
	o.data, o.loaded = data, true
	return data, nil
}

// readBlob reads a blob's bytes (gitbackend's reader).
func readBlob(s storer.EncodedObjectStorer, h plumbing.Hash) ([]byte, error) {
	return gitbackend.ReadBlob(s, h)
}

// countLines is git's find_line_starts count: a last line without a
// newline counts.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

func (sb *scoreboard) push(c *bcommit) {
	sb.queue.Push(c, c.date)
}

// queueBlames is git's queue_blames: hand entries to an origin and queue
// its commit when nothing of it was pending.
func (sb *scoreboard) queueBlames(o *borigin, es []bentry) {
	if len(es) == 0 {
		return
	}
	if len(o.suspects) > 0 {
		o.suspects = append(o.suspects, es...)
		return
	}
	pending := false
	for _, x := range o.c.origins {
		if len(x.suspects) > 0 {
			pending = true
			break
		}
	}
	o.suspects = es
	if !pending {
		sb.push(o.c)
	}
}

// assign is git's assign_blame.
func (sb *scoreboard) assign() error {
	for sb.queue.Len() > 0 {
		c := sb.queue.Pop()
		for {
			if err := sb.ctx.Err(); err != nil {
				return err
			}
			var o *borigin
			for _, x := range c.origins {
				if len(x.suspects) > 0 {
					o = x
					break
				}
			}
			if o == nil {
				break
			}
			// A commit the range marked UNINTERESTING keeps its lines
			// (a boundary) and marks its parents, as assign_blame does.
			if n := sb.walkNode(c); n != nil && n.Uninteresting() {
				sb.walk.MarkParentsUninteresting(n)
			} else if err := sb.passBlame(o); err != nil {
				return err
			}
			if len(c.parents) == 0 && !sb.cfg.showRoot {
				c.boundary = true
			}
			for _, e := range o.suspects {
				e.o = o
				sb.guilty = append(sb.guilty, e)
			}
			o.suspects = nil
			// Like git's drop_origin_blob: a long history keeps only
			// the blobs still to be diffed (the working tree's cannot
			// be read again).
			if !c.fake {
				o.data, o.loaded = nil, false
			}
		}
	}
	// git prints '^' for a commit UNINTERESTING when it prints, marked
	// after blame passed through it or not.
	if sb.walk != nil {
		for h, c := range sb.commits {
			if sb.walk.Uninteresting(h) {
				c.boundary = true
			}
		}
	}
	return nil
}

// walkNode is c's node in a range's walk, parsed as git parses a commit
// blame looks at (which lets an UNINTERESTING mark spread through it);
// nil without a range or for the working tree.
func (sb *scoreboard) walkNode(c *bcommit) *revision.Node {
	if sb.walk == nil || c.fake {
		return nil
	}
	return sb.walk.Parsed(c.hash)
}

// parents are the scoreboard's parents of c; one that cannot be read is
// skipped, as git's repo_parse_commit failure is.
func (sb *scoreboard) parentsOf(c *bcommit) []*bcommit {
	var out []*bcommit
	for _, h := range c.parents {
		if p, err := sb.commit(h); err == nil {
			out = append(out, p)
		} else {
			out = append(out, nil)
		}
	}
	return out
}

// passBlame is git's pass_blame without -M/-C.
func (sb *scoreboard) passBlame(o *borigin) error {
	parents := sb.parentsOf(o.c)
	if len(parents) == 0 {
		return nil
	}
	sg := make([]*borigin, len(parents))
	for pass := 0; pass < 2; pass++ {
		for i, p := range parents {
			if sg[i] != nil || p == nil {
				continue
			}
			sb.walkNode(p) // git parses the parent here
			var po *borigin
			switch {
			case pass == 0 && i == 0 && sb.unchanged(o.c, o.path):
				po = sb.origin(p, o.path, o.blob, o.mode)
			case pass == 0:
				po = sb.findOrigin(p, o)
			default:
				var err error
				if po, err = sb.findRename(p, o); err != nil {
					return err
				}
			}
			if po == nil {
				continue
			}
			if po.blob == o.blob {
				if !po.loaded && o.loaded {
					po.data, po.loaded = o.data, true
				}
				es := o.suspects
				o.suspects = nil
				sb.queueBlames(po, es)
				return nil
			}
			same := false
			for j := 0; j < i; j++ {
				if sg[j] != nil && sg[j].blob == po.blob {
					same = true
					break
				}
			}
			if !same {
				sg[i] = po
			}
		}
	}
	for _, po := range sg {
		if po == nil {
			continue
		}
		if err := sb.passToParent(o, po); err != nil {
			return err
		}
		if len(o.suspects) == 0 {
			return nil
		}
	}
	return nil
}

func sameType(a, b filemode.FileMode) bool {
	kind := func(m filemode.FileMode) int {
		switch m {
		case filemode.Symlink:
			return 1
		case filemode.Submodule:
			return 2
		case filemode.Dir:
			return 3
		}
		return 0
	}
	return kind(a) == kind(b)
}

// findOrigin is git's find_origin: the same path in the parent unless it
// is absent there or changed type.
func (sb *scoreboard) findOrigin(p *bcommit, o *borigin) *borigin {
	pe := sb.entry(p, o.path)
	if pe == nil {
		return nil
	}
	if pe.hash == o.blob && pe.mode == o.mode {
		return sb.origin(p, o.path, o.blob, o.mode)
	}
	if !sameType(pe.mode, o.mode) {
		return nil
	}
	return sb.origin(p, o.path, pe.hash, pe.mode)
}

// passToParent is git's pass_blame_to_parent: lines outside the diff's
// hunks go to the parent, the rest stay.
func (sb *scoreboard) passToParent(o, po *borigin) error {
	if len(o.suspects) == 0 {
		return nil
	}
	pdata, err := sb.load(po)
	if err != nil {
		return nil // git dies; an unreadable parent blob explains nothing
	}
	odata, err := sb.load(o)
	if err != nil {
		return nil
	}
	hunks, err := xdiff.Diff(sb.ctx, pdata, odata, xdiff.Params{IndentHeuristic: sb.cfg.indentHeuristic, TrimTail: true})
	if err != nil {
		return err
	}
	sort.Slice(o.suspects, func(i, j int) bool { return o.suspects[i].slno < o.suspects[j].slno })
	var keep, give []bentry
	// unchanged runs: [tFrom, tTo) maps to tFrom+off in the parent.
	type run struct{ from, to, off int }
	runs := make([]run, 0, len(hunks)+1)
	prevT, prevOff := 0, 0
	for _, h := range hunks {
		runs = append(runs, run{prevT, h.I2, h.I1 - h.I2})
		prevT, prevOff = h.I2+h.Chg2, (h.I1+h.Chg1)-(h.I2+h.Chg2)
	}
	runs = append(runs, run{prevT, int(^uint(0) >> 1), prevOff})
	for _, e := range o.suspects {
		s, end := e.slno, e.slno+e.n
		for _, rn := range runs {
			if rn.to <= s || rn.from >= end {
				continue
			}
			a, b := max(s, rn.from), min(end, rn.to)
			if a > s {
				keep = append(keep, bentry{lno: e.lno, slno: s, n: a - s})
			}
			give = append(give, bentry{lno: e.lno + (a - s), slno: a + rn.off, n: b - a})
			e.lno += b - s
			s = b
		}
		if s < end {
			keep = append(keep, bentry{lno: e.lno, slno: s, n: end - s})
		}
	}
	o.suspects = keep
	sb.queueBlames(po, give)
	return nil
}

// rangeFinal is the commit git blame A..B digs from (find_single_final):
// A..B excludes A, A...B the merge bases of A and B. Each side whose
// object (a tag as written, not peeled: git flags the object it was
// given) is not excluded is a final: two are git's error, none (A..A)
// blames the working tree ("" is returned). name is the final's side as
// written.
func rangeFinal(ctx context.Context, r *git.Repository, rr revision.Range) (final, name string, err error) {
	excluded := map[plumbing.Hash]bool{}
	if rr.Symmetric {
		bases, err := revision.MergeBases(ctx, r, rr.Left.(*object.Commit), rr.Right.(*object.Commit))
		if err != nil {
			return "", "", err
		}
		for _, c := range bases {
			excluded[c.Hash] = true
		}
	} else {
		excluded[rr.LeftID] = true
	}
	var fo object.Object
	sides := []struct {
		id   plumbing.Hash
		o    object.Object
		name string
	}{{rr.LeftID, rr.Left, rr.LeftName}, {rr.RightID, rr.Right, rr.RightName}}
	for _, sd := range sides {
		if excluded[sd.id] {
			continue
		}
		if sd.o.Type() != plumbing.CommitObject {
			return "", "", fatalf("Non commit %s?", sd.name)
		}
		if fo != nil {
			return "", "", fatalf("More than one commit to dig from %s and %s?", sd.name, name)
		}
		fo, name = sd.o, sd.name
	}
	if fo == nil {
		return "", "", nil
	}
	return fo.ID().String(), name, nil
}
