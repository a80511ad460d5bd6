package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/kernel"
)

// TestBootClonesLikeGit boots a kernel on each generated repository as
// its remote and compares what it made with `git clone` of the same
// repository: worktree bytes and modes, index, status, HEAD, branches,
// tags and remote-tracking refs. TGP_GIT_SEEDS and TGP_GIT_SEED0 choose
// the seeds, as for TestGitDifferential.
func TestBootClonesLikeGit(t *testing.T) {
	requireGit(t)
	n := envInt("TGP_GIT_SEEDS", 16)
	seed0 := envInt("TGP_GIT_SEED0", 1)
	for s := seed0; s < seed0+n; s++ {
		seed := int64(s)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			remote, b := build(t, genOps(seed))
			base := objectSet(remote)
			want := filepath.Join(t.TempDir(), "git")
			cloneArgs := []string{"clone", "-q", remote, want}
			if _, _, err := runGit(remote, gitEnv(), "symbolic-ref", "-q", "HEAD"); err != nil {
				// A detached remote HEAD: git clone detaches too, but the
				// kernel needs a branch to push to. It takes the only
				// branch, or refuses to guess among several.
				branches := lines(must(runGit(remote, gitEnv(), "for-each-ref", "--format=%(refname:short)", "refs/heads/")))
				if len(branches) != 1 {
					bootWantsBranch(t, remote, branches)
					return
				}
				cloneArgs = []string{"clone", "-q", "-b", branches[0], remote, want}
			}
			if _, stderr, err := runGit(t.TempDir(), gitEnv(), cloneArgs...); err != nil {
				t.Fatalf("git clone: %v: %s", err, stderr)
			}
			got := filepath.Join(t.TempDir(), "tgp")
			if err := bootOnce(t, got, remote); err != nil {
				t.Fatalf("boot: %v\n%s", err, "  "+strings.Join(b.script, "\n  "))
			}
			if w, g := cloneState(want, base), cloneState(got, base); w != g {
				t.Fatalf("boot differs from git clone:\n%s\n%s", stateDiff(w, g), "  "+strings.Join(b.script, "\n  "))
			}
		})
	}
}

// bootOnce boots a kernel on remote into root and shuts it down.
func bootOnce(t *testing.T, root, remote string) error {
	ctx := context.Background()
	k, err := kernel.New(ctx, kernel.WithRoot(root), kernel.WithEnviron(gitEnv()), kernel.WithSetting("git.remote", remote))
	if err != nil {
		t.Fatalf("kernel.New: %v", err)
	}
	err = k.Boot(ctx)
	_ = k.Shutdown(ctx)
	return err
}

func must(out, _ string, _ error) string { return out }

// bootWantsBranch: with a detached remote HEAD and several branches, boot
// fails with a hint naming them, and leaves no root behind.
func bootWantsBranch(t *testing.T, remote string, branches []string) {
	err := bootOnce(t, filepath.Join(t.TempDir(), "tgp"), remote)
	if err == nil || !strings.Contains(err.Error(), "git.branch") || !strings.Contains(err.Error(), branches[0]) {
		t.Fatalf("boot with a detached remote HEAD and branches %v: %v", branches, err)
	}
}

// cloneState is state without what only a clone's history would hold
// (stash, the upstream settings a generated repository fakes).
func cloneState(dir string, base map[string]bool) string {
	return state(dir, base)
}
