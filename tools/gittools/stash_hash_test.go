package gittools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegressStashCommitsAsGit: with the dates and the identity fixed,
// the stash the tool saves is git's, commit for commit: W's message ends
// with no newline (do_create_stash hands it to commit_tree as it is), -u
// saves U even when nothing is untracked (an empty tree), a path removed
// from the index but still on disk is saved in U and back from HEAD after
// (differential seeds 50027, 50029).
func TestRegressStashCommitsAsGit(t *testing.T) {
	dates := []string{"GIT_AUTHOR_DATE=1700500000 +0100", "GIT_COMMITTER_DATE=1700500300 +0100"}
	cases := []struct {
		name  string
		setup func(f *fixture)
		args  map[string]any
		git   []string
	}{
		{"modified", func(f *fixture) { f.write(t, "a.txt", "changed\n") },
			map[string]any{"action": "push"}, []string{"stash", "push", "-q"}},
		{"message", func(f *fixture) { f.write(t, "a.txt", "changed\n"); f.git(t, "add", "a.txt") },
			map[string]any{"action": "push", "message": "saved work"}, []string{"stash", "push", "-q", "-m", "saved work"}},
		{"untracked-none", func(f *fixture) { f.write(t, "a.txt", "changed\n") },
			map[string]any{"action": "push", "include_untracked": true}, []string{"stash", "push", "-q", "-u"}},
		{"untracked", func(f *fixture) { f.write(t, "a.txt", "changed\n"); f.write(t, "new/u.txt", "u\n") },
			map[string]any{"action": "push", "include_untracked": true}, []string{"stash", "push", "-q", "-u"}},
		{"removed-from-index", func(f *fixture) { f.git(t, "rm", "-q", "--cached", "b.txt") },
			map[string]any{"action": "push", "include_untracked": true}, []string{"stash", "push", "-q", "-u"}},
		// A file replaced by a directory of untracked files: U holds them
		// (get_untracked_files lists what status hides), seed 50175.
		{"file-became-dir", func(f *fixture) {
			mustRemove(t, filepath.Join(f.dir, "b.txt"))
			f.write(t, "b.txt/c.txt", "c\n")
		}, map[string]any{"action": "push", "include_untracked": true}, []string{"stash", "push", "-q", "-u"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newRepo(t)
			f.write(t, "a.txt", "a\n")
			f.write(t, "b.txt", "b\n")
			f.git(t, "add", "-A")
			f.git(t, "commit", "-q", "-m", "multi\nline subject")
			c.setup(f)
			toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
			raw, _ := json.Marshal(c.args)
			if _, err := openEnv(t, toolDir, dates...).set.Call(context.Background(), "git_stash", raw); err != nil {
				t.Fatal(err)
			}
			if _, errOut, ok := gitAt(t, gitDir, dates, c.git...); !ok {
				t.Fatal(errOut)
			}
			view := func(dir string) string {
				var b strings.Builder
				for _, a := range [][]string{{"log", "-g", "--format=%H %P", "refs/stash", "--"}, {"rev-parse", "refs/stash^3"}, {"status", "--porcelain=2", "-uall"}} {
					out, _, _ := gitAt(t, dir, nil, a...)
					b.WriteString(strings.Join(a, " ") + "\n" + out)
				}
				return b.String()
			}
			same(t, "stash "+filepath.Base(c.name), view(toolDir), view(gitDir))
		})
	}
}

// TestRegressStashPopBlockedDirAsGit: restoring a stash's untracked
// files stops where a file stands at a directory one of them needs, as
// git's checkout-index dies there ("cannot create directory"): the files
// before it in index order are written, those after are not, an existing
// one is skipped, the stash is kept.
func TestRegressStashPopBlockedDirAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "build/h.ts", "a\nb\n")
	f.write(t, "build/a.txt", "q\n")
	f.commitAll(t, "one")
	mustRemove(t, filepath.Join(f.dir, "build/h.ts"))
	f.write(t, "build/h.ts/c.txt", "z\n")
	f.write(t, "build/b.txt", "u\n")
	f.write(t, "build/z.txt", "u\n")
	f.git(t, "stash", "push", "-q", "-u")
	f.write(t, "build/b.txt", "u\n")
	twin(t, f.dir, "", "git_stash", map[string]any{"action": "pop"}, "stash", "pop", "-q")
}

// TestRegressStashApplyEmptyNotRenamedAsGit: merge-ort detects renames
// with rename_empty off, so an empty file the index moved is a deletion
// to the stash's merge, and the stash's change to it a modify/delete
// conflict (differential seed 50209).
func TestRegressStashApplyEmptyNotRenamedAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "e.txt", "")
	f.write(t, "keep.txt", "k\n")
	f.commitAll(t, "one")
	f.write(t, "e.txt", "now with content\n")
	f.git(t, "stash", "push", "-q")
	f.git(t, "mv", "e.txt", "moved.txt")
	twin(t, f.dir, "", "git_stash", map[string]any{"action": "pop"}, "stash", "pop", "-q")
}

// TestRegressStashShowFromSubdirectoryAsGit: git stash show prints the
// stash's diffstat with paths from the top, whatever directory it runs
// in (no diff.relative), and diff.relative makes it relative as it does
// git diff's; a rename is found as diff.renames says.
func TestRegressStashShowFromSubdirectoryAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "d/a.txt", "a\n")
	f.write(t, "d/e/c.txt", "c\n")
	f.write(t, "b.txt", "b\n")
	f.commitAll(t, "base")
	f.write(t, "d/a.txt", "a2\n")
	f.write(t, "d/e/c.txt", "c2\nc3\n")
	f.write(t, "b.txt", "b2\n")
	f.git(t, "stash", "-q")
	f.write(t, "b.txt", "b3\n")
	f.git(t, "stash", "-q")
	f.git(t, "mv", "d/e/c.txt", "d/moved.txt")
	f.git(t, "stash", "-q")
	f = open(t, f.dir)
	for _, cfg := range [][2]string{{}, {"diff.relative", "true"}, {"diff.renames", "false"}} {
		if cfg[0] != "" {
			f.git(t, "config", cfg[0], cfg[1])
		}
		for _, wd := range []string{"", "d", "d/e"} {
			for _, n := range []int{0, 1, 2} {
				compareTool(t, f, "git_stash", map[string]any{"action": "show", "index": n, "working_dir": wd}, wd, "stash", "show", fmt.Sprintf("stash@{%d}", n))
			}
		}
	}
}

// TestRegressRelativeDropsBeforeRenamesAsGit: with diff.relative git
// drops a path outside the directory it runs in before it looks for
// renames, so a file moved out of the directory is a deletion there, and
// one moved within it a rename (git diff, git diff --cached, git show).
func TestRegressRelativeDropsBeforeRenamesAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "d/e/c.txt", "one\ntwo\nthree\nfour\n")
	f.write(t, "d/e/k.txt", "k1\nk2\nk3\nk4\n")
	f.write(t, "top.txt", "t1\nt2\nt3\nt4\n")
	f.commitAll(t, "base")
	f.git(t, "mv", "d/e/c.txt", "d/moved.txt")
	f.git(t, "mv", "d/e/k.txt", "d/e/k2.txt")
	f.git(t, "mv", "top.txt", "d/e/top.txt")
	f.commitAll(t, "moves")
	f.git(t, "mv", "d/moved.txt", "d/e/back.txt")
	f.git(t, "mv", "d/e/k2.txt", "k3.txt")
	f.git(t, "config", "diff.relative", "true")
	f = open(t, f.dir)
	for _, wd := range []string{"", "d", "d/e"} {
		for _, stat := range []bool{false, true} {
			g := func(args ...string) []string {
				if stat {
					return append([]string{args[0], "--stat"}, args[1:]...)
				}
				return args
			}
			compareTool(t, f, "git_show", map[string]any{"commit": "HEAD", "stat": stat, "working_dir": wd}, wd, g("show", "HEAD")...)
			compareTool(t, f, "git_diff", map[string]any{"cached": true, "stat": stat, "working_dir": wd}, wd, g("diff", "--cached")...)
			compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD~1", "stat": stat, "working_dir": wd}, wd, g("diff", "HEAD~1")...)
			compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD~1", "to_ref": "HEAD", "stat": stat, "working_dir": wd}, wd, g("diff", "HEAD~1", "HEAD")...)
		}
	}
}

// TestRegressStashTypeChangedDirectoriesAsGit: stash push over a tracked
// directory replaced by a file, by a symbolic link, or a file in a
// directory's place with untracked files in it, as git: a path of HEAD's
// whose directory is now a link stops the stash ("is beyond a symbolic
// link"); a directory in HEAD where the index has a file is reset file
// by file (differential seeds 100070, 100128).
func TestRegressStashTypeChangedDirectoriesAsGit(t *testing.T) {
	base := func() *fixture {
		f := newRepo(t)
		f.write(t, "sp ace/c/c9.md", "x\r\n")
		f.write(t, "sp ace/r.ts", "r\n")
		f.write(t, "top", "t\n")
		f.commitAll(t, "base")
		return f
	}
	for _, u := range []bool{false, true} {
		args := map[string]any{"action": "push", "include_untracked": u}
		git := []string{"stash", "push", "-q"}
		if u {
			git = append(git, "-u")
		}
		// A directory of tracked files now a (dangling) link.
		f := base()
		if err := os.RemoveAll(filepath.Join(f.dir, "sp ace")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("nowhere", filepath.Join(f.dir, "sp ace")); err != nil {
			t.Fatal(err)
		}
		twin(t, f.dir, "", "git_stash", args, git...)
		// A link to a directory that holds the same files.
		f = base()
		f.write(t, "elsewhere/c/c9.md", "x\r\n")
		f.write(t, "elsewhere/r.ts", "r\n")
		if err := os.RemoveAll(filepath.Join(f.dir, "sp ace")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("elsewhere", filepath.Join(f.dir, "sp ace")); err != nil {
			t.Fatal(err)
		}
		twin(t, f.dir, "", "git_stash", args, git...)
		// A file staged in the directory's place, then a directory of
		// untracked files in the file's place.
		f = base()
		if err := os.RemoveAll(filepath.Join(f.dir, "sp ace/c")); err != nil {
			t.Fatal(err)
		}
		f.write(t, "sp ace/c", "let\n")
		f.git(t, "add", "-A", "--", "sp ace/c")
		if err := os.Remove(filepath.Join(f.dir, "sp ace/c")); err != nil {
			t.Fatal(err)
		}
		f.write(t, "sp ace/c/notes.txt", "end\n")
		twin(t, f.dir, "", "git_stash", args, git...)
	}
}

// TestRegressStashShowIgnoresStatGraphWidthAsGit: git stash show sets the
// stat format itself, not through --stat, so diff.statGraphWidth (read
// only for --stat) leaves its bars whole; git show --stat narrows them
// (differential seed 900202).
func TestRegressStashShowIgnoresStatGraphWidthAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f.txt", strings.Repeat("line\n", 12))
	f.commitAll(t, "base")
	f.write(t, "f.txt", "")
	f.git(t, "stash", "-q")
	f.git(t, "config", "diff.statGraphWidth", "5")
	f = open(t, f.dir)
	compareTool(t, f, "git_stash", map[string]any{"action": "show"}, "", "stash", "show")
	compareTool(t, f, "git_show", map[string]any{"commit": "stash@{0}", "stat": true, "format": "%s"}, "", "show", "--stat", "--format=%s", "stash@{0}")
}

// TestRegressStashGitlinkInHeadAsGit: W takes the worktree state of a
// path whose HEAD entry is a gitlink the index replaced (by a file) or
// dropped (rm --cached), as for a file: git's diff-index of HEAD against
// the worktree reports the path and update-index --add --remove records
// a file found there, drops a missing one, and leaves out an empty
// directory the index does not hold (differential seed 760040: the file
// staged over the gitlink, then deleted, stayed in W).
func TestRegressStashGitlinkInHeadAsGit(t *testing.T) {
	dates := []string{"GIT_AUTHOR_DATE=1700500000 +0100", "GIT_COMMITTER_DATE=1700500300 +0100"}
	cases := []struct {
		name  string
		setup func(f *fixture)
	}{
		{"file-staged-then-deleted", func(f *fixture) {
			mustRemove(t, filepath.Join(f.dir, "vendor/mod"))
			f.write(t, "vendor/mod", "file\n")
			f.git(t, "add", "vendor/mod")
			mustRemove(t, filepath.Join(f.dir, "vendor/mod"))
		}},
		{"removed-from-index", func(f *fixture) { f.git(t, "rm", "-q", "--cached", "vendor/mod") }},
		{"removed-from-index-file-in-place", func(f *fixture) {
			f.git(t, "rm", "-q", "--cached", "vendor/mod")
			mustRemove(t, filepath.Join(f.dir, "vendor/mod"))
			f.write(t, "vendor/mod", "file\n")
		}},
		{"removed-from-index-and-worktree", func(f *fixture) {
			f.git(t, "rm", "-q", "--cached", "vendor/mod")
			mustRemove(t, filepath.Join(f.dir, "vendor/mod"))
		}},
	}
	for _, c := range cases {
		for _, untracked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/u=%v", c.name, untracked), func(t *testing.T) {
				f := newRepo(t)
				f.write(t, "a.txt", "a\n")
				f.git(t, "add", "a.txt")
				f.git(t, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,vendor/mod")
				if err := os.MkdirAll(filepath.Join(f.dir, "vendor/mod"), 0o755); err != nil {
					t.Fatal(err)
				}
				f.git(t, "commit", "-q", "-m", "with a submodule")
				f.write(t, "a.txt", "changed\n")
				c.setup(f)
				toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
				args, gitArgs := `{"action":"push"}`, []string{"stash", "push", "-q"}
				if untracked {
					args, gitArgs = `{"action":"push","include_untracked":true}`, append(gitArgs, "-u")
				}
				if _, err := openEnv(t, toolDir, dates...).set.Call(context.Background(), "git_stash", []byte(args)); err != nil {
					t.Fatal(err)
				}
				if _, errOut, ok := gitAt(t, gitDir, dates, gitArgs...); !ok {
					t.Fatal(errOut)
				}
				view := func(dir string) string {
					var b strings.Builder
					for _, a := range [][]string{{"rev-parse", "refs/stash"}, {"ls-tree", "-r", "refs/stash"}, {"status", "--porcelain=2", "-uall"}, {"ls-files", "-s"}} {
						out, _, _ := gitAt(t, dir, nil, a...)
						b.WriteString(strings.Join(a, " ") + "\n" + out)
					}
					return b.String()
				}
				same(t, "stash", view(toolDir), view(gitDir))
			})
		}
	}
}

// TestRegressStashShowHonoursDiffDriverBinary: git stash show reads the
// worktree's attributes, so a file whose diff driver sets
// diff.<driver>.binary is "Bin" in its diffstat; the tool counted its
// lines (differential seed 790019).
func TestRegressStashShowHonoursDiffDriverBinary(t *testing.T) {
	f := newRepo(t)
	f.write(t, "docs/.gitattributes", "*.txt diff=bin\n")
	f.git(t, "config", "diff.bin.binary", "true")
	f.write(t, "docs/a.txt", "one\ntwo\nthree\n")
	f.commitAll(t, "base")
	f.write(t, "docs/a.txt", "one\n2\nthree\n")
	f.git(t, "stash", "push", "-q")
	f = open(t, f.dir)
	compareTool(t, f, "git_stash", map[string]any{"action": "show", "index": 0}, "", "stash", "show", "stash@{0}")
}
