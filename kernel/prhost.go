package kernel

import (
	"context"
	"errors"

	"github.com/tgp-go/tgp/forge"
	"github.com/tgp-go/tgp/toolbox"
)

// prOpener is a forge as the toolbox's pull-request opener: the toolbox
// defines the small interface it uses, and links no host.
type prOpener struct{ f forge.Forge }

func (o prOpener) OpenOrUpdatePR(ctx context.Context, req toolbox.PRRequest) (*toolbox.PR, error) {
	pr, err := o.f.OpenOrUpdatePR(ctx, forge.PRRequest{Title: req.Title, Head: req.Head, Base: req.Base, Body: req.Body, Draft: req.Draft})
	return toolboxPR(pr), prErr(err)
}

func (o prOpener) FindPR(ctx context.Context, head string) (*toolbox.PR, error) {
	pr, err := o.f.FindPR(ctx, head)
	return toolboxPR(pr), prErr(err)
}

// Verify implements toolbox.TokenVerifier when the forge can verify.
func (o prOpener) Verify(ctx context.Context) error {
	if v, ok := o.f.(forge.Verifier); ok {
		return prErr(v.Verify(ctx))
	}
	return nil
}

// prErr carries what the toolbox tells apart: a refused token, a host
// without an API.
func prErr(err error) error {
	var nf *forge.NoForgeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &nf):
		return &toolbox.NoPRHostError{Reason: nf.Reason}
	case errors.Is(err, forge.ErrAuth):
		return refused{err}
	}
	return err
}

// refused is the host's refusal of the token, in its own words, matching
// toolbox.ErrTokenRefused.
type refused struct{ error }

func (e refused) Is(t error) bool { return t == toolbox.ErrTokenRefused }
func (e refused) Unwrap() error   { return e.error }

func toolboxPR(pr *forge.PR) *toolbox.PR {
	if pr == nil {
		return nil
	}
	out := &toolbox.PR{Number: pr.Number, URL: pr.URL, Head: pr.Head, State: pr.State, Created: pr.Created,
		Name: pr.Name(), Host: forge.HostName(pr.Provider)}
	for _, r := range pr.Retries {
		out.Retries = append(out.Retries, r.String())
	}
	return out
}
