package gittools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// signingRepo is a repository with one commit made by the git CLI, a
// staged change, an unstaged one and an untracked file.
func signingRepo(t *testing.T) string {
	t.Helper()
	gittest.RequireGit(t)
	dir := filepath.Join(t.TempDir(), "repo")
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	gittest.WriteFile(t, dir, "a.txt", "a\n")
	gittest.Git(t, dir, "add", "a.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "seed")
	return dir
}

// TestGitCommitAndStashAreSigned: with git.signing_key, the commit
// git_commit makes verifies with git verify-commit, the people and the
// message are what they are unsigned; the three a stash push makes
// (worktree, index, untracked) are not signed, as git's are not, and the
// CLI pops the stash.
func TestGitCommitAndStashAreSigned(t *testing.T) {
	key := gittest.NewSSHKey(t)
	dir := signingRepo(t)
	f := openSigning(t, dir, key.Path)
	f.write(t, "b.txt", "b\n")
	f.git(t, "add", "b.txt")
	out := f.call(t, "git_commit", map[string]any{"type": "feat", "message": "signed"})
	if !strings.Contains(out, "] feat: signed\n") {
		t.Fatalf("%q", out)
	}
	gittest.RequireSigned(t, dir, key.AllowedSigners, "HEAD")
	if got := f.git(t, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%B"); got != "Test <test@example.com>|Test <test@example.com>|feat: signed\n\n" {
		t.Fatalf("people or message: %q", got)
	}
	f.git(t, "fsck", "--strict")

	f.write(t, "a.txt", "a changed\n")
	f.write(t, "b.txt", "b staged\n")
	f.git(t, "add", "b.txt")
	f.write(t, "u.txt", "untracked\n")
	f.call(t, "git_stash", map[string]any{"action": "push", "include_untracked": true})
	for _, rev := range []string{"stash@{0}", "stash@{0}^2", "stash@{0}^3"} {
		if _, err := gittest.GitErr(dir, "-c", "gpg.ssh.allowedSignersFile="+key.AllowedSigners, "verify-commit", rev); err == nil {
			t.Fatalf("%s is signed; git never signs a stash's commits", rev)
		}
	}
	if got := f.git(t, "log", "-1", "--format=%s", "stash@{0}"); !strings.HasPrefix(got, "WIP on main: ") {
		t.Fatalf("stash message %q", got)
	}
	f.git(t, "fsck", "--strict")
	f.git(t, "stash", "pop", "-q", "--index")
	if st := f.git(t, "status", "--porcelain"); st != " M a.txt\nM  b.txt\n?? u.txt\n" {
		t.Fatalf("after pop: %q", st)
	}
}

// TestGitCommitHonoursGitSigningConfig: with no git.signing_key,
// git_commit signs as git would with the repository's commit.gpgsign,
// gpg.format=ssh and user.signingkey; an unusable key is an
// execution_failed error that names the problem, and commits nothing.
func TestGitCommitHonoursGitSigningConfig(t *testing.T) {
	key := gittest.NewSSHKey(t)
	dir := signingRepo(t)
	f := open(t, dir)
	f.git(t, "config", "commit.gpgsign", "true")
	f.git(t, "config", "gpg.format", "ssh")
	f.git(t, "config", "user.signingkey", key.Path)
	f.write(t, "b.txt", "b\n")
	f.git(t, "add", "b.txt")
	f.call(t, "git_commit", map[string]any{"type": "feat", "message": "by config"})
	gittest.RequireSigned(t, dir, key.AllowedSigners, "HEAD")

	f.git(t, "config", "user.signingkey", "key::"+key.PublicKey)
	f.write(t, "c.txt", "c\n")
	f.git(t, "add", "c.txt")
	head := f.git(t, "rev-parse", "HEAD")
	e := f.callErr(t, "git_commit", map[string]any{"type": "feat", "message": "literal key"})
	if e.Kind != "execution_failed" || !strings.Contains(e.Message, "ssh-agent") {
		t.Fatalf("%+v", e)
	}
	if f.git(t, "rev-parse", "HEAD") != head {
		t.Fatal("a commit was made with an unusable key")
	}
}
