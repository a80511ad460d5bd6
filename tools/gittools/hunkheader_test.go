package gittools

import (
	"strings"
	"testing"
)

// TestRegressHunkHeaderCutAsGit: a hunk header ends before its first
// byte that does not start a whole UTF-8 character (sane_truncate_line):
// a function name cut at 80 bytes inside "é", a Latin-1 name.
func TestRegressHunkHeaderCutAsGit(t *testing.T) {
	f := newRepo(t)
	var body strings.Builder
	for i := 0; i < 10; i++ {
		body.WriteString("  line\n")
	}
	old := "func " + strings.Repeat("é", 40) + "x\n" + body.String() + "latin \xe9t\xe9 fn\n" + body.String()
	f.write(t, "a.txt", old)
	f.commitAll(t, "one")
	f.write(t, "a.txt", strings.ReplaceAll(old, "  line\n  line\n  line\n  line\n  line\n  line\n", "  line\n  line\n  line\n  line\n  line\n  LINE\n"))
	f = open(t, f.dir)
	compareTool(t, f, "git_diff", map[string]any{}, "", "diff")
	f.commitAll(t, "two")
	compareTool(t, f, "git_show", map[string]any{}, "", "show")
}
