package gittools

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRegressDiffTakesStatCleanFilesFromTheIndex: a file committed with
// CRLF endings, then given eol=lf by a later .gitattributes, would
// convert to other content now, but its stat data still match the index,
// so git diff and git diff HEAD take the index's object unread and show
// nothing (git add --renormalize is what would stage the change). Once
// the file is touched, both read it and show the conversion. Found by
// the differential suite (seed 503). Within the second the index was
// written, the entry is racily clean and both read it.
func TestRegressDiffTakesStatCleanFilesFromTheIndex(t *testing.T) {
	f := newRepo(t)
	f.write(t, "deep/b.log", "eta\r\neta\r\n\r\n")
	f.write(t, "src/a.ts", "x\n")
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", "crlf")
	// A second later git status refreshes the index: the entry's mtime
	// is then in an earlier second than the index's, not racy.
	time.Sleep(1100 * time.Millisecond)
	f.git(t, "status", "--porcelain")
	f.write(t, ".gitattributes", "*.ts text\n*.log eol=lf\n")
	f = open(t, f.dir)
	for _, c := range []struct {
		args map[string]any
		git  []string
	}{
		{map[string]any{"name_only": true}, []string{"diff", "--name-only"}},
		{map[string]any{"paths": []string{"deep/b.log", ":(glob)src/*"}}, []string{"diff", "--", "deep/b.log", ":(glob)src/*"}},
		{map[string]any{"from_ref": "HEAD", "name_only": true}, []string{"diff", "--name-only", "HEAD"}},
		{map[string]any{"stat": true}, []string{"diff", "--stat"}},
	} {
		compareTool(t, f, "git_diff", c.args, "", c.git...)
	}

	// Touched: now both read it.
	now := time.Now().Add(time.Second)
	if err := os.Chtimes(filepath.Join(f.dir, "deep/b.log"), now, now); err != nil {
		t.Fatal(err)
	}
	compareTool(t, f, "git_diff", map[string]any{"name_only": true}, "", "diff", "--name-only")
	compareTool(t, f, "git_diff", map[string]any{}, "", "diff")
}

// TestRegressDiffFileReplacedByDirectory: a tracked file replaced by a
// directory is deleted for git diff, whatever the index's stat data say
// (the stat shortcut must not take a directory for the file). Found by
// the differential suite (seeds 2002, 2016, 2029-2031, 2038).
func TestRegressDiffFileReplacedByDirectory(t *testing.T) {
	f := newRepo(t)
	f.write(t, "main2.log", "bin\x00ary\n")
	f.write(t, "a.txt", "a\n")
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", "base")
	if err := os.Remove(filepath.Join(f.dir, "main2.log")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "main2.log/b.txt", "theta\n")
	f = open(t, f.dir)
	compareTool(t, f, "git_diff", map[string]any{"stat": true}, "", "diff", "--stat")
	compareTool(t, f, "git_diff", map[string]any{"name_only": true}, "", "diff", "--name-only")
	compareTool(t, f, "git_diff", map[string]any{}, "", "diff")
	compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD", "name_only": true}, "", "diff", "--name-only", "HEAD")
}
