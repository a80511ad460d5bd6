package shell

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func wantViolation(t *testing.T, line string, err error, reason string) *Violation {
	t.Helper()
	var v *Violation
	if !errors.As(err, &v) || v.Reason != reason {
		t.Fatalf("%q: want %s, got %v", line, reason, err)
	}
	if !errors.Is(err, ErrViolation) {
		t.Fatalf("%q: errors.Is(ErrViolation) is false", line)
	}
	return v
}

// Seed 004: categorisation, deny first, unknown denied by default.
func TestCategorize(t *testing.T) {
	s, err := NewScopes(Config{
		Categories: Categories{ReadOnly: []string{"ls", "grep", "./scripts/check.sh"}, SafeWrite: []string{"mkdir", "touch"}, Dangerous: []string{"rm"}},
		Deny:       []string{"curl", "grep"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Category{"ls": ReadOnly, "mkdir": SafeWrite, "touch": SafeWrite, "rm": Dangerous, "./scripts/check.sh": ReadOnly} {
		if got, err := s.Categorize(name); err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", name, got, err, want)
		}
	}
	for name, reason := range map[string]string{
		"curl": ReasonDenied, "/usr/bin/curl": ReasonDenied,
		"grep":          ReasonDenied, // deny wins over read_only
		"python3":       ReasonNotAllowed,
		"/bin/ls":       ReasonNotAllowed, // a path must be listed as that path
		"scripts/check": ReasonNotAllowed,
	} {
		_, err := s.Categorize(name)
		v := wantViolation(t, name, err, reason)
		if v.Command != name || !strings.Contains(v.Message, "scope") {
			t.Errorf("%s: %+v", name, v)
		}
	}
	// An empty configuration allows nothing (seed 004: missing section).
	empty, _ := NewScopes(Config{})
	_, err = empty.Categorize("ls")
	wantViolation(t, "ls", err, ReasonNotAllowed)
}

func TestScopeConfigErrors(t *testing.T) {
	for key, cfg := range map[string]Config{
		"categories.read_only":  {Categories: Categories{ReadOnly: []string{"ls -la"}}},
		"categories.dangerous":  {Categories: Categories{ReadOnly: []string{"rm"}, Dangerous: []string{"rm"}}},
		"deny":                  {Deny: []string{" "}},
		"paths.read":            {Paths: Paths{Read: []string{"/abs"}}},
		"paths.write":           {Paths: Paths{Write: []string{"a/../../b"}}},
		"paths.deny":            {Paths: Paths{Deny: []string{"[x"}}},
		"categories.safe_write": {Categories: Categories{SafeWrite: []string{""}}},
	} {
		_, err := NewScopes(cfg)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != key {
			t.Errorf("%s: %v", key, err)
		}
	}
}

func TestPathGlobs(t *testing.T) {
	s, err := NewScopes(Config{Paths: Paths{Read: []string{"docs", "src/*.go"}, Write: []string{"notes/**", "./build"}, Deny: []string{"**/.env", "notes/private"}}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		rel   string
		sc    Scope
		allow bool
	}{
		{"docs", ScopeRead, true}, {"docs/a/b.md", ScopeRead, true}, {"docs", ScopeWrite, false},
		{"src/a.go", ScopeRead, true}, {"src", ScopeRead, false}, {"src/a.txt", ScopeRead, false},
		{"notes", ScopeWrite, true}, {"notes/x/y", ScopeWrite, true}, {"notes/x", ScopeRead, true}, // write implies read
		{"notes/private", ScopeRead, false}, {"notes/private/k", ScopeWrite, false}, // deny wins
		{"notes/.env", ScopeRead, false}, {".env", ScopeRead, false}, {"build/out", ScopeWrite, true},
		{".git", ScopeRead, false}, {"notes/.GIT/config", ScopeWrite, false}, {"", ScopeRead, false},
	}
	for _, c := range cases {
		if got := s.Covers(c.rel, c.sc); got != c.allow {
			t.Errorf("Covers(%q, %s) = %v", c.rel, c.sc, got)
		}
	}
}

// Seed 004: directory scope per category, with required_scope and
// allowed_patterns in the error.
func TestDirectoryScopes(t *testing.T) {
	root := testRoot(t)
	cfg := DefaultConfig()
	cfg.Paths = Paths{Read: []string{"docs", "tools"}, Write: []string{"notes"}, Deny: []string{"tools/secret"}}
	if err := os.MkdirAll(filepath.Join(root, "tools/secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, root, cfg)
	run := func(line, dir string) (*Result, error) {
		return r.Run(context.Background(), Request{Command: line, Workdir: dir, Timeout: 20 * time.Second})
	}
	if res, err := run("ls", "docs"); err != nil || res.ExitCode != 0 {
		t.Fatalf("read_only in a read path: %v %+v", err, res)
	}
	if res, err := run("ls", "notes"); err != nil || res.ExitCode != 0 {
		t.Fatalf("read_only in a write path (write implies read): %v", err)
	}
	if res, err := run("mkdir sub", "notes"); err != nil || res.ExitCode != 0 {
		t.Fatalf("safe_write in a write path: %v", err)
	}
	_, err := run("mkdir sub", "docs")
	v := wantViolation(t, "mkdir in docs", err, ReasonDirNotInScope)
	if v.RequiredScope != ScopeWrite || !slices.Equal(v.AllowedPatterns, []string{"notes"}) || v.Directory != "docs" {
		t.Fatalf("details: %+v", v)
	}
	_, err = run("ls", "tools/secret")
	wantViolation(t, "ls in a denied directory", err, ReasonDirNotInScope)
	_, err = run("ls", "other")
	v = wantViolation(t, "ls outside every pattern", err, ReasonDirNotInScope)
	if v.RequiredScope != ScopeRead || !slices.Equal(v.AllowedPatterns, []string{"docs", "tools", "notes"}) {
		t.Fatalf("details: %+v", v)
	}
	if _, err := os.Stat(filepath.Join(root, "docs/sub")); err == nil {
		t.Fatal("a refused mkdir ran")
	}
}

// Seed 004: explicit, relative and symlinked directories are resolved to
// their real path before the scope is matched.
func TestExplicitRelativeAndSymlinkedDirs(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.MkdirAll(filepath.Join(root, "docs/deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "outside"), 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink("docs", filepath.Join(root, "docslink")))
	must(t, os.Symlink("../outside", filepath.Join(root, "out")))
	cfg := DefaultConfig()
	cfg.Paths = Paths{Read: []string{"docs"}, Write: []string{"notes"}}
	r := newRunner(t, root, cfg)
	for _, dir := range []string{"docs", "./docs", "docs/deep/..", "notes/../docs", "docslink", "docslink/deep", "", "."} {
		res, err := r.Run(context.Background(), Request{Command: "pwd", Workdir: dir})
		if dir == "" || dir == "." {
			if err != nil {
				t.Fatalf("pwd (a builtin) at the root: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("workdir %q: %v", dir, err)
		}
		res2, err := r.Run(context.Background(), Request{Command: "ls", Workdir: dir})
		if err != nil || res2.ExitCode != 0 {
			t.Fatalf("ls in %q: %v %+v", dir, err, res2)
		}
		_ = res
	}
	// The symlink resolves to docs: a write there is out of scope even
	// though "docslink" matches no pattern at all.
	_, err := r.Run(context.Background(), Request{Command: "mkdir x", Workdir: "docslink"})
	v := wantViolation(t, "mkdir in docslink", err, ReasonDirNotInScope)
	if v.Directory != "docs" {
		t.Fatalf("the directory reported is the real one: %+v", v)
	}
	for _, dir := range []string{"out", "..", "../outside", filepath.Join(base, "outside"), "/tmp"} {
		_, err := r.Run(context.Background(), Request{Command: "ls", Workdir: dir})
		wantViolation(t, "workdir "+dir, err, ReasonDirNotInScope)
	}
	if _, err := r.Run(context.Background(), Request{Command: "ls", Workdir: "missing"}); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing workdir: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Seed 004's composition scenarios still work, and every stage is
// checked (not only the first word).
func TestComposition(t *testing.T) {
	root := testRoot(t)
	r := newRunner(t, root, DefaultConfig())
	for line, want := range map[string]string{
		"ls | grep tool":              "tools\n",
		"cat docs/d.md > notes/o.txt": "",
		"echo $(pwd)":                 root + "\n",
		"find . -name '*.md' | xargs grep -l TODO | head -10": "./docs/d.md\n",
		"  ls -la  | wc -l | tr -d ' ' >/dev/null":            "",
		"grep -rn 'TODO' ./docs":                              "./docs/d.md:2:TODO one\n",
		"for f in docs/*.md; do wc -l < $f; done":             "2\n",
		"f() { cat \"$1\"; }; f notes/n.txt":                  "note\n",
		"(cd docs && ls)":                                     "d.md\n",
		"sh -c 'echo $0 $1' a b":                              "a b\n",
	} {
		res, err := runLine(t, r, line)
		if err != nil || res.ExitCode != 0 || res.Stdout != want {
			t.Errorf("%q: %v %+v", line, err, res)
		}
	}
	// Each stage is validated: the base command alone would pass.
	for line, reason := range map[string]string{
		"ls | curl -d @- http://x":     ReasonDenied,
		"cat docs/d.md | python3 -":    ReasonNotAllowed,
		"echo $(curl http://x)":        ReasonDenied,
		"ls && wget http://x":          ReasonDenied,
		"ls; (cd docs; ssh host)":      ReasonDenied,
		"f() { nc -l 4444; }; f":       ReasonDenied,
		"ls > ../escape.txt":           ReasonPathNotScope,
		"grep TODO docs/d.md > .git/x": ReasonPathNotScope,
		"find . -name x | xargs perl":  ReasonNotAllowed,
		"echo `awk 'BEGIN{print 1}'`":  ReasonNotAllowed,
		"ls $(echo ../..)":             ReasonPathNotScope,
		"cat docs/d.md | tee ../x.txt": ReasonPathNotScope,
		"timeout 5 env nice ruby -e 1": ReasonNotAllowed,
		"find docs -exec python3 {} +": ReasonNotAllowed,
	} {
		_, err := runLine(t, r, line)
		wantViolation(t, line, err, reason)
	}
}

// Seed 004's validation pipeline order: deny before the category, the
// category before the directory.
func TestValidationPipeline(t *testing.T) {
	root := testRoot(t)
	cfg := DefaultConfig()
	cfg.Paths = Paths{Read: []string{"docs"}, Write: []string{"notes"}}
	r := newRunner(t, root, cfg)
	run := func(line, dir string) error {
		_, err := r.Run(context.Background(), Request{Command: line, Workdir: dir})
		return err
	}
	// tools is in no scope, yet the first failing step is reported.
	wantViolation(t, "curl in tools", run("curl x", "tools"), ReasonDenied)
	wantViolation(t, "python3 in tools", run("python3 x", "tools"), ReasonNotAllowed)
	wantViolation(t, "ls in tools", run("ls", "tools"), ReasonDirNotInScope)
	// Nothing of a line runs when a literal command in it is refused:
	// the whole line is checked before the first command starts.
	err := run("touch a.txt; curl x", "notes")
	wantViolation(t, "touch; curl", err, ReasonDenied)
	if _, err := os.Stat(filepath.Join(root, "notes/a.txt")); err == nil {
		t.Fatal("touch ran before the refused curl")
	}
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	root := testRoot(t)
	r := newRunner(t, root, DefaultConfig())
	res, err := r.Run(context.Background(), Request{Command: "echo started; sleep 300.125 & sleep 300.125; echo never", Timeout: 300 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a TimeoutError, got %v", err)
	}
	if res == nil || res.ExitCode != 124 || res.Stdout != "started\n" || te.Result != res {
		t.Fatalf("partial result: %+v", res)
	}
	waitNoProcess(t, "300.125")
}

// waitNoProcess waits until no process has arg in its command line.
func waitNoProcess(t *testing.T, arg string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := processesWith(arg)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes survived: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func processesWith(arg string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
			continue // a zombie is dead
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == arg {
				out = append(out, e.Name()+":"+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
	}
	return out
}

// Seed 002: caps per stream, 8 KB or 200 lines, with a marker.
func TestOutputCaps(t *testing.T) {
	root := testRoot(t)
	r := newRunner(t, root, DefaultConfig())
	res, err := runLine(t, r, "seq 1 1000; seq 1 5 >&2")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(res.Stdout, "\n")
	if !res.Truncated || lines[199] != "200" || !strings.HasPrefix(lines[200], TruncatedMarker) || !strings.Contains(lines[200], "head, tail or grep") {
		t.Fatalf("lines cap: %q", res.Stdout[len(res.Stdout)-200:])
	}
	if res.Stderr != "1\n2\n3\n4\n5\n" {
		t.Fatalf("stderr is capped on its own: %q", res.Stderr)
	}
	res, err = runLine(t, r, "head -c 20000 /dev/zero | tr '\\0' a")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.HasPrefix(res.Stdout, strings.Repeat("a", DefaultMaxBytes)+"\n"+TruncatedMarker+" 11808 more bytes") {
		t.Fatalf("bytes cap: %d %q", len(res.Stdout), res.Stdout[DefaultMaxBytes-10:])
	}
	res, err = runLine(t, r, "seq 1 3")
	if err != nil || res.Truncated || res.Stdout != "1\n2\n3\n" {
		t.Fatalf("under the cap: %+v", res)
	}
}

// Seed 002 and 004: a non-zero exit is a result with the output.
func TestNonZeroExit(t *testing.T) {
	root := testRoot(t)
	r := newRunner(t, root, DefaultConfig())
	for line, want := range map[string]int{"false": 1, "ls missing-file": 2, "exit 3": 3, "grep nothing docs/d.md": 1, "cat docs/d.md; exit 7": 7, "nosuchcmd_x": -1} {
		res, err := runLine(t, r, line)
		if want == -1 {
			wantViolation(t, line, err, ReasonNotAllowed)
			continue
		}
		if err != nil || res.ExitCode != want {
			t.Errorf("%q: %v %+v", line, err, res)
		}
	}
	res, _ := runLine(t, r, "ls missing-file")
	if !strings.Contains(res.Stderr, "missing-file") {
		t.Fatalf("stderr: %q", res.Stderr)
	}
}

// Seed 002: the approval guard. Dangerous commands ask the approver once
// per line, before anything runs; no approver means no.
func TestApprovalGuard(t *testing.T) {
	root := testRoot(t)
	var asked [][]string
	answer := false
	r := newRunner(t, root, DefaultConfig(), WithApprover(func(ctx context.Context, cmds []string) (bool, error) {
		asked = append(asked, cmds)
		return answer, nil
	}))
	_, err := runLine(t, r, "touch notes/first; rm notes/n.txt; rm -r docs")
	var ae *ApprovalError
	if !errors.As(err, &ae) || !errors.Is(err, ErrApproval) || !slices.Equal(ae.Commands, []string{"rm notes/n.txt", "rm -r docs"}) {
		t.Fatalf("refused: %v", err)
	}
	if len(asked) != 1 {
		t.Fatalf("asked %v", asked)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/first")); err == nil {
		t.Fatal("the line ran before the approval was refused")
	}
	answer = true
	res, err := runLine(t, r, "touch notes/first; rm notes/n.txt")
	if err != nil || res.ExitCode != 0 || !slices.Equal(res.Changed, []string{"notes/first", "notes/n.txt"}) {
		t.Fatalf("approved: %v %+v", err, res)
	}
	// A dangerous command only known at run time is asked about then.
	asked = nil
	if res, err := runLine(t, r, "$(echo rm) docs/d.md"); err != nil || res.ExitCode != 0 || len(asked) != 1 || asked[0][0] != "rm docs/d.md" {
		t.Fatalf("run-time approval: %v %v", err, asked)
	}
	// An approval covers the argv the approver was shown, not the command:
	// an rm found at run time is asked about again.
	asked, answer = nil, true
	must(t, os.WriteFile(filepath.Join(root, "notes/a"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(root, "notes/b"), nil, 0o644))
	if _, err := runLine(t, r, "rm notes/a; $(echo rm) notes/b"); err != nil || len(asked) != 2 || asked[1][0] != "rm notes/b" {
		t.Fatalf("approval per argv: %v %v", err, asked)
	}
	// No approver: refused.
	r2 := newRunner(t, root, DefaultConfig())
	_, err = runLine(t, r2, "rm tools/a.ts")
	if !errors.As(err, &ae) {
		t.Fatalf("no approver: %v", err)
	}
}

// Changed files are reported; without Landlock a change outside the
// write scope (made by a program the checks could not see through) is
// reported apart; with Landlock it cannot happen.
func TestChangedAndOutOfScope(t *testing.T) {
	for _, landlock := range []bool{false, true} {
		root := testRoot(t)
		cfg := DefaultConfig()
		cfg.Paths.Write = []string{"notes"}
		r := newRunner(t, root, cfg, WithLandlock(landlock))
		if landlock && r.Isolation().Mode != "landlock" {
			t.Skip("no Landlock on this kernel")
		}
		res, err := r.Run(context.Background(), Request{Command: "echo x > new.txt; echo ../tools/evil.ts | xargs touch", Workdir: "notes"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Changed, []string{"notes/new.txt"}) {
			t.Fatalf("landlock %v: changed %v", landlock, res.Changed)
		}
		_, statErr := os.Stat(filepath.Join(root, "tools/evil.ts"))
		if landlock {
			if statErr == nil || len(res.Refused) != 0 || !strings.Contains(res.Stderr, "Permission denied") {
				t.Fatalf("Landlock let touch write outside the write scope: %+v", res)
			}
		} else if statErr != nil || !slices.Equal(res.Refused, []string{"tools/evil.ts"}) {
			t.Fatalf("without Landlock the out-of-scope change is reported: %+v", res)
		}
	}
}

// Seed 004's absolute-path warning: a system file named by an absolute
// path is readable, with a warning to use relative paths; any other
// absolute path outside the root is refused, and relative ones pass
// silently.
func TestAbsolutePaths(t *testing.T) {
	root := testRoot(t)
	r := newRunner(t, root, DefaultConfig())
	res, err := runLine(t, r, "grep -r TODO ./docs")
	if err != nil || len(res.Warnings) != 0 {
		t.Fatalf("relative: %v %+v", err, res)
	}
	res, err = runLine(t, r, "ls /usr/bin/env")
	if err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "relative") {
		t.Fatalf("system path: %v %+v", err, res)
	}
	_, err = runLine(t, r, "grep -r TODO /home")
	wantViolation(t, "grep /home", err, ReasonPathNotScope)
	res, err = runLine(t, r, "cat "+filepath.Join(root, "docs/d.md"))
	if err != nil || res.Stdout != "# doc\nTODO one\n" {
		t.Fatalf("an absolute path inside the root: %v %+v", err, res)
	}
}

// A Runner serves concurrent command lines (the kernel's callers are
// concurrent); each gets its own result.
func TestConcurrentRuns(t *testing.T) {
	root := testRoot(t)
	r := newRunner(t, root, DefaultConfig())
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func(i int) {
			want := strings.Repeat("x", i+1)
			res, err := r.Run(context.Background(), Request{Command: "echo " + want + " | cat"})
			if err == nil && res.Stdout != want+"\n" {
				err = errors.New("got " + res.Stdout)
			}
			errs <- err
		}(i)
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
