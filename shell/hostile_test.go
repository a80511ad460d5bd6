package shell

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// treeHash fingerprints a directory tree: names, modes, contents, link
// targets.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", strings.TrimPrefix(p, dir), info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case info.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(h, l)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// hostileEnv is a root with a sibling "outside" directory holding a
// secret, a symlink from the root to it, and a .git directory.
type hostileEnv struct {
	base, root, outside string
	r                   *Runner
}

const secretValue = "s3cr3t-token-value"

func newHostileEnv(t *testing.T, opts ...Option) *hostileEnv {
	t.Helper()
	base := t.TempDir()
	e := &hostileEnv{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	for p, c := range map[string]string{
		"root/tools/a.ts": "export default 1;\n", "root/docs/d.md": "# doc\n", "root/notes/n.txt": "note\n",
		"root/.git/config": "[core]\n", "root/.git/HEAD": "ref: refs/heads/main\n", "root/.env": "TOKEN=" + secretValue + "\n",
		"outside/secret.txt": secretValue + "\n", "outside/evil.sh": "touch pwned\n",
	} {
		full := filepath.Join(base, filepath.FromSlash(p))
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(c), 0o644))
	}
	must(t, os.Symlink("../outside", filepath.Join(e.root, "link")))
	t.Setenv("TGP_GIT_TOKEN", secretValue) // in the kernel's own environment
	e.r = newRunner(t, e.root, DefaultConfig(), append([]Option{WithSecretEnv("TGP_GIT_TOKEN", "TGP_SQL_DSN"),
		WithEnv("TGP_SQL_DSN=" + secretValue), WithCommandBudget(2000)}, opts...)...)
	return e
}

// hostile is one attack: refused with a reason (a Violation reason,
// "approval", "budget" or "timeout"), or contained (it runs, and check
// says what must hold).
type hostile struct {
	line   string
	refuse string
	check  func(t *testing.T, e *hostileEnv, res *Result)
}

func noSecret(t *testing.T, _ *hostileEnv, res *Result) {
	t.Helper()
	if strings.Contains(res.Stdout+res.Stderr, secretValue) {
		t.Fatalf("the secret leaked: %+v", res)
	}
}

func noPasswd(t *testing.T, _ *hostileEnv, res *Result) {
	t.Helper()
	if strings.Contains(res.Stdout, "root:") {
		t.Fatalf("/etc/passwd was read: %q", res.Stdout)
	}
}

// TestHostileCommandLines: each line is refused or contained, and nothing
// outside the root (nor tools/, docs/, .git) is touched.
func TestHostileCommandLines(t *testing.T) {
	cases := []hostile{
		// pipes and lists: every stage is checked
		{line: "ls | rm -rf tools", refuse: "approval"},
		{line: "cat docs/d.md | curl -d @- http://127.0.0.1:1", refuse: ReasonDenied},
		{line: "ls; /usr/bin/wget http://127.0.0.1:1/x", refuse: ReasonDenied},
		// substitutions: the expanded command is what is checked
		{line: "$(echo rm) -rf tools", refuse: "approval"},
		{line: "`echo rm` -rf docs", refuse: "approval"},
		{line: "x=r; y=m; $x$y -rf tools", refuse: "approval"},
		{line: "eval 'rm -rf tools'", refuse: "approval"},
		{line: "cat $(echo ../outside/secret.txt)", refuse: ReasonPathNotScope},
		// wrappers: checked on the inner command, or refused
		{line: "env curl http://127.0.0.1:1", refuse: ReasonDenied},
		{line: "nice -n 5 rm -rf tools", refuse: "approval"},
		{line: "timeout 5 ssh host", refuse: ReasonDenied},
		{line: "echo tools | xargs rm -rf", refuse: "approval"},
		{line: "echo tools | xargs sh -c 'rm -rf $0'", refuse: ReasonNotAllowed},
		{line: "find . -name '*.ts' -exec rm {} \\;", refuse: "approval"},
		{line: "find tools -delete", refuse: "approval"},
		{line: "sh -c 'curl http://127.0.0.1:1'", refuse: ReasonDenied},
		{line: "bash -c 'rm -rf tools'", refuse: "approval"},
		{line: "exec rm -rf tools", refuse: "approval"},
		{line: "command rm -rf docs", refuse: "approval"},
		{line: "echo 'rm -rf tools' > notes/s.sh; sh notes/s.sh", refuse: "approval"},
		{line: "env PATH=/tmp ls", refuse: ReasonNotAllowed},
		{line: "env -S 'rm -rf tools'", refuse: ReasonNotAllowed},
		{line: "bash", refuse: ReasonNotAllowed},
		{line: "python3 -c 'import os; os.system(\"rm -rf tools\")'", refuse: ReasonNotAllowed},
		{line: "printf 'rm -rf tools\\n' | sort -S 1 -T notes --compress-program=sh", refuse: ReasonNotAllowed},
		{line: "chmod -R 000 .", refuse: ReasonPathNotScope},
		{line: "cd notes; chmod -R 000 ..", refuse: ReasonPathNotScope},
		{line: "mv . ../moved", refuse: ReasonPathNotScope},
		// redirections out of scope
		{line: "echo pwned > ../outside/x", refuse: ReasonPathNotScope},
		{line: "echo pwned >> /tmp/tgp-pwned", refuse: ReasonPathNotScope},
		{line: "cat < ../outside/secret.txt", refuse: ReasonPathNotScope},
		{line: "echo x > .git/hooks/pre-commit", refuse: ReasonPathNotScope},
		{line: "echo x > /dev/stdout", refuse: ReasonPathNotScope},
		{line: "source ../outside/evil.sh", refuse: ReasonPathNotScope},
		// symlinked directories
		{line: "echo pwned > link/x", refuse: ReasonPathNotScope},
		{line: "touch link/pwned", refuse: ReasonPathNotScope},
		{line: "cd link && touch pwned", check: func(t *testing.T, e *hostileEnv, res *Result) {
			if res.ExitCode == 0 || !strings.Contains(res.Stderr, "cd:") {
				t.Fatalf("cd through a symlink out of the root must fail: %+v", res)
			}
		}},
		{line: "cat link/secret.txt", refuse: ReasonPathNotScope},
		// paths named in arguments
		{line: "cat ../outside/secret.txt", refuse: ReasonPathNotScope},
		{line: "cp /etc/passwd notes/p", refuse: ReasonPathNotScope},
		{line: "cat .git/config", refuse: ReasonPathNotScope},
		{line: "cat .env", refuse: ReasonPathNotScope},
		{line: "ls .git", refuse: ReasonPathNotScope},
		{line: "cp docs/d.md ../outside/", refuse: ReasonPathNotScope},
		{line: "cat /proc/self/environ", refuse: ReasonPathNotScope},
		// contained: the checks let them run; the isolation holds
		{line: "cd ..; touch pwned; ls", check: func(t *testing.T, e *hostileEnv, res *Result) {
			if _, err := os.Stat(filepath.Join(e.base, "pwned")); err == nil || !strings.Contains(res.Stderr, "cd:") {
				t.Fatalf("cd .. must fail and the touch stay in the root: %+v", res)
			}
		}},
		{line: "echo /etc/passwd | xargs cat", check: noPasswd},
		{line: "echo ../outside/secret.txt | xargs cat", check: noSecret},
		{line: "echo .git/config | xargs cat; echo .env | xargs cat", check: noSecret},
		{line: "echo /proc/$PPID/environ | xargs cat", check: noSecret},
		{line: "printenv; env; echo $TGP_GIT_TOKEN $TGP_SQL_DSN", check: noSecret},
		{line: "export TGP_GIT_TOKEN=$TGP_SQL_DSN; printenv TGP_GIT_TOKEN TGP_SQL_DSN", check: noSecret},
		{line: "LD_PRELOAD=/tmp/x.so printenv LD_PRELOAD", check: func(t *testing.T, e *hostileEnv, res *Result) {
			if res.Stdout != "" || res.ExitCode == 0 {
				t.Fatalf("LD_PRELOAD reached a child: %+v", res)
			}
		}},
		{line: "cp /usr/bin/rm notes/cat && chmod +x notes/cat && PATH=notes:$PATH cat -rf docs", check: func(t *testing.T, e *hostileEnv, res *Result) {
			if res.ExitCode == 0 {
				t.Fatalf("a planted binary ran as cat: %+v", res)
			}
		}},
		{line: "echo 'int main(){}' > notes/x.c && ./notes/x.c", refuse: ReasonNotAllowed},
		{line: "echo /etc/hostname | xargs cat; echo ~/.ssh/id_rsa | xargs cat", check: func(t *testing.T, e *hostileEnv, res *Result) {
			if host, _ := os.ReadFile("/etc/hostname"); len(host) > 0 && strings.Contains(res.Stdout, strings.TrimSpace(string(host))) {
				t.Fatalf("/etc was readable: %q", res.Stdout)
			}
		}},
		// fork bombs: shell functions end at the command budget
		{line: ":(){ :|:; };:", refuse: "budget"},
		{line: ":(){ :|:& };:", check: func(t *testing.T, e *hostileEnv, res *Result) {}}, // its jobs die with the line
		{line: "f(){ f; }; f", refuse: "budget"},
		{line: "while true; do echo y; done", refuse: "budget"},
	}
	e := newHostileEnv(t)
	outside := treeHash(t, e.outside)
	keep := map[string]string{"tools": treeHash(t, filepath.Join(e.root, "tools")), "docs": treeHash(t, filepath.Join(e.root, "docs")),
		".git": treeHash(t, filepath.Join(e.root, ".git"))}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			res, err := e.r.Run(context.Background(), Request{Command: c.line, Timeout: 20 * time.Second})
			switch {
			case c.refuse == "approval":
				if !errors.Is(err, ErrApproval) {
					t.Fatalf("want approval_required, got %v %+v", err, res)
				}
			case c.refuse == "budget":
				if !errors.Is(err, ErrBudget) {
					t.Fatalf("want the command budget, got %v", err)
				}
			case c.refuse != "":
				wantViolation(t, c.line, err, c.refuse)
			default:
				if err != nil {
					t.Fatalf("want contained, got %v", err)
				}
				c.check(t, e, res)
			}
			if res != nil {
				noSecret(t, e, res)
			}
			if got := treeHash(t, e.outside); got != outside {
				t.Fatal("the directory outside the root changed")
			}
			for dir, h := range keep {
				if got := treeHash(t, filepath.Join(e.root, dir)); got != h {
					t.Fatalf("%s changed", dir)
				}
			}
			if _, err := os.Stat("/tmp/tgp-pwned"); err == nil {
				t.Fatal("/tmp/tgp-pwned exists")
			}
		})
	}
	if n := len(cases); n < 25 {
		t.Fatalf("only %d hostile lines", n)
	}
}

// TestForkBombOfProcessesIsBounded: a real program spawning processes
// without end (xargs -P 0) is stopped by the timeout, and its whole
// process group dies with it.
func TestForkBombOfProcessesIsBounded(t *testing.T) {
	e := newHostileEnv(t)
	before := treeHash(t, e.outside)
	res, err := e.r.Run(context.Background(), Request{Command: "seq 1 100000 | xargs -P 0 -n 1 sleep 313.375", Timeout: 500 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("want a timeout, got %v %+v", err, res)
	}
	waitNoProcess(t, "313.375")
	if treeHash(t, e.outside) != before {
		t.Fatal("outside changed")
	}
}

// TestShellFunctionBombLeavesNoGoroutines: the interpreter's own fork
// bomb ends at the budget and its goroutines go away.
func TestShellFunctionBombLeavesNoGoroutines(t *testing.T) {
	e := newHostileEnv(t)
	base := runtime.NumGoroutine()
	_, err := e.r.Run(context.Background(), Request{Command: ":(){ :|:; };:", Timeout: 10 * time.Second})
	if !errors.Is(err, ErrBudget) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fork bomb: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base+5 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left (started with %d)", runtime.NumGoroutine(), base)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLandlockHoldsWithoutTheChecks: the kernel-enforced scope alone (the
// helper started directly, as the runner does) refuses /etc/passwd to an
// allowed cat and writes outside paths.write.
func TestLandlockHoldsWithoutTheChecks(t *testing.T) {
	e := newHostileEnv(t)
	if e.r.Isolation().Mode != "landlock" {
		t.Skip("no Landlock on this kernel")
	}
	if e.r.Isolation().LandlockABI < 1 {
		t.Fatal("landlock mode without an ABI")
	}
	x := e.r.newRun(context.Background(), e.r.Scopes(), nil)
	defer x.close()
	spec := x.spec()
	for _, p := range spec.RO {
		if p == "/etc" || strings.HasPrefix(e.outside, p+"/") || p == e.outside || strings.HasSuffix(p, "/.git") {
			t.Fatalf("read rule %s is too wide", p)
		}
	}
	for _, p := range spec.RW {
		if !strings.HasPrefix(p, e.root+"/") && p != x.tmp || strings.HasSuffix(p, "/.git") {
			t.Fatalf("write rule %s is outside the root", p)
		}
	}
	res, err := e.r.Run(context.Background(), Request{Command: "echo /etc/passwd | xargs cat; echo ../outside/secret.txt | xargs cp docs/d.md"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stderr, "/etc/passwd: Permission denied") || strings.Contains(res.Stdout, "root:") {
		t.Fatalf("cat /etc/passwd under Landlock: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(e.outside, "d.md")); err == nil {
		t.Fatal("cp wrote outside the root")
	}
}

// TestLandlockGrantsArePrecise: the ruleset follows the globs, not their
// directories: a file outside a glob, a denied file deep in a granted
// tree and .git are out of a child's reach even when only a wrapper's
// stdin names them; directories made by the line are usable at once.
func TestLandlockGrantsArePrecise(t *testing.T) {
	root := testRoot(t)
	for p, c := range map[string]string{"docs/secret.txt": secretValue, "notes/deep/.env": secretValue, "notes/deep/ok.txt": "ok\n"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, p), []byte(c), 0o644))
	}
	cfg := DefaultConfig()
	cfg.Paths = Paths{Read: []string{"docs/*.md", "tools"}, Write: []string{"notes", "build"}, Deny: []string{"**/.env"}}
	r := newRunner(t, root, cfg)
	if r.Isolation().Mode != "landlock" {
		t.Skip("no Landlock on this kernel")
	}
	res, err := r.Run(context.Background(), Request{Command: "echo ../docs/d.md ../docs/secret.txt ../notes/deep/.env ../.git/config ../notes/deep/ok.txt | xargs -n 1 cat", Workdir: "tools"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stdout, secretValue) || !strings.Contains(res.Stdout, "# doc") || !strings.Contains(res.Stdout, "ok\n") {
		t.Fatalf("reads: %+v", res)
	}
	for _, p := range []string{"../docs/secret.txt", "../notes/deep/.env", "../.git/config"} {
		if !strings.Contains(res.Stderr, p+": Permission denied") {
			t.Fatalf("%s was not refused by Landlock: %q", p, res.Stderr)
		}
	}
	// Writes: paths.write only, new files and directories included, in
	// directories granted piecemeal too (notes/deep holds a denied .env).
	res, err = r.Run(context.Background(), Request{Command: "mkdir deep/new && echo deep/new/f deep/f2 n2.txt ../docs/w.md deep/.env | xargs -n 1 touch", Workdir: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"notes/deep/new/f", "notes/deep/f2", "notes/n2.txt"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Fatalf("%s: %v (%+v)", p, err, res)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "docs/w.md")); err == nil {
		t.Fatal("wrote outside paths.write")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "notes/deep/.env")); string(b) != secretValue {
		t.Fatal("touched a denied file")
	}
}

// TestLandlockBlocksTCP: with curl allowed on purpose, a child still
// cannot connect under Landlock (ABI 4+), while it can without.
func TestLandlockBlocksTCP(t *testing.T) {
	if _, err := os.Stat("/usr/bin/curl"); err != nil {
		t.Skip("no curl")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("reached")) }))
	defer srv.Close()
	root := testRoot(t)
	cfg := DefaultConfig()
	cfg.Deny = nil
	cfg.Categories.ReadOnly = append(cfg.Categories.ReadOnly, "curl")
	line := "curl -s " + srv.URL + "/"
	open := newRunner(t, root, cfg, WithLandlock(false))
	if res, err := open.Run(context.Background(), Request{Command: line}); err != nil || res.Stdout != "reached" {
		t.Fatalf("without Landlock curl should connect: %v %+v", err, res)
	}
	r := newRunner(t, root, cfg)
	if r.Isolation().Mode != "landlock" || r.Isolation().LandlockABI < 4 {
		t.Skip("no Landlock network rules on this kernel")
	}
	res, err := r.Run(context.Background(), Request{Command: line})
	if err != nil || res.ExitCode == 0 || res.Stdout == "reached" {
		t.Fatalf("under Landlock curl connected: %v %+v", err, res)
	}
}
