package gittools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestRegressSwitchBeyondLinkOrFileAsGit: a path the switch deletes or
// writes that the index lacks, below a link or a file in the worktree, is
// checked as git's verify_absent does: check_leading_path finds the link
// or file, and check_ok_to_remove refuses it as an untracked file the
// switch would remove or overwrite (even one the index tracks), unless it
// is ignored or the switch deletes it (differential seed 760010: a
// directory replaced by a staged link, git refused with "untracked
// working tree files would be removed by checkout: big/c", git_checkout
// switched).
func TestRegressSwitchBeyondLinkOrFileAsGit(t *testing.T) {
	link := func(f *fixture, target, p string) {
		if err := os.Symlink(target, filepath.Join(f.dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		setup func(f *fixture) // on main, which has big/c/x.txt and big/c/y.txt; side has neither
		to    string
	}{
		{"staged-link-over-directory", func(f *fixture) {
			mustRemoveAll(t, filepath.Join(f.dir, "big/c"))
			link(f, "nowhere", "big/c")
			f.git(t, "add", "-A", "--", "big/c")
		}, "side"},
		{"untracked-link-over-directory", func(f *fixture) {
			f.git(t, "rm", "-q", "-r", "--cached", "big/c")
			mustRemoveAll(t, filepath.Join(f.dir, "big/c"))
			link(f, ".", "big/c")
		}, "side"},
		{"ignored-link-over-directory", func(f *fixture) {
			f.git(t, "rm", "-q", "-r", "--cached", "big/c")
			mustRemoveAll(t, filepath.Join(f.dir, "big/c"))
			link(f, "nowhere", "big/c")
			f.write(t, ".git/info/exclude", "/big/c\n")
		}, "side"},
		{"untracked-file-over-directory", func(f *fixture) {
			f.git(t, "rm", "-q", "-r", "--cached", "big")
			mustRemoveAll(t, filepath.Join(f.dir, "big"))
			f.write(t, "big", "a file\n")
		}, "side"},
		// The target writes below an untracked link.
		{"new-file-below-untracked-link", func(f *fixture) {
			f.git(t, "checkout", "-q", "side")
			link(f, "elsewhere", "big")
		}, "main"},
		// The switch deletes the link it writes below: no refusal.
		{"link-replaced-by-directory", func(f *fixture) {
			f.git(t, "checkout", "-q", "side")
			link(f, "elsewhere", "big")
			f.git(t, "add", "big")
			f.git(t, "commit", "-q", "-m", "big is a link")
		}, "main"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newRepo(t)
			f.write(t, "a.txt", "a\n")
			f.commitAll(t, "base")
			f.git(t, "branch", "side")
			f.write(t, "big/c/x.txt", "x\n")
			f.write(t, "big/c/y.txt", "y\n")
			f.commitAll(t, "big")
			c.setup(f)
			compareSwitch(t, f.dir, c.to)
		})
	}
}

// compareSwitch runs git_checkout to branch or commit to in one copy of
// dir and git checkout in another: the refusal (its message) or the
// state after must be git's.
func compareSwitch(t *testing.T, dir, to string) {
	t.Helper()
	toolDir, gitDir := copyTree(t, dir), copyTree(t, dir)
	args := map[string]any{"branch": to}
	gitArgs := []string{"checkout", "-q", to}
	if gittest.Git(t, dir, "branch", "--list", to) == "" {
		args = map[string]any{"commit": to}
		gitArgs = []string{"checkout", "-q", "--detach", to}
	}
	raw, _ := json.Marshal(args)
	_, terr := open(t, toolDir).set.Call(context.Background(), "git_checkout", raw)
	cmd := exec.Command("git", gitArgs...)
	cmd.Dir, cmd.Env = gitDir, gittest.Env(t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	gerr := cmd.Run()
	if (terr != nil) != (gerr != nil) {
		t.Fatalf("tool error %v, git error %v: %s", terr, gerr, stderr.String())
	}
	var te *tools.Error
	if terr != nil && (!errors.As(terr, &te) || te.Message != strings.TrimSuffix(stderr.String(), "\n")) {
		t.Errorf("tool refused with\n%v\ngit with\n%s", terr, stderr.String())
	}
	view := func(dir string) string {
		out, _ := gittest.GitErr(dir, "status", "--porcelain=2", "-b", "-uall", "--ignored")
		return out + gittest.Git(t, dir, "ls-files", "-s") + snapshot(t, dir)
	}
	same(t, "state", view(toolDir), view(gitDir))
}

func mustRemoveAll(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
}

// TestRegressSwitchFileOverIndexDirectoryAsGit: where the target puts a
// file at a path the worktree has as a directory, git's merged_entry
// runs verify_clean_subdirectory on it, which takes every index entry
// below out of the merge: removed when up to date with its file (a
// gitlink always is; a staged change or a new file with the worktree as
// staged is dropped), refused as a local change otherwise. Only with no
// directory there do those entries meet the two-way merge (differential
// seed 760036: a gitlink staged over a file, git switched, git_checkout
// refused with "Your local changes ... d/b.txt").
func TestRegressSwitchFileOverIndexDirectoryAsGit(t *testing.T) {
	cases := []struct {
		name  string
		setup func(f *fixture) // HEAD has d/b.txt; HEAD~1 has the file d
	}{
		{"gitlink-over-file", func(f *fixture) {
			f.git(t, "update-index", "--cacheinfo", "160000,1111111111111111111111111111111111111111,d/b.txt")
		}},
		{"staged-change-up-to-date", func(f *fixture) {
			f.write(t, "d/b.txt", "staged\n")
			f.git(t, "add", "d/b.txt")
		}},
		{"staged-change-then-changed", func(f *fixture) {
			f.write(t, "d/b.txt", "staged\n")
			f.git(t, "add", "d/b.txt")
			f.write(t, "d/b.txt", "changed again\n")
		}},
		{"new-file-staged", func(f *fixture) {
			f.write(t, "d/new.txt", "new\n")
			f.git(t, "add", "d/new.txt")
		}},
		{"staged-change-directory-gone", func(f *fixture) {
			f.write(t, "d/b.txt", "staged\n")
			f.git(t, "add", "d/b.txt")
			mustRemoveAll(t, filepath.Join(f.dir, "d"))
		}},
		// verify_clean_subdirectory stops at the first local change: the
		// entries after it meet the two-way merge, the untracked file is
		// not looked at.
		{"local-changes-and-untracked", func(f *fixture) {
			f.write(t, "d/a.txt", "staged\n")
			f.git(t, "add", "d/a.txt")
			f.write(t, "d/a.txt", "changed again\n")
			f.write(t, "d/b.txt", "changed\n")
			f.write(t, "d/c.txt", "staged\n")
			f.git(t, "add", "d/c.txt")
			f.write(t, "d/u.txt", "untracked\n")
		}},
		{"untracked-file-beside", func(f *fixture) {
			f.write(t, "d/b.txt", "staged\n")
			f.git(t, "add", "d/b.txt")
			f.write(t, "d/u.txt", "untracked\n")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newRepo(t)
			f.write(t, "a.txt", "a\n")
			f.write(t, "d", "a file\n")
			f.commitAll(t, "d is a file")
			mustRemove(t, filepath.Join(f.dir, "d"))
			f.write(t, "d/b.txt", "b\n")
			f.write(t, "d/c.txt", "c\n")
			f.commitAll(t, "d is a directory")
			c.setup(f)
			compareSwitch(t, f.dir, "HEAD~1")
		})
	}
}

// TestRegressSwitchOverLinkOrFileAboveTrackedFiles: where a switch removes
// or writes a file whose leading directory is now a symlink or a file
// (staged or not), git's verify_absent stops at that leading path
// (check_leading_path) and refuses it as an untracked file the switch
// would remove or overwrite, once for every file below it, unless it is
// ignored. The tool followed its own file-by-file view and switched,
// deleting the files below through nothing and leaving the link
// (differential seed 700284: a staged symlink that replaced a directory).
func TestRegressSwitchOverLinkOrFileAboveTrackedFiles(t *testing.T) {
	link := func(p string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.Symlink("nowhere", filepath.Join(dir, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	file := func(p string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, p), []byte("f\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name string
		// from is the commit checked out before the change: "new" has
		// deep/er/{a,b} and deep/c, "old" none of them.
		from, to string
		// unstage removes these paths from the index before the change.
		unstage string
		place   string // the path the link or file takes
		make    func(p string) func(t *testing.T, dir string)
		stage   bool
		ignore  string // a .gitignore line in deep/
	}{
		{name: "staged link removed", from: "new", to: "old", place: "deep/er", make: link, stage: true},
		{name: "untracked link removed", from: "new", to: "old", unstage: "deep/er", place: "deep/er", make: link},
		{name: "staged file removed", from: "new", to: "old", place: "deep/er", make: file, stage: true},
		{name: "staged link at top removed", from: "new", to: "old", place: "deep", make: link, stage: true},
		{name: "ignored link removed", from: "new", to: "old", unstage: "deep/er", place: "deep/er", make: link, ignore: "er"},
		{name: "unstaged link", from: "new", to: "old", place: "deep/er", make: link},
		{name: "staged link overwritten", from: "old", to: "new", place: "deep/er", make: link, stage: true},
		{name: "untracked file overwritten", from: "old", to: "new", place: "deep", make: file},
		{name: "ignored link overwritten", from: "old", to: "new", place: "deep/er", make: link, ignore: "er"},
		{name: "staged ignored link removed", from: "new", to: "old", place: "deep/er", make: link, stage: true, ignore: "er"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newRepo(t)
			f.write(t, "top.txt", "x\n")
			f.commitAll(t, "old")
			f.git(t, "tag", "old")
			f.write(t, "deep/er/a", "a\n")
			f.write(t, "deep/er/b", "b\n")
			f.write(t, "deep/c", "c\n")
			f.commitAll(t, "new")
			f.git(t, "tag", "new")
			f.git(t, "checkout", "-q", "--detach", c.from)
			if c.unstage != "" {
				f.git(t, "rm", "-rq", "--cached", c.unstage)
			}
			if err := os.RemoveAll(filepath.Join(f.dir, c.place)); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(f.dir, c.place)), 0o755); err != nil {
				t.Fatal(err)
			}
			c.make(c.place)(t, f.dir)
			if c.stage {
				f.git(t, "add", "-A", "--", c.place)
			}
			if c.ignore != "" {
				f.write(t, "deep/.gitignore", c.ignore+"\n")
			}
			toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
			raw, _ := json.Marshal(map[string]any{"commit": c.to})
			_, terr := open(t, toolDir).set.Call(context.Background(), "git_checkout", raw)
			_, gout, ok := gitAt(t, gitDir, nil, "checkout", "-q", "--detach", c.to)
			if (terr != nil) == ok {
				t.Fatalf("tool error %v, git ok %v: %s", terr, ok, gout)
			}
			if te, isTool := terr.(*tools.Error); isTool && strings.TrimSpace(te.Message) != gitMessage(gout) {
				t.Fatalf("refusal differs from git:\n--- ours\n%s\n--- git\n%s", te.Message, gout)
			}
			view := func(dir string) string {
				st, _ := gittest.GitErr(dir, "status", "--porcelain=2", "-b", "-uall", "--ignored")
				ls, _ := gittest.GitErr(dir, "ls-files", "-s")
				var kinds strings.Builder
				for _, p := range []string{"deep", "deep/er", "deep/er/a", "deep/c"} {
					kinds.WriteString(p + ": ")
					if info, err := os.Lstat(filepath.Join(dir, p)); err != nil {
						kinds.WriteString("missing\n")
					} else {
						kinds.WriteString(info.Mode().Type().String() + "\n")
					}
				}
				return st + ls + kinds.String()
			}
			same(t, "state after git_checkout", view(toolDir), view(gitDir))
		})
	}
}

// TestRegressSwitchFileGivesWayToDirectory: a tracked file the switch
// deletes is no untracked file in the way of the files the target puts
// below its path (check_ok_to_remove finds it removed in the result),
// unless it has local changes, which git then names twice: as a local
// change and as an untracked file the switch would overwrite.
func TestRegressSwitchFileGivesWayToDirectory(t *testing.T) {
	for _, dirty := range []bool{false, true} {
		f := newRepo(t)
		f.write(t, "deep", "file\n")
		f.commitAll(t, "file")
		f.git(t, "tag", "file")
		f.git(t, "rm", "-q", "deep")
		f.write(t, "deep/er/a", "a\n")
		f.write(t, "deep/er/b", "b\n")
		f.commitAll(t, "dir")
		f.git(t, "checkout", "-q", "--detach", "file")
		if dirty {
			f.write(t, "deep", "changed\n")
		}
		toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
		_, terr := open(t, toolDir).set.Call(context.Background(), "git_checkout", []byte(`{"commit":"main"}`))
		_, gout, ok := gitAt(t, gitDir, nil, "checkout", "-q", "--detach", "main")
		if (terr != nil) == ok {
			t.Fatalf("dirty %v: tool error %v, git ok %v: %s", dirty, terr, ok, gout)
		}
		if te, isTool := terr.(*tools.Error); isTool && strings.TrimSpace(te.Message) != gitMessage(gout) {
			t.Fatalf("refusal differs from git:\n--- ours\n%s\n--- git\n%s", te.Message, gout)
		}
		view := func(dir string) string {
			st, _ := gittest.GitErr(dir, "status", "--porcelain=2", "-b", "-uall")
			ls, _ := gittest.GitErr(dir, "ls-files", "-s")
			return st + ls
		}
		same(t, "state after git_checkout", view(toolDir), view(gitDir))
	}
}
