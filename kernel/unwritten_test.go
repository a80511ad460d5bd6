package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestReadsSeeOtherAgentsFiles: a persist that replays on another agent's
// commit leaves that agent's new file unwritten in the root (the
// repository writes it when something reads the root); every tool that
// reads the root sees it all the same, and write_file over it sees it
// existed.
func TestReadsSeeOtherAgentsFiles(t *testing.T) {
	const other = "/** From a. */\nexport default () => 'from a';\n"
	cases := []struct {
		tool string
		args map[string]any
		want string
		not  string // nor this
	}{
		{"read_file", map[string]any{"path": "tools/a/x.ts"}, "from a", ""},
		{"list_files", map[string]any{"dir": "tools"}, "tools/a/x.ts", ""},
		{"list_dir", map[string]any{"path": "tools"}, "x.ts", ""},
		{"grep_files", map[string]any{"pattern": "from a"}, "tools/a/x.ts", ""},
		{"shell", map[string]any{"command": "cat tools/a/x.ts", "workdir": "."}, "from a", ""},
		{"git_status", map[string]any{}, "## main...origin/main", "tools/a"},
		{"write_file", map[string]any{"path": "tools/a/x.ts", "content": other}, `"path":"tools/a/x.ts"`, ""},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
			a := bootKernel(t, remote, false)
			b := bootKernel(t, remote, false)
			call(t, a, "write_file", map[string]string{"path": "tools/a/x.ts", "content": other})
			call(t, b, "write_file", map[string]string{"path": "tools/b/y.ts", "content": "/** B. */\nexport default () => 'b';\n"})
			if n := b.Repo().Unwritten(); n != 1 {
				t.Fatalf("b left %d files unwritten, want a's one", n)
			}
			res := call(t, b, c.tool, c.args)
			out, _ := json.Marshal(res.Value)
			if s, ok := res.Value.(string); ok {
				out = []byte(s)
			}
			if !strings.Contains(string(out), c.want) || c.not != "" && strings.Contains(string(out), c.not) {
				t.Fatalf("%s: %s, want %q in it (and not %q)", c.tool, out, c.want, c.not)
			}
			if w, ok := res.Value.(tools.WriteResult); ok && w.Created {
				t.Fatalf("write_file over a's file says it created it: %+v", w)
			}
			if n := b.Repo().Unwritten(); n != 0 {
				t.Fatalf("%d files unwritten after %s", n, c.tool)
			}
		})
	}
}

// TestShutdownAndTheUnwrittenFiles: by default Shutdown leaves the files
// no call read unwritten (skip-worktree entries, git status clean) and the
// next kernel's first read writes them; WithWholeRootAtShutdown (the
// CLI's) writes them at Shutdown.
func TestShutdownAndTheUnwrittenFiles(t *testing.T) {
	for _, whole := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "whole"}[whole], func(t *testing.T) {
			remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
			a := bootKernel(t, remote, false)
			root := t.TempDir()
			opts := []Option{WithEnviron([]string{}), WithRoot(root), WithSetting("git.remote", remote),
				WithSetting("git.author.name", "Agent"), WithSetting("git.author.email", "agent@example.com")}
			if whole {
				opts = append(opts, WithWholeRootAtShutdown())
			}
			b, err := New(context.Background(), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Boot(context.Background()); err != nil {
				t.Fatal(err)
			}
			call(t, a, "write_file", map[string]string{"path": "tools/a/x.ts", "content": "export default 1;\n"})
			call(t, b, "write_file", map[string]string{"path": "tools/b/y.ts", "content": "export default 2;\n"})
			if n := b.Repo().Unwritten(); n != 1 {
				t.Fatalf("b left %d files unwritten, want 1", n)
			}
			if err := b.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := map[bool]string{false: "S tools/a/x.ts\n", true: "H tools/a/x.ts\n"}[whole]
			if got := gittest.Git(t, root, "ls-files", "-v", "tools/a/x.ts"); got != want {
				t.Fatalf("ls-files -v: %q, want %q", got, want)
			}
			if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Fatalf("git status:\n%s", st)
			}
			c, err := New(context.Background(), opts[:5]...)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Boot(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer c.Shutdown(context.Background())
			if got := call(t, c, "read_file", map[string]string{"path": "tools/a/x.ts"}); !strings.Contains(fmt.Sprint(got.Value), "export default 1;") {
				t.Fatalf("read_file in the next kernel: %+v", got.Value)
			}
			if got := gittest.Git(t, root, "ls-files", "-v", "tools/a/x.ts"); got != "H tools/a/x.ts\n" {
				t.Fatalf("after the next kernel's read, ls-files -v: %q", got)
			}
		})
	}
}
