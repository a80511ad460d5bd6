package gittools

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRegressGitlinkPlaceRemovedAsGit: when a restore, a switch or a
// stash takes a gitlink out of the index, git removes its place in the
// worktree with rmdir (remove_or_warn): an empty directory goes, with
// the empty directories above it, while a file, a symbolic link or a
// directory with files in it stays and is then untracked (differential
// seed 900262: a symbolic link the tools deleted).
func TestRegressGitlinkPlaceRemovedAsGit(t *testing.T) {
	for _, kind := range []string{"link", "file", "empty-dir", "full-dir"} {
		t.Run(kind, func(t *testing.T) {
			f := newRepo(t)
			f.write(t, "a.txt", "a\n")
			f.commitAll(t, "base")
			f.git(t, "branch", "plain")
			f.git(t, "update-index", "--add", "--cacheinfo", "160000,1234567890123456789012345678901234567890,d/sub")
			if err := os.MkdirAll(filepath.Join(f.dir, "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(f.dir, "d/sub")
			var err error
			switch kind {
			case "link":
				err = os.Symlink("nowhere", p)
			case "file":
				err = os.WriteFile(p, []byte("f\n"), 0o644)
			case "empty-dir":
				err = os.Mkdir(p, 0o755)
			case "full-dir":
				if err = os.Mkdir(p, 0o755); err == nil {
					err = os.WriteFile(filepath.Join(p, "x"), []byte("x\n"), 0o644)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			twin(t, f.dir, "", "git_restore", map[string]any{"paths": []string{"."}, "staged": true, "worktree": true}, "restore", "--staged", "--worktree", "--", ".")
			twin(t, f.dir, "", "git_stash", map[string]any{"action": "push"}, "stash", "push", "-q")
			twin(t, f.dir, "", "git_stash", map[string]any{"action": "push", "include_untracked": true}, "stash", "push", "-q", "-u")
			// Committed, then a switch to a branch without it.
			f.git(t, "commit", "-q", "-m", "gitlink")
			twin(t, f.dir, "", "git_checkout", map[string]any{"branch": "plain"}, "checkout", "-q", "plain")
		})
	}
}
