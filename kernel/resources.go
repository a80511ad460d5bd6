package kernel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/tgp-go/tgp/registry"
)

// ToolEntries lists the agent tools of the registry (nil before Boot):
// what the MCP server publishes as tgp://tools/... resources.
func (k *Kernel) ToolEntries() []registry.Entry {
	reg := k.box.Registry()
	if reg == nil {
		return nil
	}
	return reg.Entries()
}

// ReadToolboxFile reads meta.json or one of the registry's tool files,
// and nothing else: the MCP resources are the toolbox, not the root.
// A missing meta.json reads as the registry's own rendering of it.
func (k *Kernel) ReadToolboxFile(path string) ([]byte, error) {
	if repo := k.box.Repo(); repo != nil {
		// The file may be one a persist left unwritten.
		if err := repo.Materialize(k.ctx(context.Background()), path); err != nil {
			return nil, err
		}
	}
	reg := k.box.Registry()
	if path == registry.FileName {
		data, err := k.fs.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) && reg != nil {
			return reg.Marshal(), nil
		}
		return data, err
	}
	if reg == nil {
		return nil, fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
	}
	if _, ok := reg.Get(path); !ok {
		return nil, fmt.Errorf("read %s: not a tool in the registry: %w", path, fs.ErrNotExist)
	}
	return k.fs.ReadFile(path)
}

// MaybeRefresh checks the remote for other agents' pushes when
// git.refresh_interval says it is due (toolbox.Box.MaybeRefresh); it
// returns a note when what the root holds may be stale.
func (k *Kernel) MaybeRefresh(ctx context.Context) string { return k.box.MaybeRefresh(k.ctx(ctx)) }
