package git

import (
	"context"

	"github.com/tgp-go/tgp/gitbackend/merge"
)

// hunk is a changed region: p0/pn lines of the parent, t0/tn of the target.
type hunk struct{ p0, pn, t0, tn int }

// blameHunks diffs parent against target.
func blameHunks(ctx context.Context, parent, target []byte) ([]hunk, error) {
	a, b := merge.Lines(parent), merge.Lines(target)
	m := merge.Matches(a, b)
	var hs []hunk
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if i < len(a) && j < len(b) && m[i] == j {
			i, j = i+1, j+1
			continue
		}
		h := hunk{p0: i, t0: j}
		for i < len(a) && m[i] < 0 {
			i++
		}
		for j < len(b) && (i >= len(a) || j < m[i]) {
			j++
		}
		h.pn, h.tn = i-h.p0, j-h.t0
		hs = append(hs, h)
	}
	return hs, ctx.Err()
}
