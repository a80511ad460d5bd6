package gittools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestRegressCommitSummaryAsGit: git_commit prints git commit's summary
// (sequencer.c print_commit_summary) for the same commit, hash included:
// renames detected whatever diff.renames says, "mode change" lines, a
// shortstat that counts a binary file but not its bytes and prints both
// counts when both are zero, " Author:" when the author is not the
// committer, and no diff at all for a merge. With diff.relative, run in
// a subdirectory, only the changes under it (full paths in the summary
// lines, a rename into it a creation, no stat line when none; seed
// 700229: a file replaced by a directory of the same name, run inside).
func TestRegressCommitSummaryAsGit(t *testing.T) {
	dates := []string{"GIT_AUTHOR_DATE=1700500000 +0100", "GIT_COMMITTER_DATE=1700500000 +0100"}
	base := func(t *testing.T) *fixture {
		f := newRepo(t)
		f.write(t, "a.go", "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 2\n}\n")
		f.write(t, "run.sh", "echo hi\n")
		f.write(t, "img.bin", "\x00\x01\x02")
		f.write(t, "docs/readme.md", "# docs\n")
		f.commitAll(t, "base")
		return f
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		env   []string
		wd    string
	}{
		{"mode-only", func(t *testing.T, f *fixture) {
			chmod(t, f, "run.sh", 0o755)
		}, nil, ""},
		{"rename-exact", func(t *testing.T, f *fixture) {
			f.git(t, "mv", "a.go", "b.go")
		}, nil, ""},
		{"rename-dir-edit-mode", func(t *testing.T, f *fixture) {
			f.git(t, "mv", "a.go", "docs/a.go")
			f.write(t, "docs/a.go", "package a\n\nfunc A() int {\n\treturn 10\n}\n\nfunc B() int {\n\treturn 2\n}\n")
			chmod(t, f, "docs/a.go", 0o755)
		}, nil, ""},
		{"renames-off", func(t *testing.T, f *fixture) {
			f.git(t, "config", "diff.renames", "false")
			f.git(t, "mv", "run.sh", "go.sh")
		}, nil, ""},
		{"binary", func(t *testing.T, f *fixture) {
			f.write(t, "img.bin", "\x00\x01\x02\x03")
			f.write(t, "new.bin", "\x00x")
		}, nil, ""},
		{"typechange-delete", func(t *testing.T, f *fixture) {
			mustRemove(t, filepath.Join(f.dir, "run.sh"))
			if err := os.Symlink("a.go", filepath.Join(f.dir, "run.sh")); err != nil {
				t.Fatal(err)
			}
			mustRemove(t, filepath.Join(f.dir, "docs/readme.md"))
		}, nil, ""},
		{"author", func(t *testing.T, f *fixture) {
			f.write(t, "a.go", "package a\n")
		}, []string{"GIT_AUTHOR_NAME=Someone Else", "GIT_AUTHOR_EMAIL=else@example.com", "GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com"}, ""},
		{"merge", func(t *testing.T, f *fixture) {
			f.git(t, "checkout", "-q", "-b", "side")
			f.write(t, "side.txt", "side\n")
			f.commitAll(t, "side")
			f.git(t, "checkout", "-q", "main")
			f.write(t, "main.txt", "main\n")
			f.commitAll(t, "main")
			f.git(t, "merge", "-q", "--no-commit", "side")
		}, nil, ""},
		{"relative", func(t *testing.T, f *fixture) {
			f.git(t, "config", "diff.relative", "true")
			f.write(t, "docs/readme.md", "# docs\nmore\n")
			f.write(t, "a.go", "package a\n")
		}, nil, "docs"},
		{"relative-nothing-under", func(t *testing.T, f *fixture) {
			f.git(t, "config", "diff.relative", "true")
			f.write(t, "a.go", "package a\n")
		}, nil, "docs"},
		{"relative-rename-in", func(t *testing.T, f *fixture) {
			f.git(t, "config", "diff.relative", "true")
			f.git(t, "mv", "a.go", "docs/a.go")
		}, nil, "docs"},
		{"relative-file-to-dir", func(t *testing.T, f *fixture) {
			f.git(t, "config", "diff.relative", "true")
			mustRemove(t, filepath.Join(f.dir, "run.sh"))
			f.write(t, "run.sh/data.txt", "data\n")
		}, nil, "run.sh"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := base(t)
			c.setup(t, f)
			f.git(t, "add", "-A")
			toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
			env := append(append([]string{}, dates...), c.env...)
			args := map[string]any{"type": "feat", "message": "the change"}
			if c.wd != "" {
				args["working_dir"] = c.wd
			}
			raw, _ := json.Marshal(args)
			res, err := openEnv(t, toolDir, env...).set.Call(context.Background(), "git_commit", raw)
			if err != nil {
				t.Fatal(err)
			}
			out, errOut, ok := gitAt(t, filepath.Join(gitDir, c.wd), env, "commit", "-m", "feat: the change")
			if !ok {
				t.Fatal(errOut)
			}
			same(t, "commit summary", res.Value.(string)+"\n", out)
		})
	}
}

func chmod(t *testing.T, f *fixture, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(f.dir, p), mode); err != nil {
		t.Fatal(err)
	}
}
