package kernel

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/sandbox"
)

// Two of seed 003's zod schemas (src/types.ts GitConfigSchema and
// src/tools/exec.ts ExecToolParams), ported as agent tools.
var seed003Tools = map[string]string{
	"tools/git_config.ts": `import { z } from 'zod';

// --- Git Configuration Schema --- (seed 003, src/types.ts)
export const GitConfigSchema = z.object({
  provider: z.enum(['github', 'gitlab', 'bitbucket', 'local']),
  repo: z.string().min(1, "Repository name is required"),
  branch: z.string().default('main'),
  apiBaseUrl: z.string().url().default('https://api.github.com'),
  auth: z.object({
    token: z.string().min(1, "Git auth token is required"),
    user: z.string().default('tgp-bot[bot]'),
    email: z.string().email().optional(), // the seed's default address: check_tool's no-email rule
  }),
});
export type GitConfig = z.infer<typeof GitConfigSchema>;

/** Validates a git configuration and fills its defaults. */
export default function (input: unknown): GitConfig | string[] {
  const r = GitConfigSchema.safeParse(input);
  return r.success ? r.data : r.error.issues.map((i) => i.path.join('.') + ': ' + i.message);
}
`,
	"tools/exec_params.ts": `import { z } from 'zod';
import { addDays, format } from 'date-fns';

// seed 003, src/tools/exec.ts
export const ExecToolParams = z.object({
  path: z.string().describe('The relative path of the tool to execute'),
  args: z.record(z.unknown()).describe('The arguments to pass to the tool'),
});

const START = Date.UTC(2024, 11, 30);
const GRACE_DAYS = 3;

/** Checks exec_tool parameters and stamps a due date. */
export default function (input: unknown) {
  const p = ExecToolParams.parse(input);
  return { path: p.path, keys: Object.keys(p.args).sort(), due: format(addDays(new Date(START), GRACE_DAYS), 'yyyy-MM-dd') };
}
`,
}

// TestBuiltinZodAndDateFns: with the default configuration,
// in a memory root with no node_modules anywhere, tools importing zod and
// date-fns pass check_tool and run under exec_tool.
func TestBuiltinZodAndDateFns(t *testing.T) {
	// Loading both bundles under -race took longer than the default 5 s
	// on a loaded machine: what is checked is that they load.
	k := bootKernel(t, gittest.BareRemote(t), true, WithSetting("sandbox.timeout", "2m"))
	for p, src := range seed003Tools {
		call(t, k, "write_file", map[string]string{"path": p, "content": src})
		rep := jsonOf(call(t, k, "check_tool", map[string]string{"path": p}).Value)
		if !strings.HasPrefix(rep, `{"valid":true`) {
			t.Fatalf("check_tool %s: %s", p, rep)
		}
	}
	run := func(p string, args any) *sandbox.Outcome {
		t.Helper()
		return call(t, k, "exec_tool", map[string]any{"path": p, "args": args}).Value.(*sandbox.Outcome)
	}
	out := run("tools/git_config.ts", map[string]any{"provider": "github", "repo": "acme/tools", "auth": map[string]any{"token": "t"}})
	if got := jsonOf(out.Result); !out.Success || got != `{"apiBaseUrl":"https://api.github.com","auth":{"token":"t","user":"tgp-bot[bot]"},"branch":"main","provider":"github","repo":"acme/tools"}` {
		t.Fatalf("defaults: %s %+v", got, out.Error)
	}
	out = run("tools/git_config.ts", map[string]any{"provider": "svn", "repo": "", "auth": map[string]any{"token": "t", "email": "nope"}})
	if got := jsonOf(out.Result); !out.Success || !strings.Contains(got, "provider: Invalid enum value") || !strings.Contains(got, "repo: Repository name is required") || !strings.Contains(got, "auth.email: Invalid email") {
		t.Fatalf("errors: %s %+v", got, out.Error)
	}
	out = run("tools/exec_params.ts", map[string]any{"path": "tools/x.ts", "args": map[string]any{"b": 1, "a": 2}})
	if got := jsonOf(out.Result); !out.Success || got != `{"due":"2025-01-02","keys":["a","b"],"path":"tools/x.ts"}` {
		t.Fatalf("exec params: %s %+v", got, out.Error)
	}
}

// TestModulesDirConfig: sandbox.modules_dir lets a host provide packages
// without committing node_modules to the toolbox; without it the error
// says how to provide one.
func TestModulesDirConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "shout"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shout", "index.js"), []byte("module.exports = (s) => s.toUpperCase();\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shout", "package.json"), []byte(`{"name":"shout"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := "import shout from 'shout';\n/** Shouts. */\nexport default (a: { s: string }) => shout(a.s);\n"
	for _, withDir := range []bool{true, false} {
		opts := []Option{WithEnviron([]string{}), WithMemoryFS(), WithSetting("sandbox.allowed_imports", []any{"@tgp/std", "shout"})}
		if withDir {
			opts = append(opts, WithSetting("sandbox.modules_dir", dir))
		}
		k, err := New(context.Background(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Boot(context.Background()); err != nil {
			t.Fatal(err)
		}
		call(t, k, "write_file", map[string]string{"path": "tools/s.ts", "content": tool})
		out := call(t, k, "exec_tool", map[string]any{"path": "tools/s.ts", "args": map[string]any{"s": "hi"}}).Value.(*sandbox.Outcome)
		switch {
		case withDir && (!out.Success || out.Result != "HI"):
			t.Fatalf("with modules_dir: %s", jsonOf(out))
		case !withDir && (out.Success || !strings.Contains(out.Error.Message, "sandbox.modules_dir")):
			t.Fatalf("without modules_dir: %s", jsonOf(out))
		}
		_ = k.Shutdown(context.Background())
	}
}
