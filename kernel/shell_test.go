package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/shelltools"
)

// diskKernel boots a kernel on a plain directory holding docs/d.md,
// notes/n.txt and tools/a.ts.
func diskKernel(t *testing.T, opts ...Option) (*Kernel, string) {
	t.Helper()
	root := t.TempDir()
	for p, c := range map[string]string{"docs/d.md": "# doc\n", "notes/n.txt": "note\n", "tools/a.ts": "export default 1;\n"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, err := New(context.Background(), append([]Option{WithEnviron([]string{}), WithRoot(root)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k, root
}

// shellCall runs the shell tool; it returns the result object or the
// tool error.
func shellCall(t *testing.T, k *Kernel, command, workdir string) (shelltools.ShellResult, *tools.Error) {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"command": command, "workdir": workdir})
	res, err := k.Call(context.Background(), "shell", raw)
	if err != nil {
		var te *tools.Error
		if !errors.As(err, &te) {
			t.Fatalf("shell %q: untyped error %v", command, err)
		}
		return shelltools.ShellResult{}, te
	}
	return res.Value.(shelltools.ShellResult), nil
}

func wantReason(t *testing.T, key, command string, te *tools.Error, reason string) {
	t.Helper()
	if te == nil || te.Kind != tools.KindSandboxViolation || te.Details["reason"] != reason {
		t.Fatalf("%s: %q: want sandbox_violation %s, got %+v", key, command, reason, te)
	}
}

func wantOK(t *testing.T, key, command string, res shelltools.ShellResult, te *tools.Error) {
	t.Helper()
	if te != nil || res.ExitCode != 0 {
		t.Fatalf("%s: %q by default: %+v %+v", key, command, te, res.Result)
	}
}

// TestShellConfigKeys: each key under shell: changes what the shell tool
// does (TestEveryConfigKeyHasABehaviourTest points here).
func TestShellConfigKeys(t *testing.T) {
	def, _ := diskKernel(t)
	t.Run("shell.categories.read_only", func(t *testing.T) {
		res, te := shellCall(t, def, "wc -l docs/d.md", ".")
		wantOK(t, "read_only", "wc", res, te)
		k, _ := diskKernel(t, WithSetting("shell.categories.read_only", []any{"ls"}))
		_, te = shellCall(t, k, "wc -l docs/d.md", ".")
		wantReason(t, "read_only [ls]", "wc", te, "command_not_allowed")
	})
	t.Run("shell.categories.safe_write", func(t *testing.T) {
		res, te := shellCall(t, def, "touch notes/new.txt", ".")
		wantOK(t, "safe_write", "touch", res, te)
		k, _ := diskKernel(t, WithSetting("shell.categories.safe_write", []any{"mkdir"}))
		_, te = shellCall(t, k, "touch notes/new.txt", ".")
		wantReason(t, "safe_write [mkdir]", "touch", te, "command_not_allowed")
	})
	t.Run("shell.categories.dangerous", func(t *testing.T) {
		_, te := shellCall(t, def, "rm notes/n.txt", ".")
		if te == nil || te.Kind != tools.KindApprovalRequired {
			t.Fatalf("rm by default without an approver: %+v", te)
		}
		k, root := diskKernel(t, WithSetting("shell.categories.dangerous", []any{"shred"}),
			WithSetting("shell.categories.safe_write", []any{"rm"}))
		res, te := shellCall(t, k, "rm notes/n.txt", ".")
		wantOK(t, "dangerous without rm", "rm", res, te)
		if _, err := os.Stat(filepath.Join(root, "notes/n.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("rm as safe_write did not remove: %v", err)
		}
	})
	t.Run("shell.deny", func(t *testing.T) {
		_, te := shellCall(t, def, "curl http://example.com", ".")
		wantReason(t, "deny default", "curl", te, "command_denied")
		k, _ := diskKernel(t, WithSetting("shell.deny", []any{"cat"}))
		_, te = shellCall(t, k, "cat docs/d.md", ".")
		wantReason(t, "deny [cat] wins over read_only", "cat", te, "command_denied")
	})
	t.Run("shell.paths.read", func(t *testing.T) {
		res, te := shellCall(t, def, "ls", "docs")
		wantOK(t, "paths.read", "ls in docs", res, te)
		k, _ := diskKernel(t, WithSetting("shell.paths.read", []any{"tools/**"}), WithSetting("shell.paths.write", []any{}))
		_, te = shellCall(t, k, "ls", "docs")
		wantReason(t, "paths.read [tools/**]", "ls in docs", te, "directory_not_in_scope")
		if te.Details["required_scope"] != "read" {
			t.Fatalf("required_scope: %+v", te.Details)
		}
	})
	t.Run("shell.paths.write", func(t *testing.T) {
		res, te := shellCall(t, def, "mkdir docs/sub", ".")
		wantOK(t, "paths.write", "mkdir docs/sub", res, te)
		k, _ := diskKernel(t, WithSetting("shell.paths.write", []any{"notes"}))
		_, te = shellCall(t, k, "mkdir sub", "docs")
		wantReason(t, "paths.write [notes]", "mkdir in docs", te, "directory_not_in_scope")
		if te.Details["required_scope"] != "write" || jsonOf(te.Details["allowed_patterns"]) != `["notes"]` {
			t.Fatalf("details: %+v", te.Details)
		}
		res, te = shellCall(t, k, "mkdir sub", "notes")
		wantOK(t, "paths.write [notes]", "mkdir in notes", res, te)
	})
	t.Run("shell.paths.deny", func(t *testing.T) {
		res, te := shellCall(t, def, "cat docs/d.md", ".")
		wantOK(t, "paths.deny", "cat docs/d.md", res, te)
		k, _ := diskKernel(t, WithSetting("shell.paths.deny", []any{"docs"}))
		_, te = shellCall(t, k, "cat docs/d.md", ".")
		wantReason(t, "paths.deny [docs]", "cat docs/d.md", te, "path_not_in_scope")
	})
}

func TestShellConfigErrorsNameTheKey(t *testing.T) {
	for key, v := range map[string]any{
		"shell.categories.read_only": []any{"ls -la"},
		"shell.categories.dangerous": []any{"cat"}, // also read_only
		"shell.paths.write":          []any{"../outside"},
		"shell.paths.read":           []any{"/etc"},
		"shell.paths.deny":           []any{"a/[b"},
		"shell.deny":                 []any{""},
	} {
		_, err := LoadConfig(LoadOptions{Environ: []string{}, Overrides: map[string]any{key: v}})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != key {
			t.Errorf("%s = %v: want a ConfigError naming the key, got %v", key, v, err)
		}
	}
}

// A memory root lists only tools that can work: not the shell tools,
// which need real files; calling one says why.
func TestShellNeedsADiskRoot(t *testing.T) {
	k := bootWith(t) // memory root
	for _, tl := range k.Tools() {
		if tl.Facts.NeedsDisk {
			t.Errorf("a memory root lists %s", tl.Name)
		}
	}
	for tool, args := range map[string]string{"shell": `{"command":"ls"}`, "exec_command": `{"cmd":"ls"}`, "write_stdin": `{"session_id":1}`} {
		_, err := k.Call(context.Background(), tool, json.RawMessage(args))
		var te *tools.Error
		if !errors.As(err, &te) || te.Kind != tools.KindNotFound || !strings.Contains(te.Message, "disk") {
			t.Fatalf("%s on a memory root: %v", tool, err)
		}
	}
	disk, err := New(context.Background(), WithEnviron([]string{}), WithRoot(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Shutdown(context.Background())
	listed := 0
	for _, tl := range disk.Tools() {
		if tl.Facts.NeedsDisk {
			listed++
		}
	}
	if listed != 3 {
		t.Fatalf("a disk root lists %d of the 3 shell tools", listed)
	}
}

// TestShellChangesArePersisted: what a command writes is committed and
// pushed like write_file's writes, one commit per call, and listed in
// changed.
func TestShellChangesArePersisted(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"notes/.keep": ""})
	root := filepath.Join(t.TempDir(), "root")
	dk, err := New(context.Background(), WithEnviron([]string{}), WithRoot(root), WithSetting("git.remote", remote),
		WithSetting("git.author.name", "A"), WithSetting("git.author.email", "a@x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := dk.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dk.Shutdown(context.Background()) })
	res, te := shellCall(t, dk, "echo hi > notes/a.txt && mkdir -p notes/d && cp notes/a.txt notes/d/b.txt", ".")
	if te != nil {
		t.Fatal(te)
	}
	if jsonOf(res.Changed) != `["notes/a.txt","notes/d/b.txt"]` || res.Persisted == nil || !res.Persisted.Persisted {
		t.Fatalf("changed %v persisted %+v", res.Changed, res.Persisted)
	}
	if got := gittest.Git(t, remote, "show", "main:notes/d/b.txt"); got != "hi\n" {
		t.Fatalf("remote has %q", got)
	}
	if n := strings.TrimSpace(gittest.Git(t, remote, "rev-list", "--count", "main")); n != "2" {
		t.Fatalf("want one commit for the call, remote has %s commits", n)
	}
	// A read-only command changes nothing and commits nothing.
	res, te = shellCall(t, dk, "ls notes", ".")
	if te != nil || len(res.Changed) != 0 || res.Persisted != nil {
		t.Fatalf("ls: %+v %+v", te, res)
	}
}

// TestShellApprovalGuard (seed 002): the approval policy applies to the
// shell tools, and dangerous commands run only when the host approves.
func TestShellApprovalGuard(t *testing.T) {
	var asked []string
	yes := WithApprover(tools.YesNo(func(ctx context.Context, req tools.ApprovalRequest) (bool, error) {
		asked = append(asked, req.Summary)
		return true, nil
	}))
	no := WithApprover(tools.YesNo(func(ctx context.Context, req tools.ApprovalRequest) (bool, error) { return false, nil }))
	k, root := diskKernel(t, yes)
	if _, te := shellCall(t, k, "rm notes/n.txt", "."); te != nil {
		t.Fatalf("approved rm: %v", te)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/n.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("approved rm did not run")
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "rm notes/n.txt") {
		t.Fatalf("approver asked %v", asked)
	}
	k, root = diskKernel(t, no)
	_, te := shellCall(t, k, "rm notes/n.txt", ".")
	if te == nil || te.Kind != tools.KindApprovalRequired {
		t.Fatalf("refused rm: %+v", te)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/n.txt")); err != nil {
		t.Fatal("refused rm ran")
	}
	// approval.policy always asks for every shell call that can write.
	k, _ = diskKernel(t, no, WithSetting("approval.policy", "always"))
	if _, te := shellCall(t, k, "touch notes/x", "."); te == nil || te.Kind != tools.KindApprovalRequired {
		t.Fatalf("policy always + touch: %+v", te)
	}
	if _, te := shellCall(t, k, "ls", "."); te != nil {
		t.Fatalf("policy always + a read-only line (risk low): %+v", te)
	}
	k, _ = diskKernel(t, no)
	if _, te := shellCall(t, k, "touch notes/x", "."); te != nil {
		t.Fatalf("policy never: %+v", te)
	}
	// on_risk asks for a line with a dangerous command, once: the
	// shell does not ask again for the rm the summary showed.
	asked = nil
	k, root = diskKernel(t, yes, WithSetting("approval.policy", "on_risk"))
	if _, te := shellCall(t, k, "ls; rm notes/n.txt", "."); te != nil {
		t.Fatalf("on_risk approved: %+v", te)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "run `ls; rm notes/n.txt` in .") {
		t.Fatalf("on_risk asked %q", asked)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/n.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("approved rm did not run")
	}
}

// TestShellSessionsDieWithTheKernel: Shutdown kills every PTY session.
func TestShellSessionsDieWithTheKernel(t *testing.T) {
	k, _ := diskKernel(t)
	res := call(t, k, "exec_command", map[string]any{"cmd": "sleep 300", "yield_time_ms": 50})
	sr := res.Value.(shelltools.SessionResult)
	if sr.Exited || sr.SessionID == 0 {
		t.Fatalf("session: %+v", sr)
	}
	if err := k.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := k.Call(context.Background(), "write_stdin", json.RawMessage(`{"session_id":1}`))
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.KindNotFound {
		t.Fatalf("after Shutdown: %v", err)
	}
}

// TestShellToolResults: a non-zero exit is a result; caps set truncated;
// the timeout is a timeout error carrying what was printed.
func TestShellToolResults(t *testing.T) {
	k, _ := diskKernel(t)
	res, te := shellCall(t, k, "echo out; echo err >&2; exit 3", ".")
	if te != nil || res.ExitCode != 3 || res.Stdout != "out\n" || res.Stderr != "err\n" || res.Isolation.Mode == "" {
		t.Fatalf("exit 3: %+v %+v", te, res.Result)
	}
	raw, _ := json.Marshal(map[string]any{"command": "seq 1 500"})
	r, err := k.Call(context.Background(), "shell", raw)
	if err != nil || !r.Truncated || !strings.Contains(r.Value.(shelltools.ShellResult).Stdout, "[truncated]") {
		t.Fatalf("caps: %v %+v", err, r)
	}
	raw, _ = json.Marshal(map[string]any{"command": "echo started; sleep 30", "timeout_ms": 200})
	_, err = k.Call(context.Background(), "shell", raw)
	var terr *tools.Error
	if !errors.As(err, &terr) || terr.Kind != tools.KindTimeout || terr.Details["stdout"] != "started\n" {
		t.Fatalf("timeout: %v %+v", err, terr)
	}
	for args, field := range map[string]string{`{"command":""}`: "command", `{"command":"ls","workdir":"nope"}`: "workdir",
		`{"command":"echo 'unclosed"}`: "command", `{"command":"ls","timeout_ms":0}`: "timeout_ms"} {
		_, err := k.Call(context.Background(), "shell", json.RawMessage(args))
		if !errors.As(err, &terr) || terr.Kind != tools.KindBadArgs || terr.Field != field {
			t.Errorf("%s: want bad_args on %s, got %v", args, field, err)
		}
	}
}

// TestSessionToolsFlow: exec_command starts a session, write_stdin types
// into it and closes it; what it wrote is reported and persisted.
func TestSessionToolsFlow(t *testing.T) {
	k, root := diskKernel(t)
	sr := call(t, k, "exec_command", map[string]any{"cmd": "cat > notes/typed.txt", "yield_time_ms": 0}).Value.(shelltools.SessionResult)
	if sr.Exited || sr.SessionID == 0 {
		t.Fatalf("start: %+v", sr)
	}
	changed := sr.Changed
	mid := call(t, k, "write_stdin", map[string]any{"session_id": sr.SessionID, "chars": "hello\n", "yield_time_ms": 0}).Value.(shelltools.SessionResult)
	changed = append(changed, mid.Changed...)
	out := call(t, k, "write_stdin", map[string]any{"session_id": sr.SessionID, "close": true, "yield_time_ms": 5000}).Value.(shelltools.SessionResult)
	changed = append(changed, out.Changed...)
	if !out.Exited || out.ExitCode == nil || *out.ExitCode != 0 {
		t.Fatalf("close: %+v", out)
	}
	if b, err := os.ReadFile(filepath.Join(root, "notes/typed.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("typed.txt: %q %v", b, err)
	}
	if len(changed) == 0 || changed[len(changed)-1] != "notes/typed.txt" {
		t.Fatalf("the session's file is reported: %v", changed)
	}
	_, err := k.Call(context.Background(), "write_stdin", json.RawMessage(`{"session_id":`+jsonOf(sr.SessionID)+`}`))
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.KindNotFound || te.Field != "session_id" {
		t.Fatalf("closed session: %v", err)
	}
}
