package toolbox

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/forgetools"
	"github.com/tgp-go/tgp/tools/gittools"
	"github.com/tgp-go/tgp/vfs"
)

// rig is a Box with the tools that persist through it, wired as the
// kernel wires them: the file tools, check_tool / exec_tool on the
// sandbox (whose bridge is Box.SandboxFS), the git tools and find_tools.
type rig struct {
	box *Box
	set *tools.Set
	fs  *vfs.FS
}

// testConfig is a direct-strategy Box on remote, committing as Agent.
func testConfig(remote string) Config {
	return Config{Git: gitbackend.Config{
		Remote:  remote,
		Author:  gitbackend.Identity{Name: "Agent", Email: "agent@example.com"},
		Retry:   gitbackend.RetryConfig{MaxAttempts: 50, BaseDelay: 2 * time.Millisecond},
		Environ: []string{},
	}}
}

// newRig builds and opens a Box on a root in memory or in a temporary
// directory (root, when given).
func newRig(t *testing.T, cfg Config, memory bool, root ...string) *rig {
	t.Helper()
	r := buildRig(t, cfg, memory, root...)
	if err := r.box.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// buildRig is newRig without Open.
func buildRig(t *testing.T, cfg Config, memory bool, root ...string) *rig {
	t.Helper()
	var fsys *vfs.FS
	if memory {
		fsys = vfs.NewMemory()
	} else {
		dir := t.TempDir()
		if len(root) > 0 {
			dir = root[0]
		}
		var err error
		if fsys, err = vfs.NewOS(dir); err != nil {
			t.Fatal(err)
		}
	}
	box := New(fsys, cfg)
	runner := sandbox.New(sandbox.WithWriteDirs("tools", "data"))
	t.Cleanup(func() {
		_ = box.Close(context.Background())
		_ = runner.Close()
	})
	set := tools.NewSet()
	add := func(ts ...*tools.Tool) {
		if err := set.Add(ts...); err != nil {
			t.Fatal(err)
		}
	}
	add(tools.FileTools(fsys, box, tools.FileToolsConfig{})...)
	add(forgetools.New(fsys, forgetools.Config{Runner: runner, SandboxFS: box.SandboxFS(), Persist: box})...)
	add(gittools.Tools(gittools.Deps{FS: fsys, Repo: box.Repo, Persister: box, Environ: []string{}})...)
	add(tools.FindTool(box))
	return &rig{box: box, set: set, fs: fsys}
}

// call runs a tool as the kernel does: a read asks the box to check the
// remote first.
func (r *rig) call(t *testing.T, name string, args any) tools.Result {
	t.Helper()
	res, err := r.try(name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func (r *rig) try(name string, args any) (tools.Result, error) {
	raw, _ := json.Marshal(args)
	stale := ""
	switch name {
	case "find_tools", "read_file", "list_files", "exec_tool", "git_status":
		stale = r.box.MaybeRefresh(context.Background())
	}
	res, err := r.set.Call(context.Background(), name, raw)
	if err == nil && stale != "" {
		res.Stale = stale
	}
	return res, err
}

// write is write_file's persistence report.
func (r *rig) write(t *testing.T, p, content string) *tools.Persisted {
	t.Helper()
	return r.call(t, "write_file", map[string]string{"path": p, "content": content}).Value.(tools.WriteResult).Persisted
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }
