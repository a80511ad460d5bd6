package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestServeSeesToolsOtherProcessesPush: `tgp serve` (one OS
// process, over MCP) answers find_tools and read_file with the tools
// another OS process (`tgp call`) pushed after it booted, over a local
// remote and smart HTTP; with refresh_interval off it does not; a local
// edit on a file the other process changed is kept and the answer says it
// may be stale.
func TestServeSeesToolsOtherProcessesPush(t *testing.T) {
	root := t.TempDir()
	bare := filepath.Join(root, "tools.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", bare)
	gittest.Git(t, bare, "config", "http.receivepack", "true")
	srv := gittest.NewHTTPServer(t, root, "")
	for name, remote := range map[string]string{"file": "file://" + bare, "http": srv.URL("tools.git")} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			push := func(path, content string) {
				t.Helper()
				args, _ := json.Marshal(map[string]string{"path": path, "content": content})
				cmd := exec.Command(tgpBin, "call", "write_file", string(args), "--root", t.TempDir())
				cmd.Env = kernelEnv(remote)
				if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `"ok":true`) {
					t.Fatalf("tgp call write_file: %v\n%s", err, out)
				}
			}
			prefix := "tools/" + name + "/"
			push(prefix+"seed.ts", "/** Seed. */\nexport default () => 0;\n")
			serve := func(interval string) (*mcp.ClientSession, string) {
				dir := t.TempDir()
				cmd := exec.Command(tgpBin, "serve", "--root", dir)
				cmd.Env = append(kernelEnv(remote), "TGP_GIT_REFRESH_INTERVAL="+interval)
				return mcpSession(t, &mcp.CommandTransport{Command: cmd}), dir
			}
			callText := func(cs *mcp.ClientSession, tool string, args map[string]any) (string, map[string]any) {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %+v", tool, err, res)
				}
				sc, _ := res.StructuredContent.(map[string]any)
				return res.Content[0].(*mcp.TextContent).Text, sc
			}
			fresh, freshRoot := serve("0")
			off, _ := serve("off")
			callText(fresh, "find_tools", map[string]any{"query": "seed"}) // both booted before the push
			callText(off, "find_tools", map[string]any{"query": "seed"})

			push(prefix+"kelvin.ts", "/** Converts kelvin to celsius. */\nconst ZERO_C = 273.15;\nexport default (k: number) => k - ZERO_C;\n")
			if text, _ := callText(fresh, "find_tools", map[string]any{"query": "kelvin celsius"}); !strings.Contains(text, prefix+"kelvin.ts") {
				t.Fatalf("interval 0: find_tools after another process pushed: %s", text)
			}
			if text, _ := callText(fresh, "read_file", map[string]any{"path": prefix + "kelvin.ts"}); !strings.Contains(text, "273.15") {
				t.Fatalf("interval 0: read_file: %s", text)
			}
			if text, _ := callText(off, "find_tools", map[string]any{"query": "kelvin celsius"}); strings.Contains(text, prefix+"kelvin.ts") {
				t.Fatalf("interval off: refreshed anyway: %s", text)
			}

			// A local edit in the serving root on a file another process
			// then changes: kept, and the answer says it may be stale.
			if err := os.WriteFile(filepath.Join(freshRoot, filepath.FromSlash(prefix+"seed.ts")), []byte("/** Seed, edited locally. */\nexport default () => 1;\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			push(prefix+"seed.ts", "/** Seed, changed remotely. */\nexport default () => 2;\n")
			text, sc := callText(fresh, "read_file", map[string]any{"path": prefix + "seed.ts"})
			if !strings.Contains(text, "edited locally") || !strings.Contains(jsonString(sc["stale"]), "local edits") {
				t.Fatalf("local edit: %s (structured %v)", text, sc)
			}
		})
	}
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }
