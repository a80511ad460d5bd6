package gitbackend

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
)

// mirrorRemoteRefs gives a fresh clone the rest of what git clone gives:
// every remote branch as refs/remotes/origin/<b>, origin/HEAD naming the
// remote's HEAD branch, and every tag. The kernel itself works on one
// branch, but an agent's git_log, git_show v1.2 or git_checkout of a
// colleague's branch must find what `git clone` would have. A shallow
// clone stays single-branch (git's --depth implies --single-branch).
//
// Failing here does not fail the clone: the branch the kernel works on is
// already checked out; the note says what is missing.
func (r *Repo) mirrorRemoteRefs(ctx context.Context, rh remoteHeads, branch string) (note string) {
	if r.cfg.Depth > 0 {
		return ""
	}
	var err error
	if l, ok := r.remote.(*localRemote); ok {
		err = l.mirrorInto(ctx, r.store, branch)
	} else {
		err = r.fetchAllRefs(ctx)
	}
	if _, ok := rh.branches[rh.head]; ok && err == nil {
		err = r.store.SetReference(plumbing.NewSymbolicReference(plumbing.NewRemoteHEADReferenceName("origin"),
			plumbing.NewRemoteReferenceName("origin", rh.head)))
	}
	if err != nil {
		return "the remote's other branches and tags were not all fetched: " + err.Error()
	}
	return ""
}

// fetchAllRefs is git clone's fetch of a network remote's branches and tags.
func (r *Repo) fetchAllRefs(ctx context.Context) error {
	rem := git.NewRemote(r.store, &config.RemoteConfig{Name: "origin", URLs: []string{r.cfg.Remote}})
	err := rem.FetchContext(ctx, &git.FetchOptions{
		RefSpecs: []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"},
		Tags:     git.AllTags, Auth: r.cfg.auth(), Force: true,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return classifyNetErr(err)
	}
	return nil
}

// mirrorInto copies the local remote's branches (as remote-tracking refs)
// and tags, with their objects, into local.
func (l *localRemote) mirrorInto(ctx context.Context, local storage.Storer, checkedOut string) error {
	rs := l.open()
	defer rs.Close()
	branches, err := l.branches()
	if err != nil {
		return err
	}
	for b, tip := range branches {
		if b == checkedOut {
			continue // its tracking ref is written with the checkout
		}
		if err := copyObjects(ctx, rs, local, tip, 0); err != nil {
			return fmt.Errorf("fetch %s: %w", b, err)
		}
		if err := local.SetReference(plumbing.NewHashReference(plumbing.NewRemoteReferenceName("origin", b), tip)); err != nil {
			return err
		}
	}
	tags, err := l.refsUnder("refs/tags/")
	if err != nil {
		return err
	}
	for name, h := range tags {
		if err := copyTagged(ctx, rs, local, h); err != nil {
			return fmt.Errorf("fetch tag %s: %w", name, err)
		}
		if err := local.SetReference(plumbing.NewHashReference(plumbing.NewTagReferenceName(name), h)); err != nil {
			return err
		}
	}
	return nil
}

// copyTagged copies what a tag ref names: annotated tag objects down to
// the commit (with its history), tree or blob they point at.
func copyTagged(ctx context.Context, src, dst storage.Storer, h plumbing.Hash) error {
	for depth := 0; depth < 16; depth++ {
		if dst.HasEncodedObject(h) == nil {
			return nil // there with its closure (the clone's pack took it)
		}
		o, err := src.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return err
		}
		switch o.Type() {
		case plumbing.CommitObject:
			return copyObjects(ctx, src, dst, h, 0)
		case plumbing.TagObject:
			if err := copyObject(src, dst, h); err != nil {
				return err
			}
			t, err := object.DecodeTag(src, o)
			if err != nil {
				return err
			}
			h = t.Target
		case plumbing.TreeObject:
			seen := map[plumbing.Hash]bool{}
			var order []plumbing.Hash
			if err := collectTree(ctx, src, dst, h, seen, &order); err != nil {
				return err
			}
			return writeObjects(src, dst, order, false)
		default:
			return copyObject(src, dst, h)
		}
	}
	return errors.New("tag chain too deep")
}

// refsUnder lists the remote's refs below prefix (loose, then packed), by
// name relative to prefix. Lock files are skipped, as git skips them.
func (l *localRemote) refsUnder(prefix string) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	dir := filepath.Join(l.path, filepath.FromSlash(prefix))
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(d.Name(), ".lock") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		h, err := readRef(l.path, prefix+name)
		if err != nil {
			return err
		}
		if !h.IsZero() {
			out[name] = h
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s of %s: %w", prefix, l.path, err)
	}
	f, err := os.Open(filepath.Join(l.path, "packed-refs"))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s of %s: %w", prefix, l.path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		h, name, ok := strings.Cut(sc.Text(), " ")
		short, under := strings.CutPrefix(name, prefix)
		if !ok || !under || !plumbing.IsHash(h) {
			continue
		}
		if _, loose := out[short]; !loose {
			out[short] = plumbing.NewHash(h)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("list %s of %s: %w", prefix, l.path, err)
	}
	return out, nil
}
