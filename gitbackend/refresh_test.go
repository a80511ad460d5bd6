package gitbackend

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestRefresh: a long-lived root sees what another agent pushed, over a
// local remote and smart HTTP: nothing when nothing moved; a fast-forward
// listing the changed paths; a local edit on a path the remote changed
// blocks the move and survives; an untouched path still arrives once the
// edit is committed (the commit is replayed on the remote's and pushed).
func TestRefresh(t *testing.T) {
	root := t.TempDir()
	bare := filepath.Join(root, "tools.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", bare)
	gittest.Git(t, bare, "config", "http.receivepack", "true")
	srv := gittest.NewHTTPServer(t, root, "")
	for name, remote := range map[string]string{"local": bare, "http": srv.URL("tools.git")} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			prefix := "tools/" + name + "/"
			a, b := newAgent(t, remote, false), newAgent(t, remote, true)
			a.write(t, prefix+"seed.ts", "seed\n")
			if _, err := b.repo.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := a.repo.Refresh(ctx)
			if err != nil || res.Moved || res.Applied {
				t.Fatalf("nothing moved: %+v %v", res, err)
			}
			b.write(t, prefix+"b.ts", "from b\n")
			res, err = a.repo.Refresh(ctx)
			if err != nil || !res.Applied || strings.Join(res.Paths, ",") != prefix+"b.ts" {
				t.Fatalf("refresh after b pushed: %+v %v", res, err)
			}
			if got, _ := a.fs.ReadFile(prefix + "b.ts"); string(got) != "from b\n" {
				t.Fatalf("a's root has %q", got)
			}

			// a edits seed.ts without committing; b changes it and adds c.
			if err := a.fs.WriteFile(prefix+"seed.ts", []byte("a's edit\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := b.repo.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			b.write(t, prefix+"seed.ts", "b's version\n")
			res, err = a.repo.Refresh(ctx)
			if err != nil || res.Applied || strings.Join(res.Blocked, ",") != prefix+"seed.ts" {
				t.Fatalf("a local edit must block the move: %+v %v", res, err)
			}
			if got, _ := a.fs.ReadFile(prefix + "seed.ts"); string(got) != "a's edit\n" {
				t.Fatalf("the local edit was lost: %q", got)
			}
			// Persisting the edit replays it on b's version: a conflict on
			// the same line keeps a's version on a conflict branch.
			_, err = a.repo.Persist(ctx, Change{Paths: []string{prefix + "seed.ts"}})
			if !errors.Is(err, ErrConflict) {
				t.Fatalf("want a conflict, got %v", err)
			}
			res, err = a.repo.Refresh(ctx)
			if err != nil || res.Moved {
				t.Fatalf("after the conflict the root is at the remote head: %+v %v", res, err)
			}
		})
	}
}

// BenchmarkRefreshNoChange: what a read pays for a freshness check when
// nothing moved (interval 0), over a local remote and smart HTTP, beside
// `git ls-remote` of the same remote in the same run.
func BenchmarkRefreshNoChange(b *testing.B) {
	root := b.TempDir()
	bare := filepath.Join(root, "tools.git")
	gittest.Git(b, "", "init", "-q", "--bare", "-b", "main", bare)
	gittest.Git(b, bare, "config", "http.receivepack", "true")
	srv := gittest.NewHTTPServer(b, root, "")
	seed := newAgent(b, bare, true)
	seed.write(b, "tools/a.ts", "a\n")
	for _, c := range []struct{ name, remote string }{{"file", bare}, {"http", srv.URL("tools.git")}} {
		a := newAgent(b, c.remote, true)
		b.Run("tgp/"+c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if res, err := a.repo.Refresh(context.Background()); err != nil || res.Moved {
					b.Fatal(res, err)
				}
			}
		})
		b.Run("git-ls-remote/"+c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if out, err := exec.Command("git", "ls-remote", c.remote, "refs/heads/main").Output(); err != nil || len(out) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRefreshInSplitIndexRoot: a root whose index git split (or wrote as
// version 4) is refreshed like any: the local-edit check reads the index
// through the Repo's cache, which decodes both, where go-git's decoder
// refuses the split index's link extension.
func TestRefreshInSplitIndexRoot(t *testing.T) {
	gittest.RequireGit(t)
	for _, shape := range [][]string{{"update-index", "--split-index"}, {"update-index", "--index-version", "4"}} {
		t.Run(shape[1], func(t *testing.T) {
			ctx := context.Background()
			bare := filepath.Join(t.TempDir(), "tools.git")
			gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", bare)
			a, b := newAgent(t, bare, false), newAgent(t, bare, true)
			a.write(t, "tools/seed.ts", "seed\n")
			if _, err := b.repo.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, a.fs.Root(), shape...)
			b.write(t, "tools/seed.ts", "from b\n")
			res, err := a.repo.Refresh(ctx)
			if err != nil || !res.Applied {
				t.Fatalf("refresh: %+v %v", res, err)
			}
			if got, _ := a.fs.ReadFile("tools/seed.ts"); string(got) != "from b\n" {
				t.Fatalf("a's root has %q", got)
			}
			if out := gittest.Git(t, a.fs.Root(), "status", "--porcelain"); out != "" {
				t.Fatalf("git status after the refresh:\n%s", out)
			}
		})
	}
}
