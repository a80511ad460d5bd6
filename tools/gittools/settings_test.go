package gittools

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

// .gitattributes: binary, -diff, diff and drivers (configured and git's
// builtin hunk-header patterns) decide how a file's change prints.
func TestRegressDiffAttributesAndDrivers(t *testing.T) {
	f := newRepo(t)
	f.write(t, ".gitattributes", "*.go diff=golang\n*.py diff=python\n*.rs diff=rust\n*.md diff=markdown\n*.sh diff=bash\n*.java diff=java\n*.c diff=cpp\n*.dat binary\n*.nd -diff\n*.txt diff\n*.x diff=fn\n")
	f.write(t, "sub/.gitattributes", "*.nd diff\n")
	files := map[string]string{
		"a.go":      "package x\n\nfunc Foo(a int) {\n\tb := 1\n\tc := 2\n\td := 3\n\te := 4\n\tf := 5\n}\n",
		"a.py":      "class A:\n    def f(self):\n        a = 1\n        b = 2\n        c = 3\n        d = 4\n",
		"a.rs":      "pub fn main() {\n    let a = 1;\n    let b = 2;\n    let c = 3;\n    let d = 4;\n}\n",
		"a.md":      "# Title\n\ntext\nmore\nmore2\nmore3\nmore4\n",
		"a.sh":      "foo() {\n  a\n  b\n  c\n  d\n}\n",
		"A.java":    "public class A {\n  public void run(int x) {\n    a();\n    b();\n    c();\n    d();\n  }\n}\n",
		"a.c":       "int main(void)\n{\n  a;\n  b;\n  c;\n  d;\n}\n",
		"b.dat":     "text\n",
		"c.nd":      "l1\n",
		"sub/c.nd":  "l1\n",
		"n.txt":     "x\x00y\n",
		"f.x":       "let one = 1\n1\n2\n3\n4\n5\n",
		"plain.txt": "Plain header\n1\n2\n3\n4\n5\n",
	}
	for p, c := range files {
		f.write(t, p, c)
	}
	f.git(t, "config", "diff.fn.xfuncname", "^(let [a-z]+).*$")
	f.commitAll(t, "x")
	edit := map[string]string{
		"a.go": "package x\n\nfunc Foo(a int) {\n\tb := 1\n\tc := 2\n\td := 33\n\te := 4\n\tf := 5\n}\n",
		"a.py": "class A:\n    def f(self):\n        a = 1\n        b = 2\n        c = 3\n        d = 44\n",
		"a.rs": "pub fn main() {\n    let a = 1;\n    let b = 2;\n    let c = 3;\n    let d = 44;\n}\n",
		"a.md": "# Title\n\ntext\nmore\nmore2\nmore3\nMORE4\n", "a.sh": "foo() {\n  a\n  b\n  c\n  D\n}\n",
		"A.java": "public class A {\n  public void run(int x) {\n    a();\n    b();\n    c();\n    dd();\n  }\n}\n",
		"a.c":    "int main(void)\n{\n  a;\n  b;\n  c;\n  D;\n}\n", "b.dat": "text2\n", "c.nd": "l2\n", "sub/c.nd": "l2\n",
		"n.txt": "x\x00z\n", "f.x": "let one = 1\n1\n2\n3\n4\n55\n", "plain.txt": "Plain header\n1\n2\n3\n4\n55\n",
	}
	for p, c := range edit {
		f.write(t, p, c)
	}
	g := open(t, f.dir)
	same(t, "diff", g.call(t, "git_diff", map[string]any{}), f.git(t, "diff"))
	same(t, "diff --stat", g.call(t, "git_diff", map[string]any{"stat": true}), f.git(t, "diff", "--stat"))
	f.commitAll(t, "y")
	same(t, "show", g.call(t, "git_show", map[string]any{}), f.git(t, "show"))
}
