package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/gittools"
	"github.com/tgp-go/tgp/vfs"
)

const bigRepoVersion = "v1"

var bigOnce sync.Once
var bigDir string

// bigRepo generates (once, cached in the temp dir) a repository with
// 10,000 files and 2,000 commits; blame.txt has 1,000 lines touched by 300
// of the commits. git fast-import makes it in seconds.
func bigRepo(b *testing.B) string {
	b.Helper()
	bigOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), "tgp-bench-bigrepo-"+bigRepoVersion)
		if _, err := os.Stat(filepath.Join(dir, ".git", "tgp-ready")); err == nil {
			bigDir = dir
			return
		}
		os.RemoveAll(dir)
		gittest.Git(b, "", "init", "-q", "-b", "main", dir)
		var in bytes.Buffer
		mark := 0
		blame := make([]string, 1000)
		for i := range blame {
			blame[i] = fmt.Sprintf("line %d original", i)
		}
		when := int64(1700000000)
		for c := 0; c < 2000; c++ {
			mark++
			fmt.Fprintf(&in, "commit refs/heads/main\nmark :%d\nauthor Dev%d <dev%d@example.com> %d +0000\ncommitter Dev%d <dev%d@example.com> %d +0000\n",
				mark, c%7, c%7, when+int64(c)*60, c%7, c%7, when+int64(c)*60)
			msg := fmt.Sprintf("commit %d", c)
			fmt.Fprintf(&in, "data %d\n%s\n", len(msg), msg)
			if c > 0 {
				fmt.Fprintf(&in, "from :%d\n", mark-1)
			}
			if c == 0 {
				for f := 0; f < 10000; f++ {
					body := fmt.Sprintf("export const v%d = %d;\n", f, f)
					fmt.Fprintf(&in, "M 100644 inline src/pkg%03d/file%05d.ts\ndata %d\n%s\n", f%100, f, len(body), body)
				}
			} else {
				for k := 0; k < 3; k++ {
					f := (c*7 + k*13) % 10000
					body := fmt.Sprintf("export const v%d = %d; // rev %d\n", f, f, c)
					fmt.Fprintf(&in, "M 100644 inline src/pkg%03d/file%05d.ts\ndata %d\n%s\n", f%100, f, len(body), body)
				}
			}
			if c%7 == 0 && c/7 < 300 {
				for k := 0; k < 3; k++ {
					i := (c*31 + k*97) % len(blame)
					blame[i] = fmt.Sprintf("line %d changed in %d", i, c)
				}
			}
			if c == 0 || (c%7 == 0 && c/7 < 300) {
				body := strings.Join(blame, "\n") + "\n"
				fmt.Fprintf(&in, "M 100644 inline blame.txt\ndata %d\n%s\n", len(body), body)
			}
		}
		cmd := exec.Command("git", "fast-import", "--quiet")
		cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Env(b.TempDir()), &in
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("fast-import: %v %s", err, out)
		}
		gittest.Git(b, dir, "checkout", "-q", "-f", "main")
		_ = os.WriteFile(filepath.Join(dir, ".git", "tgp-ready"), nil, 0o644)
		bigDir = dir
	})
	if bigDir == "" {
		b.Fatal("no big repo")
	}
	return bigDir
}

func gitSet(b *testing.B, dir string) *tools.Set {
	b.Helper()
	fsys, err := vfs.NewOS(dir)
	if err != nil {
		b.Fatal(err)
	}
	repo, err := gitbackend.Open(context.Background(), fsys.Billy(), gitbackend.Config{})
	if err != nil {
		b.Fatal(err)
	}
	set := tools.NewSet()
	if err := set.Add(gittools.Tools(gittools.Deps{FS: fsys, Repo: func() *gitbackend.Repo { return repo }, AuthorName: "B", AuthorEmail: "b@example.com"})...); err != nil {
		b.Fatal(err)
	}
	return set
}

func runTool(b *testing.B, set *tools.Set, name, args string) {
	if _, err := set.Call(context.Background(), name, json.RawMessage(args)); err != nil {
		b.Fatal(err)
	}
}

func runGit(b *testing.B, dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, gittest.Env(os.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v %s", args, err, out)
	}
}

// BenchmarkGitTools runs each read-only tool and the git CLI on the same
// 10,000-file, 2,000-commit repository.
func BenchmarkGitTools(b *testing.B) {
	dir := bigRepo(b)
	set := gitSet(b, dir)
	cases := []struct {
		name, tool, args string
		git              []string
	}{
		{"status-clean", "git_status", `{}`, []string{"status", "--porcelain=1", "-b"}},
		{"log-100", "git_log", `{"max_count":100}`, []string{"log", "-n", "100"}},
		{"log-path", "git_log", `{"path":"src/pkg007/file00007.ts","oneline":true}`, []string{"log", "--oneline", "--", "src/pkg007/file00007.ts"}},
		{"blame-1000-lines", "git_blame", `{"path":"blame.txt"}`, []string{"blame", "blame.txt"}},
	}
	for _, c := range cases {
		b.Run(c.name+"/tool", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runTool(b, set, c.tool, c.args)
			}
		})
		b.Run(c.name+"/git-cli", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runGit(b, dir, c.git...)
			}
		})
	}
	b.Run("status-100-modified", func(b *testing.B) {
		work := filepath.Join(b.TempDir(), "w")
		runGit(b, "", "clone", "-q", dir, work)
		for f := 0; f < 100; f++ {
			p := filepath.Join(work, fmt.Sprintf("src/pkg%03d/file%05d.ts", f%100, f))
			_ = os.WriteFile(p, []byte("changed\n"), 0o644)
		}
		ws := gitSet(b, work)
		b.Run("tool", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runTool(b, ws, "git_status", `{}`)
			}
		})
		b.Run("git-cli", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runGit(b, work, "status", "--porcelain=1", "-b")
			}
		})
	})
}

// BenchmarkGitMutating: git_add of 1,000 files and git_commit on the
// 10,000-file repository, against the git CLI.
func BenchmarkGitMutating(b *testing.B) {
	dir := bigRepo(b)
	prep := func(b *testing.B) string {
		b.StopTimer()
		work := filepath.Join(b.TempDir(), "w")
		runGit(b, "", "clone", "-q", dir, work)
		for f := 0; f < 1000; f++ {
			p := filepath.Join(work, "new", fmt.Sprintf("f%04d.txt", f))
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.WriteFile(p, []byte(fmt.Sprint(f)), 0o644)
		}
		b.StartTimer()
		return work
	}
	b.Run("add-1000/tool", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w := prep(b)
			runTool(b, gitSet(b, w), "git_add", `{"paths":["new"]}`)
		}
	})
	b.Run("add-1000/git-cli", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w := prep(b)
			runGit(b, w, "add", "--", "new")
		}
	})
	b.Run("commit/tool", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w := prep(b)
			b.StopTimer()
			runGit(b, w, "add", "--", "new")
			s := gitSet(b, w)
			b.StartTimer()
			runTool(b, s, "git_commit", `{"type":"feat","message":"bench"}`)
		}
	})
	b.Run("commit/git-cli", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w := prep(b)
			b.StopTimer()
			runGit(b, w, "add", "--", "new")
			b.StartTimer()
			runGit(b, w, "commit", "-q", "-m", "feat: bench")
		}
	})
}
