package gitbackend

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"

	"github.com/tgp-go/tgp/internal/gitformat/packfile"
)

// pushPack moves branch from old to new on a network remote, sending pack
// (every object new reaches that old lacks). go-git's Push finds those
// objects itself by walking every object reachable from the remote's refs
// in the local store: the whole history, on every push. A persist knows
// them already (the commits it replayed on old), so it sends them as they
// are: one connection, the advertisement checked against old before
// anything is sent.
func (n *netRemote) pushPack(ctx context.Context, branch string, old, new plumbing.Hash, pack []byte) error {
	ep, err := transport.NewEndpoint(n.url)
	if err != nil {
		return err
	}
	cl, err := client.NewClient(ep)
	if err != nil {
		return err
	}
	s, err := cl.NewReceivePackSession(ep, n.auth)
	if err != nil {
		return classifyNetErr(err)
	}
	defer s.Close()
	ar, err := s.AdvertisedReferencesContext(ctx)
	if err != nil {
		return classifyNetErr(err)
	}
	refs, err := ar.AllReferences()
	if err != nil {
		return err
	}
	name := plumbing.NewBranchReferenceName(branch)
	cur := plumbing.ZeroHash
	if ref, err := refs.Reference(name); err == nil {
		cur = ref.Hash()
	}
	if cur != old {
		return fmt.Errorf("%w: remote ref %s is %s, not %s", ErrRejected, name, short(cur), short(old))
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
	if n.progress != nil {
		req.Progress = n.progress
		if ar.Capabilities.Supports(capability.Sideband64k) {
			_ = req.Capabilities.Set(capability.Sideband64k)
		} else if ar.Capabilities.Supports(capability.Sideband) {
			_ = req.Capabilities.Set(capability.Sideband)
		}
	}
	req.Commands = []*packp.Command{{Name: name, Old: old, New: new}}
	req.Packfile = io.NopCloser(bytes.NewReader(pack))
	rs, err := s.ReceivePack(ctx, req)
	if err != nil {
		return classifyNetErr(err)
	}
	if rs != nil {
		if err := rs.Error(); err != nil {
			return classifyNetErr(err)
		}
	}
	return nil
}

// pushChain pushes chain, a line of commits on tip, to a network remote:
// with a pack of exactly the objects the commits add when they are a line
// of single-parent commits (pushPack), else through go-git's Push.
func (r *Repo) pushChain(ctx context.Context, branch string, tip, chain plumbing.Hash) error {
	n, ok := r.remote.(*netRemote)
	if !ok || tip.IsZero() {
		return r.remote.Push(ctx, branch, tip, chain)
	}
	order, line, err := collectNew(ctx, r.objs(), tip, chain)
	if err != nil || !line || len(order) == 0 {
		return r.remote.Push(ctx, branch, tip, chain)
	}
	var enc packfile.Encoder
	p, err := enc.Encode(r.store, order)
	if err != nil {
		return r.remote.Push(ctx, branch, tip, chain)
	}
	return n.pushPack(ctx, branch, tip, chain, p.Pack)
}
