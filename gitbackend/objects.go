package gitbackend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"

	"github.com/tgp-go/tgp/gitpath"
	"github.com/tgp-go/tgp/internal/revparse"
)

// fileChange is one path's new state in a tree: a blob with a mode, or a
// deletion.
type fileChange struct {
	Path   string
	Mode   filemode.FileMode
	Hash   plumbing.Hash
	Delete bool
	// smudge converts a blob's bytes for the worktree (end-of-line
	// conversion); nil writes them as stored.
	smudge Smudger
}

// Smudger converts a blob's bytes to what a checkout writes for path
// (git's convert_to_working_tree).
type Smudger func(path string, data []byte) []byte

type treeNode struct {
	leaf *fileChange
	kids map[string]*treeNode
}

// writeTree returns the tree that is base with changes applied. Only the
// trees on changed paths are re-encoded; the rest are shared with base.
func writeTree(s storer.EncodedObjectStorer, base plumbing.Hash, changes []fileChange) (plumbing.Hash, error) {
	root := &treeNode{kids: map[string]*treeNode{}}
	for i := range changes {
		c := &changes[i]
		parts := strings.Split(c.Path, "/")
		n := root
		underFile := false
		for _, p := range parts[:len(parts)-1] {
			k := n.kids[p]
			if k != nil && k.leaf != nil && !k.leaf.Delete {
				// A file takes the directory's place: what was below
				// it goes with the directory, whichever comes first.
				underFile = true
				break
			}
			if k == nil || k.kids == nil {
				k = &treeNode{kids: map[string]*treeNode{}}
				n.kids[p] = k
			}
			n = k
		}
		if underFile {
			continue
		}
		last := parts[len(parts)-1]
		if k := n.kids[last]; k != nil && k.kids != nil && c.Delete {
			continue // deleting a file that is now a directory: nothing to do
		}
		n.kids[last] = &treeNode{leaf: c}
	}
	h, _, err := buildTree(s, base, root)
	return h, err
}

func buildTree(s storer.EncodedObjectStorer, base plumbing.Hash, n *treeNode) (plumbing.Hash, bool, error) {
	entries := map[string]object.TreeEntry{}
	if !base.IsZero() {
		t, err := object.GetTree(s, base)
		if err != nil {
			return plumbing.ZeroHash, false, fmt.Errorf("read tree %s: %w", base, err)
		}
		for _, e := range t.Entries {
			entries[e.Name] = e
		}
	}
	for name, k := range n.kids {
		if k.leaf != nil {
			if k.leaf.Delete {
				delete(entries, name)
			} else {
				entries[name] = object.TreeEntry{Name: name, Mode: k.leaf.Mode, Hash: k.leaf.Hash}
			}
			continue
		}
		sub := plumbing.ZeroHash
		if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
			sub = e.Hash
		}
		h, empty, err := buildTree(s, sub, k)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if empty {
			delete(entries, name)
		} else {
			entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
		}
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, true, nil
	}
	t := &object.Tree{}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	sort.Slice(t.Entries, func(i, j int) bool { return treeKey(t.Entries[i]) < treeKey(t.Entries[j]) })
	obj := s.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, false, err
	}
	h, err := s.SetEncodedObject(obj)
	return h, false, err
}

// treeKey orders tree entries the way git does: directories sort as if
// their name ended in "/".
func treeKey(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// emptyTree is git's well-known empty tree; it need not be stored to be
// referenced by a commit, but we store it anyway so every reader finds it.
func storeEmptyTree(s storer.EncodedObjectStorer) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	if err := (&object.Tree{}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// storeBlob writes content as a blob.
func storeBlob(s storer.EncodedObjectStorer, content []byte) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// ReadBlob reads a blob's bytes.
func ReadBlob(s storer.EncodedObjectStorer, h plumbing.Hash) ([]byte, error) { return readBlob(s, h) }

func readBlob(s storer.EncodedObjectStorer, h plumbing.Hash) ([]byte, error) {
	obj, err := s.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	if so, ok := obj.(*sharedObject); ok {
		return bytes.Clone(so.data), nil // the caller's to change
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if n := obj.Size(); n >= 0 && n <= 64<<20 {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("read blob %s: %w", h, err)
		}
		return b, nil
	}
	return io.ReadAll(r)
}

// Cleaner turns a worktree file's bytes and mode into what git stores
// for path (end-of-line conversion, core.filemode=false): git's
// convert_to_git and ce_mode_from_stat.
type Cleaner func(path string, data []byte, mode filemode.FileMode) ([]byte, filemode.FileMode)

// stagePathWith reads a worktree path into the object store and returns
// its change (a missing path is a deletion), a regular file's bytes and
// mode passed through clean (nil: stored as read).
func stagePathWith(s storer.EncodedObjectStorer, wt billy.Filesystem, p string, clean Cleaner) (fileChange, error) {
	info, err := wt.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
		return fileChange{Path: p, Delete: true}, nil
	}
	if err != nil {
		return fileChange{}, err
	}
	var content []byte
	mode := filemode.Regular
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		t, err := wt.Readlink(p)
		if err != nil {
			return fileChange{}, err
		}
		content, mode = []byte(t), filemode.Symlink
	case info.IsDir():
		// A file replaced by a directory: the file is gone, as git add
		// stages it (the directory's files are paths of their own).
		return fileChange{Path: p, Delete: true}, nil
	default:
		f, err := wt.Open(p)
		if err != nil {
			return fileChange{}, err
		}
		content, err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return fileChange{}, err
		}
		if info.Mode()&0o111 != 0 {
			mode = filemode.Executable
		}
		if clean != nil {
			content, mode = clean(p, content, mode)
		}
	}
	h, err := storeBlob(s, content)
	if err != nil {
		return fileChange{}, err
	}
	return fileChange{Path: p, Mode: mode, Hash: h}, nil
}

// treeEntry finds a path in a tree; ok is false when it is absent.
func treeEntry(s storer.EncodedObjectStorer, tree plumbing.Hash, p string) (object.TreeEntry, bool, error) {
	if tree.IsZero() {
		return object.TreeEntry{}, false, nil
	}
	t, err := object.GetTree(s, tree)
	if err != nil {
		return object.TreeEntry{}, false, err
	}
	e := FindEntry(s, t, p)
	if e == nil {
		return object.TreeEntry{}, false, nil
	}
	return *e, true, nil
}

// treeDiff lists the file-level differences between two trees (zero hash =
// empty tree) as changes that turn a into b. It walks the trees itself:
// go-git's DiffTree looks subtrees up by name through its write-side path
// validation and fails ("directory not found") on names git stores, such
// as ".GIT", which must reach the checkout to be refused with git's error.
func treeDiff(ctx context.Context, s storer.EncodedObjectStorer, a, b plumbing.Hash) ([]fileChange, error) {
	var out []fileChange
	if err := diffTrees(ctx, s, a, b, "", &out); err != nil {
		return nil, err
	}
	return out, nil
}

func diffTrees(ctx context.Context, s storer.EncodedObjectStorer, a, b plumbing.Hash, prefix string, out *[]fileChange) error {
	if a == b {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ta, err := getTreeOrNil(s, a)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", a, err)
	}
	tb, err := getTreeOrNil(s, b)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", b, err)
	}
	old := make(map[string]object.TreeEntry, len(ta.Entries))
	for _, e := range ta.Entries {
		old[e.Name] = e
	}
	for _, eb := range tb.Entries {
		p := prefix + eb.Name
		ea, ok := old[eb.Name]
		delete(old, eb.Name)
		switch {
		case ok && ea.Mode == eb.Mode && ea.Hash == eb.Hash:
		case eb.Mode == filemode.Dir:
			from := plumbing.ZeroHash
			if ok && ea.Mode == filemode.Dir {
				from = ea.Hash
			} else if ok {
				*out = append(*out, fileChange{Path: p, Delete: true})
			}
			if err := diffTrees(ctx, s, from, eb.Hash, p+"/", out); err != nil {
				return err
			}
		default:
			if ok && ea.Mode == filemode.Dir {
				if err := diffTrees(ctx, s, ea.Hash, plumbing.ZeroHash, p+"/", out); err != nil {
					return err
				}
			}
			*out = append(*out, fileChange{Path: p, Mode: eb.Mode, Hash: eb.Hash})
		}
	}
	for _, ea := range ta.Entries {
		if _, gone := old[ea.Name]; !gone {
			continue
		}
		p := prefix + ea.Name
		if ea.Mode == filemode.Dir {
			if err := diffTrees(ctx, s, ea.Hash, plumbing.ZeroHash, p+"/", out); err != nil {
				return err
			}
			continue
		}
		*out = append(*out, fileChange{Path: p, Delete: true})
	}
	return nil
}

func getTreeOrNil(s storer.EncodedObjectStorer, h plumbing.Hash) (*object.Tree, error) {
	if h.IsZero() {
		return &object.Tree{}, nil
	}
	return object.GetTree(s, h)
}

// applyToWorktree writes the changes to the worktree and the index:
// deletions first (a file may be replaced by a directory), then writes.
// Every path is checked against git's checkout rules before anything is
// touched, so a tree git refuses to check out changes nothing.
func applyToWorktree(s storage.Storer, wt billy.Filesystem, changes []fileChange) error {
	return applyChanges(s, wt, changes, nil)
}

// applyChanges is applyToWorktree keeping lc's set of unwritten files
// (lazyCheckout; nil: none to keep).
func applyChanges(s storage.Storer, wt billy.Filesystem, changes []fileChange, lc *lazyCheckout) error {
	for _, c := range changes {
		if !c.Delete {
			if err := verifyCheckoutPath(c.Path, c.Mode); err != nil {
				return err
			}
		}
	}
	idx, err := s.Index()
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].Delete && !changes[j].Delete })
	fw := newFastWriter(wt)
	defer fw.close()
	for _, c := range changes {
		if lc.kept(idx, c) {
			continue
		}
		if c.Delete && isGitlinkIn(idx, c.Path) {
			// A submodule's place is removed as git's remove_or_warn
			// does (rmdir): an empty directory goes, with the empty
			// directories above it; a file, a link or a checked-out
			// submodule stays ("unable to rmdir").
			if info, err := wt.Lstat(c.Path); err == nil && info.IsDir() && wt.Remove(c.Path) == nil {
				pruneEmptyDirs(wt, path.Dir(c.Path))
			}
			removeIndexPath(idx, c.Path)
			continue
		}
		if c.Delete {
			if info, err := wt.Lstat(c.Path); err == nil && info.IsDir() {
				// A directory where a file's entry goes, even an empty
				// one: git's unlink fails ("unable to unlink ... Is a
				// directory") and leaves it; so do we.
				removeIndexPath(idx, c.Path)
				lc.written(idx, c)
				continue
			}
			// A file standing where a directory above the path was
			// (ENOTDIR) means the path is gone already, as ENOENT does:
			// git's unlink fails and the checkout goes on.
			if err := wt.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return fmt.Errorf("remove %s: %w", c.Path, err)
			}
			pruneEmptyDirs(wt, path.Dir(c.Path))
			removeIndexPath(idx, c.Path)
			lc.written(idx, c)
			continue
		}
		if lc.deferrable(fw, c) {
			deferFile(idx, c)
			lc.files.add(c.Path)
			continue
		}
		if st, ok, err := fastWriteWorktreeFile(fw, s, c); err != nil {
			return err
		} else if ok {
			setIndexEntryStat(idx, c, st)
			lc.written(idx, c)
			continue
		}
		if err := writeWorktreeFile(s, wt, c); err != nil {
			return err
		}
		if err := setIndexEntry(idx, wt, c); err != nil {
			return err
		}
		lc.written(idx, c)
	}
	return s.SetIndex(idx)
}

// isGitlinkIn reports whether idx records p as a gitlink (a submodule).
func isGitlinkIn(idx *index.Index, p string) bool {
	e, err := idx.Entry(p)
	return err == nil && e.Mode == filemode.Submodule
}

// fastWriteWorktreeFile writes c through fw when it can (ok false: the
// general path is to write it).
func fastWriteWorktreeFile(fw *fastWriter, s storer.EncodedObjectStorer, c fileChange) (checkoutStat, bool, error) {
	if fw == nil || (c.Mode != filemode.Regular && c.Mode != filemode.Executable) {
		return checkoutStat{}, false, nil
	}
	content, err := readBlob(s, c.Hash)
	if err != nil {
		return checkoutStat{}, false, fmt.Errorf("check out %s: %w", c.Path, err)
	}
	if c.smudge != nil {
		content = c.smudge(c.Path, content)
	}
	st, ok := fw.write(c.Path, c.Mode, content)
	return st, ok, nil
}

// stageInIndex records already-written worktree files in the index.
func stageInIndex(s storage.Storer, wt billy.Filesystem, changes []fileChange) error {
	idx, err := s.Index()
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	for _, c := range changes {
		if c.Delete {
			removeIndexPath(idx, c.Path)
			continue
		}
		if err := setIndexEntry(idx, wt, c); err != nil {
			return err
		}
	}
	return s.SetIndex(idx)
}

// removeIndexPath drops every entry of p: stage 0, or the conflict
// stages 1-3 of an unmerged path (go-git's Remove drops the first only).
func removeIndexPath(idx *index.Index, p string) {
	kept := idx.Entries[:0]
	for _, e := range idx.Entries {
		if e.Name != p {
			kept = append(kept, e)
		}
	}
	idx.Entries = kept
}

// dropConflictStages removes the stages 1-3 of p: staging a path resolves
// its conflict (git's add_index_entry replaces them with stage 0).
func dropConflictStages(idx *index.Index, p string) {
	for _, e := range idx.Entries {
		if e.Name == p && e.Stage != 0 {
			kept := idx.Entries[:0]
			for _, x := range idx.Entries {
				if x.Name != p || x.Stage == 0 {
					kept = append(kept, x)
				}
			}
			idx.Entries = kept
			return
		}
	}
}

// setIndexEntryStat is setIndexEntry with the stat data of the file just
// written.
func setIndexEntryStat(idx *index.Index, c fileChange, st checkoutStat) {
	e := indexEntryFor(idx, c)
	e.ModifiedAt = time.Unix(st.sec, st.nsec)
	e.CreatedAt = e.ModifiedAt
	e.Size = uint32(st.size)
	e.Dev, e.Inode, e.UID, e.GID = uint32(st.dev), uint32(st.ino), st.uid, st.gid
}

func setIndexEntry(idx *index.Index, wt billy.Filesystem, c fileChange) error {
	e := indexEntryFor(idx, c)
	if info, err := wt.Lstat(c.Path); err == nil {
		e.ModifiedAt, e.CreatedAt = info.ModTime(), info.ModTime()
		e.Size = uint32(info.Size())
		fillStat(e, info)
	}
	return nil
}

// indexEntryFor is the index entry c goes to, its hash and mode set.
func indexEntryFor(idx *index.Index, c fileChange) *index.Entry {
	dropConflictStages(idx, c.Path)
	e, err := idx.Entry(c.Path)
	if err != nil {
		// A path cannot be both a file and a directory in the index: like
		// git's add_index_entry, drop the file entries that would be its
		// parent directories and the entries below it.
		for dir := path.Dir(c.Path); dir != "."; dir = path.Dir(dir) {
			_, _ = idx.Remove(dir)
		}
		kept := idx.Entries[:0]
		for _, x := range idx.Entries {
			if !strings.HasPrefix(x.Name, c.Path+"/") {
				kept = append(kept, x)
			}
		}
		idx.Entries = kept
		e = idx.Add(c.Path)
	}
	// A new entry (another version in its place) carries none of the old
	// one's flags (skip-worktree, intent to add); the same entry written
	// out again (restore from the index) keeps them, as git's
	// checkout_entry does.
	if e.Hash != c.Hash || e.Mode != c.Mode {
		e.SkipWorktree, e.IntentToAdd = false, false
	}
	e.Hash, e.Mode = c.Hash, c.Mode
	return e
}

func writeWorktreeFile(s storer.EncodedObjectStorer, wt billy.Filesystem, c fileChange) error {
	if c.Mode == filemode.Submodule {
		return writeGitlink(wt, c.Path)
	}
	content, err := readBlob(s, c.Hash)
	if err != nil {
		return fmt.Errorf("check out %s: %w", c.Path, err)
	}
	if c.smudge != nil && c.Mode != filemode.Symlink {
		content = c.smudge(c.Path, content)
	}
	return WriteWorktreeFile(wt, c.Path, c.Mode, content)
}

// WriteWorktreeFile writes content (already converted for the worktree)
// at p as git's checkout_entry does: a file where a directory of p must go
// and a directory or link where p goes are removed first, a symbolic link
// is made as one (a plain file holding its target where the root has no
// links), the executable bit follows mode, and a gitlink is an empty
// directory for its submodule.
func WriteWorktreeFile(wt billy.Filesystem, p string, mode filemode.FileMode, content []byte) error {
	if mode == filemode.Submodule {
		return writeGitlink(wt, p) // content is the submodule's: nothing to write
	}
	// A file where a directory must go (or the other way round) goes first.
	dir := path.Dir(p)
	if dir != "." && !clearFileAncestors(wt, dir) {
		if err := wt.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("mkdir %s: %w", dir, err)
		}
	}
	if info, err := wt.Lstat(p); err == nil && (info.IsDir() || info.Mode()&fs.ModeSymlink != 0 || mode == filemode.Symlink) {
		if info.IsDir() {
			if err := removeAll(wt, p); err != nil {
				return err
			}
		} else if err := wt.Remove(p); err != nil {
			return fmt.Errorf("check out %s: %w", p, err)
		}
	}
	perm := os.FileMode(0o644)
	if mode == filemode.Symlink {
		err := wt.Symlink(string(content), p)
		if err == nil {
			return nil
		}
		if full, ok := osPathOf(wt, p); ok {
			// The jail refuses to create a link whose target is outside
			// the root; the repository's own link is checked out as git
			// does (reads through the jail still refuse to follow it).
			if os.Symlink(string(content), full) == nil {
				return nil
			}
			return fmt.Errorf("check out %s: %w", p, err)
		}
		// A root with no symbolic links (memory): git's core.symlinks=false
		// checkout, a plain file holding the target.
	} else if mode == filemode.Executable {
		perm = 0o755
	}
	f, err := wt.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if ch, ok := wt.(billy.Change); ok {
		_ = ch.Chmod(p, perm)
	}
	return nil
}

// osPathOf returns the OS path of p when wt is an OS directory (not
// memory).
func osPathOf(wt billy.Filesystem, p string) (string, bool) {
	root := wt.Root()
	if root == "" || !filepath.IsAbs(root) {
		return "", false
	}
	a, err1 := wt.Stat(".")
	b, err2 := os.Stat(root)
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		return "", false
	}
	return filepath.Join(root, filepath.FromSlash(p)), true
}

// writeGitlink checks out a submodule entry the way git clone does without
// --recurse-submodules: an empty directory (the commit it names lives in
// another repository). A directory already there is left as it is.
func writeGitlink(wt billy.Filesystem, p string) error {
	if dir := path.Dir(p); dir != "." {
		_ = clearFileAncestors(wt, dir)
	}
	if info, err := wt.Lstat(p); err == nil {
		if info.IsDir() {
			return nil
		}
		if err := wt.Remove(p); err != nil {
			return fmt.Errorf("check out %s: %w", p, err)
		}
	}
	if err := wt.MkdirAll(p, 0o755); err != nil {
		return fmt.Errorf("check out %s: %w", p, err)
	}
	return nil
}

// clearFileAncestors removes a file or symlink standing where a directory
// of dir must go. A symlink is never followed: writing through one could
// land outside the worktree (git checks for leading symlinks too).
// It reports whether dir exists, every ancestor a directory (nothing to
// create).
func clearFileAncestors(wt billy.Filesystem, dir string) bool {
	for i := 0; i <= len(dir); i++ {
		if i < len(dir) && dir[i] != '/' {
			continue
		}
		p := dir[:i]
		info, err := wt.Lstat(p)
		if err != nil {
			return false
		}
		if !info.IsDir() {
			_ = wt.Remove(p)
			return false
		}
	}
	return true
}

func removeAll(wt billy.Filesystem, p string) error {
	entries, err := wt.ReadDir(p)
	if err != nil {
		return err
	}
	for _, e := range entries {
		c := path.Join(p, e.Name())
		if e.IsDir() {
			if err := removeAll(wt, c); err != nil {
				return err
			}
			continue
		}
		if err := wt.Remove(c); err != nil {
			return err
		}
	}
	return wt.Remove(p)
}

func pruneEmptyDirs(wt billy.Filesystem, dir string) {
	for dir != "." && dir != "/" && dir != "" {
		entries, err := wt.ReadDir(dir)
		if err != nil || len(entries) > 0 {
			return
		}
		if wt.Remove(dir) != nil {
			return
		}
		dir = path.Dir(dir)
	}
}

// ApplyTreeDiff moves worktree and index from fromTree to toTree (zero =
// empty tree), touching only the paths that differ. The git tools use it
// for checkout and stash.
func ApplyTreeDiff(ctx context.Context, s storage.Storer, wt billy.Filesystem, fromTree, toTree plumbing.Hash) error {
	changes, err := treeDiff(ctx, s, fromTree, toTree)
	if err != nil {
		return err
	}
	return applyToWorktree(s, wt, changes)
}

// ApplyPaths writes the given paths of tree to worktree and index (a path
// absent from the tree is removed).
func ApplyPaths(s storage.Storer, wt billy.Filesystem, tree plumbing.Hash, paths []string) error {
	return ApplyPathsSmudged(s, wt, tree, paths, nil)
}

// ApplyPathsSmudged is ApplyPaths with each file's bytes converted by
// smudge (nil: none) on the way to the worktree.
func ApplyPathsSmudged(s storage.Storer, wt billy.Filesystem, tree plumbing.Hash, paths []string, smudge Smudger) error {
	var changes []fileChange
	for _, p := range paths {
		e, ok, err := treeEntry(s, tree, p)
		if err != nil {
			return err
		}
		if !ok || e.Mode == filemode.Dir {
			// Not in the tree, or a directory there (a file that took a
			// directory's place): the file goes; the files below are
			// paths of their own.
			changes = append(changes, fileChange{Path: p, Delete: true})
			continue
		}
		changes = append(changes, fileChange{Path: p, Mode: e.Mode, Hash: e.Hash, smudge: smudge})
	}
	return applyToWorktree(s, wt, changes)
}

// TreeFile is one path's content for WriteTree. With Delete, Mode (when
// set) is what the path held: a gitlink's path is removed as git removes
// it, with rmdir only.
type TreeFile struct {
	Mode   filemode.FileMode
	Hash   plumbing.Hash
	Delete bool
}

// WriteTree stores the tree that is base (zero: empty) with files applied,
// re-encoding only the trees on changed paths; the empty result is git's
// empty tree, stored.
func WriteTree(s storer.EncodedObjectStorer, base plumbing.Hash, files map[string]TreeFile) (plumbing.Hash, error) {
	changes := make([]fileChange, 0, len(files))
	for p, f := range files {
		changes = append(changes, fileChange{Path: p, Mode: f.Mode, Hash: f.Hash, Delete: f.Delete})
	}
	return writeTreeStored(s, base, changes)
}

// writeTreeStored is writeTree whose empty result is git's empty tree,
// stored: a commit names a tree, never the zero hash (a replay of the
// deletion of the last file on a tip that deleted every other one made
// one, and the remote took it).
func writeTreeStored(s storer.EncodedObjectStorer, base plumbing.Hash, changes []fileChange) (plumbing.Hash, error) {
	h, err := writeTree(s, base, changes)
	if err != nil || !h.IsZero() {
		return h, err
	}
	return storeEmptyTree(s)
}

// StoreBlob stores content as a blob.
func StoreBlob(s storer.EncodedObjectStorer, content []byte) (plumbing.Hash, error) {
	return storeBlob(s, content)
}

// StagePaths records the worktree state of paths in the index in one
// index write (a missing path is removed): git add for many files without
// rewriting the index per file.
func StagePaths(s storage.Storer, wt billy.Filesystem, paths []string) error {
	return StagePathsContext(context.Background(), s, wt, paths)
}

// StagePathsContext is StagePaths that stops, before the index is
// written, when ctx is done: a timeout stages nothing (the blobs already
// hashed are unreferenced objects, as git's would be).
func StagePathsContext(ctx context.Context, s storage.Storer, wt billy.Filesystem, paths []string) error {
	return StagePathsCleaned(ctx, s, wt, paths, nil)
}

// StagePathsCleaned is StagePathsContext with each regular file passed
// through clean before it is stored (nil: as read). clean runs before
// the index is written, so it sees the index as it was.
func StagePathsCleaned(ctx context.Context, s storage.Storer, wt billy.Filesystem, paths []string, clean Cleaner) error {
	changes := make([]fileChange, 0, len(paths))
	for i, p := range paths {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c, err := stagePathWith(s, wt, p, clean)
		if err != nil {
			return fmt.Errorf("stage %s: %w", p, err)
		}
		changes = append(changes, c)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return stageInIndex(s, wt, changes)
}

// ApplyFiles writes files to the worktree and records them in the index in
// one index write (Delete removes a path from both): restoring paths from
// the index or from a commit.
func ApplyFiles(s storage.Storer, wt billy.Filesystem, files map[string]TreeFile) error {
	return ApplyFilesSmudged(s, wt, files, nil)
}

// ApplyFilesSmudged is ApplyFiles with each file's bytes converted by
// smudge (nil: none) on the way to the worktree.
func ApplyFilesSmudged(s storage.Storer, wt billy.Filesystem, files map[string]TreeFile, smudge Smudger) error {
	changes := make([]fileChange, 0, len(files))
	for p, f := range files {
		changes = append(changes, fileChange{Path: p, Mode: f.Mode, Hash: f.Hash, Delete: f.Delete, smudge: smudge})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return applyToWorktree(s, wt, changes)
}

// FindEntry looks a path up in a tree (nil when absent) as git does
// (revparse.TreeEntry: not go-git's Tree.FindEntry, which refuses names
// git stores happily). Whether a name may be written to a worktree is
// decided where it is written.
func FindEntry(s storer.EncodedObjectStorer, t *object.Tree, p string) *object.TreeEntry {
	return revparse.TreeEntry(s, t, p)
}

// InvalidPathError is git's refusal to check out a tree entry whose path
// could overwrite the repository's own files on some filesystem (".GIT",
// "git~1", ".git" with an ignorable code point, "..").
type InvalidPathError struct {
	Path string
	// Reason says which rule refused it (may be nil).
	Reason error
}

// Error is git's message, word for word.
func (e *InvalidPathError) Error() string { return fmt.Sprintf("error: invalid path '%s'", e.Path) }

func (e *InvalidPathError) Unwrap() error { return e.Reason }

// verifyCheckoutPath applies git's verify_path to a path about to be
// written to the worktree.
func verifyCheckoutPath(p string, mode filemode.FileMode) error {
	if err := gitpath.VerifyCheckout(p, mode == filemode.Symlink); err != nil {
		return &InvalidPathError{Path: p, Reason: err}
	}
	return nil
}
