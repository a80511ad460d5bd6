package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/shell"
)

// TestMain makes the test binary the tgp binary when TGP_CMD_TEST_MAIN is
// set, so tests can start it as a sandbox worker.
func TestMain(m *testing.M) {
	// The shell tools start this binary as their Landlock helper.
	shell.ServeExecIfRequested()
	if os.Getenv("TGP_CMD_TEST_MAIN") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ()))
	}
	os.Exit(m.Run())
}

type callResult struct {
	OK        bool            `json:"ok"`
	Tool      string          `json:"tool"`
	Result    json.RawMessage `json:"result"`
	Truncated *bool           `json:"truncated"`
	Error     *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
}

// tgp runs the CLI in process with a clean environment.
func tgp(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	wd, _ := os.Getwd()
	if dir != "" {
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(wd)
	}
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb, []string{"HOME=" + t.TempDir()})
	return code, out.String(), errb.String()
}

func decodeCall(t *testing.T, out string) callResult {
	t.Helper()
	var r callResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not one JSON object: %q: %v", out, err)
	}
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("stdout has more than one line: %q", out)
	}
	return r
}

func TestCallContract(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "etc")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := tgp(t, "", "call", "read_file", `{"path":"hello.txt"}`, "--root", root)
	r := decodeCall(t, out)
	if code != 0 || !r.OK || r.Tool != "read_file" || r.Truncated == nil || *r.Truncated {
		t.Fatalf("code %d out %s", code, out)
	}
	if !strings.Contains(string(r.Result), `"content":"     1\thi\n"`) {
		t.Fatalf("result %s", r.Result)
	}
	for _, c := range []struct{ tool, args, kind, field string }{
		{"read_file", `{"path":"../../etc/passwd"}`, "sandbox_violation", ""},
		{"read_file", `{"path":"etc/passwd"}`, "sandbox_violation", ""},
		{"read_file", `{"path":"/etc/passwd"}`, "sandbox_violation", ""},
		{"read_file", `{"path":"a\u0000b"}`, "sandbox_violation", ""},
		{"list_dir", `{"bogus":1}`, "bad_args", "bogus"},
		{"read_file", `{"path":"nope.txt"}`, "not_found", ""},
		{"no_such_tool", `{}`, "not_found", ""},
		{"read_file", `not json`, "bad_args", ""},
	} {
		code, out, _ := tgp(t, "", "call", c.tool, c.args, "--root", root)
		r := decodeCall(t, out)
		wantCode := 1
		if c.args == `not json` {
			wantCode = 2 // a usage error (TestCallInvalidJSONIsUsageError)
		}
		if code != wantCode || r.OK || r.Error == nil || r.Error.Kind != c.kind {
			t.Fatalf("%s %s: code %d out %s", c.tool, c.args, code, out)
		}
		if c.field != "" && (r.Error.Field != c.field || !strings.Contains(r.Error.Message, c.field)) {
			t.Fatalf("error does not name %s: %s", c.field, out)
		}
	}
}

func TestCallWriteThenRead(t *testing.T) {
	root := t.TempDir()
	code, out, _ := tgp(t, "", "call", "write_file", `{"path":"tools/a.ts","content":"export default () => 1;\n"}`, "--root", root)
	if code != 0 {
		t.Fatalf("write: %d %s", code, out)
	}
	b, err := os.ReadFile(filepath.Join(root, "tools/a.ts"))
	if err != nil || string(b) != "export default () => 1;\n" {
		t.Fatalf("file %q %v", b, err)
	}
	code, out, _ = tgp(t, "", "call", "grep_files", `{"pattern":"export"}`, "--root", root)
	r := decodeCall(t, out)
	if code != 0 || string(r.Result) != `"tools/a.ts:1:export default () =\u003e 1;"` && string(r.Result) != `"tools/a.ts:1:export default () => 1;"` {
		t.Fatalf("grep: %s", out)
	}
}

func TestToolsListing(t *testing.T) {
	root := t.TempDir()
	code, out, _ := tgp(t, "", "tools", "--json", "--root", root)
	if code != 0 {
		t.Fatalf("code %d", code)
	}
	var defs []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"input_schema"`
		Annotations map[string]any `json:"annotations"`
	}
	if err := json.Unmarshal([]byte(out), &defs); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, d := range defs {
		names[d.Name] = true
		if d.Description == "" || d.InputSchema["type"] != "object" || d.InputSchema["additionalProperties"] != false || d.Annotations["risk"] == "" {
			t.Fatalf("incomplete definition %+v", d)
		}
	}
	for _, want := range []string{"list_files", "list_dir", "read_file", "write_file", "patch_file", "apply_patch", "grep_files", "delete_file"} {
		if !names[want] {
			t.Errorf("tool %s missing", want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	code, _, errOut := tgp(t, "", "call")
	if code != 2 || !strings.Contains(errOut, "tgp") {
		t.Fatalf("missing arg: code %d stderr %q", code, errOut)
	}
	code, _, _ = tgp(t, "", "tools", "--bogus-flag")
	if code != 2 {
		t.Fatalf("unknown flag: code %d", code)
	}
	code, out, _ := tgp(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "tgp ") {
		t.Fatalf("version: %d %q", code, out)
	}
}

func TestEveryCommandHasHelpWithExample(t *testing.T) {
	root := newRootCmd(&app{})
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" || c.Hidden {
			continue
		}
		if c.Short == "" || (c.Example == "" && c.Name() != "version") {
			t.Errorf("command %s lacks a short help or an example", c.Name())
		}
	}
}

// TestWorkerSubcommandSpeaksTheProtocol: `tgp __worker` answers a config
// frame with ready (the handshake sandbox.isolation: process waits for).
func TestWorkerSubcommandSpeaksTheProtocol(t *testing.T) {
	r := sandbox.New(sandbox.WithIsolation(sandbox.IsolationProcess), sandbox.WithWorkerCommand([]string{os.Args[0], sandbox.WorkerSubcommand}, "TGP_CMD_TEST_MAIN=1"))
	defer r.Close()
	out, err := r.Exec(context.Background(), sandbox.Request{Path: "t.ts", Source: []byte("export default () => 6 * 7;\n")})
	if err != nil || !out.Success || out.Result != float64(42) {
		t.Fatalf("%v %+v", err, out)
	}
}
