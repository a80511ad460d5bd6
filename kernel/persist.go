package kernel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
)

// openRepo opens (or, with a remote, creates) the root's repository.
func (k *Kernel) openRepo(ctx context.Context) error {
	g := k.cfg.Git
	remote := g.Remote
	if remote != "" && !strings.Contains(remote, "://") && !filepath.IsAbs(remote) && k.opts.baseDir != "" {
		if _, err := os.Stat(filepath.Join(k.opts.baseDir, remote)); err == nil {
			remote = filepath.Join(k.opts.baseDir, remote)
		}
	}
	cfg := gitbackend.Config{
		Remote: remote, Branch: g.Branch, Depth: g.Depth,
		Token:    Secret(k.opts.environ, g.TokenEnv),
		Author:   gitbackend.Identity{Name: g.Author.Name, Email: g.Author.Email},
		Retry:    gitbackend.RetryConfig{MaxAttempts: g.Retry.MaxAttempts, BaseDelay: g.Retry.BaseDelay},
		Progress: k.opts.progress,
		Environ:  k.environ(),
	}
	opts := []gitbackend.Option{gitbackend.WithHook(regenHook{k})}
	if !k.fs.InMemory() {
		opts = append(opts, gitbackend.WithLockFile(gitbackend.LockFilePath(k.fs.Root())))
	}
	repo, err := gitbackend.Open(ctx, k.fs.Billy(), cfg, opts...)
	if errors.Is(err, gitbackend.ErrNoRepository) {
		return nil // a plain directory: the kernel works on it as it is
	}
	if err != nil {
		return err
	}
	k.repo = repo
	k.closers = append(k.closers, func(context.Context) error { return repo.Close() }, repo.Flush)
	return nil
}

func (k *Kernel) environ() []string {
	if k.opts.environ != nil {
		return k.opts.environ
	}
	return os.Environ()
}

// loadRegistry reads meta.json, checking it against the index's hashes
// where the file's stat data says the index is right, so boot reads no tool
// file in the common case. A stale or missing registry lives in memory
// until the next change under tools/.
func (k *Kernel) loadRegistry() error {
	reg, stale, err := registry.Load(k.fs, k.indexHashes())
	if err != nil {
		return err
	}
	k.regMu.Lock()
	k.reg, k.regStale = reg, stale
	k.regMu.Unlock()
	return nil
}

// indexHashes maps tool paths to their blob hash from the git index when
// the worktree file's size and mtime still match the index entry.
func (k *Kernel) indexHashes() map[string]string {
	if k.repo == nil {
		return nil
	}
	out := map[string]string{}
	_ = k.repo.Do(context.Background(), func(r *gitRepository) error {
		idx, err := r.Storer.Index()
		if err != nil {
			return err
		}
		for _, e := range idx.Entries {
			if !registry.IsTool(e.Name) || e.Stage != 0 { // go-git decodes a merged entry as stage 0, not index.Merged (1)
				continue
			}
			info, err := k.fs.Lstat(e.Name)
			if err != nil || uint32(info.Size()) != e.Size || !info.ModTime().Equal(e.ModifiedAt) {
				continue
			}
			out[e.Name] = e.Hash.String()
		}
		return nil
	})
	return out
}

// Registry returns the current tool registry.
func (k *Kernel) Registry() *registry.Registry {
	k.regMu.Lock()
	defer k.regMu.Unlock()
	return k.reg
}

// Persist is the tools.Persister the mutating tools call: it keeps
// meta.json in step with tools/ and commits and pushes the change.
func (k *Kernel) Persist(ctx context.Context, ch tools.Change) (*tools.Persisted, error) {
	paths := append([]string{}, ch.Paths...)
	if meta, err := k.updateRegistry(paths); err != nil {
		return nil, err
	} else if meta {
		paths = append(paths, registry.FileName)
	}
	if k.repo == nil {
		return &tools.Persisted{Persisted: false, Note: "no git repository or remote configured: the change is saved in the root only"}, nil
	}
	if k.cfg.Git.WriteStrategy == "pr" {
		if len(paths) == 0 {
			// A commit made with git_commit is on the base branch, which
			// pr mode never pushes.
			return &tools.Persisted{Persisted: false, Note: "write_strategy pr: commits made with git_commit stay local (the base branch is never pushed); changes made with the file tools go to the pull-request branch"}, nil
		}
		return k.persistPR(ctx, ch, paths)
	}
	paths = k.withUncommitted(paths)
	res, err := k.repo.Persist(ctx, gitbackend.Change{Paths: paths, Message: ch.Message})
	if err != nil {
		var ce *gitbackend.ConflictError
		if errors.As(err, &ce) {
			k.clearUncommitted(paths) // the root was reset to the remote's version
			_ = k.rebuildRegistry()
			return nil, &tools.Error{Kind: tools.KindConflict, Message: ce.Error(), Err: err,
				Details: map[string]any{"paths": ce.Paths, "branch": ce.Branch, "commit": ce.Commit, "pushed": ce.Pushed}}
		}
		if !res.Committed() {
			// Nothing was committed: the change is in the root only. Say
			// so, and commit it with the next change.
			k.addUncommitted(paths)
			op := "persist"
			if errors.Is(err, gitbackend.ErrNoIdentity) {
				op = "commit"
			}
			return nil, &tools.Error{Kind: tools.KindExecutionFailed, Err: err,
				Message: fmt.Sprintf("%s: %v (the change is saved in the root but not committed; it is committed with the next change)", op, err),
				Details: map[string]any{"uncommitted": k.uncommittedPaths()}}
		}
		return nil, tools.Wrap(tools.KindExecutionFailed, err, "persist")
	}
	k.clearUncommitted(paths)
	if res.Replayed {
		_ = k.rebuildRegistry()
	}
	out := &tools.Persisted{Persisted: !res.Local, Commit: res.Commit, Branch: res.Branch, Attempts: res.Attempts}
	switch {
	case res.Local:
		out.Note = "committed locally: no remote configured"
	case res.NoChange:
		out.Note = "no change: the content equals the last commit"
	case res.Replayed:
		out.Note = "another agent pushed first: your change was recreated on the new remote head and pushed"
	}
	return out, nil
}

// recoverUncommitted finds, on boot, a change an earlier process wrote to
// the root but could not commit (its commit failed before it existed):
// meta.json differs from HEAD's. The tool files that differ from HEAD then
// belong to it, and are committed with the next change, so meta.json
// never reaches the remote without them.
func (k *Kernel) recoverUncommitted(ctx context.Context) {
	if k.repo == nil {
		return
	}
	_ = k.repo.Do(ctx, func(r *gitRepository) error {
		head, err := r.Head()
		if err != nil {
			return nil // no commit yet
		}
		c, err := r.CommitObject(head.Hash())
		if err != nil {
			return nil
		}
		tree, err := c.Tree()
		if err != nil {
			return nil
		}
		differs := func(p string) bool {
			b, rerr := k.fs.ReadFile(p)
			f, ferr := tree.File(p)
			switch {
			case rerr != nil:
				return ferr == nil // gone from the root, still in HEAD
			case ferr != nil:
				return true // new
			}
			return plumbing.ComputeHash(plumbing.BlobObject, b) != f.Hash
		}
		if !differs(registry.FileName) {
			return nil
		}
		paths := []string{registry.FileName}
		listed := map[string]bool{}
		if reg := k.Registry(); reg != nil {
			for _, e := range reg.Entries() {
				listed[e.Path] = true
				if differs(e.Path) {
					paths = append(paths, e.Path)
				}
			}
		}
		// Tools HEAD has that the registry no longer lists were deleted.
		_ = tree.Files().ForEach(func(f *object.File) error {
			if registry.IsTool(f.Name) && !listed[f.Name] && differs(f.Name) {
				paths = append(paths, f.Name)
			}
			return nil
		})
		k.addUncommitted(paths)
		return nil
	})
}

func (k *Kernel) withUncommitted(paths []string) []string {
	k.uncommittedMu.Lock()
	defer k.uncommittedMu.Unlock()
	seen := map[string]bool{}
	for _, p := range paths {
		seen[p] = true
	}
	for p := range k.uncommitted {
		if !seen[p] {
			paths = append(paths, p)
		}
	}
	return paths
}

func (k *Kernel) addUncommitted(paths []string) {
	k.uncommittedMu.Lock()
	defer k.uncommittedMu.Unlock()
	if k.uncommitted == nil {
		k.uncommitted = map[string]bool{}
	}
	for _, p := range paths {
		k.uncommitted[p] = true
	}
}

func (k *Kernel) clearUncommitted(paths []string) {
	k.uncommittedMu.Lock()
	defer k.uncommittedMu.Unlock()
	for _, p := range paths {
		delete(k.uncommitted, p)
	}
}

func (k *Kernel) uncommittedPaths() []string {
	k.uncommittedMu.Lock()
	defer k.uncommittedMu.Unlock()
	out := make([]string, 0, len(k.uncommitted))
	for p := range k.uncommitted {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// updateRegistry records changed tool files and writes meta.json when it
// changed (or was stale and a tool changed). It reports whether meta.json
// must be committed.
func (k *Kernel) updateRegistry(paths []string) (bool, error) {
	k.regMu.Lock()
	defer k.regMu.Unlock()
	if k.reg == nil {
		k.reg = registry.New()
	}
	changed := false
	for _, p := range paths {
		if !registry.IsTool(p) {
			continue
		}
		b, err := k.fs.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changed = k.reg.Remove(p) || changed
		case err != nil:
			return false, err
		default:
			changed = k.reg.Update(p, b) || changed
		}
	}
	if !changed && !(k.regStale && touchesTools(paths)) {
		return false, nil
	}
	if err := k.fs.WriteFile(registry.FileName, k.reg.Marshal(), 0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", registry.FileName, err)
	}
	k.regStale = false
	return true, nil
}

func touchesTools(paths []string) bool {
	for _, p := range paths {
		if registry.IsTool(p) {
			return true
		}
	}
	return false
}

func (k *Kernel) rebuildRegistry() error {
	reg, err := registry.Build(k.fs)
	if err != nil {
		return err
	}
	k.regMu.Lock()
	k.reg, k.regStale = reg, false
	k.regMu.Unlock()
	return nil
}

// regenHook rebuilds meta.json from the merged tree during a replay: the
// registry is derived data and is never merged textually.
type regenHook struct{ k *Kernel }

func (h regenHook) Regenerate(ctx context.Context) ([]string, error) {
	reg, err := registry.Build(h.k.fs)
	if err != nil {
		return nil, err
	}
	_, statErr := h.k.fs.Stat(registry.FileName)
	if reg.Len() == 0 && errors.Is(statErr, fs.ErrNotExist) {
		return nil, nil
	}
	if err := h.k.fs.WriteFile(registry.FileName, reg.Marshal(), 0o644); err != nil {
		return nil, err
	}
	h.k.regMu.Lock()
	h.k.reg, h.k.regStale = reg, false
	h.k.regMu.Unlock()
	return []string{registry.FileName}, nil
}

// RegenerateChanged updates the registry from the tool files a replay
// changed (another agent's tools, brought into the root) and rewrites
// meta.json, without reading the tools it did not touch. A registry that
// is stale or was never built is rebuilt whole.
func (h regenHook) RegenerateChanged(ctx context.Context, changed []string) ([]string, error) {
	k := h.k
	k.regMu.Lock()
	if k.reg == nil || k.regStale {
		k.regMu.Unlock()
		return h.Regenerate(ctx)
	}
	for _, p := range changed {
		if !registry.IsTool(p) || skippedByRegistry(p) {
			continue
		}
		info, err := k.fs.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || err == nil && !info.Mode().IsRegular() {
			k.reg.Remove(p)
			continue
		}
		var b []byte
		if err == nil {
			b, err = k.fs.ReadFile(p)
		}
		if err != nil {
			k.regMu.Unlock()
			return h.Regenerate(ctx)
		}
		k.reg.Update(p, b)
	}
	data, empty := k.reg.Marshal(), k.reg.Len() == 0
	k.regMu.Unlock()
	if _, statErr := k.fs.Stat(registry.FileName); empty && errors.Is(statErr, fs.ErrNotExist) {
		return nil, nil
	}
	if err := k.fs.WriteFile(registry.FileName, data, 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", registry.FileName, err)
	}
	return []string{registry.FileName}, nil
}

// skippedByRegistry: registry.Build does not descend into these.
func skippedByRegistry(p string) bool {
	for _, part := range strings.Split(p, "/") {
		if part == "node_modules" || part == ".git" {
			return true
		}
	}
	return false
}

// Status is what `tgp status` shows.
type Status struct {
	Root    string `json:"root"`
	Remote  string `json:"remote,omitempty"`
	Branch  string `json:"branch,omitempty"`
	Head    string `json:"head,omitempty"`
	Tools   int    `json:"tools"`
	Pending int    `json:"pending_pushes"`
	// Uncommitted are paths written to the root whose commit failed;
	// they are committed with the next change.
	Uncommitted []string `json:"uncommitted,omitempty"`
	// Refresh says when the remote was last checked and whether the root
	// is behind it (git.refresh_interval).
	Refresh   RefreshStatus `json:"refresh"`
	Strategy  string        `json:"write_strategy"`
	Booted    bool          `json:"booted"`
	BootedIn  string        `json:"boot_time,omitempty"`
	Hydration string        `json:"hydration,omitempty"`
}
