package toolbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/vfs"
)

// catalog is the registry of the root's tools and its file, meta.json:
// derived data, kept in step with tools/ on every change and regenerated,
// never merged, after a replay. It is the repository's only hook
// (gitbackend.IncrementalHook) and touches nothing but the registry and
// the root.
type catalog struct {
	fs *vfs.FS

	mu    sync.Mutex
	reg   *registry.Registry
	stale bool

	// builds counts full rebuilds (registry.Build), for the tests that
	// check a replay updates the registry once, from what it changed.
	builds atomic.Int64
}

// load reads meta.json, checking it against the index's hashes where the
// file's stat data says the index is right, so Open reads no tool file in
// the common case. A stale or missing registry lives in memory until the
// next change under tools/.
func (c *catalog) load(hashes map[string]string) error {
	reg, stale, err := registry.Load(c.fs, hashes)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.reg, c.stale = reg, stale
	c.mu.Unlock()
	return nil
}

func (c *catalog) current() *registry.Registry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reg
}

// marshal is the registry as written to meta.json (an empty one before
// load).
func (c *catalog) marshal() []byte {
	if r := c.current(); r != nil {
		return r.Marshal()
	}
	return registry.New().Marshal()
}

// record updates the registry from changed paths and writes meta.json
// when it changed (or was stale and a tool changed). It reports whether
// meta.json must be committed with the change.
func (c *catalog) record(paths []string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reg == nil {
		c.reg = registry.New()
	}
	changed := false
	for _, p := range paths {
		if !registry.IsTool(p) {
			continue
		}
		b, err := c.fs.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changed = c.reg.Remove(p) || changed
		case err != nil:
			return false, err
		default:
			changed = c.reg.Update(p, b) || changed
		}
	}
	if !changed && !(c.stale && touchesTools(paths)) {
		return false, nil
	}
	if err := c.fs.WriteFile(registry.FileName, c.reg.Marshal(), 0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", registry.FileName, err)
	}
	c.stale = false
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

// build reads every tool of the root.
func (c *catalog) build() (*registry.Registry, error) {
	c.builds.Add(1)
	return registry.Build(c.fs)
}

// rebuild replaces the registry with one built from the root (after the
// root was reset or fast-forwarded); meta.json is left as it is.
func (c *catalog) rebuild() error {
	reg, err := c.build()
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.reg, c.stale = reg, false
	c.mu.Unlock()
	return nil
}

// Regenerate rebuilds meta.json from the merged tree during a replay
// (gitbackend.Hook): the registry is derived data and is never merged
// textually.
func (c *catalog) Regenerate(ctx context.Context) ([]string, error) {
	reg, err := c.build()
	if err != nil {
		return nil, err
	}
	_, statErr := c.fs.Stat(registry.FileName)
	if reg.Len() == 0 && errors.Is(statErr, fs.ErrNotExist) {
		return nil, nil
	}
	if err := c.fs.WriteFile(registry.FileName, reg.Marshal(), 0o644); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.reg, c.stale = reg, false
	c.mu.Unlock()
	return []string{registry.FileName}, nil
}

// RegenerateChanged updates the registry from the tool files a replay
// changed (another agent's tools, brought into the root) and rewrites
// meta.json, without reading the tools it did not touch
// (gitbackend.IncrementalHook). A registry that is stale or was never
// built is rebuilt whole.
func (c *catalog) RegenerateChanged(ctx context.Context, changed []string) ([]string, error) {
	c.mu.Lock()
	if c.reg == nil || c.stale {
		c.mu.Unlock()
		return c.Regenerate(ctx)
	}
	for _, p := range changed {
		if !registry.IsTool(p) || skippedByRegistry(p) {
			continue
		}
		info, err := c.fs.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || err == nil && !info.Mode().IsRegular() {
			c.reg.Remove(p)
			continue
		}
		var b []byte
		if err == nil {
			b, err = c.fs.ReadFile(p)
		}
		if err != nil {
			c.mu.Unlock()
			return c.Regenerate(ctx)
		}
		c.reg.Update(p, b)
	}
	data, empty := c.reg.Marshal(), c.reg.Len() == 0
	c.mu.Unlock()
	if _, statErr := c.fs.Stat(registry.FileName); empty && errors.Is(statErr, fs.ErrNotExist) {
		return nil, nil
	}
	if err := c.fs.WriteFile(registry.FileName, data, 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", registry.FileName, err)
	}
	return []string{registry.FileName}, nil
}

// DeriveFromTree is RegenerateChanged reading the replay's merged tree
// instead of the root (gitbackend.TreeHook): the replay then checks the
// tree out only once the push is done, out of the remote's lock. It
// updates the registry and returns meta.json's new content, leaving the
// file to that checkout. A registry that is stale or was never built
// declines (ok false): the replay checks the tree out and calls
// Regenerate.
func (c *catalog) DeriveFromTree(ctx context.Context, changed []string, t gitbackend.TreeReader) (map[string][]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reg == nil || c.stale {
		return nil, false, nil
	}
	for _, p := range changed {
		if !registry.IsTool(p) || skippedByRegistry(p) {
			continue
		}
		b, ok, err := t.ReadFile(p)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			c.reg.Remove(p)
			continue
		}
		c.reg.Update(p, b)
	}
	if c.reg.Len() == 0 {
		if has, err := t.Exists(registry.FileName); err != nil || !has {
			return nil, err == nil, err
		}
	}
	return map[string][]byte{registry.FileName: c.reg.Marshal()}, true, nil
}

// DeriveOnBranch is DeriveFromTree for a commit on a branch the root is
// not on (gitbackend.BranchHook, the pull-request strategy): it starts
// from the branch's meta.json, which lists what other roots of the session
// added, not from this root's registry, and leaves the latter as it is.
func (c *catalog) DeriveOnBranch(ctx context.Context, changed []string, t gitbackend.TreeReader) (map[string][]byte, bool, error) {
	data, ok, err := t.ReadFile(registry.FileName)
	if err != nil || !ok {
		return nil, false, err
	}
	reg, err := registry.Parse(data)
	if err != nil {
		return nil, false, nil // unreadable: the root's own is committed
	}
	for _, p := range changed {
		if !registry.IsTool(p) || skippedByRegistry(p) {
			continue
		}
		b, ok, err := t.ReadFile(p)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			reg.Remove(p)
			continue
		}
		reg.Update(p, b)
	}
	return map[string][]byte{registry.FileName: reg.Marshal()}, true, nil
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

var (
	_ gitbackend.TreeHook   = (*catalog)(nil)
	_ gitbackend.BranchHook = (*catalog)(nil)
)
