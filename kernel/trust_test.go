package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/forgetools"
)

// trustRig is a remote, a kernel that signs its commits with a key
// sandbox.trusted_signers lists for its email, and a plain git clone
// where other people commit: Alice with a key the file lists for her,
// Mallory with a key it does not list, and anyone unsigned.
type trustRig struct {
	remote, clone, allowed string
	kernelKey              gittest.SSHKey
	alice, mallory         gittest.SSHKey
	k                      *Kernel
}

func newTrustRig(t *testing.T, extra ...Option) *trustRig {
	t.Helper()
	gittest.RequireGit(t)
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed: git verify-commit, the oracle, needs it")
	}
	r := &trustRig{remote: gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"}),
		kernelKey: gittest.NewSSHKey(t), alice: gittest.NewSSHKey(t), mallory: gittest.NewSSHKey(t)}
	r.allowed = filepath.Join(t.TempDir(), "allowed_signers")
	list := "# who may change the tools\n" +
		"agent@example.com namespaces=\"git\" " + r.kernelKey.PublicKey + "\n" +
		"alice@example.com " + r.alice.PublicKey + "\n"
	if err := os.WriteFile(r.allowed, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := append([]Option{
		WithSetting("git.signing_key", r.kernelKey.Path),
		WithSetting("sandbox.trusted_signers", r.allowed),
		WithSetting("sandbox.isolation", "inproc"),
		WithSetting("git.refresh_interval", "0"),
	}, extra...)
	r.k = bootKernel(t, r.remote, false, opts...)
	r.clone = gittest.Clone(t, r.remote)
	return r
}

// person commits in the clone as name <email>, signing with key (nil:
// unsigned), and pushes.
type person struct {
	name, email string
	key         *gittest.SSHKey
}

func (r *trustRig) commit(t *testing.T, who person, files map[string]string, msg string) string {
	t.Helper()
	r.git(t, who, "pull", "-q", "--ff-only", "origin", "main")
	for p, c := range files {
		gittest.WriteFile(t, r.clone, p, c)
	}
	r.git(t, who, "add", "-A")
	args := []string{"commit", "-q", "-m", msg}
	if who.key != nil {
		args = append([]string{"-c", "gpg.format=ssh", "-c", "user.signingkey=" + who.key.Path}, append(args, "-S")...)
	}
	r.git(t, who, args...)
	r.git(t, who, "push", "-q", "origin", "HEAD:main")
	return strings.TrimSpace(r.git(t, who, "rev-parse", "HEAD"))
}

func (r *trustRig) git(t *testing.T, who person, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.clone
	cmd.Env = append(gittest.Env(filepath.Join(os.TempDir(), "tgp-gittest-home")),
		"GIT_AUTHOR_NAME="+who.name, "GIT_AUTHOR_EMAIL="+who.email,
		"GIT_COMMITTER_NAME="+who.name, "GIT_COMMITTER_EMAIL="+who.email)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// verifies is the oracle: git verify-commit of rev in the remote, with
// the rig's allowed signers file.
func (r *trustRig) verifies(t *testing.T, rev string) bool {
	t.Helper()
	_, err := gittest.VerifyCommit(t, r.remote, r.allowed, rev)
	return err == nil
}

// lastCommit is `git log -1 --format=%H -- path` in the remote.
func (r *trustRig) lastCommit(t *testing.T, path string) string {
	return strings.TrimSpace(gittest.Git(t, r.remote, "log", "-1", "--format=%H", "main", "--", path))
}

func (r *trustRig) write(t *testing.T, path, content string) {
	t.Helper()
	call(t, r.k, "write_file", map[string]string{"path": path, "content": content})
}

// exec runs exec_tool and returns the outcome, or the call's error.
func (r *trustRig) exec(t *testing.T, path, ref string) (*sandbox.Outcome, error) {
	t.Helper()
	a := map[string]any{"path": path}
	if ref != "" {
		a["ref"] = ref
	}
	raw, _ := json.Marshal(a)
	res, err := r.k.Call(context.Background(), "exec_tool", raw)
	if err != nil {
		return nil, err
	}
	return forgetools.OutcomeOf(res), nil
}

func (r *trustRig) mustRun(t *testing.T, path, ref, want string) {
	t.Helper()
	out, err := r.exec(t, path, ref)
	if err != nil {
		t.Fatalf("exec_tool %s@%s: %v", path, ref, err)
	}
	if !out.Success || fmt.Sprint(out.Result) != want {
		t.Fatalf("exec_tool %s@%s: %+v (want %q)", path, ref, out, want)
	}
}

func kindOf(err error) tools.Kind {
	var te *tools.Error
	if errors.As(err, &te) {
		return te.Kind
	}
	return ""
}

func tool(v string) string {
	return "/** Says which version runs. */\nexport default () => \"" + v + "\";\n"
}

// TestUntrustedToolIsRefusedUntilRewritten is the held-out case
// as a user would try it, plain git being the other writer: a change
// pushed unsigned is refused with untrusted_tool (by exec_tool and
// check_tool, naming the commit and its author), and runs again once the
// signed kernel rewrites it; a foreign key, or a trusted key committing
// in another's name, is refused too.
func TestUntrustedToolIsRefusedUntilRewritten(t *testing.T) {
	r := newTrustRig(t)
	r.write(t, "tools/greet.ts", tool("v1"))
	r.mustRun(t, "tools/greet.ts", "", "v1")
	gittest.RequireSigned(t, r.remote, r.allowed, "main")
	if got := findSigned(t, r.k, "says which version", "tools/greet.ts"); got != "agent@example.com" {
		t.Fatalf("find_tools signed_by %q", got)
	}

	unsigned := r.commit(t, person{"Eve", "eve@example.com", nil}, map[string]string{"tools/greet.ts": tool("v2")}, "greet: v2")
	_, err := r.exec(t, "tools/greet.ts", "")
	if kindOf(err) != tools.KindUntrustedTool || !strings.Contains(err.Error(), unsigned[:7]) || !strings.Contains(err.Error(), "Eve <eve@example.com>") {
		t.Fatalf("unsigned change: %v", err)
	}
	raw, _ := json.Marshal(map[string]string{"path": "tools/greet.ts"})
	if _, err := r.k.Call(context.Background(), "check_tool", raw); kindOf(err) != tools.KindUntrustedTool {
		t.Fatalf("check_tool on the unsigned change: %v", err)
	}
	if got := findSigned(t, r.k, "says which version", "tools/greet.ts"); got != "" {
		t.Fatalf("find_tools signed_by %q for an unsigned change", got)
	}

	r.write(t, "tools/greet.ts", tool("v3"))
	r.mustRun(t, "tools/greet.ts", "", "v3")

	mallory := person{"Mallory", "alice@example.com", &r.mallory}
	r.commit(t, mallory, map[string]string{"tools/greet.ts": tool("v4")}, "greet: v4 under alice's name")
	if _, err := r.exec(t, "tools/greet.ts", ""); kindOf(err) != tools.KindUntrustedTool {
		t.Fatalf("foreign key: %v", err)
	}
	alice := person{"Alice", "alice@example.com", &r.alice}
	r.commit(t, alice, map[string]string{"tools/greet.ts": tool("v5")}, "greet: v5")
	r.mustRun(t, "tools/greet.ts", "", "v5")

	// git verify-commit accepts any listed key; the kernel wants it
	// listed for the committer.
	impostor := person{"Alice as Bob", "bob@example.com", &r.alice}
	c := r.commit(t, impostor, map[string]string{"tools/greet.ts": tool("v6")}, "greet: v6")
	if !r.verifies(t, c) {
		t.Fatal("git verify-commit refused a commit signed by a listed key")
	}
	if _, err := r.exec(t, "tools/greet.ts", ""); kindOf(err) != tools.KindUntrustedTool {
		t.Fatalf("a trusted key signing as another committer: %v", err)
	}

	// A tool written in this session and not committed is the kernel's
	// own: here its commit fails (no identity), the file stays in the
	// root.
	if err := os.WriteFile(filepath.Join(r.k.FS().Root(), "tools", "own.ts"), []byte(tool("own")), 0o644); err != nil {
		t.Fatal(err)
	}
	r.mustRun(t, "tools/own.ts", "", "own")
}

// findSigned is find_tools' signed_by for path among the hits of query.
func findSigned(t *testing.T, k *Kernel, query, path string) string {
	t.Helper()
	res := call(t, k, "find_tools", map[string]any{"query": query})
	for _, f := range res.Value.([]tools.FoundTool) {
		if f.Path == path {
			return f.SignedBy
		}
	}
	t.Fatalf("find_tools %q: %s not found", query, path)
	return ""
}

// TestImportsAreTrustedToo: a trusted tool that imports a module whose
// last change is untrusted is refused, naming the module.
func TestImportsAreTrustedToo(t *testing.T) {
	r := newTrustRig(t)
	r.write(t, "tools/lib/word.ts", "export const word = () => \"kernel\";\nexport default word;\n")
	r.write(t, "tools/say.ts", "/** Says a word. */\nimport { word } from \"./lib/word\";\nexport default () => word();\n")
	r.mustRun(t, "tools/say.ts", "", "kernel")
	c := r.commit(t, person{"Eve", "eve@example.com", nil}, map[string]string{"tools/lib/word.ts": "export const word = () => \"eve\";\nexport default word;\n"}, "word: eve")
	_, err := r.exec(t, "tools/say.ts", "")
	if kindOf(err) != tools.KindUntrustedTool || !strings.Contains(err.Error(), "tools/lib/word.ts") || !strings.Contains(err.Error(), c[:7]) {
		t.Fatalf("untrusted import: %v", err)
	}
}

// TestExecAtRefAndRevert: exec_tool with ref runs the old version (its
// imports at the same commit), tool_history lists the commits, and
// revert_tool makes the third commit, pushed and signed.
func TestExecAtRefAndRevert(t *testing.T) {
	r := newTrustRig(t)
	r.write(t, "tools/lib/word.ts", "export const word = () => \"one\";\nexport default word;\n")
	r.write(t, "tools/say.ts", "/** Says a word. */\nimport { word } from \"./lib/word\";\nexport default () => \"say \" + word();\n")
	first := r.lastCommit(t, "tools/say.ts")
	r.write(t, "tools/lib/word.ts", "export const word = () => \"two\";\nexport default word;\n")
	r.write(t, "tools/say.ts", "/** Says a word. */\nimport { word } from \"./lib/word\";\nexport default () => \"said \" + word();\n")
	second := r.lastCommit(t, "tools/say.ts")

	r.mustRun(t, "tools/say.ts", "", "said two")
	r.mustRun(t, "tools/say.ts", first, "say one")
	r.mustRun(t, "tools/say.ts", first[:10], "say one")
	if _, err := r.exec(t, "tools/say.ts", "no-such-ref"); kindOf(err) != tools.KindNotFound {
		t.Fatalf("unknown ref: %v", err)
	}

	hist, err := r.k.ToolHistory(context.Background(), "tools/say.ts", 0)
	if err != nil || len(hist) != 2 || hist[0].Commit != second || hist[1].Commit != first || !hist[0].Signed || hist[0].SignedBy != "agent@example.com" {
		t.Fatalf("history: %v %+v", err, hist)
	}

	rev, err := r.k.RevertTool(context.Background(), "tools/say.ts", first)
	if err != nil || rev.From != first || rev.Persisted == nil || !rev.Persisted.Persisted {
		t.Fatalf("revert: %v %+v", err, rev)
	}
	if n := strings.Count(gittest.Git(t, r.remote, "log", "--format=%H", "main", "--", "tools/say.ts"), "\n"); n != 3 {
		t.Fatalf("revert made no third commit of the tool: %d", n)
	}
	if got := r.lastCommit(t, "tools/say.ts"); got != rev.Persisted.Commit {
		t.Fatalf("the remote's last change %s, revert's commit %s", got, rev.Persisted.Commit)
	}
	gittest.RequireSigned(t, r.remote, r.allowed, "main")
	// The tool is back; its import stays as it is now.
	r.mustRun(t, "tools/say.ts", "", "say two")
	if hist, _ := r.k.ToolHistory(context.Background(), "tools/say.ts", 0); len(hist) != 3 || !strings.HasPrefix(hist[0].Subject, "revert tools/say.ts to "+first[:7]) {
		t.Fatalf("history after revert: %+v", hist)
	}
}

// TestTrustFollowsGitVerifyCommit is the generated test: seeded random
// sequences of writes to a tool and the module it imports (and to a data
// file neither depends on) by the signed kernel, by Alice with her listed
// key, unsigned, and by Mallory with a key not listed (committing under
// Alice's email). After each, exec_tool must run exactly when `git
// verify-commit` accepts the last commit of both files.
func TestTrustFollowsGitVerifyCommit(t *testing.T) {
	seeds := []int64{1, 2}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := newTrustRig(t)
			rng := rand.New(rand.NewSource(seed))
			r.write(t, "tools/lib.ts", "export const tag = () => \"lib0\";\nexport default tag;\n")
			r.write(t, "tools/main.ts", "/** Main. */\nimport { tag } from \"./lib\";\nexport default () => \"main0 \" + tag();\n")
			want := map[string]string{"tools/main.ts": "main0", "tools/lib.ts": "lib0"}
			writers := []string{"kernel", "alice", "unsigned", "mallory"}
			targets := []string{"tools/main.ts", "tools/lib.ts", "data/notes.txt"}
			for step := 1; step <= 14; step++ {
				who, target := writers[rng.Intn(len(writers))], targets[rng.Intn(len(targets))]
				v := fmt.Sprintf("%s%d", strings.TrimSuffix(filepath.Base(target), filepath.Ext(target)), step)
				var content string
				switch target {
				case "tools/main.ts":
					content = "/** Main. */\nimport { tag } from \"./lib\";\nexport default () => \"" + v + " \" + tag();\n"
				case "tools/lib.ts":
					content = "export const tag = () => \"" + v + "\";\nexport default tag;\n"
				default:
					content = v + "\n"
				}
				switch who {
				case "kernel":
					r.write(t, target, content)
				case "alice":
					r.commit(t, person{"Alice", "alice@example.com", &r.alice}, map[string]string{target: content}, "step")
				case "unsigned":
					r.commit(t, person{"Eve", "eve@example.com", nil}, map[string]string{target: content}, "step")
				case "mallory":
					r.commit(t, person{"Mallory", "alice@example.com", &r.mallory}, map[string]string{target: content}, "step")
				}
				if _, ok := want[target]; ok {
					want[target] = v
				}
				oracle := r.verifies(t, r.lastCommit(t, "tools/main.ts")) && r.verifies(t, r.lastCommit(t, "tools/lib.ts"))
				out, err := r.exec(t, "tools/main.ts", "")
				ran := err == nil && out.Success
				if err != nil && kindOf(err) != tools.KindUntrustedTool {
					t.Fatalf("step %d (%s writes %s): %v", step, who, target, err)
				}
				if ran != oracle {
					t.Fatalf("step %d (%s writes %s): exec_tool ran=%v, git verify-commit says %v (err %v)", step, who, target, ran, oracle, err)
				}
				if ran && fmt.Sprint(out.Result) != want["tools/main.ts"]+" "+want["tools/lib.ts"] {
					t.Fatalf("step %d: ran %v, want %s %s", step, out.Result, want["tools/main.ts"], want["tools/lib.ts"])
				}
			}
		})
	}
}

// TestTrustedSignersConfig: a missing or malformed file is a
// configuration error naming the key, at New.
func TestTrustedSignersConfig(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(bad, []byte("alice@example.com permit-pty ssh-ed25519 AAAA\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(t.TempDir(), "missing"), bad} {
		_, err := New(context.Background(), WithEnviron([]string{}), WithMemoryFS(), WithSetting("sandbox.trusted_signers", p))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != "sandbox.trusted_signers" {
			t.Fatalf("%s: %v", p, err)
		}
	}
}
