package gitbackend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// commitOn stores a commit on parent (parent's tree, one message) in r's
// store and returns it.
func commitOn(t *testing.T, r *Repo, parent plumbing.Hash, msg string) plumbing.Hash {
	t.Helper()
	p, err := object.GetCommit(r.store, parent)
	if err != nil {
		t.Fatal(err)
	}
	sig := object.Signature{Name: "A", Email: "a@example.com", When: time.Unix(1_700_000_000, 0)}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: p.TreeHash, ParentHashes: []plumbing.Hash{parent}}
	o := r.store.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		t.Fatal(err)
	}
	h, err := r.store.SetEncodedObject(o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestPushSessionOpenedBesideTheFetch: a retry opens its receive-pack
// session while it fetches, so the session's advertisement can be older
// than the tip the push is made on. Such a push must land when the remote
// is at that tip (receive-pack compares the old value under its lock),
// must be refused when the remote moved on, and must send nothing when
// the advertisement already shows a commit this repository never saw.
func TestPushSessionOpenedBesideTheFetch(t *testing.T) {
	root := t.TempDir()
	bare := filepath.Join(root, "p.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", bare)
	url := gittest.Daemon(t, root) + "/p.git"
	other := filepath.Join(t.TempDir(), "other")
	gittest.Git(t, "", "clone", "-q", bare, other)
	otherCommit := func(name string) string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(other, name), []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, other, "add", name)
		gittest.Git(t, other, "commit", "-q", "-m", name)
		gittest.Git(t, other, "push", "-q", "origin", "HEAD:main")
		return strings.TrimSpace(gittest.Git(t, other, "rev-parse", "HEAD"))
	}
	remoteTip := func() string {
		return strings.TrimSpace(gittest.Git(t, bare, "rev-parse", "main"))
	}
	otherCommit("a.txt")
	x := newAgent(t, url, true)
	n := x.repo.remote.(*netRemote)
	ctx := context.Background()

	// The session sees A; the remote moves to B; the fetch brings B; the
	// push of C on B goes through the session opened at A.
	ps, err := n.openPush(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := otherCommit("b.txt")
	tip, err := n.Fetch(ctx, "main", 0)
	if err != nil || tip.String() != b {
		t.Fatalf("fetch: %v %v, want %s", tip, err, b)
	}
	c := commitOn(t, x.repo, tip, "c\n")
	if err := x.repo.pushChain(ctx, "main", tip, c, ps, nil); err != nil {
		t.Fatalf("push on the fetched tip through the earlier session: %v", err)
	}
	if got := remoteTip(); got != c.String() {
		t.Fatalf("remote at %s, want %s", got, c)
	}

	// The session sees C; the remote moves to D, which this repository
	// never fetched; a push of E on C is refused by the remote.
	ps, err = n.openPush(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, other, "pull", "-q", "--ff-only", "origin", "main")
	d := otherCommit("d.txt")
	e := commitOn(t, x.repo, c, "e\n")
	if err := x.repo.pushChain(ctx, "main", c, e, ps, nil); !errors.Is(err, ErrRejected) {
		t.Fatalf("push on a tip the remote left: %v, want ErrRejected", err)
	}
	if got := remoteTip(); got != d {
		t.Fatalf("remote at %s, want %s (nothing lost)", got, d)
	}

	// The session sees D, never fetched here: refused before sending.
	ps, err = n.openPush(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.repo.pushChain(ctx, "main", c, e, ps, nil); !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "not "+short(c)) {
		t.Fatalf("push on a tip the advertisement already contradicts: %v", err)
	}
	if got := remoteTip(); got != d {
		t.Fatalf("remote at %s, want %s", got, d)
	}
}
