package kernel

import (
	"context"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestToolCommitIsGitLog: find_tools' commit and Kernel.ToolCommit are
// each tool's last change as `git log -1 --format=%H -- PATH` prints it,
// after writes by the kernel and one by plain git, including tools the
// later commits did not touch (so HEAD is not the answer).
func TestToolCommitIsGitLog(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	k := bootKernel(t, remote, false, WithSetting("git.refresh_interval", "0"))
	write := func(p, body string) {
		t.Helper()
		call(t, k, "write_file", map[string]string{"path": p, "content": "/** Widget " + body + ". */\nexport default () => \"" + body + "\";\n"})
	}
	write("tools/widget/a.ts", "a1")
	write("tools/widget/b.ts", "b1")
	write("tools/widget/a.ts", "a2")

	clone := gittest.Clone(t, remote)
	gittest.WriteFile(t, clone, "tools/widget/b.ts", "/** Widget b by git. */\nexport default () => \"b2\";\n")
	gittest.WriteFile(t, clone, "tools/widget/c.ts", "/** Widget c by git. */\nexport default () => \"c1\";\n")
	gittest.Git(t, clone, "add", "-A")
	gittest.Git(t, clone, "commit", "-q", "-m", "widgets by plain git")
	gittest.Git(t, clone, "push", "-q", "origin", "HEAD:main")

	write("tools/widget/d.ts", "d1")

	want := map[string]string{}
	for _, p := range []string{"tools/widget/a.ts", "tools/widget/b.ts", "tools/widget/c.ts", "tools/widget/d.ts"} {
		want[p] = strings.TrimSpace(gittest.Git(t, remote, "log", "-1", "--format=%H", "main", "--", p))
	}
	if want["tools/widget/a.ts"] == want["tools/widget/d.ts"] || want["tools/widget/b.ts"] != want["tools/widget/c.ts"] {
		t.Fatalf("the rig's history is not what the test needs: %v", want)
	}
	res := call(t, k, "find_tools", map[string]any{"query": "widget", "limit": 10})
	got := map[string]string{}
	for _, f := range res.Value.([]tools.FoundTool) {
		got[f.Path] = f.Commit
	}
	for p, c := range want {
		if got[p] != c {
			t.Errorf("find_tools %s: commit %q, git log says %s", p, got[p], c)
		}
		if kc := k.ToolCommit(context.Background(), p); kc != c {
			t.Errorf("ToolCommit %s: %q, git log says %s", p, kc, c)
		}
	}
	if c := k.ToolCommit(context.Background(), "tools/widget/none.ts"); c != "" {
		t.Errorf("ToolCommit of no tool: %q", c)
	}
}
