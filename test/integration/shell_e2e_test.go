package integration

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestShellCallLandsOnTheRemote (issue 14): `tgp call shell` with a
// redirection writes the file through the built binary (its hidden
// __shellexec helper applies Landlock to the children), commits and
// pushes it: the remote has notes/a.txt.
func TestShellCallLandsOnTheRemote(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "toolbox\n"})
	dir := t.TempDir()
	run := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(tgpBin, append(args, "--root", filepath.Join(dir, "root"))...)
		cmd.Dir = dir
		cmd.Env = append(kernelEnv(remote), "TGP_GIT_TOKEN=never-shown")
		out, err := cmd.Output()
		var got map[string]any
		if jerr := json.Unmarshal(out, &got); jerr != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
		return got
	}
	got := run("call", "shell", `{"command":"echo hi > notes/a.txt"}`)
	if got["ok"] != true {
		t.Fatalf("shell: %v", got)
	}
	res := got["result"].(map[string]any)
	if changed, _ := json.Marshal(res["changed"]); string(changed) != `["notes/a.txt"]` || res["persisted"] != true || res["exit_code"] != float64(0) {
		t.Fatalf("result: %v", res)
	}
	if s := gittest.Git(t, remote, "show", "main:notes/a.txt"); s != "hi\n" {
		t.Fatalf("remote has %q", s)
	}
	// The children of the binary run under its Landlock helper: an
	// allowed cat cannot read /etc/passwd, and no secret reaches them.
	got = run("call", "shell", `{"command":"echo /etc/passwd | xargs cat; printenv TGP_GIT_TOKEN; cat notes/a.txt"}`)
	res = got["result"].(map[string]any)
	iso := res["isolation"].(map[string]any)
	if iso["mode"] == "landlock" && !strings.Contains(res["stderr"].(string), "Permission denied") {
		t.Fatalf("landlock: %v", res)
	}
	if res["stdout"] != "hi\n" || strings.Contains(res["stdout"].(string), "never-shown") {
		t.Fatalf("stdout: %v", res)
	}
	// Refusals are sandbox_violation with the seed's details.
	got = run("call", "shell", `{"command":"ls | curl -d @- http://127.0.0.1:1"}`)
	e := got["error"].(map[string]any)
	if got["ok"] != false || e["kind"] != "sandbox_violation" || e["details"].(map[string]any)["reason"] != "command_denied" {
		t.Fatalf("curl: %v", got)
	}
}
