package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
	"go.opentelemetry.io/otel/attribute"

	"github.com/tgp-go/tgp/internal/gitformat/packfile"
	"github.com/tgp-go/tgp/internal/telemetry"
)

// ErrBranchNotFound: the branch to check out does not exist on a remote
// that has other branches. Starting it would begin an unrelated history
// beside the remote's, so boot refuses and names the branches there are.
var ErrBranchNotFound = errors.New("branch not found on the remote")

// BranchNotFoundError is ErrBranchNotFound with the names: one line, with
// the hint.
type BranchNotFoundError struct {
	Remote string
	// Branch is the configured branch, or "" when the remote's HEAD names
	// a branch it does not have.
	Branch   string
	Branches []string
}

func (e *BranchNotFoundError) Error() string {
	list := strings.Join(e.Branches, ", ")
	if len(e.Branches) > 8 {
		list = strings.Join(e.Branches[:8], ", ") + fmt.Sprintf(", … (%d in all)", len(e.Branches))
	}
	what := fmt.Sprintf("has no branch %q", e.Branch)
	if e.Branch == "" {
		what = "HEAD names no existing branch"
	}
	return fmt.Sprintf("remote %s %s (it has: %s); set git.branch to one of them", e.Remote, what, list)
}

// Is makes errors.Is(err, ErrBranchNotFound) true.
func (e *BranchNotFoundError) Is(target error) bool { return target == ErrBranchNotFound }

// remoteHeads is what the remote advertises: the branch its HEAD names
// (possibly unborn) and its branches.
type remoteHeads struct {
	head     string
	branches map[string]plumbing.Hash
}

// listRemote asks the remote for its HEAD and branches, the way git clone
// does before it picks the branch to check out.
func (r *Repo) listRemote(ctx context.Context) (remoteHeads, error) {
	rh := remoteHeads{branches: map[string]plumbing.Hash{}}
	if l, ok := r.remote.(*localRemote); ok {
		if b, err := os.ReadFile(filepath.Join(l.path, "HEAD")); err == nil {
			if t, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref:"); ok {
				rh.head = strings.TrimPrefix(strings.TrimSpace(t), "refs/heads/")
			}
		}
		// Not go-git's IterReferences: it reads refs/heads/<b>.lock and
		// fails ("ref file is empty") while another process pushes.
		branches, err := l.branches()
		if err != nil {
			return rh, fmt.Errorf("list refs of %s: %w", l.path, err)
		}
		rh.branches = branches
		return rh, nil
	}
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{r.cfg.Remote}})
	refs, err := rem.ListContext(ctx, &git.ListOptions{Auth: r.cfg.auth()})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return rh, nil
	}
	if err != nil {
		return rh, classifyNetErr(err)
	}
	for _, ref := range refs {
		switch {
		case ref.Name() == plumbing.HEAD && ref.Type() == plumbing.SymbolicReference:
			rh.head = strings.TrimPrefix(ref.Target().String(), "refs/heads/")
		case ref.Name().IsBranch() && ref.Type() == plumbing.HashReference:
			rh.branches[ref.Name().Short()] = ref.Hash()
		}
	}
	return rh, nil
}

// pickBranch chooses the branch a fresh root checks out: the configured
// one, else the remote's HEAD (git clone's choice). It never picks a
// branch the remote lacks while it has others.
func (r *Repo) pickBranch(rh remoteHeads) (branch, note string, err error) {
	if len(rh.branches) == 0 {
		switch {
		case r.cfg.Branch != "":
			return r.cfg.Branch, "", nil
		case rh.head != "":
			return rh.head, "", nil // git clone of an empty remote keeps its unborn HEAD
		}
		return "main", "", nil
	}
	names := make([]string, 0, len(rh.branches))
	for b := range rh.branches {
		names = append(names, b)
	}
	sort.Strings(names)
	if r.cfg.Branch != "" {
		if _, ok := rh.branches[r.cfg.Branch]; ok {
			return r.cfg.Branch, "", nil
		}
		return "", "", &BranchNotFoundError{Remote: redact(r.cfg.Remote), Branch: r.cfg.Branch, Branches: names}
	}
	if _, ok := rh.branches[rh.head]; ok {
		return rh.head, "", nil
	}
	if len(names) == 1 {
		return names[0], fmt.Sprintf("remote HEAD names no existing branch; checked out its only branch %s", names[0]), nil
	}
	return "", "", &BranchNotFoundError{Remote: redact(r.cfg.Remote), Branches: names}
}

// cloneFresh fills a root that has no commit of its own: it picks the
// branch, fetches it and checks it out, all in a staging area, then moves
// the result into place. A failure leaves the root as it was.
func (r *Repo) cloneFresh(ctx context.Context) (*HydrateResult, error) {
	rh, err := r.listRemote(ctx)
	if err != nil {
		return nil, r.wrapRemoteErr("list", err)
	}
	branch, note, err := r.pickBranch(rh)
	if err != nil {
		return nil, err
	}
	res := &HydrateResult{Branch: branch}
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	r.cfg.Branch = branch
	if _, ok := rh.branches[branch]; !ok {
		// An empty remote: the root starts the branch (the first push
		// creates it).
		if err := r.pointHEAD(branch); err != nil {
			return nil, err
		}
		res.Action = "empty-remote"
		return res, nil
	}
	r.progressf("cloning %s from %s", branch, redact(r.cfg.Remote))
	var tip plumbing.Hash
	if stage, ok := r.osStagingParent(); ok {
		var notes []string
		tip, notes, err = r.cloneStaged(ctx, stage, branch)
		res.Notes = append(res.Notes, notes...)
	} else {
		tip, err = r.cloneInPlace(ctx, branch)
	}
	if err != nil {
		return nil, err
	}
	if note := r.mirrorRemoteRefs(ctx, rh, branch); note != "" {
		res.Notes = append(res.Notes, note)
	}
	res.Action, res.Head = "cloned", tip.String()
	r.progressf("cloned %s at %s", branch, short(tip))
	return res, nil
}

// recloneBroken puts the contents of a .git that cannot be used aside
// (nothing is deleted: it may hold something a person wants back) and
// clones afresh.
func (r *Repo) recloneBroken(ctx context.Context, why string) (*HydrateResult, error) {
	aside, err := r.setAsideBroken()
	if err != nil {
		return nil, err
	}
	res, err := r.cloneFresh(ctx)
	if err != nil {
		return nil, fmt.Errorf("re-clone (%s): %w", why, err)
	}
	res.Notes = append([]string{fmt.Sprintf("re-cloned: %s; the old repository data is in %s", why, aside)}, res.Notes...)
	return res, nil
}

// setAsideBroken moves the repository data of .git into a
// .git/tgp-broken-<time> directory and initialises a fresh repository in
// its place (the lock file stays where it is).
func (r *Repo) setAsideBroken() (string, error) {
	aside := fmt.Sprintf(".git/tgp-broken-%d", time.Now().UnixNano())
	if err := r.wt.MkdirAll(aside, 0o755); err != nil {
		return "", fmt.Errorf("set aside broken .git: %w", err)
	}
	for _, name := range []string{"HEAD", "config", "refs", "packed-refs", "objects", "index", "shallow"} {
		if _, err := r.wt.Lstat(".git/" + name); err == nil {
			if err := r.wt.Rename(".git/"+name, aside+"/"+name); err != nil {
				return "", fmt.Errorf("set aside broken .git/%s: %w", name, err)
			}
		}
	}
	if r.store != nil {
		_ = r.store.Close()
	}
	if err := r.openStore(); err != nil {
		return "", err
	}
	repo, err := git.InitWithOptions(r.gitStorage(), r.wt, git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(r.defaultBranch())})
	if err != nil {
		return "", fmt.Errorf("re-init %s/.git: %w", r.wt.Root(), err)
	}
	r.repo = repo
	if r.cfg.Remote != "" {
		if err := r.setRemote(); err != nil {
			return "", err
		}
	}
	return aside, nil
}

// pointHEAD makes HEAD name branch and records its upstream.
func (r *Repo) pointHEAD(branch string) error {
	ref := plumbing.NewBranchReferenceName(branch)
	if err := r.store.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, ref)); err != nil {
		return fmt.Errorf("write HEAD: %w", err)
	}
	cfg, err := r.repo.Config()
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	if b, ok := cfg.Branches[branch]; !ok || b.Remote != "origin" || b.Merge != ref {
		cfg.Branches[branch] = &config.Branch{Name: branch, Remote: "origin", Merge: ref}
		if err := r.repo.SetConfig(cfg); err != nil {
			return fmt.Errorf("configure branch %s: %w", branch, err)
		}
	}
	return nil
}

// osStagingParent returns the OS directory of the root when the worktree
// is the OS directory itself (not memory): only then can a clone be staged
// beside it and renamed into place.
func (r *Repo) osStagingParent() (string, bool) {
	if _, ok := osPathOf(r.wt, "."); !ok {
		return "", false
	}
	return r.wt.Root(), true
}

// markShallowRoots records, like git's upload-pack, every commit at the
// depth boundary of a shallow clone as shallow, root commits included
// (`git clone --depth 1` of a one-commit history is a shallow repository).
// The in-process copy of a local remote marks only commits with parents.
func markShallowRoots(ctx context.Context, s storage.Storer, tip plumbing.Hash, depth int) error {
	if depth <= 0 {
		return nil
	}
	old, err := s.Shallow()
	if err != nil {
		return fmt.Errorf("read shallow: %w", err)
	}
	have := map[plumbing.Hash]bool{}
	for _, h := range old {
		have[h] = true
	}
	var add []plumbing.Hash
	level := []plumbing.Hash{tip}
	seen := map[plumbing.Hash]bool{tip: true}
	for d := 1; d <= depth && len(level) > 0; d++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var next []plumbing.Hash
		for _, h := range level {
			if have[h] {
				continue
			}
			c, err := object.GetCommit(s, h)
			if err != nil {
				return fmt.Errorf("read commit %s: %w", h, err)
			}
			if d == depth {
				if len(c.ParentHashes) == 0 {
					add = append(add, h)
				}
				continue
			}
			for _, p := range c.ParentHashes {
				if !seen[p] {
					seen[p] = true
					next = append(next, p)
				}
			}
		}
		level = next
	}
	if len(add) == 0 {
		return nil
	}
	if err := s.SetShallow(append(old, add...)); err != nil {
		return fmt.Errorf("write shallow: %w", err)
	}
	return nil
}

// checkoutEntry is one tree entry to materialise.
type checkoutEntry struct {
	path string
	mode filemode.FileMode
	hash plumbing.Hash
}

// checkoutStat is the stat data of a file just checked out, for its
// index entry (ok false: unknown, lstat it).
type checkoutStat struct {
	ok        bool
	sec, nsec int64
	size      int64
	dev, ino  uint64
	uid, gid  uint32
}

// listCheckout lists every non-tree entry of tree, in index order, and
// refuses the whole tree if any path is one git refuses to check out. The
// trees are read raw (flattenTree), not decoded by go-git.
func listCheckout(ctx context.Context, s storer.EncodedObjectStorer, tree plumbing.Hash) ([]checkoutEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	flat, err := flattenTree(s, tree)
	if err != nil {
		return nil, err
	}
	out := make([]checkoutEntry, 0, len(flat))
	for _, e := range flat {
		// A directory component is checked too: a tree holding ".GIT" as
		// a directory has entries below it, and each carries the prefix.
		if err := verifyCheckoutPath(e.Path, e.Mode); err != nil {
			return nil, err
		}
		out = append(out, checkoutEntry{path: e.Path, mode: e.Mode, hash: e.Hash})
	}
	return out, nil
}

// checkoutAll writes entries into an empty worktree.
func checkoutAll(ctx context.Context, s storer.EncodedObjectStorer, wt billy.Filesystem, entries []checkoutEntry, environ []string) error {
	smudge := checkoutSmudger(s, entries, environ)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := writeWorktreeFile(s, wt, fileChange{Path: e.path, Mode: e.mode, Hash: e.hash, smudge: smudge}); err != nil {
			return err
		}
	}
	return nil
}

// writeCheckoutIndex records entries in a new index with the stat data of
// the files as they are now in wt (after any move): stats[i] when the
// checkout took it (a rename into place keeps a file's inode and times),
// else an lstat.
func writeCheckoutIndex(s storage.Storer, wt billy.Filesystem, entries []checkoutEntry, stats []checkoutStat) error {
	idx := &index.Index{Version: 2}
	slab := make([]index.Entry, len(entries))
	idx.Entries = make([]*index.Entry, 0, len(entries))
	for i, c := range entries {
		e := &slab[i]
		e.Name, e.Hash, e.Mode = c.path, c.hash, c.mode
		if c.mode != filemode.Submodule && i < len(stats) && stats[i].ok {
			st := stats[i]
			e.ModifiedAt = time.Unix(st.sec, st.nsec)
			e.CreatedAt = e.ModifiedAt
			e.Size = uint32(st.size)
			e.Dev, e.Inode, e.UID, e.GID = uint32(st.dev), uint32(st.ino), st.uid, st.gid
		} else if c.mode != filemode.Submodule {
			if info, err := wt.Lstat(c.path); err == nil {
				e.ModifiedAt, e.CreatedAt = info.ModTime(), info.ModTime()
				e.Size = uint32(info.Size())
				fillStat(e, info)
			}
		}
		idx.Entries = append(idx.Entries, e)
	}
	if err := s.SetIndex(idx); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	return nil
}

// finishClone records a checked-out clone: index, HEAD and upstream, and
// last the branch and tracking refs, which is what makes the root no longer
// fresh (a crash before that point re-clones at the next boot).
func (r *Repo) finishClone(branch string, tip plumbing.Hash, entries []checkoutEntry, stats []checkoutStat) error {
	// Through the repository's index cache: its encoder, and the index
	// stays decoded for the first git tool.
	if err := writeCheckoutIndex(r.gitStorage(), r.wt, entries, stats); err != nil {
		return err
	}
	if err := r.pointHEAD(branch); err != nil {
		return err
	}
	if err := r.setTracking(branch, tip); err != nil {
		return fmt.Errorf("write tracking ref: %w", err)
	}
	if err := r.store.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), tip)); err != nil {
		return fmt.Errorf("write branch %s: %w", branch, err)
	}
	r.logClone(branch, tip)
	return nil
}

// cloneInPlace clones into the root itself (a memory root: a crash loses
// it anyway). Every path is verified before the first write; a failure
// while writing removes what was written.
func (r *Repo) cloneInPlace(ctx context.Context, branch string) (plumbing.Hash, error) {
	tip, err := r.remote.Fetch(ctx, branch, r.cfg.Depth)
	if err != nil {
		return plumbing.ZeroHash, r.wrapRemoteErr("fetch", err)
	}
	if err := markShallowRoots(ctx, r.store, tip, r.cfg.Depth); err != nil {
		return plumbing.ZeroHash, err
	}
	tree, err := r.treeOf(tip)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	entries, err := listCheckout(ctx, r.store, tree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	before := map[string]bool{}
	if infos, err := r.wt.ReadDir("."); err == nil {
		for _, i := range infos {
			before[i.Name()] = true
		}
	}
	_, span := telemetry.Start(ctx, "git.checkout", attribute.Int("tgp.git.files", len(entries)))
	err = checkoutAll(ctx, r.store, r.wt, entries, r.cfg.Environ)
	telemetry.End(span, err)
	if err != nil {
		for _, e := range entries {
			top, _, _ := strings.Cut(e.path, "/")
			if !before[top] {
				_ = removeAllBilly(r.wt, top)
			}
		}
		return plumbing.ZeroHash, err
	}
	for _, e := range entries {
		if e.mode != filemode.Symlink {
			continue
		}
		if info, err := r.wt.Lstat(e.path); err == nil && info.Mode()&fs.ModeSymlink == 0 {
			// The root cannot hold links: say so in the config, as git
			// clone does on such a filesystem, so git reads the plain
			// files it wrote as the links they stand for.
			if err := r.setConfigOption("core", "symlinks", "false"); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		break
	}
	return tip, r.finishClone(branch, tip, entries, nil)
}

func (r *Repo) setConfigOption(section, key, value string) error {
	cfg, err := r.repo.Config()
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	cfg.Raw.Section(section).SetOption(key, value)
	if err := r.repo.SetConfig(cfg); err != nil {
		return fmt.Errorf("write config %s.%s: %w", section, key, err)
	}
	return nil
}

func removeAllBilly(wt billy.Filesystem, p string) error {
	info, err := wt.Lstat(p)
	if err != nil {
		return nil
	}
	if info.IsDir() {
		return removeAll(wt, p)
	}
	return wt.Remove(p)
}

// stagingPrefix names the staging directories of root, beside it.
func stagingPrefix(root string) string {
	return filepath.Join(filepath.Dir(root), "."+filepath.Base(root)+".tgp-clone-")
}

// cloneStaged clones into a fresh directory beside the root and moves the
// result in: worktree entries first, then the objects, then index, HEAD and
// refs. The root's .git directory itself stays (it holds the cross-process
// lock file).
func (r *Repo) cloneStaged(ctx context.Context, root, branch string) (plumbing.Hash, []string, error) {
	var notes []string
	if r.flock != nil {
		// We hold the root's lock: no other process is cloning into it, so
		// any staging directory left is from one that died.
		old, _ := filepath.Glob(stagingPrefix(root) + "*")
		inside, _ := filepath.Glob(filepath.Join(root, ".git", "tgp-clone-*"))
		old = append(old, inside...)
		for _, o := range old {
			if err := os.RemoveAll(o); err == nil {
				notes = append(notes, "removed the half-made clone "+o+" left by an interrupted boot")
			}
		}
	}
	stage, err := os.MkdirTemp(filepath.Dir(root), filepath.Base(stagingPrefix(root)))
	if err != nil {
		// The parent is not writable: stage inside .git instead (same
		// filesystem, hidden from the worktree).
		stage, err = os.MkdirTemp(filepath.Join(root, ".git"), "tgp-clone-")
		if err != nil {
			return plumbing.ZeroHash, notes, fmt.Errorf("make staging directory for %s: %w", root, err)
		}
	}
	defer os.RemoveAll(stage)
	// BoundOS: the chroot variant rewrites absolute link targets into the
	// staging directory; git checks links out verbatim.
	stageWT := osfs.New(stage, osfs.WithBoundOS())
	dot, err := stageWT.Chroot(".git")
	if err != nil {
		return plumbing.ZeroHash, notes, err
	}
	st := filesystem.NewStorageWithOptions(dot, cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true, MaxOpenDescriptors: 64})
	closed := false
	defer func() {
		if !closed {
			_ = st.Close()
		}
	}()
	var rem remoteStore
	if l, ok := r.remote.(*localRemote); ok {
		rem = &localRemote{path: l.path, local: st}
		if r.cfg.Depth == 0 {
			rem = &packedClone{localRemote: rem.(*localRemote), dot: dot}
		}
	} else {
		repo, err := git.Init(st, nil)
		if err != nil {
			return plumbing.ZeroHash, notes, fmt.Errorf("init staging repository %s: %w", stage, err)
		}
		rem = &netRemote{url: r.cfg.Remote, repo: repo, auth: r.cfg.auth(), progress: r.progress, transfer: r.cfg.Progress}
	}
	tip, err := rem.Fetch(ctx, branch, r.cfg.Depth)
	if err != nil {
		return plumbing.ZeroHash, notes, r.wrapRemoteErr("fetch", err)
	}
	if tip.IsZero() {
		return plumbing.ZeroHash, notes, fmt.Errorf("fetch %s: branch %s vanished from the remote", redact(r.cfg.Remote), branch)
	}
	if err := markShallowRoots(ctx, st, tip, r.cfg.Depth); err != nil {
		return plumbing.ZeroHash, notes, err
	}
	c, err := object.GetCommit(st, tip)
	if err != nil {
		return plumbing.ZeroHash, notes, fmt.Errorf("read commit %s: %w", tip, err)
	}
	// The commit-graph; not fatal: log and blame read the commits
	// themselves without.
	if pc, ok := rem.(*packedClone); ok && pc.walk != nil && len(pc.walk.shallow) == 0 {
		if err := writeCloneGraph(filepath.Join(stage, ".git", "objects"), pc.walk); err != nil {
			notes = append(notes, "no commit-graph written: "+err.Error())
		}
	} else if _, ok := rem.(*netRemote); ok && r.cfg.Depth == 0 {
		if err := writeStoreGraph(ctx, filepath.Join(stage, ".git"), st, tip); err != nil {
			notes = append(notes, "no commit-graph written: "+err.Error())
		}
	}
	entries, err := listCheckout(ctx, st, c.TreeHash)
	if err != nil {
		return plumbing.ZeroHash, notes, err
	}
	var mem func() blobReader
	if pc, ok := rem.(*packedClone); ok {
		mem = pc.blobs()
	}
	_, span := telemetry.Start(ctx, "git.checkout", attribute.Int("tgp.git.files", len(entries)))
	stats, ok, err := checkoutFresh(ctx, st, mem, stage, entries, r.cfg.Environ)
	if err == nil && !ok {
		// Something the fast path does not take (a filesystem refusing a
		// link, say): start the worktree again the general way.
		if err = clearStage(stage); err == nil {
			stats = nil
			err = checkoutAll(ctx, st, stageWT, entries, r.cfg.Environ)
		}
	}
	telemetry.End(span, err)
	if err != nil {
		return plumbing.ZeroHash, notes, err
	}
	if err := st.Close(); err != nil {
		return plumbing.ZeroHash, notes, fmt.Errorf("close staging repository: %w", err)
	}
	closed = true
	if err := ctx.Err(); err != nil {
		return plumbing.ZeroHash, notes, err
	}
	// From here on the clone is complete; moving it is renames only.
	if err := r.store.Close(); err != nil {
		return plumbing.ZeroHash, notes, fmt.Errorf("close %s/.git: %w", root, err)
	}
	reopened := false
	defer func() {
		if !reopened {
			// A move failed: keep the Repo usable on whatever is there;
			// the next boot sees a fresh root and clones again.
			if r.openStore() == nil {
				if repo, err := git.Open(r.gitStorage(), r.wt); err == nil {
					r.repo = repo
					_ = r.setRemote()
				}
			}
		}
	}()
	gitdir := filepath.Join(root, ".git")
	if err := replacePath(filepath.Join(stage, ".git", "objects"), filepath.Join(gitdir, "objects")); err != nil {
		return plumbing.ZeroHash, notes, err
	}
	if _, err := os.Lstat(filepath.Join(stage, ".git", "shallow")); err == nil {
		if err := replacePath(filepath.Join(stage, ".git", "shallow"), filepath.Join(gitdir, "shallow")); err != nil {
			return plumbing.ZeroHash, notes, err
		}
	} else {
		_ = os.Remove(filepath.Join(gitdir, "shallow"))
	}
	tops, err := os.ReadDir(stage)
	if err != nil {
		return plumbing.ZeroHash, notes, fmt.Errorf("read %s: %w", stage, err)
	}
	for _, t := range tops {
		if t.Name() == ".git" {
			continue
		}
		if err := mergeMove(filepath.Join(stage, t.Name()), filepath.Join(root, t.Name())); err != nil {
			return plumbing.ZeroHash, notes, err
		}
	}
	if err := r.openStore(); err != nil {
		return plumbing.ZeroHash, notes, err
	}
	reopened = true
	repo, err := git.Open(r.gitStorage(), r.wt)
	if err != nil {
		return plumbing.ZeroHash, notes, fmt.Errorf("open repository %s: %w", root, err)
	}
	r.repo = repo
	if err := r.setRemote(); err != nil {
		return plumbing.ZeroHash, notes, err
	}
	return tip, notes, r.finishClone(branch, tip, entries, stats)
}

// clearStage removes what a checkout wrote into a staging directory (all
// but its .git).
func clearStage(stage string) error {
	tops, err := os.ReadDir(stage)
	if err != nil {
		return err
	}
	for _, t := range tops {
		if t.Name() == ".git" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(stage, t.Name())); err != nil {
			return err
		}
	}
	return nil
}

// replacePath renames src over dst, removing whatever dst was.
func replacePath(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("move %s into place: %w", dst, err)
	}
	return nil
}

// mergeMove moves src to dst. Where both are real directories their
// contents merge (an untracked file already in the root survives, as with
// the in-place checkout before staging existed); otherwise src replaces
// dst.
func mergeMove(src, dst string) error {
	si, err := os.Lstat(src)
	if err != nil {
		return fmt.Errorf("move %s: %w", src, err)
	}
	di, err := os.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(src, dst); err != nil {
			return fmt.Errorf("move %s into place: %w", dst, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("move %s into place: %w", dst, err)
	}
	if si.IsDir() && di.IsDir() {
		kids, err := os.ReadDir(src)
		if err != nil {
			return fmt.Errorf("read %s: %w", src, err)
		}
		for _, k := range kids {
			if err := mergeMove(filepath.Join(src, k.Name()), filepath.Join(dst, k.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	return replacePath(src, dst)
}

// staleGitLocks are the lock files git and go-git leave in a .git when a
// process dies while holding them.
var staleGitLocks = []string{"index.lock", "HEAD.lock", "config.lock", "packed-refs.lock", "shallow.lock"}

// repairGitDir fixes what an interrupted process can leave in .git before
// go-git reads it: stale lock files, a missing or garbled HEAD next to
// branches that hold commits. A .git with nothing worth keeping is left for
// Hydrate to clone over. It returns a note per repair.
func (r *Repo) repairGitDir() []string {
	if _, err := r.wt.Lstat(".git"); err != nil {
		return nil
	}
	var notes []string
	cutoff := time.Now().Add(-staleLockAge)
	for _, name := range staleGitLocks {
		p := ".git/" + name
		if info, err := r.wt.Lstat(p); err == nil && info.ModTime().Before(cutoff) {
			if r.wt.Remove(p) == nil {
				notes = append(notes, "removed the stale lock "+p+" left by a process that died")
			}
		}
	}
	notes = append(notes, r.removeStaleRefLocks(".git/refs", cutoff)...)
	head, err := r.store.Reference(plumbing.HEAD)
	if err == nil && (head.Type() == plumbing.SymbolicReference || !head.Hash().IsZero()) {
		return notes
	}
	// HEAD is missing or unreadable. With local branches it is repaired
	// (they may hold commits never pushed); without, the root is fresh.
	var branches []string
	if iter, err := r.store.IterReferences(); err == nil {
		_ = iter.ForEach(func(ref *plumbing.Reference) error {
			if ref.Name().IsBranch() {
				branches = append(branches, ref.Name().Short())
			}
			return nil
		})
	}
	if _, err := r.wt.Lstat(".git/HEAD"); err != nil && len(branches) == 0 {
		return notes // not a repository yet (or a half-made one): Open inits, Hydrate clones
	}
	pick := r.defaultBranch()
	if len(branches) > 0 && !contains(branches, pick) {
		sort.Strings(branches)
		pick = branches[0]
	}
	if err := r.store.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(pick))); err == nil {
		notes = append(notes, "repaired .git/HEAD (missing or unreadable): it now names "+pick)
	}
	return notes
}

func (r *Repo) removeStaleRefLocks(dir string, cutoff time.Time) []string {
	infos, err := r.wt.ReadDir(dir)
	if err != nil {
		return nil
	}
	var notes []string
	for _, i := range infos {
		p := path.Join(dir, i.Name())
		switch {
		case i.IsDir():
			notes = append(notes, r.removeStaleRefLocks(p, cutoff)...)
		case strings.HasSuffix(i.Name(), ".lock") && i.ModTime().Before(cutoff):
			if r.wt.Remove(p) == nil {
				notes = append(notes, "removed the stale lock "+p+" left by a process that died")
			}
		}
	}
	return notes
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// packedClone is a local remote fetched into an empty staging store as git
// clone gets it: one pack of everything the remote's branches and tags
// reach, its entries copied as the remote stores them, deltas included,
// and its .idx written from the hashes the walk knows (clonepack.go).
type packedClone struct {
	*localRemote
	dot billy.Filesystem
	// pack is the pack fetched (nil: none), read again by the checkout
	// from memory; walk is the walk that listed it (its commits make the
	// commit-graph).
	pack *packfile.Packed
	walk *cloneWalk
}

// blobs returns a reader of the fetched pack's blobs held in memory, a
// new one per caller (each resolves deltas with its own cache: readers
// may run at once over the shared bytes); nil when there is none.
func (c *packedClone) blobs() func() blobReader {
	p := c.pack
	if p == nil {
		return nil
	}
	return func() blobReader {
		dr := packfile.NewDeltaReader(packfile.MemoryReader("fetched", p), 16<<20)
		return func(h plumbing.Hash) ([]byte, bool) {
			t, b, err := dr.Read(h)
			return b, err == nil && t == plumbing.BlobObject
		}
	}
}

// blobReader reads a blob's bytes (shared: not to be changed).
type blobReader func(plumbing.Hash) ([]byte, bool)

func (c *packedClone) Fetch(ctx context.Context, branch string, depth int) (plumbing.Hash, error) {
	dst, ok := c.local.(*filesystem.Storage)
	if !ok || depth != 0 {
		return c.localRemote.Fetch(ctx, branch, depth)
	}
	tip, err := readRef(c.path, "refs/heads/"+branch)
	if err != nil || tip.IsZero() {
		return plumbing.ZeroHash, err
	}
	for attempt := 0; ; attempt++ {
		err = c.copyPacked(ctx, dst, tip)
		if err == nil {
			return tip, nil
		}
		if ctx.Err() != nil || attempt == 3 {
			return plumbing.ZeroHash, fmt.Errorf("fetch %s: %w", branch, err)
		}
		// A writer may have merged the packs listed (consolidatePacks):
		// list them again, as copyObjectsRetry does.
		if err := sleepCtx(ctx, time.Duration(attempt+1)*5*time.Millisecond); err != nil {
			return plumbing.ZeroHash, err
		}
	}
}

// copyPacked copies the closure of tip and of the remote's other
// branches and tags (git clone fetches them all; one that cannot be read
// is left to mirrorRemoteRefs, which notes it) as one pack.
func (c *packedClone) copyPacked(ctx context.Context, dst *filesystem.Storage, tip plumbing.Hash) error {
	src, err := packfile.Open(c.path, c.open, nil)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := src.LoadWhole(); err != nil {
		return err
	}
	var loose *filesystem.Storage
	defer func() {
		if loose != nil {
			loose.Close()
		}
	}()
	w := newCloneWalk(ctx, src, nil)
	w.fallback = nil
	if w.grafted, err = readShallowFile(c.path); err != nil {
		return err
	}
	if hasLooseObjects(c.path) {
		loose = c.open()
		w.fallback = loose
	}
	if err := w.add(tip); err != nil {
		return err
	}
	others := map[string]plumbing.Hash{}
	if bs, err := c.branches(); err == nil {
		for b, h := range bs {
			others["refs/heads/"+b] = h
		}
	}
	if ts, err := c.refsUnder("refs/tags/"); err == nil {
		for t, h := range ts {
			others["refs/tags/"+t] = h
		}
	}
	names := make([]string, 0, len(others))
	for n := range others {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w.try(others[n])
	}
	if len(w.objs) == 0 {
		return nil
	}
	p, ents, err := w.writeClonePack()
	if err != nil {
		return err
	}
	if err := storePack(dst, c.dot, p, ents); err != nil {
		return err
	}
	c.pack, c.walk = p, w
	if len(w.shallow) > 0 {
		old, _ := dst.Shallow()
		if err := dst.SetShallow(append(old, w.shallow...)); err != nil {
			return err
		}
	}
	return nil
}

// readShallowFile reads the commits a git directory's shallow file lists
// (none when there is no file).
func readShallowFile(gitdir string) (map[plumbing.Hash]bool, error) {
	data, err := os.ReadFile(filepath.Join(gitdir, "shallow"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(gitdir, "shallow"), err)
	}
	set := map[plumbing.Hash]bool{}
	for _, line := range strings.Fields(string(data)) {
		if !plumbing.IsHash(line) {
			return nil, fmt.Errorf("read %s: bad line %q", filepath.Join(gitdir, "shallow"), line)
		}
		set[plumbing.NewHash(line)] = true
	}
	return set, nil
}

// hasLooseObjects reports whether a git directory holds any loose object
// (objects/xx directories).
func hasLooseObjects(gitdir string) bool {
	ents, err := os.ReadDir(filepath.Join(gitdir, "objects"))
	if err != nil {
		return true // let the store look
	}
	for _, e := range ents {
		if len(e.Name()) == 2 && e.IsDir() {
			if sub, err := os.ReadDir(filepath.Join(gitdir, "objects", e.Name())); err != nil || len(sub) > 0 {
				return true
			}
		}
	}
	return false
}
