package receive

import (
	"context"
	"os/exec"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// updateWorktree is receive-pack's update_worktree for
// receive.denyCurrentBranch=updateInstead: the push-to-checkout hook when
// there is one, else push_to_deploy, which receive-pack itself does by
// running git (update-index --refresh, diff-files, diff-index, read-tree
// -u -m). Without a git binary the push is refused: the work tree could
// not be brought to what was pushed. It returns git's lines and the reason
// for a refusal ("" when the work tree was updated).
func (p *Policy) updateWorktree(ctx context.Context, newHash plumbing.Hash, qenv []string) ([]string, string) {
	if p.bare || p.worktree == "" {
		return nil, "denyCurrentBranch = updateInstead needs a worktree"
	}
	gitdir, _ := filepath.Abs(p.gitdir)
	worktree, _ := filepath.Abs(p.worktree)
	env := append(hookEnv(qenv...), "GIT_DIR="+gitdir)
	out, ran, err := p.runHook(ctx, "push-to-checkout", []string{newHash.String()}, "", append(env, "GIT_WORK_TREE="+worktree))
	if ran {
		if err != nil {
			if !isExit(err) {
				out = append(out, "error: "+err.Error())
			}
			return out, "push-to-checkout hook declined"
		}
		return out, ""
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return rpError("receive.denyCurrentBranch=updateInstead: no git binary to update the work tree with"), "Could not update working tree to new HEAD"
	}
	run := func(dir string, args ...string) ([]string, bool) {
		cmd := exec.CommandContext(ctx, gitBin, args...)
		cmd.Dir, cmd.Env = dir, env
		var buf cappedBuffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		return splitLines(buf.buf.String()), err == nil
	}
	var lines []string
	step := func(dir, failure string, args ...string) string {
		l, ok := run(dir, args...)
		lines = append(lines, l...)
		if !ok {
			return failure
		}
		return ""
	}
	head := "HEAD"
	if _, ok := run(worktree, "rev-parse", "--verify", "-q", "HEAD"); !ok {
		head = "4b825dc642cb6eb9a060e54bf8d69288fbee4904" // the empty tree
	}
	for _, s := range []struct {
		dir, failure string
		args         []string
	}{
		{worktree, "Up-to-date check failed", []string{"update-index", "-q", "--ignore-submodules", "--refresh"}},
		{worktree, "Working directory has unstaged changes", []string{"diff-files", "--quiet", "--ignore-submodules", "--"}},
		{gitdir, "Working directory has staged changes", []string{"diff-index", "--quiet", "--cached", "--ignore-submodules", head, "--"}},
		{worktree, "Could not update working tree to new HEAD", []string{"read-tree", "-u", "-m", newHash.String()}},
	} {
		if reason := step(s.dir, s.failure, s.args...); reason != "" {
			return lines, reason
		}
	}
	return lines, ""
}
