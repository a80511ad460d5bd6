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

// tsClientDir holds the official MCP TypeScript SDK client (pinned in
// package.json and package-lock.json; scripts/deps.sh installs it).
const tsClientDir = "mcpjs"

// ensureTSClient installs the TypeScript client's packages when they are
// missing (npm ci: exactly the lock file; later runs find them in place).
func ensureTSClient(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed: run `make deps` (scripts/deps.sh installs nodejs and npm)")
	}
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = tsClientDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", tsClientDir, err, out)
	}
}

type tsToolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

func (r tsToolResult) text() string {
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// TestTypeScriptClientApprovesScopeExpansion: the official MCP
// TypeScript SDK client declares elicitation; tgp serve asks it through
// elicitation/create; the user allows once, and the refused command then
// runs once. A dangerous command allowed once runs once: the next rm is
// asked about again (and denied).
func TestTypeScriptClientApprovesScopeExpansion(t *testing.T) {
	ensureTSClient(t)
	remote := gittest.SeedRemote(t, map[string]string{"notes/a.txt": "a\n", "notes/b.txt": "b\n"})
	root := filepath.Join(t.TempDir(), "root")
	env := map[string]string{}
	for _, kv := range kernelEnv(remote) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"name": name, "arguments": args}
	}
	shell := func(line string) map[string]any { return call("shell", map[string]any{"command": line}) }
	plan := map[string]any{
		"command": tgpBin, "args": []string{"serve", "--root", root}, "env": env,
		"answers": []string{"allow_once", "allow_once", "deny"},
		"calls": []any{
			shell("id -u"),
			call("request_scope_expansion", map[string]any{"command": "id", "category": "read_only", "reason": "print the uid"}),
			shell("id -u"),
			shell("id -u"),
			call("request_scope_expansion", map[string]any{"command": "rm", "reason": "remove the notes"}),
			shell("rm notes/a.txt"),
			shell("rm notes/b.txt"),
		},
	}
	raw, _ := json.Marshal(plan)
	cmd := exec.Command("node", "client.mjs", string(raw))
	cmd.Dir = tsClientDir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var got struct {
		Results      []tsToolResult   `json:"results"`
		Elicitations []map[string]any `json:"elicitations"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	r := got.Results
	if len(r) != 7 {
		t.Fatalf("%d results", len(r))
	}
	if !r[0].IsError || !strings.Contains(r[0].text(), "command_not_allowed") {
		t.Fatalf("id before: %+v", r[0])
	}
	if r[1].IsError || !strings.Contains(r[1].text(), `"decision":"allow_once"`) {
		t.Fatalf("expansion: %+v", r[1])
	}
	if r[2].IsError || !strings.Contains(r[2].text(), `"exit_code":0`) {
		t.Fatalf("id allowed once: %+v", r[2])
	}
	if !r[3].IsError || !strings.Contains(r[3].text(), "command_not_allowed") {
		t.Fatalf("id the call after: %+v", r[3])
	}
	if r[4].IsError || !strings.Contains(r[4].text(), `"key":"shell.categories.dangerous"`) {
		t.Fatalf("rm expansion: %+v", r[4])
	}
	if r[5].IsError {
		t.Fatalf("rm allowed once: %+v", r[5])
	}
	if !r[6].IsError || !strings.Contains(r[6].text(), "approval_required") {
		t.Fatalf("rm the call after: %+v", r[6])
	}
	if _, err := os.Stat(filepath.Join(root, "notes/a.txt")); !os.IsNotExist(err) {
		t.Fatalf("notes/a.txt: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/b.txt")); err != nil {
		t.Fatalf("notes/b.txt: %v", err)
	}
	// Three questions: the two expansions (the first offers no
	// add_to_scope: tgp serve here has no configuration file) and the
	// second rm.
	e := got.Elicitations
	if len(e) != 3 || !strings.Contains(e[0]["message"].(string), `"id"`) || !strings.Contains(e[0]["message"].(string), "print the uid") ||
		!strings.Contains(e[2]["message"].(string), "rm notes/b.txt") {
		t.Fatalf("elicitations: %v", e)
	}
	schema, _ := json.Marshal(e[0]["requestedSchema"])
	if !strings.Contains(string(schema), `"enum":["allow_once","deny"]`) {
		t.Fatalf("schema: %s", schema)
	}
	if s := gittest.Git(t, remote, "ls-tree", "-r", "--name-only", "main"); strings.Contains(s, "notes/a.txt") || !strings.Contains(s, "notes/b.txt") {
		t.Fatalf("remote tree: %s", s)
	}
}
