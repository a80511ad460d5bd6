package integration

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/kernel"
)

// rootWithUnwrittenFile leaves a root whose kernel persisted over another
// agent's commit and stopped without writing that agent's file
// (tools/a/x.ts): what a short-lived host leaves.
func rootWithUnwrittenFile(t *testing.T) (remote, root string) {
	t.Helper()
	remote = gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
	root = t.TempDir()
	boot := func(dir string) *kernel.Kernel {
		k, err := kernel.New(context.Background(), kernel.WithRoot(dir), kernel.WithEnviron(kernelEnv(remote)))
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Boot(context.Background()); err != nil {
			t.Fatal(err)
		}
		return k
	}
	a, b := boot(t.TempDir()), boot(root)
	for _, w := range []struct {
		k *kernel.Kernel
		f string
	}{{a, "tools/a/x.ts"}, {b, "tools/b/y.ts"}} {
		k, f := w.k, w.f
		raw, _ := json.Marshal(map[string]string{"path": f, "content": "/** " + f + ". */\nexport default () => 'from " + f + "';\n"})
		if _, err := k.Call(context.Background(), "write_file", raw); err != nil {
			t.Fatal(err)
		}
		if err := k.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := gittest.Git(t, root, "ls-files", "-v", "tools/a"); got != "S tools/a/x.ts\n" {
		t.Fatalf("the root's entry for the other agent's file: %q, want it unwritten", got)
	}
	return remote, root
}

// TestCLISeesFilesLeftUnwritten: tgp call and tgp serve on such a root
// read the file, and a root the CLI leaves holds it on disk.
func TestCLISeesFilesLeftUnwritten(t *testing.T) {
	t.Run("call", func(t *testing.T) {
		remote, root := rootWithUnwrittenFile(t)
		cmd := exec.Command(tgpBin, "call", "read_file", `{"path":"tools/a/x.ts"}`, "--root", root)
		cmd.Env = kernelEnv(remote)
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), "from tools/a/x.ts") {
			t.Fatalf("tgp call read_file: %v %s", err, out)
		}
		if got := gittest.Git(t, root, "ls-files", "-v", "tools/a"); got != "H tools/a/x.ts\n" {
			t.Fatalf("after tgp call: %q, want the file written", got)
		}
	})
	t.Run("serve", func(t *testing.T) {
		remote, root := rootWithUnwrittenFile(t)
		cmd := exec.Command(tgpBin, "serve", "--root", root)
		cmd.Env = kernelEnv(remote)
		cs := mcpSession(t, &mcp.CommandTransport{Command: cmd})
		for name, args := range map[string]map[string]any{
			"list_files": {"dir": "tools"},
			"grep_files": {"pattern": "from tools/a"},
		} {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "tools/a/x.ts") {
				t.Fatalf("%s over MCP: %v %+v", name, err, res)
			}
		}
	})
}
