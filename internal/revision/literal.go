package revision

// A faster walk for git_log with literal paths: instead of decoding every
// commit and tree along the way (go-git's Commit.Decode and Tree.Decode
// allocate per header and per entry, most of git_log's time on a path),
// a commit is read once for its tree, parents and committer time (fully
// decoded only when it is shown), and the entry a literal path names is
// looked up by scanning the raw tree objects, as git's tree-walk does,
// each lookup remembered by tree: a subtree the walk has seen before is
// not read again. Pathspecs with wildcards keep Walk's full listing.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/commitgraph"
	"github.com/tgp-go/tgp/internal/gitformat/rawobj"
	"github.com/tgp-go/tgp/internal/pathspec"
)

// RawReader reads an object's bytes, of type t, into buf (reused: valid
// until the next read).
type RawReader func(t plumbing.ObjectType, h plumbing.Hash, buf []byte) ([]byte, error)

// LiteralWalk is Walk's walk with a raw-tree fingerprint, for a pathspec
// of literal paths: it reads commits and trees raw, looks entries up by
// name and asks the commit-graph's changed-path filters first.
type LiteralWalk struct {
	r       *git.Repository
	read    RawReader
	items   []pathspec.Item
	parts   [][]string // each item's path components
	shallow map[plumbing.Hash]bool
	prints  map[plumbing.Hash]string
	// Since is --since, as for Walk.
	Since time.Time
	// commits are the commits read, looks the entries found by name in
	// a tree, buf the buffer objects are read into.
	commits map[plumbing.Hash]*walkCommit
	looks   map[lookKey]lookVal
	buf     []byte
	// graph is the root's commit-graph (nil: none): commits are read
	// from it, and keys (nil when some item is not a literal path) are
	// looked up in its changed-path filters, as git's log does: a commit
	// whose filter has none of them left its first parent's paths alone.
	graph *commitgraph.Graph
	keys  []*commitgraph.Key
}

type lookKey struct {
	tree plumbing.Hash
	name string
}

type lookVal struct {
	mode filemode.FileMode
	hash plumbing.Hash
	ok   bool
}

// walkCommit is what the walk needs of a commit.
type walkCommit struct {
	hash    plumbing.Hash
	tree    plumbing.Hash
	parents []plumbing.Hash
	when    int64 // committer time, Unix seconds
	// pos is the commit's position in the graph (inGraph).
	pos     uint32
	inGraph bool
}

// NewLiteralWalk is the walk of a pathspec of literal paths, reading
// objects with read and the changed-path filters of graph (nil: none);
// nil when some item has a wildcard or magic, or the pathspec is empty.
func NewLiteralWalk(r *git.Repository, ps pathspec.Pathspec, graph *commitgraph.Graph, read RawReader) *LiteralWalk {
	if ps.Empty() || !ps.Plain() {
		return nil
	}
	w := &LiteralWalk{r: r, read: read, items: ps.Items, shallow: Shallow(r), prints: map[plumbing.Hash]string{},
		commits: map[plumbing.Hash]*walkCommit{}, looks: map[lookKey]lookVal{}, graph: graph}
	filters := w.graph.HasFilters()
	for _, it := range ps.Items {
		if it.Glob {
			return nil
		}
		var parts []string
		if it.Pat != "" {
			parts = strings.Split(it.Pat, "/")
		} else {
			filters = false // the whole tree: every commit changes it
		}
		w.parts = append(w.parts, parts)
		if filters {
			w.keys = append(w.keys, commitgraph.NewKey(strings.TrimSuffix(it.Pat, "/")))
		}
	}
	if !filters {
		w.keys = nil
	}
	return w
}

// unchanged reports whether c's changed-path filter says for certain
// that no item's path changed against its first parent.
func (w *LiteralWalk) unchanged(c *walkCommit) bool {
	if w.keys == nil || !c.inGraph {
		return false
	}
	for _, k := range w.keys {
		if w.graph.MaybeChanged(c.pos, k) {
			return false
		}
	}
	return true
}

// CommitTrees reads the trees of commits from their raw headers, each
// commit once (git log --follow's parent trees).
type CommitTrees struct{ w LiteralWalk }

// NewCommitTrees reads with read.
func NewCommitTrees(r *git.Repository, read RawReader) *CommitTrees {
	return &CommitTrees{w: LiteralWalk{r: r, read: read, commits: map[plumbing.Hash]*walkCommit{}}}
}

// Tree is the tree of commit h.
func (t *CommitTrees) Tree(h plumbing.Hash) (plumbing.Hash, error) {
	c, err := t.w.commit(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return c.tree, nil
}

// raw reads an object's bytes into the walk's buffer (valid until the
// next read).
func (w *LiteralWalk) raw(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	b, err := w.read(t, h, w.buf[:0])
	if err != nil {
		return nil, err
	}
	w.buf = b
	return b, nil
}

// lookTree is rawobj.FindTreeEntry in tree h, remembered.
func (w *LiteralWalk) lookTree(h plumbing.Hash, name string) lookVal {
	k := lookKey{h, name}
	if v, ok := w.looks[k]; ok {
		return v
	}
	var v lookVal
	if data, err := w.raw(plumbing.TreeObject, h); err == nil {
		v.mode, v.hash, v.ok = rawobj.FindTreeEntry(data, name)
	}
	w.looks[k] = v
	return v
}

// fingerprint is the (mode, hash) of each item's entry in tree: what
// Walk.collect lists for literal items.
func (w *LiteralWalk) fingerprint(tree plumbing.Hash) string {
	if fp, ok := w.prints[tree]; ok {
		return fp
	}
	var b strings.Builder
	for i, it := range w.items {
		if it.Pat == "" {
			// The whole tree: nothing when it is empty, as a listing.
			if data, err := w.raw(plumbing.TreeObject, tree); err == nil && len(data) > 0 {
				fmt.Fprintf(&b, "%s\n", tree)
			}
			continue
		}
		v := lookVal{mode: filemode.Dir, hash: tree, ok: true}
		for _, part := range w.parts[i] {
			if v.mode != filemode.Dir {
				v.ok = false
				break
			}
			if v = w.lookTree(v.hash, part); !v.ok {
				break
			}
		}
		if v.ok && (!it.DirOnly || v.mode == filemode.Dir) {
			// "<path> <mode> <hash>\n", as "%s %o %s\n" prints it.
			b.WriteString(it.Pat)
			b.WriteByte(' ')
			b.WriteString(strconv.FormatUint(uint64(v.mode), 8))
			b.WriteByte(' ')
			b.WriteString(v.hash.String())
			b.WriteByte('\n')
		}
	}
	w.prints[tree] = b.String()
	return b.String()
}

// commit reads a commit once: tree, parents and committer time from its
// raw headers (go-git's decoder when they do not read plainly).
func (w *LiteralWalk) commit(h plumbing.Hash) (*walkCommit, error) {
	if c, ok := w.commits[h]; ok {
		return c, nil
	}
	if w.graph != nil {
		if pos, ok := w.graph.Find(h); ok {
			d := w.graph.Commit(pos)
			c := &walkCommit{hash: h, tree: d.Tree, when: d.Time, pos: pos, inGraph: true}
			for _, p := range d.Parents {
				c.parents = append(c.parents, w.graph.Hash(p))
			}
			w.commits[h] = c
			return c, nil
		}
	}
	data, err := w.raw(plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	c, ok := parseWalkCommit(data)
	if !ok {
		full, err := object.GetCommit(w.r.Storer, h)
		if err != nil {
			return nil, err
		}
		c = &walkCommit{tree: full.TreeHash, parents: full.ParentHashes, when: full.Committer.When.Unix()}
	}
	c.hash = h
	w.commits[h] = c
	return c, nil
}

// parseWalkCommit reads a commit laid out as git writes one: "tree",
// any "parent" lines, "author", "committer" (its time read as go-git's
// Signature.Decode reads it). ok is false for anything else, which
// go-git's decoder then reads.
func parseWalkCommit(data []byte) (*walkCommit, bool) {
	c := &walkCommit{}
	line := func() ([]byte, []byte, bool) {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return nil, nil, false
		}
		l := data[:nl]
		data = data[nl+1:]
		k, v, ok := bytes.Cut(l, []byte{' '})
		return k, v, ok
	}
	k, v, ok := line()
	if !ok || string(k) != "tree" {
		return nil, false
	}
	if c.tree, ok = parseHex(v); !ok {
		return nil, false
	}
	for {
		if k, v, ok = line(); !ok {
			return nil, false
		}
		if string(k) != "parent" {
			break
		}
		h, ok := parseHex(v)
		if !ok {
			return nil, false
		}
		c.parents = append(c.parents, h)
	}
	if string(k) != "author" {
		return nil, false
	}
	if k, v, ok = line(); !ok || string(k) != "committer" {
		return nil, false
	}
	open, close := bytes.LastIndexByte(v, '<'), bytes.LastIndexByte(v, '>')
	if open < 0 || close < open || close+2 >= len(v) {
		return nil, false
	}
	t := v[close+2:]
	if sp := bytes.IndexByte(t, ' '); sp >= 0 {
		t = t[:sp]
	}
	when, err := strconv.ParseInt(string(t), 10, 64)
	if err != nil {
		return nil, false
	}
	c.when = when
	return c, true
}

func parseHex(b []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(b) != 40 {
		return h, false
	}
	for i := 0; i < 20; i++ {
		hi, ok1 := unhex(b[2*i])
		lo, ok2 := unhex(b[2*i+1])
		if !ok1 || !ok2 {
			return h, false
		}
		h[i] = hi<<4 | lo
	}
	return h, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func (w *LiteralWalk) parents(c *walkCommit) []plumbing.Hash {
	if w.shallow[c.hash] {
		return nil
	}
	return c.parents
}

// simplify is Walk.simplify.
func (w *LiteralWalk) simplify(c *walkCommit) ([]plumbing.Hash, bool) {
	parents := w.parents(c)
	if len(parents) > 0 && w.unchanged(c) {
		return parents[:1], false
	}
	mine := w.fingerprint(c.tree)
	if len(parents) == 0 {
		return nil, mine != ""
	}
	for _, ph := range parents {
		pc, err := w.commit(ph)
		if err != nil {
			continue
		}
		if w.fingerprint(pc.tree) == mine {
			return []plumbing.Hash{ph}, false
		}
	}
	return parents, true
}

// Run is Walk.Run; visit gets the commits shown, fully decoded.
func (w *LiteralWalk) Run(ctx context.Context, start plumbing.Hash, visit func(*object.Commit) bool) error {
	seen := map[plumbing.Hash]bool{start: true}
	first, err := w.commit(start)
	if err != nil {
		return err
	}
	var q DateQueue[*walkCommit]
	q.Push(first, first.when)
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := q.Pop()
		if !w.Since.IsZero() && time.Unix(c.when, 0).Before(w.Since) {
			continue
		}
		follow, show := w.simplify(c)
		for _, ph := range follow {
			if seen[ph] {
				continue
			}
			seen[ph] = true
			pc, err := w.commit(ph)
			if err != nil {
				if errors.Is(err, plumbing.ErrObjectNotFound) {
					continue
				}
				return err
			}
			q.Push(pc, pc.when)
		}
		if !show {
			continue
		}
		full, err := object.GetCommit(w.r.Storer, c.hash)
		if err != nil {
			return err
		}
		if !visit(full) {
			return nil
		}
	}
	return nil
}
