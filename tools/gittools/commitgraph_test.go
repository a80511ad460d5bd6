package gittools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestLogAndBlameThroughCommitGraph: on a generated history with merges
// and renames, git_log of paths (files, directories, renamed, gone) and
// git_blame print git's bytes whether the repository has no commit-graph,
// git's own (single file, with changed-path filters) or a split chain
// of it whose top layer has no filters.
func TestLogAndBlameThroughCommitGraph(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "h")
	bare := dir + ".git"
	facts := gittest.History(t, bare, gittest.HistoryOptions{Seed: 11, Commits: 450, Dirs: 3, FilesPerDir: 4, BigLines: 200, BigEvery: 3, Repack: true})
	gittest.Git(t, "", "clone", "-q", bare, dir)
	f := open(t, dir)
	paths := []string{facts.Path, facts.Big, "pkg01", "pkg02/file03.go", "no/such/path"}
	for _, l := range strings.Split(f.git(t, "log", "--format=", "--name-status", "--diff-filter=RD", "-M"), "\n") {
		if fs := strings.Fields(l); len(fs) >= 2 {
			paths = append(paths, fs[1]) // renamed or deleted away
		}
	}
	check := func(when string) {
		t.Helper()
		for _, p := range paths {
			same(t, when+": git_log -- "+p, f.call(t, "git_log", map[string]any{"oneline": true, "path": p}), f.git(t, "log", "--oneline", "--", p))
		}
		same(t, when+": git_blame", f.call(t, "git_blame", map[string]any{"path": facts.Big}), f.git(t, "blame", facts.Big))
		same(t, when+": git_blame of a file", f.call(t, "git_blame", map[string]any{"path": facts.Path}), f.git(t, "blame", facts.Path))
	}
	check("no graph")
	f.git(t, "commit-graph", "write", "--reachable", "--changed-paths")
	check("git's graph")
	f.git(t, "commit-graph", "write", "--reachable", "--changed-paths", "--split=replace")
	f.write(t, "late.txt", "late\n")
	f.git(t, "add", "late.txt")
	f.git(t, "commit", "-q", "-m", "late")
	f.git(t, "commit-graph", "write", "--reachable", "--split", "--no-changed-paths")
	check("a chain, its top without filters")
}
