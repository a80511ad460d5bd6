package git

import "context"

// diffHunks is xdiff's change script for a patch with ctxLines of context
// under diff.algorithm (myers when empty), with or without the indent
// heuristic; like xdi_diff it trims the common tail only for -U0.
func diffHunks(ctx context.Context, a, b []byte, algo string, indentHeuristic bool, ctxLines int) ([]hunk, error) {
	return xdiffScript(ctx, a, b, algo, indentHeuristic, ctxLines == 0)
}
