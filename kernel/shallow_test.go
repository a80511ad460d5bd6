package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestShallowRootsReadLikeGit: a root booted with git.depth
// (a shallow clone, over a local remote and smart HTTP) answers git_log,
// git_log with a path, git_show and git_blame byte for byte as git does
// there: boundary commits are parentless.
func TestShallowRootsReadLikeGit(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	bare := filepath.Join(dir, "r.git")
	work := filepath.Join(dir, "w")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", bare)
	gittest.Git(t, "", "init", "-q", "-b", "main", work)
	for i := 1; i <= 5; i++ {
		if err := os.WriteFile(filepath.Join(work, "f.txt"), []byte(fmt.Sprintf("line %d\nsame\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := os.WriteFile(filepath.Join(work, "g.txt"), []byte(fmt.Sprint(i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gittest.Git(t, work, "add", "-A")
		gittest.Git(t, work, "-c", "user.name=U", "-c", "user.email=u@x", "commit", "-q", "-m", fmt.Sprint("commit ", i))
	}
	gittest.Git(t, work, "push", "-q", bare, "main")
	gittest.Git(t, bare, "config", "http.receivepack", "true")
	srv := gittest.NewHTTPServer(t, dir, "")
	for _, remote := range []string{bare, srv.URL("r.git")} {
		for _, depth := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/depth%d", remote, depth), func(t *testing.T) {
				root := t.TempDir()
				k, err := New(context.Background(), WithEnviron([]string{}), WithRoot(root), WithSetting("git.remote", remote), WithSetting("git.depth", depth))
				if err != nil {
					t.Fatal(err)
				}
				if err := k.Boot(context.Background()); err != nil {
					t.Fatal(err)
				}
				defer k.Shutdown(context.Background())
				for _, c := range []struct {
					tool, args string
					git        []string
				}{
					{"git_log", `{}`, []string{"log"}},
					{"git_log", `{"path":"g.txt"}`, []string{"log", "--", "g.txt"}},
					{"git_log", `{"oneline":true}`, []string{"log", "--oneline"}},
					{"git_show", `{}`, []string{"show"}},
					{"git_blame", `{"path":"f.txt"}`, []string{"blame", "f.txt"}},
				} {
					res, err := k.Call(context.Background(), c.tool, json.RawMessage(c.args))
					if err != nil {
						t.Fatalf("%s %s: %v", c.tool, c.args, err)
					}
					want, err := exec.Command("git", append([]string{"-C", root}, c.git...)...).Output()
					if err != nil {
						t.Fatal(err)
					}
					if res.Value != string(want) {
						t.Fatalf("%s %s:\ntool %q\ngit  %q", c.tool, c.args, res.Value, want)
					}
				}
			})
		}
	}
}
