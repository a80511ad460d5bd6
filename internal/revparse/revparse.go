// Package revparse is git's revision syntax, read as git reads it: what
// object-name.c's get_oid_with_context makes of a revision ("<ref>@{<n>}"
// from the reflog, "^{<type>}" peeling, "<rev>:<path>", a tag, a full
// object name) and how revision.c's handle_dotdot splits a range (A..B,
// A...B). Names, "~<n>" and "^<n>" are resolved by go-git's
// ResolveRevision; what go-git does not read (reflogs, trees, blobs,
// paths, tags of anything but commits) is read here, once for every git
// tool.
//
// The syntax (SplitReflog, SplitPeel, SplitPath, SplitRange, NameEnd) is
// apart from the resolution (Commit, Object, Tree, FinalCommit), which
// returns plain errors; the tools say them as git does.
package revparse

import (
	"errors"
	"strconv"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/tgp-go/tgp/internal/reflog"
)

// OrHead is a revision left empty (a side of a range, the base of
// ":path"): HEAD.
func OrHead(rev string) string {
	if rev == "" {
		return "HEAD"
	}
	return rev
}

// SplitReflog reads "<ref>@{<spec>}<rest>" (get_oid_basic's reflog
// form): the ref before the first "@{" (HEAD when empty), what the braces
// hold and what follows them. ok is false when rev has no "@{...}", or
// when "@{" comes after a "^", "~" or ":" (then it is not a reflog of the
// revision's start).
func SplitReflog(rev string) (ref, spec, rest string, ok bool) {
	i := strings.Index(rev, "@{")
	if i < 0 {
		return "", "", "", false
	}
	j := strings.IndexByte(rev[i:], '}')
	if j < 0 {
		return "", "", "", false
	}
	ref = rev[:i]
	if strings.ContainsAny(ref, "^~:") {
		return "", "", "", false
	}
	return OrHead(ref), rev[i+2 : i+j], rev[i+j+1:], true
}

// SplitPeel reads a revision ending in "^{<type>}" (peel_onion): the
// revision before its last "^{" and the type ("" when rev has none). The
// type name is read as a prefix, as git reads it: "X^{tree}..y@{0}",
// which was no range, is X's tree.
func SplitPeel(rev string) (base, peel string) {
	i := strings.LastIndex(rev, "^{")
	if i <= 0 || !strings.HasSuffix(rev, "}") {
		return rev, ""
	}
	base, peel = rev[:i], rev[i+2:len(rev)-1]
	if strings.HasPrefix(peel, "tree}") {
		peel = "tree"
	}
	return base, peel
}

// SplitPath reads "<rev>:<path>": the revision (HEAD when empty) and the
// path. ok is false when rev has no ":", or when its ":" follows an "@{"
// (the reflog form reads the rest: "main@{0}:path").
func SplitPath(rev string) (base, path string, ok bool) {
	base, path, ok = strings.Cut(rev, ":")
	if !ok || strings.Contains(base, "@{") {
		return "", "", false
	}
	return OrHead(base), path, true
}

// SplitRange is handle_dotdot's split of a revision argument at its
// first ".." ("..." for a symmetric difference): the two sides as written
// (empty: HEAD). ok is false when the argument holds no "..", and for
// ".." alone, which git takes as a path.
func SplitRange(arg string) (a, b string, symmetric, ok bool) {
	i := strings.Index(arg, "..")
	if i < 0 {
		return "", "", false, false
	}
	a, b = arg[:i], arg[i+2:]
	if strings.HasPrefix(b, ".") {
		symmetric, b = true, b[1:]
	}
	if a == "" && b == "" && !symmetric {
		return "", "", false, false
	}
	return a, b, symmetric, true
}

// NameEnd is where the name of a revision ends and its first "~" or "^"
// begins (len(rev) when it has none): a "~" or "^" inside "@{...}" is
// the reflog's.
func NameEnd(rev string) int {
	i, depth := 0, 0
	for ; i < len(rev); i++ {
		switch {
		case strings.HasPrefix(rev[i:], "@{"):
			depth++
			i++
			continue
		case rev[i] == '}' && depth > 0:
			depth--
		}
		if depth == 0 && (rev[i] == '~' || rev[i] == '^') {
			break
		}
	}
	return i
}

// ReflogAt reads ref@{n} from the reflog (n counted from the newest; the
// log dwim_log finds); count is the number of entries.
func ReflogAt(r *git.Repository, ref string, n int) (h plumbing.Hash, count int, ok bool) {
	dot, ok := r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return plumbing.ZeroHash, 0, false
	}
	name, ok := reflog.Find(dot.Filesystem(), ref)
	if !ok {
		return plumbing.ZeroHash, 0, false
	}
	es, err := reflog.Read(dot.Filesystem(), name)
	if err != nil || len(es) == 0 {
		return plumbing.ZeroHash, 0, false
	}
	if n >= len(es) {
		return plumbing.ZeroHash, len(es), false
	}
	return es[len(es)-1-n].New, len(es), true
}

// expandReflog replaces a leading "<ref>@{n}" of rev with the full id of
// the commit entry n of the ref's reflog names (newest first; the ref is
// found as git's dwim_log finds it, HEAD when empty); rev is returned as
// it is when it has none, or when the reflog has no such entry.
func expandReflog(r *git.Repository, rev string) string {
	ref, spec, rest, ok := SplitReflog(rev)
	if !ok {
		return rev
	}
	n, err := strconv.Atoi(spec)
	if err != nil || n < 0 {
		return rev
	}
	h, _, ok := ReflogAt(r, ref, n)
	if !ok {
		return rev
	}
	return h.String() + rest
}

// Commit is go-git's ResolveRevision after a leading "<ref>@{n}" has
// been read from the reflog (go-git reads no reflogs): "stash@{1}^2",
// "HEAD@{2}~1", "main@{0}:path".
func Commit(r *git.Repository, rev string) (*plumbing.Hash, error) {
	return r.ResolveRevision(plumbing.Revision(expandReflog(r, rev)))
}

// Object resolves a revision to the object it names without peeling:
// "<rev>^{tree}", "<rev>:<path>", an annotated tag, a full name of any
// object, else a commit.
func Object(r *git.Repository, rev string) (object.Object, error) {
	// peel_onion: a revision ending in "}" is peeled at its last "^{".
	if base, peel := SplitPeel(rev); peel == "tree" {
		rev = base + "^{tree}"
	}
	if base, ok := strings.CutSuffix(rev, "^{tree}"); ok {
		h, err := Commit(r, base)
		if err != nil {
			return nil, err
		}
		c, err := r.CommitObject(*h)
		if err != nil {
			return nil, err
		}
		return c.Tree()
	}
	if base, p, ok := SplitPath(rev); ok {
		h, err := Commit(r, base)
		if err != nil {
			return nil, err
		}
		c, err := r.CommitObject(*h)
		if err != nil {
			return nil, err
		}
		t, err := c.Tree()
		if err != nil {
			return nil, err
		}
		if p == "" {
			return t, nil
		}
		e := TreeEntry(r.Storer, t, strings.TrimSuffix(p, "/"))
		if e == nil {
			return nil, plumbing.ErrObjectNotFound
		}
		return object.GetObject(r.Storer, e.Hash)
	}
	if ref, err := r.Storer.Reference(plumbing.NewTagReferenceName(rev)); err == nil {
		if o, err := object.GetObject(r.Storer, ref.Hash()); err == nil {
			return o, nil
		}
	}
	if plumbing.IsHash(rev) {
		if o, err := object.GetObject(r.Storer, plumbing.NewHash(rev)); err == nil {
			return o, nil
		}
	}
	h, err := Commit(r, rev)
	if err != nil {
		return nil, err
	}
	return r.CommitObject(*h)
}

// ErrNotTree: the revision names no commit and no tree.
var ErrNotTree = errors.New("not a tree")

// Tree is the tree a revision names: a commit's (a tag peeled), or a tree
// itself ("HEAD^{tree}").
func Tree(r *git.Repository, rev string) (*object.Tree, error) {
	o, err := Object(r, rev)
	for err == nil {
		switch x := o.(type) {
		case *object.Tag:
			o, err = x.Object()
			continue
		case *object.Commit:
			return x.Tree()
		case *object.Tree:
			return x, nil
		}
		return nil, ErrNotTree
	}
	return nil, err
}

// ErrBadRevision: the revision does not name an object, or peels to
// another type than it asks for ("<commit>^{blob}").
var ErrBadRevision = errors.New("bad revision")

// ErrNotCommit: the revision names a tree or a blob where a commit is
// needed (git's "Non commit <rev>?").
var ErrNotCommit = errors.New("not a commit")

// ShortLogError is "<ref>@{<n>}" past the end of ref's reflog, which
// holds Count entries.
type ShortLogError struct {
	Ref   string
	Count int
}

func (e *ShortLogError) Error() string {
	entries := "entries"
	if e.Count == 1 {
		entries = "entry"
	}
	return "log for '" + e.Ref + "' only has " + strconv.Itoa(e.Count) + " " + entries
}

// FinalCommit resolves a revision to a commit the way blame's
// find_single_final does: a tag is peeled, a tree or blob is refused
// (ErrNotCommit), "<ref>@{<n>}" read from the reflog (a *ShortLogError
// past its end), anything else that names nothing ErrBadRevision.
func FinalCommit(r *git.Repository, rev string) (plumbing.Hash, error) {
	// "<ref>@{n}" with more after it: the reflog entry, then the rest.
	if x := expandReflog(r, rev); x != rev && !strings.HasSuffix(rev, "}") {
		h, err := r.ResolveRevision(plumbing.Revision(x))
		if err != nil {
			return plumbing.ZeroHash, ErrBadRevision
		}
		return peelCommit(r, *h, "")
	}
	base, peel := SplitPeel(rev)
	if ref, spec, rest, ok := SplitReflog(base); ok && rest == "" {
		n, err := strconv.Atoi(spec)
		if err != nil || n != 0 {
			h, count, ok := ReflogAt(r, ref, n)
			if err == nil && !ok && count > 0 {
				return plumbing.ZeroHash, &ShortLogError{Ref: ref, Count: count}
			}
			if err != nil || !ok {
				return plumbing.ZeroHash, ErrBadRevision
			}
			return peelCommit(r, h, peel)
		}
		base = ref
	}
	h, err := r.ResolveRevision(plumbing.Revision(base))
	if err != nil {
		// go-git peels refs to commits; a tag of a tree or blob is
		// found by its ref, to be refused as git does.
		for _, name := range []string{base, "refs/" + base, "refs/tags/" + base, "refs/heads/" + base} {
			if ref, err := r.Reference(plumbing.ReferenceName(name), true); err == nil {
				return peelCommit(r, ref.Hash(), peel)
			}
		}
		return plumbing.ZeroHash, ErrBadRevision
	}
	return peelCommit(r, *h, peel)
}

// peelCommit peels h's tags down to a commit, as peel asks ("" or
// "commit"; "tree" names a commit's tree, not a commit).
func peelCommit(r *git.Repository, h plumbing.Hash, peel string) (plumbing.Hash, error) {
	for {
		o, err := r.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, ErrBadRevision
		}
		switch o.Type() {
		case plumbing.TagObject:
			t, err := object.DecodeTag(r.Storer, o)
			if err != nil {
				return plumbing.ZeroHash, ErrBadRevision
			}
			h = t.Target
			continue
		case plumbing.CommitObject:
			if peel == "tree" {
				return plumbing.ZeroHash, ErrNotCommit
			}
			if peel != "" && peel != "commit" {
				return plumbing.ZeroHash, ErrBadRevision
			}
			return h, nil
		}
		return plumbing.ZeroHash, ErrNotCommit
	}
}

// TreeEntry looks the path p up in tree t, as get_tree_entry does for
// "<rev>:<path>" (nil when it is absent). Not go-git's Tree.FindEntry,
// which refuses names git stores happily (a tab, a control character):
// the repository's own content must always be readable.
func TreeEntry(s storer.EncodedObjectStorer, t *object.Tree, p string) *object.TreeEntry {
	for {
		name, rest, more := strings.Cut(p, "/")
		var found *object.TreeEntry
		for i := range t.Entries {
			if t.Entries[i].Name == name {
				found = &t.Entries[i]
				break
			}
		}
		if found == nil || !more {
			return found
		}
		if found.Mode != filemode.Dir {
			return nil
		}
		sub, err := object.GetTree(s, found.Hash)
		if err != nil {
			return nil
		}
		t, p = sub, rest
	}
}
