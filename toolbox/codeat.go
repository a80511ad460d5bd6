package toolbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
)

// CodeFS is the root as a tool's run sees it: sandbox.FS's methods,
// declared here so that the toolbox names no sandbox type.
type CodeFS interface {
	ReadFile(path string) ([]byte, error)
	ListFiles(dir string) ([]string, error)
	WriteFile(path string, data []byte) error
}

// CodeAt is the sandbox's view of the root with the code of the commit
// ref names (exec_tool's ref): files under tools/ and node_modules/ (the
// tool and everything it can require) are read from that commit, the
// rest (the data a tool reads and writes) from the root as it is now,
// where the tool's writes go too. It returns the commit's full hash.
func (b *Box) CodeAt(ctx context.Context, ref string) (CodeFS, string, error) {
	var commit plumbing.Hash
	err := b.readRepo(ctx, func(r *git.Repository) error {
		c, err := resolveRef(r, ref)
		if err != nil {
			return err
		}
		if c == nil {
			return &tools.Error{Kind: tools.KindNotFound, Field: "ref", Message: "the toolbox has no commit yet"}
		}
		commit = c.Hash
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	live := SandboxFS{fs: b.fs, blockUpward: b.cfg.BlockUpwardTraversal}
	// The sandbox's FS has no context: the call's is kept for the reads
	// of the commit, which take the repository's lock.
	return &codeAtFS{live: live, box: b, ctx: ctx, commit: commit}, commit.String(), nil
}

// isCodePath: what CodeAt reads from the commit.
func isCodePath(rel string) bool {
	return strings.HasPrefix(rel, registry.ToolsDir+"/") || rel == registry.ToolsDir ||
		strings.HasPrefix(rel, "node_modules/") || strings.Contains(rel, "/node_modules/")
}

type codeAtFS struct {
	live   SandboxFS
	box    *Box
	ctx    context.Context
	commit plumbing.Hash
}

func (c *codeAtFS) ReadFile(p string) ([]byte, error) {
	rel, err := c.live.path(p)
	if err != nil {
		return nil, err
	}
	if !isCodePath(rel) {
		return c.live.ReadFile(p)
	}
	var data []byte
	err = c.box.readRepo(c.ctx, func(r *git.Repository) error {
		cm, err := r.CommitObject(c.commit)
		if err != nil {
			return err
		}
		h, err := c.box.prov.history(r).EntryAt(cm, rel)
		if err != nil {
			return err
		}
		if h.IsZero() {
			return &fs.PathError{Op: "read", Path: rel, Err: fmt.Errorf("%w at commit %s", fs.ErrNotExist, short(c.commit))}
		}
		data, err = blobBytes(r, h)
		return err
	})
	return data, err
}

func (c *codeAtFS) WriteFile(p string, data []byte) error { return c.live.WriteFile(p, data) }

// ListFiles lists the root's files below dir, those under tools/ and
// node_modules/ as the commit has them.
func (c *codeAtFS) ListFiles(dir string) ([]string, error) {
	liveList, err := c.live.ListFiles(dir)
	if err != nil && !isNotExist(err) {
		return nil, err
	}
	prefix := ""
	if dir != "" && dir != "." {
		rel, err := c.live.path(dir)
		if err != nil {
			return nil, err
		}
		prefix = strings.TrimSuffix(rel, "/") + "/"
	}
	var out []string
	for _, p := range liveList {
		if !isCodePath(p) {
			out = append(out, p)
		}
	}
	err = c.box.readRepo(c.ctx, func(r *git.Repository) error {
		cm, err := r.CommitObject(c.commit)
		if err != nil {
			return err
		}
		t, err := cm.Tree()
		if err != nil {
			return err
		}
		w := object.NewTreeWalker(t, true, nil)
		defer w.Close()
		for {
			name, e, err := w.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if e.Mode == filemode.Dir || !e.Mode.IsFile() || !isCodePath(name) || !strings.HasPrefix(name, prefix) {
				continue
			}
			// The live listing skips node_modules/ below the root; so
			// does this one.
			if strings.Contains(path.Dir(name)+"/", "node_modules/") {
				continue
			}
			out = append(out, name)
		}
	})
	sort.Strings(out)
	return out, err
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// blobBytes is the content of blob h in r.
func blobBytes(r *git.Repository, h plumbing.Hash) ([]byte, error) {
	blob, err := r.BlobObject(h)
	if err != nil {
		return nil, err
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}
