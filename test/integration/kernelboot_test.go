package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/kernel"
)

// TestKernelBootFollowsMaster is the report as a new user meets
// it: a remote whose only branch is master, git.branch not configured.
// Boot checks master out and the first write_file lands on master, with no
// main beside it.
func TestKernelBootFollowsMaster(t *testing.T) {
	gittest.RequireGit(t)
	work := filepath.Join(t.TempDir(), "work")
	gittest.Git(t, "", "init", "-q", "-b", "master", work)
	gittest.Git(t, work, "commit", "-q", "--allow-empty", "-m", "init")
	gittest.Git(t, work, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,vendor/sub")
	gittest.Git(t, work, "commit", "-q", "-m", "submodule")
	remote := filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", "master", remote)
	gittest.Git(t, work, "push", "-q", remote, "master")

	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	env := append(gittest.Env(t.TempDir()), "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com")
	k, err := kernel.New(ctx, kernel.WithRoot(root), kernel.WithSetting("git.remote", remote), kernel.WithEnviron(env))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	if err := k.Boot(ctx); err != nil {
		t.Fatalf("boot: %v", err)
	}
	st, err := k.Status(ctx)
	if err != nil || st.Branch != "master" || st.Hydration != "cloned" {
		t.Fatalf("status %+v %v", st, err)
	}
	if k.Config().Git.Branch != "master" {
		t.Fatalf("effective git.branch %q", k.Config().Git.Branch)
	}
	if _, err := k.Call(ctx, "write_file", []byte(`{"path":"tools/a.ts","content":"export default 1\n"}`)); err != nil {
		t.Fatalf("write_file: %v", err)
	}
	if refs := gittest.Git(t, remote, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/master\n" {
		t.Fatalf("remote refs:\n%s", refs)
	}
	if log := gittest.Git(t, remote, "log", "--format=%s", "master"); !strings.HasSuffix(log, "submodule\ninit\n") || strings.Count(log, "\n") != 3 {
		t.Fatalf("master history:\n%s", log)
	}
	if st := gittest.Git(t, root, "status", "--porcelain"); st != "" {
		t.Fatalf("git status in the root:\n%s", st)
	}
}
