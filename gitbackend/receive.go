package gitbackend

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/internal/gitformat/packfile"
	"github.com/tgp-go/tgp/internal/receive"
)

// The receiving side of a push to a local remote is internal/receive
// (git's receive-pack); this is how a push of the kernel's hands it the
// ref's lock, the objects and the remote's pack policy.

// ErrDeclined matches every *PushRejectedError: the remote's own policy
// refused the push. It is permanent: pushing the same commits again is
// refused again, so the persist loop does not retry it.
var ErrDeclined = receive.ErrDeclined

// PushRejectedError is a push the remote refused, as git reports it:
// `! [remote rejected] <ref> (<reason>)` after the lines the remote printed
// (its hooks' stdout and stderr, receive-pack's own errors), which git
// shows prefixed with "remote: ".
type PushRejectedError = receive.PushRejectedError

// receive applies u to the remote as git's receive-pack would. lk holds
// the ref's lock and the ref is known to be at u.Old. On a refusal nothing
// the push brought stays on the remote. seg, when it completes u.Old..u.New,
// is what the push brings, already packed. src is where the pushed
// objects are read (nil: the local store).
func (l *localRemote) receive(ctx context.Context, rs *filesystem.Storage, lk *refLock, u receive.Update, seg *segment, src storer.EncodedObjectStorer) error {
	if src == nil {
		src = l.local
	}
	pol, err := l.pol.Load(l.path)
	if err != nil {
		return err
	}
	p := receive.Push{
		Update: u, Src: src, Remote: rs, Encoder: &l.enc, Lock: receiveLock{lk},
		Missing: func() ([]plumbing.Hash, []plumbing.Hash, error) {
			return collectMissing(ctx, src, rs, u.New, 0)
		},
		Consolidate: l.consolidate,
		Progress:    l.progress,
	}
	if seg != nil && seg.base == u.Old && seg.head == u.New && !u.Old.IsZero() {
		// The remote has u.Old's closure; the pack has the rest.
		p.Pack = seg.pack
	}
	return pol.Receive(ctx, p)
}

// receiveLock is a ref's lock as internal/receive takes it.
type receiveLock struct{ *refLock }

func (lk receiveLock) Commit(h plumbing.Hash, adjust func(path string) error) error {
	return lk.commit(h, adjust)
}

func (lk receiveLock) Delete() error { return lk.deleteRef() }

func (lk receiveLock) NewDirs() []string { return lk.newDirs }

// consolidate merges the remote's small packs once there are many (one
// arrives per push); perm adjusts the files it writes. A failure leaves
// the packs as they were: still valid.
func (l *localRemote) consolidate(perm func(path string) error) {
	// Counting names costs no stat per file; most pushes stop here.
	ents, err := os.ReadDir(filepath.Join(l.path, "objects", "pack"))
	if err != nil {
		return
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pack") {
			n++
		}
	}
	if n <= maxSmallPacks {
		return
	}
	src := l.open()
	defer src.Close()
	_, err = consolidatePacks(osfs.New(l.path), src, &l.enc, func(p *packfile.Packed) error {
		return packfile.WriteFiles(l.path, p, perm)
	})
	if err != nil && l.progress != nil {
		l.progress("warning: " + err.Error())
	}
}
