package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestReadmeFlowWithGlobalIdentity runs the README's "Using it" commands
// as a new user would: nothing but a global git identity (~/.gitconfig),
// no TGP_* variables, no git.author. Every commit names that identity.
// Then the same write from a minimal environment (an MCP host: no HOME)
// commits as the bot instead of failing.
func TestReadmeFlowWithGlobalIdentity(t *testing.T) {
	gittest.RequireGit(t)
	remote := gittest.BareRemote(t)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Readme User\n\temail = readme@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	run := func(env []string, stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(tgpBin, args...)
		cmd.Dir, cmd.Env = project, env
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tgp %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(env, "", "init", "--remote", remote)
	run(env, "", "boot")
	out := run(env, "", "call", "write_file", `{"path":"tools/add.ts","content":"/** Adds. */\nexport default (a: {x: number; y: number}) => a.x + a.y;\n"}`)
	var res struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.OK {
		t.Fatalf("write_file: %s", out)
	}
	if got := gittest.Git(t, remote, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "main"); got != "Readme User <readme@example.com>|Readme User <readme@example.com>\n" {
		t.Fatalf("commit identity %q, want the global one", got)
	}
	run(env, "", "check")
	if out := run(env, "", "exec", "tools/add.ts", "--args", `{"x":1,"y":2}`); !strings.Contains(out, "3") {
		t.Fatalf("exec: %s", out)
	}
	if out := run(env, "", "tools", "find", "add numbers"); !strings.Contains(out, "tools/add.ts") {
		t.Fatalf("find: %s", out)
	}
	if out := run(env, "", "schema", "--format", "openai"); !strings.Contains(out, `"write_file"`) {
		t.Fatalf("schema: %s", out[:min(len(out), 300)])
	}
	if out := run(env, `{"request_id":"1","action":"git_status","payload":{}}`+"\n", "agent"); !strings.Contains(out, `"request_id":"1"`) {
		t.Fatalf("agent: %s", out)
	}

	// An MCP host's minimal environment: no HOME, no identity anywhere.
	bare := []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	out = run(bare, "", "call", "write_file", `{"path":"tools/sub.ts","content":"/** Subtracts. */\nexport default (a: {x: number; y: number}) => a.x - a.y;\n"}`)
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.OK {
		t.Fatalf("write_file without any identity: %s", out)
	}
	if got := gittest.Git(t, remote, "log", "-1", "--format=%an <%ae>", "main"); got != "tgp-bot[bot] <tgp-bot@users.noreply.github.com>\n" {
		t.Fatalf("commit identity with nothing configured %q, want the bot", got)
	}
}
