package gitbackend

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/tgp-go/tgp/internal/commitgraph"
)

// This file makes the root's commit-graph (internal/commitgraph): at boot
// from the commits the clone walked, later a layer for the commits a
// persist or a refresh brought. Each commit's changed-path filter comes
// from a diff of its tree against its first parent's, read raw.

// treeSource reads a raw tree (shared bytes: not to be changed).
type treeSource func(plumbing.Hash) ([]byte, error)

// graphCommits turns walked commits into the graph's, each with its
// changed-path filter; parentTree finds the tree of a first parent that
// is not among them (in the graph already).
func graphCommits(commits []walkedCommit, trees treeSource, parentTree func(plumbing.Hash) (plumbing.Hash, bool)) ([]commitgraph.Commit, error) {
	out := make([]commitgraph.Commit, len(commits))
	treeOf := make(map[plumbing.Hash]plumbing.Hash, len(commits))
	for _, c := range commits {
		treeOf[c.h] = c.tree
	}
	var d pathDiff
	for i, c := range commits {
		var parent plumbing.Hash
		if len(c.parents) > 0 {
			var ok bool
			if parent, ok = treeOf[c.parents[0]]; !ok {
				if parent, ok = parentTree(c.parents[0]); !ok {
					return nil, fmt.Errorf("commit-graph: parent %s of %s: %w", c.parents[0], c.h, plumbing.ErrObjectNotFound)
				}
			}
		}
		paths, large, err := d.changed(trees, parent, c.tree)
		if err != nil {
			return nil, err
		}
		out[i] = commitgraph.Commit{Hash: c.h, Tree: c.tree, Parents: c.parents, Time: c.time,
			Filter: commitgraph.NewFilter(paths, large)}
	}
	return out, nil
}

// pathDiff lists the files that differ between two trees, as git's
// recursive diff-tree without rename detection queues them (a file and
// a directory of the same name are a deletion and additions).
type pathDiff struct {
	paths []string
	large bool
	buf   []byte
}

// changed diffs trees a and b (zero: the empty tree); large is true
// beyond commitgraph.MaxChangedPaths files.
func (d *pathDiff) changed(trees treeSource, a, b plumbing.Hash) ([]string, bool, error) {
	d.paths, d.large, d.buf = d.paths[:0], false, d.buf[:0]
	if err := d.diff(trees, a, b, nil); err != nil {
		return nil, false, err
	}
	return d.paths, d.large, nil
}

var errTooMany = errors.New("too many changed paths")

func (d *pathDiff) add(prefix, name []byte) error {
	if len(d.paths) >= commitgraph.MaxChangedPaths {
		d.large = true
		return errTooMany
	}
	d.paths = append(d.paths, string(prefix)+string(name))
	return nil
}

func (d *pathDiff) diff(trees treeSource, a, b plumbing.Hash, prefix []byte) error {
	err := d.diffTrees(trees, a, b, prefix)
	if errors.Is(err, errTooMany) {
		return nil
	}
	return err
}

func (d *pathDiff) diffTrees(trees treeSource, a, b plumbing.Hash, prefix []byte) error {
	if a == b {
		return nil
	}
	var ad, bd []byte
	var err error
	if !a.IsZero() {
		if ad, err = trees(a); err != nil {
			return fmt.Errorf("read tree %s: %w", a, err)
		}
	}
	if !b.IsZero() {
		if bd, err = trees(b); err != nil {
			return fmt.Errorf("read tree %s: %w", b, err)
		}
	}
	type ent struct {
		mode filemode.FileMode
		name []byte
		h    plumbing.Hash
		ok   bool
	}
	next := func(data *[]byte) (ent, error) {
		if len(*data) == 0 {
			return ent{}, nil
		}
		m, n, h, rest, ok := nextTreeEntry(*data)
		if !ok {
			return ent{}, errors.New("malformed tree entry")
		}
		*data = rest
		return ent{m, n, h, true}, nil
	}
	ea, err := next(&ad)
	if err != nil {
		return err
	}
	eb, err := next(&bd)
	if err != nil {
		return err
	}
	// one side's entry alone: the file, or every file below the tree.
	alone := func(e ent, side int) error {
		if e.mode != filemode.Dir {
			return d.add(prefix, e.name)
		}
		sub := append(append(append([]byte(nil), prefix...), e.name...), '/')
		if side == 0 {
			return d.diffTrees(trees, e.h, plumbing.ZeroHash, sub)
		}
		return d.diffTrees(trees, plumbing.ZeroHash, e.h, sub)
	}
	for ea.ok || eb.ok {
		c := 0
		switch {
		case !ea.ok:
			c = 1
		case !eb.ok:
			c = -1
		default:
			c = cmpTreeEntryNames(ea.name, ea.mode == filemode.Dir, eb.name, eb.mode == filemode.Dir)
		}
		switch {
		case c < 0:
			if err := alone(ea, 0); err != nil {
				return err
			}
			if ea, err = next(&ad); err != nil {
				return err
			}
		case c > 0:
			if err := alone(eb, 1); err != nil {
				return err
			}
			if eb, err = next(&bd); err != nil {
				return err
			}
		default:
			if ea.h != eb.h || ea.mode != eb.mode {
				if ea.mode == filemode.Dir {
					sub := append(append(append([]byte(nil), prefix...), ea.name...), '/')
					if err := d.diffTrees(trees, ea.h, eb.h, sub); err != nil {
						return err
					}
				} else if err := d.add(prefix, ea.name); err != nil {
					return err
				}
			}
			if ea, err = next(&ad); err != nil {
				return err
			}
			if eb, err = next(&bd); err != nil {
				return err
			}
		}
	}
	return nil
}

// cmpTreeEntryNames is git's base_name_compare: a directory's name sorts
// as if it ended with '/'.
func cmpTreeEntryNames(a []byte, aDir bool, b []byte, bDir bool) int {
	n := min(len(a), len(b))
	if c := bytes.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	ca, cb := byte(0), byte(0)
	if len(a) > n {
		ca = a[n]
	} else if aDir {
		ca = '/'
	}
	if len(b) > n {
		cb = b[n]
	} else if bDir {
		cb = '/'
	}
	switch {
	case ca < cb:
		return -1
	case ca > cb:
		return 1
	}
	return 0
}

// writeCloneGraph writes the commit-graph of a fresh clone's commits,
// with changed-path filters, into its objects directory.
func writeCloneGraph(objects string, w *cloneWalk) error {
	trees := func(h plumbing.Hash) ([]byte, error) {
		t, b, err := w.read(h)
		if err == nil && t != plumbing.TreeObject {
			err = fmt.Errorf("%s is a %s", h, t)
		}
		return b, err
	}
	cs, err := graphCommits(w.commits, trees, func(plumbing.Hash) (plumbing.Hash, bool) { return plumbing.ZeroHash, false })
	if err != nil {
		return err
	}
	data, err := commitgraph.Encode(cs, nil, true)
	if err != nil {
		return err
	}
	return writeReadOnly(filepath.Join(objects, commitgraph.FileName), data)
}

// writeReadOnly writes a file under a temporary name and renames it
// into place, read-only as git leaves its object files.
func writeReadOnly(name string, data []byte) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "tmp_graph_")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o444)
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// graphCache keeps the root's commit-graph between tool calls, read
// again when its file (or chain) changes.
type graphCache struct {
	mu    sync.Mutex
	stamp [3]dirStamp // commit-graph, the chain, shallow
	g     *commitgraph.Graph
}

// CommitGraph returns the commit-graph of the root whose storage s is
// (nil: none, not the root's storage, a shallow repository, or a file
// that does not read). The graph may lack the newest commits: a commit
// it does not have is read from its object.
func CommitGraph(s storer.EncodedObjectStorer) *commitgraph.Graph {
	ws, ok := s.(*warmStorage)
	if !ok {
		return nil
	}
	return ws.r.commitGraph()
}

func (r *Repo) commitGraph() *commitgraph.Graph {
	gitdir, ok := r.osGitDir()
	if !ok {
		return nil
	}
	c := &r.graph
	c.mu.Lock()
	defer c.mu.Unlock()
	objects := filepath.Join(gitdir, "objects")
	var st [3]dirStamp
	for i, p := range []string{filepath.Join(objects, commitgraph.FileName), filepath.Join(objects, commitgraph.ChainName), filepath.Join(gitdir, "shallow")} {
		if info, err := os.Stat(p); err == nil {
			st[i] = dirStamp{info.ModTime(), info.Size(), inodeOf(info)}
		}
	}
	if st == c.stamp {
		return c.g
	}
	c.stamp, c.g = st, nil
	if st[2] != (dirStamp{}) {
		return nil // git reads no commit-graph in a shallow repository
	}
	g, err := commitgraph.Open(objects)
	if err != nil {
		return nil
	}
	c.g = g
	return g
}
