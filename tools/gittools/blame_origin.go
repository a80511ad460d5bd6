package gittools

import (
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/tgp-go/tgp/internal/diffcore"
)

// fakeWorkingTree is git's fake_working_tree_commit: the working tree
// file as a commit "Not Committed Yet" whose parents are HEAD and the
// MERGE_HEAD commits, diffed against the index with the file's entry
// replaced by the working tree's content and mode.
func (sb *scoreboard) fakeWorkingTree(p string) (*borigin, error) {
	head, err := sb.r.Head()
	if err != nil {
		return nil, fatalf("no such ref: HEAD")
	}
	now := time.Now()
	_, off := now.Zone()
	tz := off / 3600 * 100
	if off%3600 != 0 {
		m := (off % 3600) / 60
		if m < 0 {
			m = -m
		}
		if off < 0 {
			tz -= m
		} else {
			tz += m
		}
	}
	c := &bcommit{fake: true, date: now.Unix(), author: "Not Committed Yet", email: "not.committed.yet", ts: now.Unix(), tz: tz, parents: []plumbing.Hash{head.Hash()}}
	if dot, ok := sb.r.Storer.(interface{ Filesystem() billy.Filesystem }); ok {
		if f, err := dot.Filesystem().Open("MERGE_HEAD"); err == nil {
			raw, _ := io.ReadAll(f)
			f.Close()
			for _, l := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
				if l = strings.TrimSpace(l); len(l) == 40 {
					c.parents = append(c.parents, plumbing.NewHash(l))
				}
			}
		}
	}
	sb.commits[plumbing.ZeroHash] = c
	// verify_working_tree_path: a blob in a parent, or in the index
	// (read only when needed: a large index costs more than the walk).
	known := false
	for _, h := range c.parents {
		pc, err := sb.commit(h)
		if err != nil {
			return nil, fatalf("no such commit %s", h)
		}
		if e := sb.entry(pc, p); e != nil && e.mode != filemode.Submodule {
			known = true
			break
		}
	}
	if !known {
		if _, ok := sb.indexNames()[p]; ok {
			known = true
		}
	}
	if !known {
		return nil, fatalf("no such path '%s' in HEAD", p)
	}
	w, err := worktreeOf(sb.r)
	if err != nil {
		return nil, fatalf("Cannot lstat '%s': %v", p, err)
	}
	info, err := w.Filesystem.Lstat(p)
	if err != nil {
		reason := "No such file or directory"
		if !os.IsNotExist(err) {
			reason = err.Error()
		}
		return nil, fatalf("Cannot lstat '%s': %s", p, reason)
	}
	var data []byte
	mode := filemode.Regular
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		t, err := w.Filesystem.Readlink(p)
		if err != nil {
			return nil, fatalf("cannot readlink '%s'", p)
		}
		data, mode = []byte(t), filemode.Symlink
	case info.Mode().IsRegular():
		f, err := w.Filesystem.Open(p)
		if err != nil {
			return nil, fatalf("cannot open or read '%s'", p)
		}
		data, err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fatalf("cannot open or read '%s'", p)
		}
		if info.Mode()&0o100 != 0 {
			mode = filemode.Executable
		}
	default:
		return nil, fatalf("unsupported file type %s", p)
	}
	data = newEOLConverter(sb.r, nil).ToGit(p, data)
	h := blobHash(data)
	sb.fakePath, sb.fakeEntry = p, indexEntry{hash: h, mode: mode}
	o := sb.origin(c, p, h, mode)
	o.data, o.loaded = data, true
	return o, nil
}

// indexNames are the paths the index holds (any stage), read once.
func (sb *scoreboard) indexNames() map[string]struct{} {
	if sb.index != nil {
		return sb.index
	}
	sb.index = map[string]struct{}{}
	if idx, err := sb.r.Storer.Index(); err == nil {
		for _, e := range idx.Entries {
			sb.index[e.Name] = struct{}{}
		}
	}
	return sb.index
}

type renameSrc struct {
	path string
	hash plumbing.Hash
	mode filemode.FileMode
}

// deletions lists, in path order, the paths with a non-tree entry in the
// parent p and none in c: the rename sources of git's diff p → c.
func (sb *scoreboard) deletions(p, c *bcommit) ([]renameSrc, error) {
	var out []renameSrc
	pt, err := sb.treeOf(p)
	if err != nil {
		return nil, err
	}
	if c.fake {
		err := walkTree(sb, pt, "", func(q string, e object.TreeEntry) {
			if _, ok := sb.indexNames()[q]; !ok && q != sb.fakePath {
				out = append(out, renameSrc{q, e.Hash, e.Mode})
			}
		})
		sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
		return out, err
	}
	ct, err := sb.treeOf(c)
	if err != nil {
		return nil, err
	}
	err = sb.diffDeleted(pt, ct, "", &out)
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, err
}

func walkTree(sb *scoreboard, t *object.Tree, prefix string, fn func(string, object.TreeEntry)) error {
	if err := sb.ctx.Err(); err != nil {
		return err
	}
	for _, e := range t.Entries {
		q := prefix + e.Name
		if e.Mode == filemode.Dir {
			sub, err := object.GetTree(sb.s, e.Hash)
			if err != nil {
				continue
			}
			if err := walkTree(sb, sub, q+"/", fn); err != nil {
				return err
			}
			continue
		}
		fn(q, e)
	}
	return nil
}

// diffDeleted collects the entries of a that b lacks (as a non-tree),
// skipping identical subtrees.
func (sb *scoreboard) diffDeleted(a, b *object.Tree, prefix string, out *[]renameSrc) error {
	if err := sb.ctx.Err(); err != nil {
		return err
	}
	bm := make(map[string]*object.TreeEntry, len(b.Entries))
	for i := range b.Entries {
		bm[b.Entries[i].Name] = &b.Entries[i]
	}
	for _, e := range a.Entries {
		q := prefix + e.Name
		be := bm[e.Name]
		if e.Mode == filemode.Dir {
			sub, err := object.GetTree(sb.s, e.Hash)
			if err != nil {
				continue
			}
			if be != nil && be.Mode == filemode.Dir {
				if be.Hash == e.Hash {
					continue
				}
				bsub, err := object.GetTree(sb.s, be.Hash)
				if err != nil {
					continue
				}
				if err := sb.diffDeleted(sub, bsub, q+"/", out); err != nil {
					return err
				}
				continue
			}
			if err := walkTree(sb, sub, q+"/", func(q string, e object.TreeEntry) {
				*out = append(*out, renameSrc{q, e.Hash, e.Mode})
			}); err != nil {
				return err
			}
			continue
		}
		if be == nil || be.Mode == filemode.Dir {
			*out = append(*out, renameSrc{q, e.Hash, e.Mode})
		}
	}
	return nil
}

// findRename is git's find_rename: diffcore-rename of the parent against
// the commit with only o's path as a destination (exact matches, then a
// unique basename at 75%, then the best of git's four candidates at 50%).
func (sb *scoreboard) findRename(p *bcommit, o *borigin) (*borigin, error) {
	if sb.entry(p, o.path) != nil {
		return nil, nil // a modification or a type change, not an addition
	}
	srcs, err := sb.deletions(p, o.c)
	if err != nil || len(srcs) == 0 {
		return nil, err
	}
	pick := func(s renameSrc) *borigin { return sb.origin(p, s.path, s.hash, s.mode) }
	// Exact renames: the first identical source, one with the same
	// basename preferred.
	base := path.Base(o.path)
	best := diffcore.Identical(len(srcs), func(i int) (ok, unused, sameName bool) {
		s := srcs[i]
		return s.hash == o.blob && diffcore.ModesPair(s.mode, o.mode), true, path.Base(s.path) == base
	})
	if best >= 0 {
		return pick(srcs[best]), nil
	}
	dst, err := sb.load(o)
	if err != nil {
		return nil, nil
	}
	// estimate is estimate_similarity; the size cut comes first, from the
	// object header, so sources of very different sizes are not read.
	estimate := func(s renameSrc, minScore int) int {
		if !diffcore.IsRegular(s.mode) || !diffcore.IsRegular(o.mode) {
			return 0
		}
		if obj, err := sb.s.EncodedObject(plumbing.BlobObject, s.hash); err == nil && !diffcore.SizesAllow(int(obj.Size()), len(dst), minScore) {
			return 0
		}
		b, err := readBlob(sb.s, s.hash)
		if err != nil {
			return 0
		}
		return diffcore.Estimate(b, dst, minScore)
	}
	// Basename matches (blame looks for renames, not copies).
	paths := make([]string, len(srcs))
	for i, s := range srcs {
		paths[i] = s.path
	}
	if m := diffcore.BasenameMatches(paths, []string{o.path}, nil, diffcore.DefaultScore, func(si, _, min int) int {
		return estimate(srcs[si], min)
	}); len(m) > 0 {
		return pick(srcs[m[0].Src]), nil
	}
	// Inexact: the four best candidates (record_if_better).
	var four diffcore.Best
	for i, s := range srcs {
		if err := sb.ctx.Err(); err != nil {
			return nil, err
		}
		four.Record(diffcore.Candidate{Src: i, Score: estimate(s, diffcore.DefaultScore), SameName: path.Base(s.path) == base})
	}
	if r := four.Ranked(); len(r) > 0 && r[0].Score >= diffcore.DefaultScore {
		return pick(srcs[r[0].Src]), nil
	}
	return nil, nil
}
