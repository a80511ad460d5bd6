package git

import "context"

// diffHunks is xdiff's change script for diff.algorithm (myers when
// empty) with or without the indent heuristic.
func diffHunks(ctx context.Context, a, b []byte, algo string, indentHeuristic bool) ([]hunk, error) {
	return xdiffHunksAlgo(ctx, a, b, algo, indentHeuristic)
}
