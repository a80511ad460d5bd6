package kernel

import (
	"context"
	"encoding/json"

	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/trust"
)

// ToolHistory lists the commits that changed the agent tool at path,
// newest first, at most limit (<= 0: all): tool_history, typed.
func (k *Kernel) ToolHistory(ctx context.Context, path string, limit int) ([]trust.Version, error) {
	raw, _ := json.Marshal(map[string]any{"path": path, "limit": max(limit, 0)})
	res, err := k.Call(ctx, "tool_history", raw)
	if err != nil {
		return nil, err
	}
	out, _ := res.Value.([]trust.Version)
	return out, nil
}

// RevertTool restores the agent tool at path to its content at ref as a
// new commit, persisted like any write: revert_tool, typed. The content
// is checked as write_file checks a tool file: errors refuse the revert
// with compile_error (RevertToolForce restores it anyway).
func (k *Kernel) RevertTool(ctx context.Context, path, ref string) (tools.RevertResult, error) {
	return k.revertTool(ctx, path, ref, false)
}

// RevertToolForce is RevertTool restoring the content even when
// check_tool finds errors in it (revert_tool's force); the errors come
// back in the result.
func (k *Kernel) RevertToolForce(ctx context.Context, path, ref string) (tools.RevertResult, error) {
	return k.revertTool(ctx, path, ref, true)
}

func (k *Kernel) revertTool(ctx context.Context, path, ref string, force bool) (tools.RevertResult, error) {
	raw, _ := json.Marshal(map[string]any{"path": path, "to": ref, "force": force})
	res, err := k.Call(ctx, "revert_tool", raw)
	if err != nil {
		return tools.RevertResult{}, err
	}
	out, _ := res.Value.(tools.RevertResult)
	return out, nil
}

// SignedBy is the principal sandbox.trusted_signers verified the last
// change of the tool at path for ("" when unsigned, untrusted, not
// committed, or no trusted signers are configured): find_tools'
// signed_by.
func (k *Kernel) SignedBy(ctx context.Context, path string) string {
	return k.box.SignedBy(k.ctx(ctx), path)
}

// ToolCommit is the last commit that changed the tool at path as seen
// from HEAD, as `git log -1 --format=%H -- path` finds it ("" when the
// tool is not committed or the toolbox has no repository): find_tools'
// commit. It is computed when asked; meta.json cannot record it, being
// committed with the change the commit is.
func (k *Kernel) ToolCommit(ctx context.Context, path string) string {
	c, _ := k.box.Provenance(k.ctx(ctx), path)
	return c
}
