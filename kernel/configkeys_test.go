package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/tools"
)

// coveredElsewhere names, for each configuration key not exercised in
// TestConfigKeysChangeBehaviour, the test that proves the key changes
// behaviour (package-relative path of its file : test name). The meta
// test checks every key of Defaults is here or there, and that each named
// test exists, so a new key without a test fails CI.
var coveredElsewhere = map[string]string{
	"root_dir":                    "kernel/identity_test.go:TestGlobalIdentityAndNoHalfState",
	"git.remote":                  "kernel/kernel_test.go:TestForgeAndReuseAcrossKernels",
	"git.provider":                "kernel/pr_test.go:TestPRModeOneBranchOnePRPerSession",
	"git.repo":                    "kernel/pr_test.go:TestPRModeOneBranchOnePRPerSession",
	"git.api_url":                 "kernel/pr_test.go:TestPRModeOneBranchOnePRPerSession",
	"git.write_strategy":          "kernel/pr_test.go:TestPRModeOneBranchOnePRPerSession",
	"git.token_env":               "kernel/pr_session_test.go:TestPRModeChecksTheTokenBeforePushing",
	"git.depth":                   "kernel/shallow_test.go:TestShallowRootsReadLikeGit",
	"git.author.name":             "kernel/identity_test.go:TestGlobalIdentityAndNoHalfState",
	"git.author.email":            "kernel/identity_test.go:TestGlobalIdentityAndNoHalfState",
	"git.refresh_interval":        "kernel/refresh_test.go:TestRefreshSeesOtherAgentsTools",
	"sandbox.isolation":           "kernel/jailpolicy_test.go:TestOneJailPolicy",
	"sandbox.worker_command":      "kernel/jailpolicy_test.go:TestOneJailPolicy",
	"sandbox.workers":             "sandbox/isolation_test.go:TestHostCallFloodIsBounded",
	"sandbox.modules_dir":         "kernel/builtin_packages_test.go:TestModulesDirConfig",
	"sandbox.allowed_imports":     "kernel/builtin_packages_test.go:TestModulesDirConfig",
	"sandbox.require_permissions": "kernel/permissions_test.go:TestRequirePermissionsConfig",
	"sandbox.secrets":             "kernel/permissions_test.go:TestBrokeredSecretConfig",
	"git.retry.carry":             "gitbackend/carry_test.go:TestLostPushIsLandedByTheWinner",
	"git.journal":                 "journal/kernel_test.go:TestKernelWritesThroughTheJournal",
	"git.journal_ack":             "journal/kernel_test.go:TestKernelJournalAck",
	"git.carry_key_env":           "kernel/carry_test.go:TestCarryKeyEnvReachesTheRepository",
	"git.signing_key":             "kernel/signing_test.go:TestSigningKeySignsTheKernelsCommits",
	"sandbox.trusted_signers":     "kernel/trust_test.go:TestUntrustedToolIsRefusedUntilRewritten",
	"sql.driver":                  "kernel/sql_test.go:TestSQLIntegration",
	"tools.git.timeout_ms":        "kernel/gitconfig_keys_test.go:TestGitToolConfigKeysApply",
	"tools.git.max_bytes":         "kernel/gitconfig_keys_test.go:TestGitToolConfigKeysApply",
	"serve.token_env":             "cmd/tgp/serve_test.go:TestServeHTTPConfigKeys",
	"serve.allowed_origins":       "cmd/tgp/serve_test.go:TestServeHTTPConfigKeys",
	"serve.max_body_bytes":        "cmd/tgp/serve_test.go:TestServeHTTPConfigKeys",
	"serve.session_idle_timeout":  "cmd/tgp/serve_test.go:TestServeHTTPConfigKeys",
	"shell.categories.read_only":  "kernel/shell_test.go:TestShellConfigKeys",
	"shell.categories.safe_write": "kernel/shell_test.go:TestShellConfigKeys",
	"shell.categories.dangerous":  "kernel/shell_test.go:TestShellConfigKeys",
	"shell.deny":                  "kernel/shell_test.go:TestShellConfigKeys",
	"shell.paths.read":            "kernel/shell_test.go:TestShellConfigKeys",
	"shell.paths.write":           "kernel/shell_test.go:TestShellConfigKeys",
	"shell.paths.deny":            "kernel/shell_test.go:TestShellConfigKeys",
}

// testedHere are the keys TestConfigKeysChangeBehaviour covers.
var testedHere = []string{"git.branch", "git.pr.per", "git.retry.max_attempts", "git.retry.base_delay", "git.retry.deadline", "git.lock_dir", "git.defer_replays", "git.pushes_per_minute", "git.reads_per_second", "fs.allowed_dirs", "fs.block_upward_traversal", "sandbox.timeout",
	"sandbox.memory_mb", "sandbox.allowed_fetch_urls", "sandbox.check.rules", "sql.dsn_env", "sql.read_only",
	"tools.git.enabled", "approval.policy"}

// TestEveryConfigKeyHasABehaviourTest (two keys once did nothing):
// every key of Defaults is exercised by a test that changes it and sees
// behaviour change.
func TestEveryConfigKeyHasABehaviourTest(t *testing.T) {
	here := map[string]bool{}
	for _, k := range testedHere {
		here[k] = true
	}
	var keys []string
	for k := range Defaults() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ref, ok := coveredElsewhere[k]
		switch {
		case here[k]:
		case ok:
			file, name, _ := strings.Cut(ref, ":")
			src, err := os.ReadFile(filepath.Join("..", file))
			if err != nil || !regexp.MustCompile(`(?m)^func `+name+`\(t \*testing\.T\)`).Match(src) {
				t.Errorf("%s: the test %s named for it does not exist", k, ref)
			}
		default:
			t.Errorf("config key %s has no test proving it changes behaviour: add one to TestConfigKeysChangeBehaviour", k)
		}
	}
}

func bootWith(t *testing.T, opts ...Option) *Kernel {
	t.Helper()
	k, err := New(context.Background(), append([]Option{WithEnviron([]string{}), WithMemoryFS()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k
}

func execOutcome(t *testing.T, k *Kernel, path, src string, args map[string]any) *sandbox.Outcome {
	t.Helper()
	call(t, k, "write_file", map[string]string{"path": path, "content": src})
	return call(t, k, "exec_tool", map[string]any{"path": path, "args": args}).Value.(*sandbox.Outcome)
}

// TestConfigKeysChangeBehaviour: for each key in testedHere, the default
// and a changed value behave differently.
func TestConfigKeysChangeBehaviour(t *testing.T) {
	t.Run("git.branch", func(t *testing.T) {
		remote := gittest.SeedRemote(t, map[string]string{"README.md": "main\n"})
		work := filepath.Join(t.TempDir(), "w")
		gittest.Git(t, "", "clone", "-q", remote, work)
		gittest.Git(t, work, "checkout", "-q", "-b", "side")
		if err := os.WriteFile(filepath.Join(work, "README.md"), []byte("side\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, work, "-c", "user.name=U", "-c", "user.email=u@x", "commit", "-qam", "side")
		gittest.Git(t, work, "push", "-q", "origin", "side")
		for branch, want := range map[string]string{"": "main\n", "side": "side\n"} {
			k := bootWith(t, WithSetting("git.remote", remote), WithSetting("git.branch", branch))
			if got := jsonOf(call(t, k, "read_file", map[string]any{"path": "README.md"}).Value); !strings.Contains(got, strings.TrimSpace(want)) {
				t.Fatalf("git.branch %q: %s", branch, got)
			}
		}
	})
	t.Run("git.pr.per", func(t *testing.T) {
		e := newPREnv(t)
		for per, branches := range map[string]int{"session": 1, "tool": 2} {
			k := e.kernelAt(t, t.TempDir(), WithSetting("git.pr.per", per))
			a := writeTool(t, k, "tools/p1.ts", "/** P1. */\nexport default () => 1;\n")
			b := writeTool(t, k, "tools/p2.ts", "/** P2. */\nexport default () => 2;\n")
			if got := map[bool]int{true: 1, false: 2}[a.Branch == b.Branch]; got != branches {
				t.Fatalf("git.pr.per %s: branches %s and %s", per, a.Branch, b.Branch)
			}
		}
	})
	t.Run("git.pushes_per_minute", func(t *testing.T) {
		// auto is GitHub's documented budget on github.com and none
		// elsewhere; reads follow (12 a second with any push budget).
		for _, c := range []struct {
			remote, pushes, reads string
			wantP, wantR          int
		}{
			{"https://github.com/o/r.git", "auto", "auto", 6, 12},
			{"git@github.com:o/r.git", "auto", "auto", 6, 12},
			{"https://gitlab.com/o/r.git", "auto", "auto", 0, 0},
			{"https://gitlab.com/o/r.git", "3", "auto", 3, 12},
			{"https://github.com/o/r.git", "off", "auto", 0, 0},
			{"https://github.com/o/r.git", "auto", "4", 6, 4},
		} {
			p, r, err := GitConfig{Remote: c.remote, PushesPerMinute: c.pushes, ReadsPerSecond: c.reads}.RemoteBudgets()
			if err != nil || p != c.wantP || r != c.wantR {
				t.Errorf("%s pushes %s reads %s: %d %d %v, want %d %d", c.remote, c.pushes, c.reads, p, r, err, c.wantP, c.wantR)
			}
		}
		for _, key := range []string{"git.pushes_per_minute", "git.reads_per_second"} {
			_, err := New(context.Background(), WithEnviron([]string{}), WithMemoryFS(), WithSetting(key, "lots"))
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Key != key {
				t.Fatalf("%s lots: %v", key, err)
			}
		}
		// One push a minute: the first write lands, the second cannot
		// within a 1s deadline and says which limit held it, without a
		// push the remote would refuse.
		root := t.TempDir()
		bare := filepath.Join(root, "r.git")
		gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", bare)
		gittest.Git(t, bare, "config", "http.receivepack", "true")
		srv := gittest.NewHTTPServer(t, root, "")
		// The first write has the default deadline (a loaded machine may
		// take more than a second to push); a second kernel of the same
		// machine (one lock_dir, so one budget) has 1s.
		locks := t.TempDir()
		budgeted := func(deadline string) *Kernel {
			return bootWith(t, WithSetting("git.remote", srv.URL("r.git")), WithSetting("git.author.name", "A"),
				WithSetting("git.author.email", "a@x"), WithSetting("git.lock_dir", locks),
				WithSetting("git.pushes_per_minute", "1"), WithSetting("git.retry.deadline", deadline))
		}
		writeTool(t, budgeted("2m"), "tools/b1.ts", "/** B1. */\nexport default () => 1;\n")
		k := budgeted("1s")
		pushes := srv.ReceivePacks.Load()
		_, err := k.Call(context.Background(), "write_file", json.RawMessage(`{"path":"tools/b2.ts","content":"/** B2. */\nexport default () => 2;\n"}`))
		if err == nil || !strings.Contains(err.Error(), "git.pushes_per_minute") || !strings.Contains(err.Error(), "not on the remote yet") {
			t.Fatalf("second write within one push a minute: %v", err)
		}
		if got := srv.ReceivePacks.Load(); got != pushes {
			t.Fatalf("%d pushes past the budget", got-pushes)
		}
	})
	t.Run("git.reads_per_second", func(t *testing.T) {
		// Resolution and errors are covered with pushes_per_minute above;
		// here the read budget holds: with 1 read a second, three
		// refreshes after a boot (each asks the remote for its tip) cannot
		// take less than two seconds. A lower bound the budget guarantees,
		// whatever the machine's load.
		root := t.TempDir()
		bare := filepath.Join(root, "r.git")
		gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", bare)
		gittest.Git(t, bare, "config", "http.receivepack", "true")
		srv := gittest.NewHTTPServer(t, root, "")
		start := time.Now()
		k := bootWith(t, WithSetting("git.remote", srv.URL("r.git")), WithSetting("git.author.name", "A"),
			WithSetting("git.author.email", "a@x"), WithSetting("git.lock_dir", t.TempDir()),
			WithSetting("git.reads_per_second", "1"), WithSetting("git.refresh_interval", "0"))
		for range 3 {
			call(t, k, "list_files", map[string]any{"dir": "."})
		}
		if took := time.Since(start); took < 2*time.Second {
			t.Fatalf("reads_per_second 1: a boot and 3 refreshes in %v", took)
		}
	})
	t.Run("git.retry", func(t *testing.T) {
		root := t.TempDir()
		bare := filepath.Join(root, "r.git")
		gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", bare)
		gittest.Git(t, bare, "config", "http.receivepack", "true")
		srv := gittest.NewHTTPServer(t, root, "")
		k := func(opts ...Option) *Kernel {
			return bootWith(t, append([]Option{WithSetting("git.remote", srv.URL("r.git")), WithSetting("git.author.name", "A"),
				WithSetting("git.author.email", "a@x"), WithSetting("git.retry.base_delay", "1ms")}, opts...)...)
		}
		write := json.RawMessage(`{"path":"tools/r.ts","content":"/** R. */\nexport default () => 1;\n"}`)
		// Direct pushes are bounded by time: five refused receive-packs
		// get through within the default deadline; a 300ms deadline gives
		// up on a remote that refuses every push and names the commit
		// left pending.
		srv.FailReceivePacks.Store(5)
		if _, err := k().Call(context.Background(), "write_file", write); err != nil {
			t.Fatalf("default deadline: %v", err)
		}
		srv.FailReceivePacks.Store(1 << 20)
		write3 := json.RawMessage(`{"path":"tools/r3.ts","content":"/** R3. */\nexport default () => 'r3';\n"}`)
		_, err := k(WithSetting("git.retry.deadline", "300ms")).Call(context.Background(), "write_file", write3)
		if err == nil || !strings.Contains(err.Error(), "not on the remote yet") || !strings.Contains(err.Error(), "forge: tools/r3.ts") {
			t.Fatalf("deadline 300ms: %v", err)
		}
		srv.FailReceivePacks.Store(0)
		// Five refused receive-packs with a 1h base delay: the backoff
		// (full jitter up to 5s each time) outlasts the call's 800ms
		// deadline.
		srv.FailReceivePacks.Store(5)
		ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
		defer cancel()
		write2 := json.RawMessage(`{"path":"tools/r2.ts","content":"/** R2. */\nexport default () => 2;\n"}`)
		if _, err := k(WithSetting("git.retry.base_delay", "1h")).Call(ctx, "write_file", write2); err == nil {
			t.Fatal("base_delay 1h: the retry did not wait")
		}
		srv.FailReceivePacks.Store(0)
	})
	t.Run("git.retry.max_attempts", func(t *testing.T) {
		// Pull-request branches count attempts: two refused receive-packs
		// get through with 3 attempts and not with 2.
		e := newPREnv(t)
		k := func(n int) *Kernel {
			return bootWith(t, append(e.options("github"), WithSetting("git.retry.max_attempts", n), WithSetting("git.retry.base_delay", "1ms"))...)
		}
		e.http.FailReceivePacks.Store(2)
		if _, err := k(3).Call(context.Background(), "write_file", json.RawMessage(`{"path":"tools/r5.ts","content":"/** R5. */\nexport default () => 'r5';\n"}`)); err != nil {
			t.Fatalf("max_attempts 3: %v", err)
		}
		e.http.FailReceivePacks.Store(2)
		if _, err := k(2).Call(context.Background(), "write_file", json.RawMessage(`{"path":"tools/r4.ts","content":"/** R4. */\nexport default () => 4;\n"}`)); err == nil {
			t.Fatal("max_attempts 2: two refused pushes did not fail the write")
		}
	})
	t.Run("git.defer_replays", func(t *testing.T) {
		// A write that replayed on another agent's commit: deferred, the
		// root's HEAD stays its own commit until a call reads the root;
		// false, the root is at the remote's tip when the write returns.
		for _, deferred := range []bool{true, false} {
			remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
			other := bootWith(t, WithSetting("git.remote", remote))
			root := t.TempDir()
			k := bootKernel(t, remote, false, WithRoot(root), WithSetting("git.defer_replays", deferred))
			writeTool(t, other, "tools/o.ts", "/** O. */\nexport default () => 1;\n")
			p := writeTool(t, k, "tools/k.ts", "/** K. */\nexport default () => 2;\n")
			tip := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main"))
			if p.Commit != tip {
				t.Fatalf("defer_replays %v: the write says %s, the remote is at %s", deferred, p.Commit, tip)
			}
			if head := strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD")); (head == tip) == deferred {
				t.Fatalf("defer_replays %v: HEAD %s after the write, the remote %s", deferred, head, tip)
			}
			call(t, k, "list_files", map[string]any{"dir": "tools"})
			if head := strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD")); head != tip {
				t.Fatalf("defer_replays %v: HEAD %s after a read, the remote %s", deferred, head, tip)
			}
		}
	})
	t.Run("git.lock_dir", func(t *testing.T) {
		// The machine's queue lives where git.lock_dir says, else under
		// the environment's XDG_CACHE_HOME, else HOME/.cache; off: none.
		g := GitConfig{}
		if d := g.MachineLockDir([]string{"HOME=/h", "XDG_CACHE_HOME=/x"}); d != "/x/tgp/locks" {
			t.Fatalf("XDG_CACHE_HOME: %s", d)
		}
		if d := g.MachineLockDir([]string{"HOME=/h"}); d != "/h/.cache/tgp/locks" {
			t.Fatalf("HOME: %s", d)
		}
		g.LockDir = "off"
		if d := g.MachineLockDir([]string{"HOME=/h"}); d != "" {
			t.Fatalf("off: %s", d)
		}
		// A root on disk pushing to a network remote leaves its spool in
		// the configured directory.
		root := t.TempDir()
		gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", filepath.Join(root, "r.git"))
		gittest.Git(t, filepath.Join(root, "r.git"), "config", "http.receivepack", "true")
		srv := gittest.NewHTTPServer(t, root, "")
		locks := t.TempDir()
		kk, err := New(context.Background(), WithEnviron([]string{}), WithRoot(t.TempDir()), WithSetting("git.remote", srv.URL("r.git")),
			WithSetting("git.author.name", "A"), WithSetting("git.author.email", "a@x"), WithSetting("git.lock_dir", locks))
		if err != nil {
			t.Fatal(err)
		}
		if err := kk.Boot(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer kk.Shutdown(context.Background())
		if _, err := kk.Call(context.Background(), "write_file", json.RawMessage(`{"path":"tools/l.ts","content":"/** L. */\nexport default () => 'r5';\n"}`)); err != nil {
			t.Fatal(err)
		}
		if tips, _ := filepath.Glob(filepath.Join(locks, "*", "tip")); len(tips) != 1 {
			t.Fatalf("no machine queue under git.lock_dir %s: %v", locks, tips)
		}
	})
	writeData := "/** Writes. */\nexport default () => { tgp.write_file('data/out.txt', 'x'); return 'ok'; };\n"
	t.Run("fs.allowed_dirs", func(t *testing.T) {
		if out := execOutcome(t, bootWith(t), "tools/w.ts", writeData, nil); !out.Success {
			t.Fatalf("default allows data/: %+v", out.Error)
		}
		out := execOutcome(t, bootWith(t, WithSetting("fs.allowed_dirs", []any{"tools"})), "tools/w.ts", writeData, nil)
		if out.Success || out.Error.Kind != sandbox.KindSecurity {
			t.Fatalf("allowed_dirs [tools]: %+v", out)
		}
	})
	t.Run("fs.block_upward_traversal", func(t *testing.T) {
		for block, refused := range map[bool]bool{true: true, false: false} {
			k := bootWith(t, WithSetting("fs.block_upward_traversal", block))
			call(t, k, "write_file", map[string]string{"path": "tools/a.ts", "content": "/** A. */\nexport default () => 1;\n"})
			_, err := k.Call(context.Background(), "read_file", json.RawMessage(`{"path":"tools/../tools/a.ts"}`))
			if (err != nil) != refused {
				t.Fatalf("block_upward_traversal %v: %v", block, err)
			}
		}
	})
	t.Run("sandbox.timeout", func(t *testing.T) {
		busy := "/** Busy. */\nconst MS = 300;\nexport default () => { const end = Date.now() + MS; while (Date.now() < end) {} return 'done'; };\n"
		if out := execOutcome(t, bootWith(t, WithSetting("sandbox.timeout", "10s")), "tools/b.ts", busy, nil); !out.Success {
			t.Fatalf("10s: %+v", out.Error)
		}
		if out := execOutcome(t, bootWith(t, WithSetting("sandbox.timeout", "50ms")), "tools/b.ts", busy, nil); out.Success || out.Error.Kind != sandbox.KindTimeout {
			t.Fatalf("50ms: %+v", out)
		}
	})
	t.Run("sandbox.memory_mb", func(t *testing.T) {
		big := "/** Big. */\nconst N = 4e6;\nexport default () => new Float64Array(N).length;\n" // 32 MB
		if out := execOutcome(t, bootWith(t), "tools/m.ts", big, nil); !out.Success {
			t.Fatalf("default 128 MB: %+v", out.Error)
		}
		if out := execOutcome(t, bootWith(t, WithSetting("sandbox.memory_mb", 16)), "tools/m.ts", big, nil); out.Success || out.Error.Kind != sandbox.KindMemoryLimit {
			t.Fatalf("16 MB: %+v", out)
		}
	})
	t.Run("sandbox.allowed_fetch_urls", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("pong")) }))
		defer srv.Close()
		fetch := "/** Fetches. */\nexport default async (a: { url: string }) => (await tgp.fetch(a.url)).text();\n"
		args := map[string]any{"url": srv.URL + "/ping"}
		if out := execOutcome(t, bootWith(t), "tools/f.ts", fetch, args); out.Success {
			t.Fatal("default: fetch allowed with an empty allow-list")
		}
		if out := execOutcome(t, bootWith(t, WithSetting("sandbox.allowed_fetch_urls", []any{srv.URL + "/"})), "tools/f.ts", fetch, args); !out.Success || out.Result != "pong" {
			t.Fatalf("allowed: %+v %+v", out.Result, out.Error)
		}
	})
	t.Run("sandbox.check.rules", func(t *testing.T) {
		magic := "/** Magic. */\nexport default () => 42 * 17;\n"
		check := func(k *Kernel) string {
			// force: by default the rule refuses the write itself.
			call(t, k, "write_file", map[string]any{"path": "tools/c.ts", "content": magic, "force": true})
			return jsonOf(call(t, k, "check_tool", map[string]string{"path": "tools/c.ts"}).Value)
		}
		if got := check(bootWith(t)); !strings.Contains(got, `"valid":false`) {
			t.Fatalf("default: %s", got)
		}
		if got := check(bootWith(t, WithSetting("sandbox.check.rules", map[string]any{"no-magic-numbers": "off"}))); !strings.Contains(got, `"valid":true`) {
			t.Fatalf("rule off: %s", got)
		}
	})
	t.Run("sql.dsn_env and sql.read_only", func(t *testing.T) {
		dsn := filepath.Join(t.TempDir(), "db.sqlite")
		k := bootWith(t, WithEnviron([]string{"MY_DSN=" + dsn}), WithSetting("sql.driver", "sqlite"), WithSetting("sql.dsn_env", "MY_DSN"))
		call(t, k, "exec_sql", map[string]any{"sql": "CREATE TABLE t (x INTEGER)"})
		if _, err := os.Stat(dsn); err != nil {
			t.Fatalf("sql.dsn_env: the database is not where MY_DSN says: %v", err)
		}
		_ = k.Shutdown(context.Background())
		ro := bootWith(t, WithEnviron([]string{"MY_DSN=" + dsn}), WithSetting("sql.driver", "sqlite"), WithSetting("sql.dsn_env", "MY_DSN"), WithSetting("sql.read_only", true))
		if _, err := ro.Call(context.Background(), "exec_sql", json.RawMessage(`{"sql":"INSERT INTO t (x) VALUES (1)"}`)); err == nil {
			t.Fatal("sql.read_only: an INSERT went through")
		}
	})
	t.Run("tools.git.enabled", func(t *testing.T) {
		has := func(k *Kernel) bool {
			for _, tl := range k.Tools() {
				if tl.Name == "git_status" {
					return true
				}
			}
			return false
		}
		if !has(bootWith(t)) || has(bootWith(t, WithSetting("tools.git.enabled", false))) {
			t.Fatal("tools.git.enabled does not decide whether the git tools exist")
		}
	})
	t.Run("approval.policy", func(t *testing.T) {
		deny := WithApprover(tools.YesNo(func(ctx context.Context, req tools.ApprovalRequest) (bool, error) { return false, nil }))
		write := json.RawMessage(`{"path":"tools/x.ts","content":"/** X. */\nexport default () => 1;\n"}`)
		if _, err := bootWith(t, deny).Call(context.Background(), "write_file", write); err != nil {
			t.Fatalf("never: %v", err)
		}
		_, err := bootWith(t, deny, WithSetting("approval.policy", "always")).Call(context.Background(), "write_file", write)
		var te *tools.Error
		if !errors.As(err, &te) || te.Kind != tools.KindApprovalRequired {
			t.Fatalf("always + a denying approver: %v", err)
		}
	})
}
