package shell

import (
	"context"

	"github.com/tgp-go/tgp/shell/scope"
)

// scopesFor is the runner's current scopes widened by ctx's Grant.
func (r *Runner) scopesFor(ctx context.Context) (*Scopes, error) {
	sc := r.scopes.Load()
	if g, ok := scope.GrantOf(ctx); ok && !g.Empty() {
		return sc.With(g)
	}
	return sc, nil
}
