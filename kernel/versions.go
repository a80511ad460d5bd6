package kernel

import (
	"context"
	"encoding/json"

	"github.com/tgp-go/tgp/tools/forgetools"
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
// new commit, persisted like any write: revert_tool, typed.
func (k *Kernel) RevertTool(ctx context.Context, path, ref string) (forgetools.RevertResult, error) {
	raw, _ := json.Marshal(map[string]any{"path": path, "to": ref})
	res, err := k.Call(ctx, "revert_tool", raw)
	if err != nil {
		return forgetools.RevertResult{}, err
	}
	out, _ := res.Value.(forgetools.RevertResult)
	return out, nil
}

// SignedBy is the principal sandbox.trusted_signers verified the last
// change of the tool at path for ("" when unsigned, untrusted, not
// committed, or no trusted signers are configured): find_tools'
// signed_by.
func (k *Kernel) SignedBy(ctx context.Context, path string) string {
	return k.box.SignedBy(k.ctx(ctx), path)
}
