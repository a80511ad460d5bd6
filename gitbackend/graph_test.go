package gitbackend

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/internal/commitgraph"
)

// TestPersistExtendsCommitGraph: persists add their commits to the
// root's commit-graph (every graphEvery pushes) as a layer of a split
// chain that git verifies, a refresh adds what it fetched at once; the
// layers merge as git's split strategy merges them; and the chain holds
// what git's own graph of the same history holds, filters included.
func TestPersistExtendsCommitGraph(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "h.git")
	gittest.History(t, remote, gittest.HistoryOptions{Seed: 3, Commits: 60, Dirs: 2, FilesPerDir: 3, BigLines: 50, BigEvery: 4, Repack: true})
	_, r, _, err := bootRoot(t, "file://"+remote, "main", false, "")
	if err != nil {
		t.Fatal(err)
	}
	root := r.wt.Root()
	objects := filepath.Join(root, ".git", "objects")
	// Another agent pushes too: its commits arrive with a replay.
	other := gittest.Clone(t, remote)
	for i := 0; i < 2*graphEvery+3; i++ {
		if i == graphEvery+3 {
			writeFile(t, other, fmt.Sprintf("other%d.txt", i), "x\n", 0o644)
			gittest.Git(t, other, "pull", "-q", "--rebase", "origin", "main")
			gittest.Git(t, other, "add", "-A")
			gittest.Git(t, other, "commit", "-q", "-m", "other")
			gittest.Git(t, other, "push", "-q", "origin", "main")
		}
		writeFile(t, root, fmt.Sprintf("dir/f%d.txt", i), fmt.Sprint(i), 0o644)
		if _, err := r.Persist(context.Background(), Change{Paths: []string{fmt.Sprintf("dir/f%d.txt", i)}, Message: fmt.Sprint("w", i)}); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, root, "commit-graph", "verify")
		g, err := commitgraph.Open(objects)
		if err != nil || g == nil {
			t.Fatalf("after persist %d: no graph (%v)", i, err)
		}
		// Never more than graphEvery pushes behind.
		head, _ := r.head()
		missing := 0
		for h := head; ; missing++ {
			if _, ok := g.Find(h); ok {
				break
			}
			c, err := r.repo.CommitObject(h)
			if err != nil || len(c.ParentHashes) == 0 {
				t.Fatalf("after persist %d: walked out of the history (%v)", i, err)
			}
			h = c.ParentHashes[0]
		}
		if missing > graphEvery+1 {
			t.Fatalf("after persist %d: %d commits of the head's first-parent line not in the graph", i, missing)
		}
		_, chainErr := os.Stat(filepath.Join(objects, commitgraph.ChainName))
		if _, err := os.Stat(filepath.Join(objects, commitgraph.FileName)); err == nil && chainErr == nil {
			t.Fatal("the single file is still there beside the chain: git would read it alone")
		}
		// size_multiple 2: each layer more than twice the one above.
		ls := g.LayerList()
		for k := 1; k < len(ls); k++ {
			if 2*ls[k].Own() >= ls[k-1].Own() {
				t.Fatalf("layers of %d and %d commits not merged", ls[k-1].Own(), ls[k].Own())
			}
		}
	}
	// A refresh brings another agent's commits into it too.
	gittest.Git(t, other, "pull", "-q", "--rebase", "origin", "main")
	writeFile(t, other, "refreshed.txt", "x\n", 0o644)
	gittest.Git(t, other, "add", "-A")
	gittest.Git(t, other, "commit", "-q", "-m", "for the refresh")
	gittest.Git(t, other, "push", "-q", "origin", "main")
	if res, err := r.Refresh(context.Background()); err != nil || !res.Applied {
		t.Fatalf("refresh: %+v %v", res, err)
	}
	ours, err := commitgraph.Open(objects)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := r.head()
	if _, ok := ours.Find(head); !ok {
		t.Fatal("the refreshed head is not in the graph")
	}
	gittest.Git(t, root, "commit-graph", "verify")
	if ours.Layers() < 2 {
		t.Fatalf("%d layer(s): the test does not test a chain", ours.Layers())
	}
	copyDir := filepath.Join(t.TempDir(), "copy.git")
	gittest.Git(t, "", "clone", "-q", "--mirror", "--no-local", root, copyDir)
	gittest.Git(t, copyDir, "commit-graph", "write", "--reachable", "--changed-paths")
	theirs, err := commitgraph.Open(copyDir + "/objects")
	if err != nil || theirs == nil {
		t.Fatal(err)
	}
	if ours.Len() != theirs.Len() {
		t.Fatalf("%d commits in the chain, git's graph has %d", ours.Len(), theirs.Len())
	}
	for pos := uint32(0); int(pos) < theirs.Len(); pos++ {
		h := theirs.Hash(pos)
		p, ok := ours.Find(h)
		if !ok {
			t.Fatalf("%s missing from the chain", h)
		}
		a, b := ours.Commit(p), theirs.Commit(pos)
		if a.Tree != b.Tree || a.Time != b.Time || a.Level != b.Level || a.Generation != b.Generation || len(a.Parents) != len(b.Parents) {
			t.Fatalf("%s: ours %+v, git's %+v", h, a, b)
		}
		if !bytes.Equal(ours.Filter(p), theirs.Filter(pos)) {
			t.Fatalf("%s: filter %x, git's %x", h, ours.Filter(p), theirs.Filter(pos))
		}
	}
}

// TestNetworkBootWritesCommitGraph: a root booted over git:// gets the
// commit-graph git would write for its history, filters included.
func TestNetworkBootWritesCommitGraph(t *testing.T) {
	base := t.TempDir()
	gittest.History(t, filepath.Join(base, "h.git"), gittest.HistoryOptions{Seed: 5, Commits: 120, Dirs: 2, FilesPerDir: 3, BigLines: 50, BigEvery: 4, Repack: true})
	url := gittest.Daemon(t, base) + "/h.git"
	_, r, _, err := bootRoot(t, url, "main", false, "")
	if err != nil {
		t.Fatal(err)
	}
	root := r.wt.Root()
	gittest.Git(t, root, "commit-graph", "verify")
	ours, err := os.ReadFile(filepath.Join(root, ".git/objects/info/commit-graph"))
	if err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join(t.TempDir(), "copy.git")
	gittest.Git(t, "", "clone", "-q", "--mirror", "--no-local", root, copyDir)
	gittest.Git(t, copyDir, "commit-graph", "write", "--reachable", "--changed-paths")
	theirs, err := os.ReadFile(filepath.Join(copyDir, "objects/info/commit-graph"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, theirs) {
		t.Fatalf("commit-graph of %d bytes, git writes %d", len(ours), len(theirs))
	}
}
