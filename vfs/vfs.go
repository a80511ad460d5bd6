package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/afero"

	"github.com/tgp-go/tgp/gitpath"
)

// ErrViolation matches (errors.Is) every refusal of the jail.
var ErrViolation = errors.New("sandbox violation")

// ViolationError says which path was refused and why. Err is the rule's
// own error when there is one: a *gitpath.InvalidPathError for a path git
// would refuse to store, whose text (git's "invalid path '<p>'") leads the
// message.
type ViolationError struct {
	Op     string
	Path   string
	Reason string
	Err    error
}

func (e *ViolationError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%v: %s (sandbox violation: %s %q)", e.Err, e.Reason, e.Op, e.Path)
	}
	return fmt.Sprintf("Path outside sandbox: %q (%s: %s)", e.Path, e.Op, e.Reason)
}

// Is makes errors.Is(err, ErrViolation) and errors.Is(err,
// fs.ErrPermission) true: a refusal of the jail is a permission error to
// code that knows nothing of the jail (the sandbox bridge among them).
func (e *ViolationError) Is(target error) bool {
	return target == ErrViolation || target == fs.ErrPermission
}

// Unwrap exposes the rule's error (errors.Is(err, gitpath.ErrInvalidPath)).
func (e *ViolationError) Unwrap() error { return e.Err }

// maxLinkHops bounds symlink chains, like the kernel's ELOOP limit.
const maxLinkHops = 40

// FS is a jailed filesystem. It is safe for concurrent use as far as the
// underlying storage is.
type FS struct {
	store afero.Fs
	// base is the storage path of the root: the absolute OS root, or "/"
	// for memory.
	base string
	mem  bool
	perm fs.FileMode
	// fill, in a view made by WithFill, writes what the storage is still
	// to receive at a resolved path or beneath it, before any operation
	// on that path.
	fill func(rel string) error
}

// Option configures an FS.
type Option func(*FS)

// WithDirMode sets the mode of directories created on demand (default 0755).
func WithDirMode(m fs.FileMode) Option { return func(f *FS) { f.perm = m } }

// NewOS returns a jail rooted at root on the OS filesystem, creating the
// root if it is missing. Symlinks in the root's own path are resolved first.
func NewOS(root string, opts ...Option) (*FS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("vfs: root %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("vfs: root %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("vfs: root %s: %w", root, err)
	}
	f := &FS{store: afero.NewOsFs(), base: real, perm: 0o755}
	for _, o := range opts {
		o(f)
	}
	return f, nil
}

// NewMemory returns a jail whose storage is in memory only.
func NewMemory(opts ...Option) *FS {
	f := &FS{store: afero.NewMemMapFs(), base: "/", mem: true, perm: 0o755}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Root is the absolute OS root, or "" for memory.
func (f *FS) Root() string {
	if f.mem {
		return ""
	}
	return f.base
}

// WithFill returns a view of f on the same storage and root in which every
// operation on a path (reading, listing, walking, writing, removing,
// renaming) first calls fill with the path as resolved inside the jail
// ("." for the root): fill writes whatever the storage is still to
// receive at that path or beneath it. It serves a root whose files are
// written on demand (a git checkout that leaves files unwritten until they
// are read): a reader of the view sees every file without asking for it,
// and a write or a removal acts on the file, not on its absence. fill is
// called once per operation (twice for a rename) and must be cheap when
// there is nothing to write; it sees only paths the jail accepted.
func (f *FS) WithFill(fill func(rel string) error) *FS {
	v := *f
	v.fill = fill
	return &v
}

// Fill writes what a view made by WithFill has still to write at or
// beneath p (nothing for any other FS): for code that reads the root's
// directory on disk itself (Root) rather than through the FS.
func (f *FS) Fill(p string) error {
	if f.fill == nil {
		return nil
	}
	rel, err := f.resolve("fill", p, true)
	if err != nil {
		return err
	}
	return f.filled("fill", p, rel)
}

// filled runs the view's fill for rel (resolved from p by op).
func (f *FS) filled(op, p, rel string) error {
	if f.fill == nil {
		return nil
	}
	if err := f.fill(rel); err != nil {
		return &fs.PathError{Op: op, Path: p, Err: err}
	}
	return nil
}

// InMemory reports whether the storage is in memory.
func (f *FS) InMemory() bool { return f.mem }

// storage maps a resolved relative path to the storage's path.
func (f *FS) storage(rel string) string {
	if f.mem {
		if rel == "." {
			return "/"
		}
		return "/" + rel
	}
	if rel == "." {
		return f.base
	}
	return f.base + string(filepath.Separator) + filepath.FromSlash(rel)
}

func violation(op, p, reason string) error {
	return &ViolationError{Op: op, Path: p, Reason: reason}
}

// gitPathOK refuses to create rel (relative to the root) when git would
// refuse to store it (gitpath.Verify: ".GIT", "git~1", ".git\u200c",
// ".gitmodules" as a link, ...). Every write an agent can make lands in a
// commit: a name some filesystem reads as .git is code execution for the
// person who clones it there. kind is what rel becomes: a file, a link or a
// directory.
func gitPathOK(op, p, rel string, kind entryKind) error {
	if rel == "." {
		return nil
	}
	var err error
	switch kind {
	case entryDir:
		err = gitpath.VerifyDir(rel)
	default:
		err = gitpath.Verify(rel, kind == entryLink)
	}
	if err == nil {
		return nil
	}
	var ipe *gitpath.InvalidPathError
	reason := "git refuses this path"
	if errors.As(err, &ipe) {
		reason = ipe.Reason
	}
	return &ViolationError{Op: op, Path: p, Reason: reason, Err: err}
}

type entryKind int

const (
	entryFile entryKind = iota
	entryLink
	entryDir
)

// checkCreate runs gitPathOK on the path as written (cleaned) and on where
// it resolves (after links), since either can end up in a tree.
func (f *FS) checkCreate(op, p, resolved string, kind entryKind) error {
	lexical, err := f.clean(op, p)
	if err != nil {
		return err
	}
	if err := gitPathOK(op, p, lexical, kind); err != nil {
		return err
	}
	if resolved != lexical {
		return gitPathOK(op, p, resolved, kind)
	}
	return nil
}

// clean checks and cleans a path lexically, returning it relative to the
// root ("." for the root itself).
func (f *FS) clean(op, p string) (string, error) {
	if p == "" {
		return "", violation(op, p, "empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", violation(op, p, "NUL byte in path")
	}
	s := p
	if strings.HasPrefix(s, "/") {
		if f.mem {
			return "", violation(op, p, "absolute path")
		}
		rel, ok := f.inside(filepath.Clean(s))
		if !ok {
			return "", violation(op, p, "absolute path outside the root")
		}
		s = rel
	}
	c := path.Clean(s)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", violation(op, p, "climbs out of the root")
	}
	return c, nil
}

// inside reports whether an absolute OS path is within the root and returns
// it relative to the root.
func (f *FS) inside(abs string) (string, bool) {
	if abs == f.base {
		return ".", true
	}
	prefix := f.base
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(abs, prefix) {
		return "", false
	}
	return filepath.ToSlash(abs[len(prefix):]), true
}

// Resolve returns p as a clean slash-separated path relative to the root,
// with every symbolic link inside the root followed; it refuses any path
// that is empty, holds a NUL, climbs out, is absolute outside the root, or
// passes through a link that leads outside.
func (f *FS) Resolve(p string) (string, error) { return f.resolve("resolve", p, true) }

// ResolveNoFollow is Resolve without following a link in the last
// component: the path of the link itself, for operations on the link
// (deleting a link removes the link, as git and every shell do).
func (f *FS) ResolveNoFollow(p string) (string, error) { return f.resolve("resolve", p, false) }

// resolve walks rel component by component. With followLast false the last
// component is not followed if it is a link (Lstat, Readlink, Remove,
// Rename act on the link itself), but it is still checked to stay inside.
func (f *FS) resolve(op, p string, followLast bool) (string, error) {
	rel, err := f.clean(op, p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return rel, nil
	}
	lst, canLstat := f.store.(afero.Lstater)
	rdr, canReadlink := f.store.(afero.LinkReader)
	if !canLstat || !canReadlink {
		return rel, nil // no symlinks in this storage
	}
	parts := strings.Split(rel, "/")
	done := []string{}
	hops := 0
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		switch part {
		case ".", "":
			continue
		case "..":
			if len(done) == 0 {
				return "", violation(op, p, "a symbolic link climbs out of the root")
			}
			done = done[:len(done)-1]
			continue
		}
		cur := append(append([]string{}, done...), part)
		curRel := strings.Join(cur, "/")
		info, _, err := lst.LstatIfPossible(f.storage(curRel))
		if err != nil {
			// Missing components are fine (a file about to be created);
			// nothing below them can be a link.
			done = append(done, parts[i:]...)
			break
		}
		if info.Mode()&fs.ModeSymlink == 0 || (!followLast && i == len(parts)-1) {
			// A link that is itself the operand (lstat, readlink, remove)
			// is inside the root wherever it points: git stores links to
			// anywhere as data, and nothing here follows this one.
			done = cur
			continue
		}
		target, err := f.linkTarget(op, p, rdr, cur, &hops)
		if err != nil {
			return "", err
		}
		// Continue from the link's target, then the rest of the path.
		rest := append(strings.Split(target, "/"), parts[i+1:]...)
		parts = rest
		done = []string{}
		i = -1
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}

// linkTarget reads the link at cur and returns its target relative to the
// root, refusing one that leads outside.
func (f *FS) linkTarget(op, p string, rdr afero.LinkReader, cur []string, hops *int) (string, error) {
	*hops++
	if *hops > maxLinkHops {
		return "", violation(op, p, "too many levels of symbolic links")
	}
	t, err := rdr.ReadlinkIfPossible(f.storage(strings.Join(cur, "/")))
	if err != nil {
		return "", fmt.Errorf("vfs %s %s: %w", op, p, err)
	}
	t = filepath.ToSlash(t)
	var joined string
	if strings.HasPrefix(t, "/") {
		if f.mem {
			return "", violation(op, p, "a symbolic link points to an absolute path")
		}
		rel, ok := f.inside(filepath.Clean(t))
		if !ok {
			return "", violation(op, p, "a symbolic link points outside the root")
		}
		joined = rel
	} else {
		joined = path.Join(append(append([]string{}, cur[:len(cur)-1]...), t)...)
	}
	c := path.Clean(joined)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", violation(op, p, "a symbolic link points outside the root")
	}
	return c, nil
}

func (f *FS) pathErr(op, p string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: op, Path: p, Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fs.PathError{Op: op, Path: p, Err: le.Err}
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// ReadFile reads a whole file.
func (f *FS) ReadFile(p string) ([]byte, error) {
	rel, err := f.resolve("read", p, true)
	if err != nil {
		return nil, err
	}
	if err := f.filled("read", p, rel); err != nil {
		return nil, err
	}
	b, err := afero.ReadFile(f.store, f.storage(rel))
	return b, f.pathErr("read", p, err)
}

// WriteFile writes data atomically: a temporary file in the same
// directory, then a rename over the target. Parent directories are created.
// A path git would refuse to store (gitpath.Verify) is refused.
func (f *FS) WriteFile(p string, data []byte, perm fs.FileMode) error {
	rel, err := f.resolve("write", p, true)
	if err != nil {
		return err
	}
	if rel == "." {
		return violation("write", p, "cannot write the root itself")
	}
	if err := f.checkCreate("write", p, rel, entryFile); err != nil {
		return err
	}
	if err := f.filled("write", p, rel); err != nil {
		return err
	}
	dir := path.Dir(rel)
	if err := f.store.MkdirAll(f.storage(dir), f.perm); err != nil {
		return f.pathErr("write", p, err)
	}
	if info, err := f.store.Stat(f.storage(rel)); err == nil && info.IsDir() {
		return f.pathErr("write", p, fmt.Errorf("is a directory"))
	}
	tmp, err := afero.TempFile(f.store, f.storage(dir), ".tgp-tmp-")
	if err != nil {
		return f.pathErr("write", p, err)
	}
	name := tmp.Name()
	// No fsync: the root is a cache of the remote; what must survive is
	// on the remote once the push is acknowledged (git does not fsync
	// loose files by default either).
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = f.store.Chmod(name, perm)
	}
	if werr == nil {
		werr = f.store.Rename(name, f.storage(rel))
	}
	if werr != nil {
		_ = f.store.Remove(name)
		return f.pathErr("write", p, werr)
	}
	return nil
}

// MkdirAll creates a directory and its parents; a path git would refuse to
// store (gitpath.VerifyDir) is refused.
func (f *FS) MkdirAll(p string, perm fs.FileMode) error { return f.mkdirAll(p, perm, true) }

// mkdirAll is MkdirAll; verify false is for the go-git view, which must
// create .git itself.
func (f *FS) mkdirAll(p string, perm fs.FileMode, verify bool) error {
	rel, err := f.resolve("mkdir", p, true)
	if err != nil {
		return err
	}
	if verify {
		if err := f.checkCreate("mkdir", p, rel, entryDir); err != nil {
			return err
		}
	}
	if err := f.filled("mkdir", p, rel); err != nil {
		return err
	}
	return f.pathErr("mkdir", p, f.store.MkdirAll(f.storage(rel), perm))
}

// Remove removes a file, a link or an empty directory.
func (f *FS) Remove(p string) error {
	rel, err := f.resolve("remove", p, false)
	if err != nil {
		return err
	}
	if rel == "." {
		return violation("remove", p, "cannot remove the root")
	}
	if err := f.filled("remove", p, rel); err != nil {
		return err
	}
	return f.pathErr("remove", p, f.store.Remove(f.storage(rel)))
}

// RemoveAll removes a path and everything below it; never the root.
func (f *FS) RemoveAll(p string) error {
	rel, err := f.resolve("remove", p, false)
	if err != nil {
		return err
	}
	if rel == "." {
		return violation("remove", p, "cannot remove the root")
	}
	if err := f.filled("remove", p, rel); err != nil {
		return err
	}
	return f.pathErr("remove", p, f.store.RemoveAll(f.storage(rel)))
}

// Rename moves a file or directory inside the root; parents of the new
// path are created. The new path, and every path below it when a directory
// moves, must be one git would store (gitpath.Verify); the old one may be
// anything (renaming is how an odd name is fixed).
func (f *FS) Rename(oldp, newp string) error { return f.rename(oldp, newp, true) }

// rename is Rename; verify false is for the go-git view.
func (f *FS) rename(oldp, newp string, verify bool) error {
	o, err := f.resolve("rename", oldp, false)
	if err != nil {
		return err
	}
	n, err := f.resolve("rename", newp, false)
	if err != nil {
		return err
	}
	if o == "." || n == "." {
		return violation("rename", oldp, "cannot rename the root")
	}
	if err := f.filled("rename", oldp, o); err != nil {
		return err
	}
	if err := f.filled("rename", newp, n); err != nil {
		return err
	}
	if verify {
		if err := f.checkRenameTarget(newp, o, n); err != nil {
			return err
		}
	}
	if err := f.store.MkdirAll(f.storage(path.Dir(n)), f.perm); err != nil {
		return f.pathErr("rename", newp, err)
	}
	return f.pathErr("rename", oldp, f.store.Rename(f.storage(o), f.storage(n)))
}

// checkRenameTarget verifies what moving o to n would create: n itself
// (as the kind of entry o is) and, for a directory, each entry below it
// under its new name.
func (f *FS) checkRenameTarget(newp, o, n string) error {
	info, err := f.lstatRel(newp, o)
	if err != nil {
		return nil // the rename itself reports the missing source
	}
	if err := f.checkCreate("rename", newp, n, kindOf(info)); err != nil {
		return err
	}
	if !info.IsDir() {
		return nil
	}
	lexical, err := f.clean("rename", newp)
	if err != nil {
		return err
	}
	return f.walk(o, info, func(rel string, info fs.FileInfo, err error) error {
		if err != nil || rel == o {
			return err
		}
		suffix := rel[len(o):]
		if err := gitPathOK("rename", newp, lexical+suffix, kindOf(info)); err != nil {
			return err
		}
		if n != lexical {
			return gitPathOK("rename", newp, n+suffix, kindOf(info))
		}
		return nil
	})
}

func kindOf(info fs.FileInfo) entryKind {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return entryLink
	case info.IsDir():
		return entryDir
	}
	return entryFile
}

// Stat follows links (inside the root).
func (f *FS) Stat(p string) (fs.FileInfo, error) {
	rel, err := f.resolve("stat", p, true)
	if err != nil {
		return nil, err
	}
	if err := f.filled("stat", p, rel); err != nil {
		return nil, err
	}
	info, err := f.store.Stat(f.storage(rel))
	return info, f.pathErr("stat", p, err)
}

// Lstat does not follow a link at the last component.
func (f *FS) Lstat(p string) (fs.FileInfo, error) {
	rel, err := f.resolve("lstat", p, false)
	if err != nil {
		return nil, err
	}
	if err := f.filled("lstat", p, rel); err != nil {
		return nil, err
	}
	return f.lstatRel(p, rel)
}

func (f *FS) lstatRel(p, rel string) (fs.FileInfo, error) {
	if l, ok := f.store.(afero.Lstater); ok {
		info, _, err := l.LstatIfPossible(f.storage(rel))
		return info, f.pathErr("lstat", p, err)
	}
	info, err := f.store.Stat(f.storage(rel))
	return info, f.pathErr("lstat", p, err)
}

// ReadDir lists a directory sorted by name; entries are Lstat'ed.
func (f *FS) ReadDir(p string) ([]fs.FileInfo, error) {
	rel, err := f.resolve("readdir", p, true)
	if err != nil {
		return nil, err
	}
	if err := f.filled("readdir", p, rel); err != nil {
		return nil, err
	}
	return f.readDirRel(p, rel)
}

func (f *FS) readDirRel(p, rel string) ([]fs.FileInfo, error) {
	d, err := f.store.Open(f.storage(rel))
	if err != nil {
		return nil, f.pathErr("readdir", p, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, f.pathErr("readdir", p, err)
	}
	sort.Strings(names)
	out := make([]fs.FileInfo, 0, len(names))
	for _, n := range names {
		info, err := f.lstatRel(p, path.Join(rel, n))
		if err != nil {
			continue // vanished between list and stat
		}
		out = append(out, info)
	}
	return out, nil
}

// Readlink returns a link's target as stored.
func (f *FS) Readlink(p string) (string, error) {
	rel, err := f.resolve("readlink", p, false)
	if err != nil {
		return "", err
	}
	if err := f.filled("readlink", p, rel); err != nil {
		return "", err
	}
	r, ok := f.store.(afero.LinkReader)
	if !ok {
		return "", f.pathErr("readlink", p, errors.ErrUnsupported)
	}
	t, err := r.ReadlinkIfPossible(f.storage(rel))
	return t, f.pathErr("readlink", p, err)
}

// Symlink creates a link at newp; a target leading outside the root is
// refused, and so is a name git would refuse for a link (gitpath.Verify:
// a link named .gitmodules, or any name refused for a file).
func (f *FS) Symlink(target, newp string) error { return f.symlink(target, newp, true) }

// symlink is Symlink; verify false is for the go-git view.
func (f *FS) symlink(target, newp string, verify bool) error {
	rel, err := f.resolve("symlink", newp, false)
	if err != nil {
		return err
	}
	if verify {
		if err := f.checkCreate("symlink", newp, rel, entryLink); err != nil {
			return err
		}
	}
	if err := f.filled("symlink", newp, rel); err != nil {
		return err
	}
	l, ok := f.store.(afero.Linker)
	if !ok {
		return f.pathErr("symlink", newp, errors.ErrUnsupported)
	}
	t := filepath.ToSlash(target)
	var j string
	if strings.HasPrefix(t, "/") {
		if f.mem {
			return violation("symlink", newp, "absolute link target")
		}
		r, ok := f.inside(filepath.Clean(t))
		if !ok {
			return violation("symlink", newp, "link target outside the root")
		}
		j = r
	} else {
		j = path.Join(path.Dir(rel), t)
	}
	if c := path.Clean(j); c == ".." || strings.HasPrefix(c, "../") {
		return violation("symlink", newp, "link target outside the root")
	}
	if err := f.store.MkdirAll(f.storage(path.Dir(rel)), f.perm); err != nil {
		return f.pathErr("symlink", newp, err)
	}
	return f.pathErr("symlink", newp, l.SymlinkIfPossible(filepath.FromSlash(target), f.storage(rel)))
}

// Walk visits p and everything below it in lexical order without following
// links; rel is the slash path from the root. fn may return fs.SkipDir.
func (f *FS) Walk(p string, fn func(rel string, info fs.FileInfo, err error) error) error {
	rel, err := f.resolve("walk", p, true)
	if err != nil {
		return err
	}
	if err := f.filled("walk", p, rel); err != nil {
		return err
	}
	info, err := f.lstatRel(p, rel)
	if err != nil {
		err = fn(rel, nil, err)
	} else {
		err = f.walk(rel, info, fn)
	}
	if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

func (f *FS) walk(rel string, info fs.FileInfo, fn func(string, fs.FileInfo, error) error) error {
	if err := fn(rel, info, nil); err != nil {
		if info.IsDir() && errors.Is(err, fs.SkipDir) {
			return nil
		}
		return err
	}
	if !info.IsDir() {
		return nil
	}
	entries, err := f.readDirRel(rel, rel)
	if err != nil {
		return fn(rel, info, err)
	}
	for _, e := range entries {
		child := e.Name()
		if rel != "." {
			child = rel + "/" + e.Name()
		}
		if err := f.walk(child, e, fn); err != nil {
			return err
		}
	}
	return nil
}

// open opens a resolved path in the storage (used by the views).
func (f *FS) open(rel string, flag int, perm fs.FileMode) (afero.File, error) {
	return f.store.OpenFile(f.storage(rel), flag, perm)
}
