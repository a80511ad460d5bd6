package gittools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

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
