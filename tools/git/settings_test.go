package git

import (
	"os"
	"path/filepath"
	"testing"
)

// Regressions shrunk from the differential suite once it set repository
// configuration: each setting changed git's output and the tools ignored
// it.
func TestRegressRepositorySettings(t *testing.T) {
	f := newRepo(t)
	f.write(t, "caf\u00e9.txt", "1\n2\n3\n")
	f.write(t, "run.sh", "echo\n")
	f.write(t, "src/deep.txt", "a\n")
	f.commitAll(t, "first")
	f.git(t, "tag", "v1")
	f.write(t, "caf\u00e9.txt", "1\n\n3\n")
	f.commitAll(t, "second")
	if err := os.Chmod(filepath.Join(f.dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(t, "src/deep.txt", "b\n")
	f.write(t, "new/dir/u.txt", "u\n")
	cases := []struct {
		key, value string
		tool       string
		args       map[string]any
		git        []string
	}{
		{"core.quotepath", "false", "git_status", map[string]any{}, []string{"status", "--porcelain=1", "-b"}},
		{"core.quotepath", "false", "git_diff", map[string]any{"from_ref": "HEAD~1", "to_ref": "HEAD", "stat": true}, []string{"diff", "--stat", "HEAD~1", "HEAD"}},
		{"core.filemode", "false", "git_status", map[string]any{}, []string{"status", "--porcelain=1", "-b"}},
		{"core.filemode", "false", "git_diff", map[string]any{}, []string{"diff"}},
		{"status.showUntrackedFiles", "all", "git_status", map[string]any{}, []string{"status", "--porcelain=1", "-b"}},
		{"status.showUntrackedFiles", "no", "git_status", map[string]any{"porcelain": false}, []string{"status"}},
		{"diff.noprefix", "true", "git_diff", map[string]any{}, []string{"diff"}},
		{"diff.mnemonicPrefix", "true", "git_diff", map[string]any{"cached": true}, []string{"diff", "--cached"}},
		{"diff.mnemonicPrefix", "true", "git_diff", map[string]any{"from_ref": "HEAD"}, []string{"diff", "HEAD"}},
		{"diff.context", "0", "git_show", map[string]any{}, []string{"show"}},
		{"diff.suppressBlankEmpty", "true", "git_show", map[string]any{}, []string{"show"}},
		{"diff.algorithm", "histogram", "git_show", map[string]any{"commit": "HEAD"}, []string{"show", "HEAD"}},
		{"diff.relative", "true", "git_diff", map[string]any{"working_dir": "src"}, []string{"-C", "src", "diff"}},
		{"format.pretty", "oneline", "git_log", map[string]any{}, []string{"log"}},
		{"format.pretty", "fuller", "git_show", map[string]any{"stat": true}, []string{"show", "--stat"}},
		{"log.date", "format:%Y/%m/%d %H", "git_log", map[string]any{}, []string{"log"}},
		{"log.date", "raw", "git_log", map[string]any{"format": "%ad|%cd"}, []string{"log", "--format=%ad|%cd"}},
		{"log.decorate", "full", "git_log", map[string]any{}, []string{"log"}},
		{"log.decorate", "short", "git_log", map[string]any{"oneline": true}, []string{"log", "--oneline"}},
		{"log.abbrevCommit", "true", "git_log", map[string]any{}, []string{"log"}},
		{"log.showRoot", "false", "git_show", map[string]any{"commit": "v1"}, []string{"show", "v1"}},
		{"core.abbrev", "12", "git_branch", map[string]any{}, []string{"branch", "-v"}},
		{"core.abbrev", "12", "git_diff", map[string]any{}, []string{"diff"}},
	}
	for _, c := range cases {
		f.git(t, "config", c.key, c.value)
		g := open(t, f.dir)
		same(t, c.key+"="+c.value+" "+c.tool, g.call(t, c.tool, c.args), f.git(t, c.git...))
		f.git(t, "config", "--unset", c.key)
	}
}

// core.filemode=false: git add keeps the index's mode for a file whose
// exec bit changed on disk, and stages a new executable as 100644.
func TestRegressAddKeepsModesWithoutFileMode(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a", "a\n")
	f.commitAll(t, "x")
	f.git(t, "config", "core.filemode", "false")
	f.write(t, "a", "b\n")
	f.write(t, "n", "n\n")
	for _, p := range []string{"a", "n"} {
		if err := os.Chmod(filepath.Join(f.dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g := open(t, f.dir)
	g.call(t, "git_add", map[string]any{"all": true})
	got := f.git(t, "ls-files", "-s")
	f.git(t, "add", "-A")
	same(t, "index after git_add", got, f.git(t, "ls-files", "-s"))
}
