//go:build unix

package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// TestReadsSeeOtherAgentsFiles: a persist that replays on another agent's
// commit leaves that agent's new file unwritten in the root (the
// repository writes it when something reads the root); every tool that
// reads the root sees it all the same, and write_file over it sees it
// existed.
func TestReadsSeeOtherAgentsFiles(t *testing.T) {
	const other = "/** From a. */\nexport default () => 'from a';\n"
	cases := []struct {
		tool string
		args map[string]any
		want string
		not  string // nor this
		opts []Option
	}{
		{"read_file", map[string]any{"path": "tools/a/x.ts"}, "from a", "", nil},
		{"list_files", map[string]any{"dir": "tools"}, "tools/a/x.ts", "", nil},
		{"list_dir", map[string]any{"path": "tools"}, "x.ts", "", nil},
		{"grep_files", map[string]any{"pattern": "from a"}, "tools/a/x.ts", "", nil},
		{"shell", map[string]any{"command": "cat tools/a/x.ts", "workdir": "."}, "from a", "", nil},
		{"git_status", map[string]any{}, "## main...origin/main", "tools/a", nil},
		{"write_file", map[string]any{"path": "tools/a/x.ts", "content": other}, `"path":"tools/a/x.ts"`, "", nil},
		{"patch_file", map[string]any{"path": "tools/a/x.ts", "old_string": "'from a'", "new_string": "'patched'"}, "tools/a/x.ts", "", nil},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: tools/a/x.ts\n@@\n-export default () => 'from a';\n+export default () => 'patched';\n*** End Patch\n"}, "tools/a/x.ts", "", nil},
		{"delete_file", map[string]any{"path": "tools/a/x.ts"}, "tools/a/x.ts", "", nil},
		{"exec_tool", map[string]any{"path": "tools/a/x.ts"}, "from a", "", nil},
		{"exec_command", map[string]any{"cmd": "cat tools/a/x.ts", "yield_time_ms": 30000}, "from a", "", nil},
		{"exec_sql", map[string]any{"sql": "SELECT 'sql' AS x"}, "sql", "", []Option{WithSetting("sql.driver", "sqlite")}},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
			a := bootKernel(t, remote, false)
			b := bootKernel(t, remote, false, c.opts...)
			call(t, a, "write_file", map[string]string{"path": "tools/a/x.ts", "content": other})
			call(t, b, "write_file", map[string]string{"path": "tools/b/y.ts", "content": "/** B. */\nexport default () => 'b';\n"})
			if n := b.Repo().Unwritten(); n != 1 {
				t.Fatalf("b left %d files unwritten, want a's one", n)
			}
			res := call(t, b, c.tool, c.args)
			out, _ := json.Marshal(res.Value)
			if s, ok := res.Value.(string); ok {
				out = []byte(s)
			}
			if !strings.Contains(string(out), c.want) || c.not != "" && strings.Contains(string(out), c.not) {
				t.Fatalf("%s: %s, want %q in it (and not %q)", c.tool, out, c.want, c.not)
			}
			if w, ok := res.Value.(tools.WriteResult); ok && w.Created {
				t.Fatalf("write_file over a's file says it created it: %+v", w)
			}
			if n := b.Repo().Unwritten(); n != 0 {
				t.Fatalf("%d files unwritten after %s", n, c.tool)
			}
		})
	}
}

// TestShutdownAndTheUnwrittenFiles: by default Shutdown leaves the files
// no call read unwritten (skip-worktree entries, git status clean) and the
// next kernel's first read writes them; WithWholeRootAtShutdown (the
// CLI's) writes them at Shutdown.
func TestShutdownAndTheUnwrittenFiles(t *testing.T) {
	for _, whole := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "whole"}[whole], func(t *testing.T) {
			remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
			a := bootKernel(t, remote, false)
			root := t.TempDir()
			opts := []Option{WithEnviron([]string{}), WithRoot(root), WithSetting("git.remote", remote),
				WithSetting("git.author.name", "Agent"), WithSetting("git.author.email", "agent@example.com")}
			if whole {
				opts = append(opts, WithWholeRootAtShutdown())
			}
			b, err := New(context.Background(), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Boot(context.Background()); err != nil {
				t.Fatal(err)
			}
			call(t, a, "write_file", map[string]string{"path": "tools/a/x.ts", "content": "export default 1;\n"})
			call(t, b, "write_file", map[string]string{"path": "tools/b/y.ts", "content": "export default 2;\n"})
			if n := b.Repo().Unwritten(); n != 1 {
				t.Fatalf("b left %d files unwritten, want 1", n)
			}
			if err := b.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := map[bool]string{false: "S tools/a/x.ts\n", true: "H tools/a/x.ts\n"}[whole]
			if got := gittest.Git(t, root, "ls-files", "-v", "tools/a/x.ts"); got != want {
				t.Fatalf("ls-files -v: %q, want %q", got, want)
			}
			if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Fatalf("git status:\n%s", st)
			}
			c, err := New(context.Background(), opts[:5]...)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Boot(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer c.Shutdown(context.Background())
			if got := call(t, c, "read_file", map[string]string{"path": "tools/a/x.ts"}); !strings.Contains(fmt.Sprint(got.Value), "export default 1;") {
				t.Fatalf("read_file in the next kernel: %+v", got.Value)
			}
			if got := gittest.Git(t, root, "ls-files", "-v", "tools/a/x.ts"); got != "H tools/a/x.ts\n" {
				t.Fatalf("after the next kernel's read, ls-files -v: %q", got)
			}
		})
	}
}

// TestHostFSSeesOtherAgentsFiles: a host reading the root through
// Kernel.FS, without a tool call and without Materialize, sees the file
// another agent pushed that b's persist left unwritten; the FS writes
// only what the operation's path holds, and a write over such a file
// through it is committed as the host's.
func TestHostFSSeesOtherAgentsFiles(t *testing.T) {
	const mine = "/** Mine. */\nexport default () => 'mine';\n"
	cases := []struct {
		name string
		run  func(fsys *vfs.FS) (string, error)
		want string
		left int // files still unwritten after it
	}{
		{"ReadFile", func(fsys *vfs.FS) (string, error) {
			b, err := fsys.ReadFile("tools/a/x.ts")
			return string(b), err
		}, "from a", 0},
		{"Stat of its directory", func(fsys *vfs.FS) (string, error) {
			info, err := fsys.Stat("tools/a")
			if err != nil {
				return "", err
			}
			return info.Name() + fmt.Sprint(info.IsDir()), nil
		}, "atrue", 0},
		{"ReadDir", func(fsys *vfs.FS) (string, error) {
			infos, err := fsys.ReadDir("tools")
			var names []string
			for _, i := range infos {
				names = append(names, i.Name())
			}
			return strings.Join(names, ","), err
		}, "a,b", 0},
		{"ReadDir elsewhere", func(fsys *vfs.FS) (string, error) {
			infos, err := fsys.ReadDir("tools/b")
			if err != nil || len(infos) != 1 {
				return "", err
			}
			return infos[0].Name(), nil
		}, "y.ts", 1},
		{"the registry's walk", func(fsys *vfs.FS) (string, error) {
			paths, err := registry.ToolPaths(fsys)
			return strings.Join(paths, ","), err
		}, "tools/a/x.ts,tools/b/y.ts", 0},
		{"Afero Open", func(fsys *vfs.FS) (string, error) {
			f, err := fsys.Afero().Open("tools/a/x.ts")
			if err != nil {
				return "", err
			}
			defer f.Close()
			b, err := io.ReadAll(f)
			return string(b), err
		}, "from a", 0},
		{"WriteFile over it", func(fsys *vfs.FS) (string, error) {
			return "", fsys.WriteFile("tools/a/x.ts", []byte(mine), 0o644)
		}, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
			a := bootKernel(t, remote, false)
			b := bootKernel(t, remote, false)
			call(t, a, "write_file", map[string]string{"path": "tools/a/x.ts", "content": "/** A. */\nexport default () => 'from a';\n"})
			call(t, b, "write_file", map[string]string{"path": "tools/b/y.ts", "content": "/** B. */\nexport default () => 'b';\n"})
			if n := b.Repo().Unwritten(); n != 1 {
				t.Fatalf("b left %d files unwritten, want a's one", n)
			}
			got, err := c.run(b.FS())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, c.want) {
				t.Fatalf("%q, want %q in it", got, c.want)
			}
			if n := b.Repo().Unwritten(); n != c.left {
				t.Fatalf("%d files unwritten after it, want %d", n, c.left)
			}
			if st := gittest.Git(t, b.FS().Root(), "status", "--porcelain"); c.want == "" && st != " M tools/a/x.ts\n" || c.want != "" && st != "" {
				t.Fatalf("git status after it:\n%s", st)
			}
			if c.want != "" {
				return
			}
			if _, err := b.Persist(context.Background(), tools.Change{Paths: []string{"tools/a/x.ts"}, Message: "mine"}); err != nil {
				t.Fatal(err)
			}
			if got := gittest.Git(t, gittest.Clone(t, remote), "show", "HEAD:tools/a/x.ts"); got != mine {
				t.Fatalf("the remote has %q, want the host's", got)
			}
		})
	}
}

// TestKilledKernelLeavesASaneRoot: a process whose kernel persisted over
// another agent's commit and was killed (no Shutdown) leaves the other
// agent's file unwritten: git status is clean and git fsck finds nothing
// wrong; the next kernel on the root writes the file at its first read
// through its FS, and a person with only git writes every such file with
// `git sparse-checkout disable`.
func TestKilledKernelLeavesASaneRoot(t *testing.T) {
	if os.Getenv("TGP_KILLED_ROOT") != "" {
		killedKernelProcess(t)
		return
	}
	for _, next := range []string{"kernel", "git", "deferred"} {
		t.Run(next, func(t *testing.T) {
			remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
			root := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledKernelLeavesASaneRoot$", "-test.count=1")
			cmd.Env = append(os.Environ(), "TGP_KILLED_ROOT="+root, "TGP_KILLED_REMOTE="+remote, "TGP_KILLED_OTHER="+t.TempDir(),
				"TGP_KILLED_DEFER="+fmt.Sprint(next == "deferred"))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the kernel's process was not killed: %v\n%s", err, out)
			}
			if next == "deferred" {
				killedBeforeTheRootTookItsReplay(t, root, remote)
				return
			}
			if got := gittest.Git(t, root, "ls-files", "-v", "tools"); got != "S tools/a/x.ts\nH tools/b/y.ts\n" {
				t.Fatalf("ls-files -v after the kill:\n%s", got)
			}
			if _, err := os.Stat(filepath.Join(root, "tools/a/x.ts")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the other agent's file is on disk: %v", err)
			}
			if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Fatalf("git status after the kill:\n%s", st)
			}
			gittest.Git(t, root, "fsck", "--strict")
			want := gittest.Git(t, root, "show", "HEAD:tools/a/x.ts")
			switch next {
			case "kernel":
				k := bootKernel(t, remote, false, WithRoot(root))
				if got, err := k.FS().ReadFile("tools/a/x.ts"); err != nil || string(got) != want {
					t.Fatalf("the next kernel's FS reads %q (%v), want %q", got, err, want)
				}
			case "git":
				gittest.Git(t, root, "sparse-checkout", "disable")
				if got, err := os.ReadFile(filepath.Join(root, "tools/a/x.ts")); err != nil || string(got) != want {
					t.Fatalf("after git sparse-checkout disable: %q (%v), want %q", got, err, want)
				}
			}
			if got := gittest.Git(t, root, "ls-files", "-v", "tools"); got != "H tools/a/x.ts\nH tools/b/y.ts\n" {
				t.Fatalf("ls-files -v at the end:\n%s", got)
			}
			if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Fatalf("git status at the end:\n%s", st)
			}
		})
	}
}

// killedKernelProcess boots a kernel on TGP_KILLED_ROOT, has another
// kernel push a file, persists over it and kills its own process.
func killedKernelProcess(t *testing.T) {
	remote := os.Getenv("TGP_KILLED_REMOTE")
	boot := func(root string) *Kernel {
		return bootKernel(t, remote, false, WithRoot(root), WithSetting("git.defer_replays", os.Getenv("TGP_KILLED_DEFER") == "true"))
	}
	b := boot(os.Getenv("TGP_KILLED_ROOT"))
	a := boot(os.Getenv("TGP_KILLED_OTHER"))
	call(t, a, "write_file", map[string]string{"path": "tools/a/x.ts", "content": "export default 1;\n"})
	call(t, b, "write_file", map[string]string{"path": "tools/b/y.ts", "content": "export default 2;\n"})
	if n := b.Repo().Unwritten(); n != 1 {
		t.Fatalf("b left %d files unwritten, want 1", n)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// killedBeforeTheRootTookItsReplay: the killed kernel deferred its
// replay (git.defer_replays), so its root is at its own commit on the
// seed: clean, whole, without the other agent's file; the next kernel's
// boot finds the change on the remote, drops its own commit and brings
// the root to the remote's tip.
func killedBeforeTheRootTookItsReplay(t *testing.T, root, remote string) {
	t.Helper()
	if got := gittest.Git(t, root, "ls-files", "-v", "tools"); got != "H tools/b/y.ts\n" {
		t.Fatalf("ls-files -v after the kill:\n%s", got)
	}
	if got, seed := gittest.Git(t, root, "rev-parse", "HEAD~1"), gittest.Git(t, remote, "rev-parse", "main~2"); got != seed {
		t.Fatalf("HEAD~1 %s, want the seed %s", got, seed)
	}
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status after the kill:\n%s", st)
	}
	gittest.Git(t, root, "fsck", "--strict")
	k := bootKernel(t, remote, false, WithRoot(root))
	if got, tip := gittest.Git(t, root, "rev-parse", "HEAD"), gittest.Git(t, remote, "rev-parse", "main"); got != tip {
		t.Fatalf("after the next boot HEAD is %s, the remote %s", got, tip)
	}
	if got, err := k.FS().ReadFile("tools/a/x.ts"); err != nil || string(got) != "export default 1;\n" {
		t.Fatalf("the next kernel reads %q (%v)", got, err)
	}
	if log := gittest.Git(t, remote, "log", "--format=%s", "main"); strings.Count(log, "tools/b/y.ts") != 1 {
		t.Fatalf("remote history:\n%s", log)
	}
	if st := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status at the end:\n%s", st)
	}
}
