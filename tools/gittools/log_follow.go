package gittools

// git log --follow (log.follow with one path): the walk is git's plain
// walk of every commit (no history simplification: the path changes as
// the walk goes), and a commit shows when log_tree_diff finds a change on
// the path followed between it and its one parent (a root commit against
// the empty tree when log.showRoot; a merge never). When that change is
// the path's creation and nothing else, tree-diff.c's
// try_to_follow_renames runs rename and copy detection for the commit
// against the whole parent tree (-C -C, the path as the one
// destination); a rename or copy to the path makes its source the path
// followed from then on, for every commit the walk meets after it.

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/diffcore"
	"github.com/tgp-go/tgp/internal/gitformat/rawobj"
	"github.com/tgp-go/tgp/internal/pathspec"
	"github.com/tgp-go/tgp/internal/revision"
	"github.com/tgp-go/tgp/internal/xdiff"
	"github.com/tgp-go/tgp/tools"
)

// logFollow is the followed path and what deciding a commit needs.
type logFollow struct {
	r  *git.Repository
	ps pathspec.Pathspec
	// magic is the item's magic that try_to_follow_renames refuses
	// (GUARD_PATHSPEC: glob 0x8, icase 0x10), 0 for none.
	magic int
	// prefix: with diff.relative, git log in a subdirectory diffs only
	// the paths under it (diff_addremove and diff_change drop the others).
	prefix      string
	showRoot    bool
	renameLimit int
	po          patchOpts // diff attributes, for text or binary in similarity
	attrLoaded  bool
	shallow     map[plumbing.Hash]bool
	trees       map[plumbing.Hash][]treeEnt
	buf         []byte
	// commits reads parents' trees from raw headers; sizes and spans
	// remember blob sizes and chunk counts between rename searches (the
	// parent trees of successive searches share most files).
	commits  *revision.CommitTrees
	sizes    map[plumbing.Hash]int
	binary   map[plumbing.Hash]bool
	spans    map[spanKey]diffcore.Spans
	dstSpans diffcore.Spans // the destination's, during a search
}

type spanKey struct {
	hash plumbing.Hash
	text bool
}

// treeEnt is one entry of a raw tree.
type treeEnt struct {
	name string
	mode filemode.FileMode
	hash plumbing.Hash
}

// followPair is one path of the tree diff on the followed path.
type followPair struct {
	path             string
	oldMode, newMode filemode.FileMode
	oldHash, newHash plumbing.Hash
}

func newLogFollow(r *git.Repository, s *settings, wd string, ps pathspec.Pathspec, magic int) *logFollow {
	s = s.orDefault()
	limit := 1000
	if s.conf != nil {
		limit = s.conf.Int("diff.renameLimit", 1000)
	}
	prefix := ""
	if wd = strings.Trim(path.Clean("/"+wd), "/"); s.relative && wd != "" {
		prefix = wd + "/"
	}
	return &logFollow{r: r, ps: ps, magic: magic, prefix: prefix, showRoot: s.showRoot, renameLimit: limit,
		po: patchOpts{settings: s, drivers: s.conf}, shallow: revision.Shallow(r), trees: map[plumbing.Hash][]treeEnt{},
		commits: revision.NewCommitTrees(r, rawReader(r)),
		sizes:   map[plumbing.Hash]int{}, binary: map[plumbing.Hash]bool{}, spans: map[spanKey]diffcore.Spans{}}
}

// followMagic is git's magic bits of a pathspec item that
// try_to_follow_renames does not support.
func followMagic(raw string) int {
	m, _, err := pathspec.ParseMagic(raw)
	if err != nil {
		return 0
	}
	n := 0
	if m.Glob {
		n |= 0x8
	}
	if m.ICase {
		n |= 0x10
	}
	return n
}

// tree reads a raw tree into its entries, remembered (a bounded cache:
// cleared when it grows large).
func (f *logFollow) tree(h plumbing.Hash) ([]treeEnt, error) {
	if h.IsZero() {
		return nil, nil
	}
	if t, ok := f.trees[h]; ok {
		return t, nil
	}
	data, err := gitbackend.ReadRaw(f.r.Storer, plumbing.TreeObject, h, f.buf[:0])
	if err != nil {
		return nil, err
	}
	f.buf = data
	var out []treeEnt
	for len(data) > 0 {
		m, name, eh, rest, ok := rawobj.NextTreeEntry(data)
		if !ok {
			return nil, fmt.Errorf("tree %s: malformed entry", h)
		}
		out = append(out, treeEnt{name: string(name), mode: m, hash: eh})
		data = rest
	}
	if len(f.trees) >= 1<<14 {
		clear(f.trees)
	}
	f.trees[h] = out
	return out, nil
}

// entryAt is the entry at repository path p of tree h.
func (f *logFollow) entryAt(h plumbing.Hash, p string) (treeEnt, bool) {
	if p == "" {
		return treeEnt{mode: filemode.Dir, hash: h}, !h.IsZero()
	}
	cur := treeEnt{mode: filemode.Dir, hash: h}
	for p != "" {
		name, rest, _ := cutSlash(p)
		if cur.mode != filemode.Dir {
			return treeEnt{}, false
		}
		ents, err := f.tree(cur.hash)
		if err != nil {
			return treeEnt{}, false
		}
		found := false
		for _, e := range ents {
			if e.name == name {
				cur, found = e, true
				break
			}
		}
		if !found {
			return treeEnt{}, false
		}
		p = rest
	}
	return cur, true
}

func cutSlash(p string) (string, string, bool) {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			return p[:i], p[i+1:], true
		}
	}
	return p, "", false
}

// literal reports whether the followed pathspec is one plain path.
func (f *logFollow) literal() bool {
	return len(f.ps.Items) == 1 && len(f.ps.Exclude) == 0 && !f.ps.Items[0].Glob && f.ps.Plain()
}

// changes is the tree diff of a against b (zero: the empty tree) on the
// followed pathspec, recursive, as git's ll_diff_tree_oid lists it.
func (f *logFollow) changes(a, b plumbing.Hash) ([]followPair, error) {
	if a == b {
		return nil, nil
	}
	if f.literal() {
		// The entry the path names decides whether anything changed.
		p := f.ps.Items[0].Pat
		ea, oka := f.entryAt(a, p)
		eb, okb := f.entryAt(b, p)
		if oka == okb && (!oka || ea.mode == eb.mode && ea.hash == eb.hash) {
			return nil, nil
		}
	}
	var out []followPair
	err := f.diffTrees("", a, b, &out)
	if f.prefix != "" {
		kept := out[:0]
		for _, p := range out {
			if strings.HasPrefix(p.path, f.prefix) {
				kept = append(kept, p)
			}
		}
		out = kept
	}
	return out, err
}

// diffTrees merges the entries of two trees in git's tree order (a
// directory sorts as its name with a '/'), skipping identical entries,
// descending into directories the pathspec may reach.
func (f *logFollow) diffTrees(prefix string, a, b plumbing.Hash, out *[]followPair) error {
	ta, err := f.tree(a)
	if err != nil {
		return err
	}
	tb, err := f.tree(b)
	if err != nil {
		return err
	}
	full := func(n string) string {
		if prefix == "" {
			return n
		}
		return prefix + "/" + n
	}
	side := func(e treeEnt, old bool) error {
		p := full(e.name)
		if e.mode == filemode.Dir {
			if !f.ps.MatchesDir(p) {
				return nil
			}
			if old {
				return f.diffTrees(p, e.hash, plumbing.ZeroHash, out)
			}
			return f.diffTrees(p, plumbing.ZeroHash, e.hash, out)
		}
		if !f.ps.Match(p) {
			return nil
		}
		if old {
			*out = append(*out, followPair{path: p, oldMode: e.mode, oldHash: e.hash})
		} else {
			*out = append(*out, followPair{path: p, newMode: e.mode, newHash: e.hash})
		}
		return nil
	}
	i, j := 0, 0
	for i < len(ta) || j < len(tb) {
		var c int
		switch {
		case i >= len(ta):
			c = 1
		case j >= len(tb):
			c = -1
		default:
			c = rawobj.CompareNames(ta[i].name, ta[i].mode == filemode.Dir, tb[j].name, tb[j].mode == filemode.Dir)
		}
		switch {
		case c < 0:
			if err := side(ta[i], true); err != nil {
				return err
			}
			i++
		case c > 0:
			if err := side(tb[j], false); err != nil {
				return err
			}
			j++
		default:
			ea, eb := ta[i], tb[j]
			i++
			j++
			if ea.hash == eb.hash && ea.mode == eb.mode {
				continue
			}
			p := full(ea.name)
			if ea.mode == filemode.Dir {
				if f.ps.MatchesDir(p) {
					if err := f.diffTrees(p, ea.hash, eb.hash, out); err != nil {
						return err
					}
				}
				continue
			}
			if f.ps.Match(p) {
				*out = append(*out, followPair{path: p, oldMode: ea.mode, oldHash: ea.hash, newMode: eb.mode, newHash: eb.hash})
			}
		}
	}
	return nil
}

// shows decides whether git log --follow shows commit c, and moves the
// followed path when c creates it by a rename or copy.
func (f *logFollow) shows(c *object.Commit) (bool, error) {
	parents := c.ParentHashes
	if f.shallow[c.Hash] {
		parents = nil
	}
	var parentTree plumbing.Hash
	switch len(parents) {
	case 0:
		if !f.showRoot {
			return false, nil
		}
	case 1:
		t, err := f.commits.Tree(parents[0])
		if err != nil {
			return false, err
		}
		parentTree = t
	default:
		return false, nil // log_tree_diff: no diff for a merge, so nothing shown
	}
	pairs, err := f.changes(parentTree, c.TreeHash)
	if err != nil || len(pairs) == 0 {
		return false, err
	}
	if len(pairs) == 1 && pairs[0].oldMode == 0 {
		if f.magic != 0 {
			return false, &tools.Error{Kind: tools.KindExecutionFailed,
				Message: fmt.Sprintf("BUG: tree-diff.c:596: unsupported magic %x", f.magic)}
		}
		src, err := f.findSource(parentTree, c.TreeHash, pairs[0])
		if err != nil {
			return false, err
		}
		if src != "" {
			f.follow(src)
		}
	}
	return true, nil
}

// follow makes p the path followed: a literal path from the top.
func (f *logFollow) follow(p string) {
	f.ps = pathspec.Pathspec{Items: []pathspec.Item{{Raw: p, Pat: p, Match: p}}}
	f.magic = 0
}

// followSrc is a rename source: an entry of the parent tree.
type followSrc struct {
	path    string
	mode    filemode.FileMode
	hash    plumbing.Hash
	used    bool // rename_used: the path stays in the commit (modified or not)
	changed bool // not an unmodified pair (deleted, or another mode or blob)
}

// findSource is try_to_follow_renames' diffcore_rename with
// find_copies_harder and single_follow: every file of the parent tree is
// a source for the one destination, the followed path's new entry.
// It returns the source path, "" for none.
func (f *logFollow) findSource(parentTree, tree plumbing.Hash, dst followPair) (string, error) {
	match := f.ps.Items[0].Match
	if dst.path != match {
		return "", nil // single_follow: no other path is a destination
	}
	olds, err := gitbackend.FlatTree(f.r.Storer, parentTree)
	if err != nil {
		return "", err
	}
	if len(olds) == 0 {
		return "", nil
	}
	news, err := gitbackend.FlatTree(f.r.Storer, tree)
	if err != nil {
		return "", err
	}
	now := make(map[string]gitbackend.FlatEntry, len(news))
	for _, e := range news {
		now[e.Path] = e
	}
	srcs := make([]followSrc, 0, len(olds))
	for _, e := range olds {
		s := followSrc{path: e.Path, mode: e.Mode, hash: e.Hash, changed: true}
		if n, ok := now[e.Path]; ok {
			s.used = true
			s.changed = n.Mode != e.Mode || n.Hash != e.Hash
		}
		srcs = append(srcs, s)
	}
	base := path.Base(dst.path)
	// find_exact_renames: the same blob (and mode, unless both are
	// regular files); a source renamed away (not used) and one with the
	// same basename preferred; the first of the best in path order,
	// looking at most 100 candidates.
	best := diffcore.Identical(len(srcs), func(i int) (ok, unused, sameName bool) {
		s := srcs[i]
		return s.hash == dst.newHash && diffcore.ModesPair(s.mode, dst.newMode), !s.used, path.Base(s.path) == base
	})
	if best >= 0 {
		return srcs[best].path, nil
	}
	// too_many_rename_candidates: one destination against every source,
	// else (-C -C) the changed sources only, else no inexact detection.
	skipUnmodified := false
	if lim := f.renameLimit; lim > 0 && len(srcs) > lim*lim {
		n := 0
		for _, s := range srcs {
			if s.changed {
				n++
			}
		}
		if n > lim*lim {
			return "", nil
		}
		skipUnmodified = true
	}
	if !diffcore.IsRegular(dst.newMode) {
		return "", nil // estimate_similarity is 0 for every source
	}
	dstData, err := readBlob(f.r.Storer, dst.newHash)
	if err != nil {
		return "", nil
	}
	if f.dstSpans, _ = f.spanOf(dst.newHash, dst.path); f.dstSpans == nil {
		return "", nil
	}
	// The four best candidates (record_if_better).
	var four diffcore.Best
	for i, s := range srcs {
		if skipUnmodified && !s.changed {
			continue
		}
		four.Record(diffcore.Candidate{Src: i, Score: f.similarity(s, len(dstData)), SameName: path.Base(s.path) == base})
	}
	ranked := four.Ranked()
	// find_renames: first a source renamed away, then (copies) any.
	for pass := 0; pass < 2; pass++ {
		for _, c := range ranked {
			if c.Score < diffcore.DefaultScore {
				break
			}
			if pass == 0 && srcs[c.Src].used {
				continue
			}
			return srcs[c.Src].path, nil
		}
	}
	return "", nil
}

// similarity is estimate_similarity of a source against the
// destination's data: regular files only, the size cut (from the
// object's header) before the blob is read.
func (f *logFollow) similarity(s followSrc, dstSize int) int {
	if !diffcore.IsRegular(s.mode) || dstSize == 0 {
		return 0
	}
	size, ok := f.sizes[s.hash]
	if !ok {
		obj, err := f.r.Storer.EncodedObject(plumbing.BlobObject, s.hash)
		if err != nil {
			return 0
		}
		size = int(obj.Size())
		f.sizes[s.hash] = size
	}
	if !diffcore.SizesAllow(size, dstSize, diffcore.DefaultScore) {
		return 0
	}
	sh, ok := f.spanOf(s.hash, s.path)
	if !ok {
		return 0
	}
	return diffcore.Similarity(sh, size, f.dstSpans, dstSize)
}

// spanOf is a blob's chunk counts, as text or binary by the path's diff
// attribute, else by content, remembered by blob.
func (f *logFollow) spanOf(h plumbing.Hash, p string) (diffcore.Spans, bool) {
	var data []byte
	read := func() bool {
		if data == nil {
			b, err := readBlob(f.r.Storer, h)
			if err != nil {
				return false
			}
			data = b
		}
		return true
	}
	text, decided := f.attrText(p)
	if !decided {
		bin, ok := f.binary[h]
		if !ok {
			if !read() {
				return nil, false
			}
			bin = xdiff.IsBinary(data)
			f.binary[h] = bin
		}
		text = !bin
	}
	k := spanKey{h, text}
	if sp, ok := f.spans[k]; ok {
		return sp, true
	}
	if !read() {
		return nil, false
	}
	sp := diffcore.HashSpans(data, text)
	if len(f.spans) >= 1<<12 {
		clear(f.spans)
	}
	f.spans[k] = sp
	return sp, true
}

// attrText is what a path's diff attribute (or driver) says of a regular
// file: text or binary, when it decides (diff_filespec_is_binary; else
// the first 8000 bytes decide).
func (f *logFollow) attrText(p string) (text, decided bool) {
	if !f.attrLoaded {
		f.po.attr = loadAttributes(f.r, false)
		f.attrLoaded = true
	}
	b, ok := f.po.driverBinary(p)
	return !b, ok
}
