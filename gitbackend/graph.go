package gitbackend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/internal/commitgraph"
	"github.com/tgp-go/tgp/internal/gitformat/packfile"
	"github.com/tgp-go/tgp/internal/gitformat/rawobj"
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
		treeOf[c.h] = c.Tree
	}
	var d pathDiff
	for i, c := range commits {
		var parent plumbing.Hash
		if len(c.Parents) > 0 {
			var ok bool
			if parent, ok = treeOf[c.Parents[0]]; !ok {
				if parent, ok = parentTree(c.Parents[0]); !ok {
					return nil, fmt.Errorf("commit-graph: parent %s of %s: %w", c.Parents[0], c.h, plumbing.ErrObjectNotFound)
				}
			}
		}
		paths, large, err := d.changed(trees, parent, c.Tree)
		if err != nil {
			return nil, err
		}
		out[i] = commitgraph.Commit{Hash: c.h, Tree: c.Tree, Parents: c.Parents, Time: c.Time,
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
		m, n, h, rest, ok := rawobj.NextTreeEntry(*data)
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

// writeStoreGraph writes the commit-graph of the history of tip in a
// fresh clone's git directory (a network remote's: its pack as go-git
// stored it).
func writeStoreGraph(ctx context.Context, gitdir string, st *filesystem.Storage, tip plumbing.Hash) error {
	pr, err := packfile.Open(gitdir, func() *filesystem.Storage { return nil }, nil)
	if err != nil {
		return err
	}
	defer pr.Close()
	w := newCloneWalk(ctx, pr, st)
	w.commitsOnly = true
	if err := w.add(tip); err != nil {
		return err
	}
	if len(w.shallow) > 0 {
		return nil // git writes none for a shallow repository
	}
	return writeCloneGraph(filepath.Join(gitdir, "objects"), w)
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
	// moves counts the tracking ref's moves since the graph was last
	// extended (graphEvery).
	moves int
}

// graphEvery is how many pushes a root makes before their commits join
// the commit-graph: writing a layer costs a quarter of a persist, and a
// reader takes the few newest commits from their objects as git does.
// A fetch (refresh, boot) extends it at once.
const graphEvery = 16

// graphMoved notes a move of the tracking ref to tip by a push, and
// extends the graph every graphEvery moves.
func (r *Repo) graphMoved(tip plumbing.Hash) {
	r.graph.mu.Lock()
	r.graph.moves++
	due := r.graph.moves >= graphEvery
	r.graph.mu.Unlock()
	if due {
		r.extendGraphNoting(tip)
	}
}

// extendGraphNoting is extendGraph whose failure is a progress warning
// (the graph stays as it was; readers read the newer commits themselves).
func (r *Repo) extendGraphNoting(tip plumbing.Hash) {
	if err := r.extendGraph(tip); err != nil {
		r.progressf("warning: %v", err)
	}
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

// extendGraph adds the commits reachable from tip that the root's
// commit-graph lacks, as a new layer of its split chain (the single file
// a boot writes becomes the chain's first layer), merging the top layers
// as git's default split strategy does: while the new layer holds at
// least half as many commits as the one below it. A root without a graph
// (a memory root, a shallow one) gets none. Failing leaves the graph as
// it was: readers then read the newer commits from their objects.
func (r *Repo) extendGraph(tip plumbing.Hash) error {
	r.graph.mu.Lock()
	r.graph.moves = 0
	r.graph.mu.Unlock()
	if tip.IsZero() {
		return nil
	}
	g := r.commitGraph()
	if g == nil {
		return nil
	}
	if _, ok := g.Find(tip); ok {
		return nil
	}
	gitdir, ok := r.osGitDir()
	if !ok {
		return nil
	}
	s := r.gitStorage()
	read := func(h plumbing.Hash, t plumbing.ObjectType) ([]byte, error) {
		return ReadRaw(s, t, h, nil)
	}
	var commits []walkedCommit
	seen := map[plumbing.Hash]bool{tip: true}
	stack := []plumbing.Hash{tip}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		data, err := read(h, plumbing.CommitObject)
		if err != nil {
			return fmt.Errorf("commit-graph: read commit %s: %w", h, err)
		}
		rc, ok := rawobj.ParseCommit(data)
		if !ok {
			return fmt.Errorf("commit-graph: commit %s is malformed", h)
		}
		c := walkedCommit{h, rc}
		commits = append(commits, c)
		for _, p := range c.Parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			if _, ok := g.Find(p); !ok {
				stack = append(stack, p)
			}
		}
	}
	trees := func(h plumbing.Hash) ([]byte, error) { return read(h, plumbing.TreeObject) }
	parentTree := func(h plumbing.Hash) (plumbing.Hash, bool) {
		pos, ok := g.Find(h)
		if !ok {
			return plumbing.ZeroHash, false
		}
		return g.Commit(pos).Tree, true
	}
	add, err := graphCommits(commits, trees, parentTree)
	if err != nil {
		return err
	}
	return writeGraphLayer(filepath.Join(gitdir, "objects"), g, add)
}

// writeGraphLayer writes add as the top layer of g's chain under the
// chain's lock (another writer holding it makes this one give up).
func writeGraphLayer(objects string, g *commitgraph.Graph, add []commitgraph.Commit) error {
	chainDir := filepath.Join(objects, commitgraph.ChainDir)
	if err := os.MkdirAll(chainDir, 0o755); err != nil {
		return err
	}
	lockPath := filepath.Join(objects, commitgraph.ChainName) + ".lock"
	lock, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if info, serr := os.Stat(lockPath); serr == nil && time.Since(info.ModTime()) > staleLockAge {
			_ = os.Remove(lockPath) // left by a process that died: the next update writes
		}
		return fmt.Errorf("commit-graph: chain locked: %w", err)
	}
	locked := true
	defer func() {
		lock.Close()
		if locked {
			os.Remove(lockPath)
		}
	}()
	single := filepath.Join(objects, commitgraph.FileName)
	layers := g.LayerList()
	_, singleErr := os.Stat(single)
	fromSingle := singleErr == nil
	if fromSingle {
		// The boot's file becomes the chain's first layer, as it is.
		base := filepath.Join(chainDir, "graph-"+layers[0].Sum().String()+".graph")
		if err := os.Link(single, base); err != nil && !errors.Is(err, os.ErrExist) {
			if err := writeReadOnly(base, layers[0].Bytes()); err != nil {
				return err
			}
		}
	}
	// git's split_graph_merge_strategy with size_multiple 2.
	var dropped []*commitgraph.Graph
	for len(layers) > 0 && 2*len(add) >= layers[len(layers)-1].Own() {
		top := layers[len(layers)-1]
		add = append(top.OwnCommits(), add...)
		dropped = append(dropped, top)
		layers = layers[:len(layers)-1]
	}
	var base *commitgraph.Graph
	if len(layers) > 0 {
		base = layers[len(layers)-1]
	}
	data, err := commitgraph.Encode(add, base, true)
	if err != nil {
		return err
	}
	top, err := commitgraph.Parse(data, base)
	if err != nil {
		return err
	}
	if err := writeReadOnly(filepath.Join(chainDir, "graph-"+top.Sum().String()+".graph"), data); err != nil {
		return err
	}
	var chain bytes.Buffer
	for _, l := range append(layers, top) {
		chain.WriteString(l.Sum().String() + "\n")
	}
	if _, err := lock.Write(chain.Bytes()); err != nil {
		return err
	}
	if err := lock.Close(); err != nil {
		return err
	}
	if err := os.Chmod(lockPath, 0o444); err != nil {
		return err
	}
	if err := os.Rename(lockPath, filepath.Join(objects, commitgraph.ChainName)); err != nil {
		return err
	}
	locked = false
	// git reads the single file before any chain: it goes now, and the
	// layers merged away after it.
	if fromSingle {
		_ = os.Remove(single)
	}
	for _, l := range dropped {
		if l.Sum() != top.Sum() {
			_ = os.Remove(filepath.Join(chainDir, "graph-"+l.Sum().String()+".graph"))
		}
	}
	return nil
}
