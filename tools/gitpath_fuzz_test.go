package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// fuzzRepo is a worktree with a real repository in which each input's
// write is committed to a tree and judged by git.
type fuzzRepo struct {
	dir  string
	set  *tools.Set
	home string
}

func newFuzzRepo(t testing.TB) *fuzzRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed: it is the oracle")
	}
	r := &fuzzRepo{dir: t.TempDir(), home: t.TempDir()}
	if out, err := r.git("init", "-q"); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	f, err := vfs.NewOS(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	r.set = tools.NewSet(tools.WithClassifier(func(err error) tools.Kind {
		if errors.Is(err, vfs.ErrViolation) {
			return tools.KindSandboxViolation
		}
		return ""
	}))
	if err := r.set.Add(tools.FileTools(f, nil, tools.FileToolsConfig{})...); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *fuzzRepo) git(args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-c", "core.protectHFS=true", "-c", "core.protectNTFS=true", "--literal-pathspecs"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.home, "GIT_AUTHOR_NAME=f", "GIT_AUTHOR_EMAIL=f@x", "GIT_COMMITTER_NAME=f", "GIT_COMMITTER_EMAIL=f@x")
	return cmd.CombinedOutput()
}

// reset empties the worktree, the index and the object store, so that
// fsck judges this input's objects only.
func (r *fuzzRepo) reset(t *testing.T) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != ".git" {
			if err := os.RemoveAll(filepath.Join(r.dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	_ = os.Remove(filepath.Join(r.dir, ".git", "index"))
	objs, _ := os.ReadDir(filepath.Join(r.dir, ".git", "objects"))
	for _, o := range objs {
		if len(o.Name()) == 2 {
			_ = os.RemoveAll(filepath.Join(r.dir, ".git", "objects", o.Name()))
		}
	}
}

// FuzzWriteFilePath: whatever path an agent gives write_file, either the
// write is refused as a sandbox_violation (or the OS refuses the name, and
// nothing is written), or the file lands where git can add it and the tree
// holding it passes `git fsck --strict`.
func FuzzWriteFilePath(f *testing.F) {
	for _, p := range append(append([]string{}, hostilePaths...),
		"tools/x.ts", ".gitignore", ".gitmodules", ".gitattributes", "a\\b", "git~2/x", "...", "x/../y", "./z",
		"caf\u00e9/\u200c", "a b/\tc\n", ".GITMODULES", "gitmod~1", "~1234567/x", ".gitattributes/x", "GI7D29~1/y",
		"x\x00y", "", ".", "..", "/", "a//b", "a/", "a/./b", "\xff\xfe/.g\xffit", ".git\xff/x", "-rf", ":(glob)*", "*") {
		f.Add(p)
	}
	r := newFuzzRepo(f)
	f.Fuzz(func(t *testing.T, p string) {
		r.reset(t)
		args, _ := json.Marshal(map[string]string{"path": p, "content": "# fuzz\n"})
		res, err := r.set.Call(context.Background(), "write_file", args)
		if err != nil {
			var te *tools.Error
			var pe *fs.PathError
			switch {
			case errors.As(err, &te) && te.Kind == tools.KindSandboxViolation:
			case errors.As(err, &pe):
				// The OS refused the name (too long, say).
			case errors.As(err, &te) && te.Kind == tools.KindBadArgs && !strings.Contains(te.Message, "invalid path"):
				// Not a path at all to the schema (invalid UTF-8 in JSON, say).
			default:
				t.Fatalf("write_file(%q): %v, want sandbox_violation", p, err)
			}
			if out, _ := r.git("ls-files", "-o", "-z"); len(out) != 0 {
				t.Fatalf("write_file(%q) refused but left %q", p, out)
			}
			return
		}
		rel := res.Value.(tools.WriteResult).Path
		if out, err := r.git("add", "-f", "--", rel); err != nil {
			t.Fatalf("write_file(%q) wrote %q, git add refuses it: %v\n%s", p, rel, err, out)
		}
		tree, err := r.git("write-tree")
		if err != nil {
			t.Fatalf("write-tree: %v\n%s", err, tree)
		}
		if out, err := r.git("fsck", "--strict", "--no-dangling", "--no-progress"); err != nil || strings.Contains(string(out), "error") {
			t.Fatalf("write_file(%q) wrote %q; git fsck --strict on tree %s: %v\n%s", p, rel, tree, err, out)
		}
		if out, _ := r.git("ls-files", "-z"); !strings.Contains(string(out), rel+"\x00") {
			t.Fatalf("write_file(%q) wrote %q, the index holds %q", p, rel, out)
		}
	})
}
