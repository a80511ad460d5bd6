package gitbackend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/tgp-go/tgp/internal/gitformat/packfile"
)

// pushPack moves branch from old to new on a network remote, sending pack
// (every object new reaches that old lacks). go-git's Push finds those
// objects itself by walking every object reachable from the remote's refs
// in the local store: the whole history, on every push. A persist knows
// them already (the commits it replayed on old), so it sends them as they
// are: one connection, the advertisement checked against old before
// anything is sent.
func (n *netRemote) pushPack(ctx context.Context, branch string, old, new plumbing.Hash, pack []byte, ex *pushExtras) error {
	ps, err := n.openPush(ctx)
	if err != nil {
		return err
	}
	defer ps.close()
	return n.sendPack(ctx, ps, branch, old, new, pack, nil, ex)
}

// pushExtras are the commands a push sends beside its branch's update
// (carry.go).
type pushExtras struct {
	// with go with the update, in one atomic push: the carries it lands,
	// deleted.
	with []*packp.Command
	// instead are sent, with the pack, when the advertisement shows the
	// update would be refused: this root's commits left as a carry.
	instead []*packp.Command
	// sentInstead says the remote took instead; withSent that with went
	// along (the remote pushes atomically). unsureInstead: instead was
	// sent, but the remote's answer never came (unconfirmed).
	sentInstead, withSent, unsureInstead bool
	// pack is what was sent (a carry left after the remote refused the
	// update sends it again).
	pack []byte
}

// pushSession is a receive-pack session opened ahead of its push, with
// the remote's advertisement read.
type pushSession struct {
	s  transport.ReceivePackSession
	ar *packp.AdvRefs
}

func (ps *pushSession) close() {
	if ps != nil {
		_ = ps.s.Close()
	}
}

// openPush opens a receive-pack session and reads the advertisement.
func (n *netRemote) openPush(ctx context.Context) (*pushSession, error) {
	ep, err := transport.NewEndpoint(n.url)
	if err != nil {
		return nil, err
	}
	if n.pushes != nil {
		if err := n.pushes.take(ctx, n.sleep); err != nil {
			return nil, err
		}
	}
	cl, err := client.NewClient(ep)
	if err != nil {
		return nil, err
	}
	if ep.Protocol == "http" || ep.Protocol == "https" {
		cl = githttp.NewClient(&http.Client{Transport: &rateLimitTransport{base: http.DefaultTransport}})
	}
	s, err := cl.NewReceivePackSession(ep, n.auth)
	if err != nil {
		return nil, classifyNetErr(err)
	}
	ar, err := s.AdvertisedReferencesContext(ctx)
	if err != nil {
		_ = s.Close()
		return nil, classifyNetErr(err)
	}
	return &pushSession{s: s, ar: ar}, nil
}

// sendPack sends the update old -> new of branch and its pack on an open
// session. The advertisement is checked against old first: a remote at
// another commit refuses the update anyway, so nothing is sent (but ex's
// carry, when there is one). Except when known(cur) says the advertised
// commit is one this repository has (the session was opened beside the
// fetch that brought old, and the remote moved to old in between):
// receive-pack compares the old value under its ref lock, so the remote
// decides.
func (n *netRemote) sendPack(ctx context.Context, ps *pushSession, branch string, old, new plumbing.Hash, pack []byte, known func(plumbing.Hash) bool, ex *pushExtras) error {
	refs, err := ps.ar.AllReferences()
	if err != nil {
		return err
	}
	name := plumbing.NewBranchReferenceName(branch)
	cur := plumbing.ZeroHash
	if ref, err := refs.Reference(name); err == nil {
		cur = ref.Hash()
	}
	atomic := supportsCarry(ps.ar)
	if cur != old && (known == nil || cur.IsZero() || !known(cur)) {
		if ex != nil && len(ex.instead) > 0 && atomic {
			serr := n.sendCarry(ctx, ps, ex.instead, pack)
			ex.sentInstead, ex.unsureInstead = serr == nil, unconfirmed(serr)
		}
		return fmt.Errorf("%w: remote ref %s is %s, not %s", ErrRejected, name, short(cur), short(old))
	}
	cmds := []*packp.Command{{Name: name, Old: old, New: new}}
	if ex != nil && atomic {
		cmds = append(cmds, ex.with...)
		ex.withSent = true
	}
	return n.sendCommands(ctx, ps, cmds, pack)
}

// sendCommands sends cmds and pack (nil: none) on an open session,
// atomically when there are several.
func (n *netRemote) sendCommands(ctx context.Context, ps *pushSession, cmds []*packp.Command, pack []byte) error {
	req := packp.NewReferenceUpdateRequestFromCapabilities(ps.ar.Capabilities)
	if n.progress != nil {
		req.Progress = n.progress
		if ps.ar.Capabilities.Supports(capability.Sideband64k) {
			_ = req.Capabilities.Set(capability.Sideband64k)
		} else if ps.ar.Capabilities.Supports(capability.Sideband) {
			_ = req.Capabilities.Set(capability.Sideband)
		}
	}
	if len(cmds) > 1 {
		_ = req.Capabilities.Set(capability.Atomic)
	}
	req.Commands = cmds
	if pack != nil {
		req.Packfile = io.NopCloser(bytes.NewReader(pack))
	}
	rs, err := ps.s.ReceivePack(ctx, req)
	if err != nil {
		return &unconfirmedError{err: classifyNetErr(err)}
	}
	if rs != nil {
		if err := rs.Error(); err != nil {
			return classifyNetErr(err)
		}
	}
	return nil
}

// carrySendGrace is how long a carry's push may outlast its caller's
// budget: cut off in flight, the carry may land on the remote after the
// owner, not knowing, gave up (a withdrawal sent then can even reach the
// remote before the carry does), and it stays there until another
// root's push lands it.
const carrySendGrace = 5 * time.Second

// sendCarry sends commands that leave a carry, heard to the end
// (carrySendGrace).
func (n *netRemote) sendCarry(ctx context.Context, ps *pushSession, cmds []*packp.Command, pack []byte) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), carrySendGrace)
	defer cancel()
	return n.sendCommands(ctx, ps, cmds, pack)
}

// unconfirmedError: commands were (perhaps) sent, but the remote's report
// of what it did with them never came: the connection, or the caller's
// budget, ended first.
type unconfirmedError struct{ err error }

func (e *unconfirmedError) Error() string { return e.err.Error() }
func (e *unconfirmedError) Unwrap() error { return e.err }

func unconfirmed(err error) bool {
	var u *unconfirmedError
	return errors.As(err, &u)
}

// pushChain pushes chain, a line of commits on tip, to a network remote:
// with a pack of exactly the objects the commits add when they are a line
// of single-parent commits (pushPack), else through go-git's Push.
//
// ps, when not nil, is a receive-pack session opened while the tip was
// fetched; the push uses it (and closes it) instead of opening its own.
func (r *Repo) pushChain(ctx context.Context, branch string, tip, chain plumbing.Hash, ps *pushSession, ex *pushExtras) error {
	n, ok := r.remote.(*netRemote)
	if !ok || tip.IsZero() {
		ps.close()
		return r.remote.Push(ctx, branch, tip, chain)
	}
	order, line, err := collectNew(ctx, r.objs(), tip, chain)
	var p *packfile.Packed
	if err == nil && line && len(order) > 0 {
		var enc packfile.Encoder
		p, err = enc.Encode(r.store, order)
	}
	if err != nil || p == nil {
		ps.close()
		return r.remote.Push(ctx, branch, tip, chain)
	}
	if ex != nil {
		ex.pack = p.Pack
	}
	if ps == nil {
		return n.pushPack(ctx, branch, tip, chain, p.Pack, ex)
	}
	defer ps.close()
	return n.sendPack(ctx, ps, branch, tip, chain, p.Pack, func(h plumbing.Hash) bool {
		return r.store.HasEncodedObject(h) == nil
	}, ex)
}
