package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// Carrying: a push that loses the race for a branch leaves its commits on
// the remote beside the branch, under refs/tgp/carry/<branch>/, in the
// same receive-pack session that found the branch moved (the commits'
// objects were packed already). The next push that wins, from any
// machine, replays those commits after its own and deletes their carry
// refs in the same atomic push: one push lands every contender's
// commits, so the fleet's throughput is no longer one machine's batch
// per round of races. A root whose carry ref is gone finds its changes on
// the branch when it replays (a change the tip has is dropped, as git
// rebase drops a commit that became empty) and has nothing left to push.
//
// The atomic push makes it safe: the branch moves only if every carry ref
// it deletes still points where the pusher saw it, so a carry is landed
// once, by exactly one push, and a carry its owner replaced or withdrew
// is not. A remote that does not advertise "atomic" gets no carries.
//
// What is landed must come from the fleet: a carry lands only with a
// proof made with the fleet's key (carryproof.go), and a root without the
// key neither leaves nor lands carries.

// carryPrefix is where a branch's carries are on the remote; carriedPrefix
// where a fetch puts them in the root.
func carryPrefix(branch string) string   { return "refs/tgp/carry/" + branch + "/" }
func carriedPrefix(branch string) string { return "refs/tgp/carried/" + branch + "/" }

// carryMaxAge is how old a carry may be (by the time its proof
// authenticates, carryproof.go) and still be landed by another root: an
// owner gives up within git.retry.deadline and then withdraws its carry;
// one whose owner died is landed while fresh, and deleted by the next
// winner after (its commits stay in the owner's root, pending).
const carryMaxAge = 10 * time.Minute

// carryOwnAge is how long an owner keeps its carry on the remote: past
// it, the owner withdraws it and pushes its commits itself. A carry gone
// from the remote then still means landed (the owner counts on that):
// nobody deletes a carry as stale before carryMaxAge.
const carryOwnAge = carryMaxAge / 2

// carry is a line of commits on base, left on the remote by a push that
// lost.
type carry struct {
	ref        plumbing.ReferenceName // on the remote
	base, head plumbing.Hash
	// items is how many batch items its commits hold (the owner replaces
	// its carry when more joined).
	items int
	// at, nonce and mac are its proof (carryproof.go): when it was made,
	// and the HMAC over it that its name ends in.
	at         time.Time
	nonce, mac string
}

// fetchCarrying fetches branch's tip as Fetch does, and the carries beside
// it: their objects, and the list the remote advertised (the root's copies
// of carries gone from the remote are dropped first).
func (n *netRemote) fetchCarrying(ctx context.Context, branch string) (plumbing.Hash, []*carry, error) {
	local := carriedPrefix(branch)
	for _, ref := range n.refsUnder(local) {
		_ = n.repo.Storer.RemoveReference(ref.Name())
	}
	tip, err := n.fetchWith(ctx, branch, 0, config.RefSpec(fmt.Sprintf("+%s*:%s*", carryPrefix(branch), local)))
	if err != nil || tip.IsZero() {
		return tip, nil, err
	}
	var carries []*carry
	for _, ref := range n.refsUnder(local) {
		name := plumbing.ReferenceName(carryPrefix(branch) + strings.TrimPrefix(string(ref.Name()), local))
		if c, ok := parseCarry(branch, name, ref.Hash()); ok {
			carries = append(carries, c)
		}
	}
	return tip, carries, nil
}

// refsUnder lists the root's refs whose names start with prefix.
func (n *netRemote) refsUnder(prefix string) []*plumbing.Reference {
	refs, err := n.repo.Storer.IterReferences()
	if err != nil {
		return nil
	}
	var out []*plumbing.Reference
	_ = refs.ForEach(func(ref *plumbing.Reference) error {
		if strings.HasPrefix(string(ref.Name()), prefix) {
			out = append(out, ref)
		}
		return nil
	})
	return out
}

// pushRefs sends ref updates with no objects (a carry withdrawn), atomic
// when there are several.
func (n *netRemote) pushRefs(ctx context.Context, cmds []*packp.Command) error {
	ps, err := n.openPush(ctx)
	if err != nil {
		return err
	}
	defer ps.close()
	return n.sendCommands(ctx, ps, cmds, nil)
}

// sortCarries sorts the carries a fetch of branch (at tip) listed: the
// others' (mine is this root's own) that prove they are fresh, whose
// commits are here and not on the branch yet, are the batch items to
// land; those proven stale (too old, or their commits on the branch
// already) are to be deleted with the push. Everything else is left
// alone: a carry this root cannot prove is never landed, and nothing
// proves it is stale either.
func (r *Repo) sortCarries(branch string, tip plumbing.Hash, carries []*carry, mine *carry) (land []*batchItem, stale []*carry) {
	now := time.Now()
	for _, c := range carries {
		if mine != nil && c.ref == mine.ref {
			continue
		}
		switch c.verdict(r.cfg.CarryKey, branch, now) {
		case carryStale:
			if len(stale) < carryStaleDeletes {
				stale = append(stale, c)
			}
		case carryFresh:
			if r.store.HasEncodedObject(c.base) != nil || r.store.HasEncodedObject(c.head) != nil || len(land) == 16 {
				continue
			}
			if r.onBranch(tip, c) {
				if len(stale) < carryStaleDeletes {
					stale = append(stale, c)
				}
				continue
			}
			land = append(land, &batchItem{carried: c, base: c.base, head: c.head})
		}
	}
	return land, stale
}

// onBranch reports whether c's head is on the first-parent line from tip
// down to c's base (a carry landed as a fast-forward keeps its commits).
// The walk is bounded: not found is not on it.
func (r *Repo) onBranch(tip plumbing.Hash, c *carry) bool {
	h := tip
	for n := 0; n < 1000 && !h.IsZero(); n++ {
		if h == c.head {
			return true
		}
		if h == c.base {
			return false
		}
		cm, err := object.GetCommit(r.store, h)
		if err != nil || len(cm.ParentHashes) == 0 {
			return false
		}
		h = cm.ParentHashes[0]
	}
	return false
}

// listed reports whether the remote still advertised c.
func listed(carries []*carry, c *carry) bool {
	for _, o := range carries {
		if o.ref == c.ref && o.head == c.head {
			return true
		}
	}
	return false
}

// withdrawCarry deletes this root's carry, best effort: its commits
// landed some other way, or this root gave up and reports them pending.
//
// unsure: the carry may never have reached the remote (its push's answer
// was lost), so a withdrawal the remote refuses says nothing worth a line.
func (r *Repo) withdrawCarry(ctx context.Context, c *carry, unsure bool) {
	n, ok := r.remote.(*netRemote)
	if !ok || c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := n.pushRefs(ctx, []*packp.Command{{Name: c.ref, Old: c.head, New: plumbing.ZeroHash}}); err != nil && !unsure {
		r.progressf("withdraw %s: %v", c.ref, err)
	}
}

// leftCarry is what became of a carry sent in a session of its own
// (carryAfterRefusal): c nil when none was sent; sure when the remote
// said it took it, else it may or may not be there.
type leftCarry struct {
	c    *carry
	sure bool
}

// supportsCarry: the remote takes atomic pushes with deletions.
func supportsCarry(ar *packp.AdvRefs) bool {
	return ar != nil && ar.Capabilities.Supports(capability.Atomic) && ar.Capabilities.Supports(capability.DeleteRefs)
}

// carrying says whether this root leaves and lands carries: a network
// remote, with the fleet's key to prove them (Config.CarryKey), not
// turned off (git.retry.carry), not found to refuse them.
//
// A local path remote (a path or file://) never carries: its pushes queue
// on the remote ref's lock instead of racing (localRemote.Update), so
// there is no lost push to carry. Nor is a key needed there: whoever can
// write refs/tgp/carry/ in that directory can write the branch itself.
func (r *Repo) carrying() bool {
	_, ok := r.remote.(*netRemote)
	// Within a push budget a carry costs pushes of its own (leaving it,
	// withdrawing it): the machine's batch carries its writes instead.
	// With a journal, a write that waits is in the journal.
	return ok && len(r.cfg.CarryKey) > 0 && !r.cfg.Retry.NoCarry && !r.noCarry.Load() && r.pushes == nil && r.cfg.Journal == nil
}

// pushExtrasFor is what a push of items (and carried, the others'
// carries replayed after them) on tip sends beside the branch's update:
// the landed carries, the stale ones and this root's own deleted with it,
// and, should the remote have moved, this root's commits left as a carry
// (next), unless it has one there already.
func (r *Repo) pushExtrasFor(branch string, tip plumbing.Hash, items, carried []*batchItem, stale []*carry, mine *carry) (*pushExtras, *carry) {
	if !r.carrying() {
		return nil, nil
	}
	ex := &pushExtras{}
	for _, it := range carried {
		if !it.commit.IsZero() {
			ex.with = append(ex.with, &packp.Command{Name: it.carried.ref, Old: it.carried.head, New: plumbing.ZeroHash})
		}
	}
	for _, c := range stale {
		ex.with = append(ex.with, &packp.Command{Name: c.ref, Old: c.head, New: plumbing.ZeroHash})
	}
	if mine != nil {
		ex.with = append(ex.with, &packp.Command{Name: mine.ref, Old: mine.head, New: plumbing.ZeroHash})
	}
	if mine != nil {
		// Never replaced: a carry's ref moves only with the branch (landed,
		// atomically) so that a push landing it fails only when it would
		// have failed anyway. Items that joined since ride this root's own
		// pushes. (Replacing it as items joined made 16 machines' pushes
		// fail on each other's carries.)
		return ex, nil
	}
	// The items' own commits end where the last of them left the chain:
	// the carried ones come after.
	head := tip
	for _, it := range items {
		if !it.commit.IsZero() {
			head = it.commit
		}
	}
	if head == tip {
		return ex, nil
	}
	next := newCarry(r.cfg.CarryKey, branch, tip, head, time.Now())
	next.items = len(items)
	ex.instead = []*packp.Command{{Name: next.ref, Old: plumbing.ZeroHash, New: head}}
	return ex, next
}

// carryAfterRefusal leaves next in a receive-pack session of its own, sending pack again: the remote
// refused the branch's update after the advertisement had matched, so the
// session that carried it is spent. The channel gets next once the remote
// took it, nil otherwise.
func (r *Repo) carryAfterRefusal(ctx context.Context, pack []byte, next *carry) chan leftCarry {
	ch := make(chan leftCarry, 1)
	n, ok := r.remote.(*netRemote)
	if !ok || pack == nil {
		ch <- leftCarry{}
		return ch
	}
	cmds := []*packp.Command{{Name: next.ref, Old: plumbing.ZeroHash, New: next.head}}
	go func() {
		ps, err := n.openPush(ctx)
		if err != nil || !supportsCarry(ps.ar) {
			ps.close()
			ch <- leftCarry{}
			return
		}
		defer ps.close()
		switch err := n.sendCarry(ctx, ps, cmds, pack); {
		case err == nil:
			ch <- leftCarry{c: next, sure: true}
		case unconfirmed(err):
			ch <- leftCarry{c: next}
		default:
			ch <- leftCarry{}
		}
	}()
	return ch
}

// carryPatience is how long a root whose commits wait as a carry lets
// the others race before it tries again: a retry cycle (fetch, replay,
// push) and up to one more, at random. (Up to one cycle only: 3.1 against
// 4.8 writes/s, p99 49 against 29 s, 16 machines in one run.)
func carryPatience(cycle time.Duration) time.Duration {
	cycle = min(max(cycle, 50*time.Millisecond), 2*time.Second)
	return cycle + fullJitterDelay(cycle)
}

// UnverifiedCarries lists the refs under refs/tgp/carry/ on the remote
// that no push lands or deletes, each with why ("<ref> <head>: <reason>"):
// planted by someone outside the fleet, made with another key, or left
// by a version of tgp that made no proofs. A person decides about them;
// `tgp status` shows them. A proven carry, fresh or stale, is not listed
// (the next push that wins lands or deletes it).
func (r *Repo) UnverifiedCarries(ctx context.Context) ([]string, error) {
	refs, err := r.remoteCarryRefs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list carries of %s: %w", redact(r.cfg.Remote), err)
	}
	now := time.Now()
	var out []string
	for _, ref := range refs {
		if why := unverifiedReason(r.cfg.CarryKey, string(ref.Name()), ref.Hash(), now); why != "" {
			out = append(out, fmt.Sprintf("%s %s: %s", ref.Name(), short(ref.Hash()), why))
		}
	}
	sort.Strings(out)
	return out, nil
}

// remoteCarryRefs are the remote's refs under refs/tgp/carry/, read from
// its advertisement (a network remote) or its ref store (a local one).
func (r *Repo) remoteCarryRefs(ctx context.Context) ([]*plumbing.Reference, error) {
	const prefix = "refs/tgp/carry/"
	switch rem := r.remote.(type) {
	case *netRemote:
		refs, err := rem.remote().ListContext(ctx, &git.ListOptions{Auth: rem.auth})
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return nil, nil
		}
		if err != nil {
			return nil, classifyNetErr(err)
		}
		var out []*plumbing.Reference
		for _, ref := range refs {
			if strings.HasPrefix(string(ref.Name()), prefix) && ref.Type() == plumbing.HashReference {
				out = append(out, ref)
			}
		}
		return out, nil
	case *localRemote:
		m, err := rem.refsUnder(prefix)
		if err != nil {
			return nil, err
		}
		var out []*plumbing.Reference
		for name, h := range m {
			out = append(out, plumbing.NewHashReference(plumbing.ReferenceName(prefix+name), h))
		}
		return out, nil
	}
	return nil, nil
}
