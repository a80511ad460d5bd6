package gittools

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestRegressReflogFollowsLogAllRefUpdates: core.logAllRefUpdates=false,
// in the repository's config or the global one, keeps new logs from
// being started but not entries from being added to the logs that exist
// (git's log_ref_setup); the tools, which read it from the repository's
// file only and logged nothing at all when false, must leave the logs git
// leaves.
func TestRegressReflogFollowsLogAllRefUpdates(t *testing.T) {
	gittest.RequireGit(t)
	dates := []string{"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000"}
	logs := func(dir string) string {
		var names []string
		_ = filepath.WalkDir(filepath.Join(dir, ".git", "logs"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(filepath.Join(dir, ".git"), p)
				names = append(names, rel)
			}
			return nil
		})
		sort.Strings(names)
		var b strings.Builder
		for _, n := range names {
			data, _ := os.ReadFile(filepath.Join(dir, ".git", n))
			b.WriteString(n + ":\n")
			for _, l := range strings.SplitAfter(string(data), "\n") {
				if _, msg, ok := strings.Cut(l, "\t"); ok {
					b.WriteString("  " + msg)
				}
			}
		}
		return b.String()
	}
	for _, c := range []struct {
		name   string
		repo   string // core.logAllRefUpdates in the repository ("": unset)
		global string // in the global file
		noLogs bool   // the repository's logs removed first
	}{
		{name: "repository false, logs exist", repo: "false"},
		{name: "global false, logs exist", global: "false"},
		{name: "repository false, no logs", repo: "false", noLogs: true},
		{name: "global false over repository unset, no logs", global: "false", noLogs: true},
		{name: "repository true over global false, no logs", repo: "true", global: "false", noLogs: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newRepo(t)
			f.write(t, "a.txt", "a\n")
			f.commitAll(t, "base")
			// git init sets it to true in the repository's file.
			if c.repo != "" {
				f.git(t, "config", "core.logAllRefUpdates", c.repo)
			} else {
				f.git(t, "config", "--unset", "core.logAllRefUpdates")
			}
			if c.noLogs {
				if err := os.RemoveAll(filepath.Join(f.dir, ".git", "logs")); err != nil {
					t.Fatal(err)
				}
			}
			f.write(t, "a.txt", "b\n")
			f.git(t, "add", "a.txt")
			global := filepath.Join(t.TempDir(), "gitconfig")
			body := ""
			if c.global != "" {
				body = "[core]\n\tlogAllRefUpdates = " + c.global + "\n"
			}
			if err := os.WriteFile(global, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
			env := append([]string{"GIT_CONFIG_GLOBAL=" + global}, dates...)
			tool := openEnv(t, toolDir, env...)
			for _, call := range []struct {
				tool string
				args map[string]any
				git  []string
			}{
				{"git_commit", map[string]any{"type": "fix", "message": "two"}, []string{"commit", "-q", "-m", "fix: two"}},
				{"git_branch", map[string]any{"create": "nb"}, []string{"branch", "nb"}},
				{"git_checkout", map[string]any{"branch": "nb"}, []string{"checkout", "-q", "nb"}},
			} {
				raw, _ := json.Marshal(call.args)
				if _, err := tool.set.Call(context.Background(), call.tool, raw); err != nil {
					t.Fatalf("%s: %v", call.tool, err)
				}
				cmd := exec.Command("git", call.git...)
				cmd.Dir, cmd.Env = gitDir, append(gittest.Env(t.TempDir()), env...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", call.git, err, out)
				}
				same(t, call.tool+" logs", logs(toolDir), logs(gitDir))
			}
		})
	}
}
