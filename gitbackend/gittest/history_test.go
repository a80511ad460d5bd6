package gittest

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHistoryShape: the generated history has the commits, merges and
// delta chains asked for, and git finds nothing wrong with it.
func TestHistoryShape(t *testing.T) {
	RequireGit(t)
	dir := filepath.Join(t.TempDir(), "h.git")
	o := HistoryOptions{Seed: 1, Commits: 400, Dirs: 3, FilesPerDir: 5, BigLines: 300, BigEvery: 5, Repack: true}
	facts := History(t, dir, o)
	n, _ := strconv.Atoi(strings.TrimSpace(Git(t, dir, "rev-list", "--count", "main")))
	if n < o.Commits {
		t.Fatalf("%d commits, want at least %d", n, o.Commits)
	}
	merges, _ := strconv.Atoi(strings.TrimSpace(Git(t, dir, "rev-list", "--count", "--merges", "main")))
	if merges == 0 {
		t.Fatal("no merges")
	}
	if !strings.Contains(Git(t, dir, "verify-pack", "-v", packOf(t, dir)), "chain length = 2") {
		t.Fatal("no delta chains in the pack")
	}
	Git(t, dir, "fsck", "--strict")
	for _, p := range []string{facts.Path, facts.Big} {
		if strings.TrimSpace(Git(t, dir, "log", "--oneline", "-1", "main", "--", p)) == "" {
			t.Fatalf("%s never changed", p)
		}
	}
	// The same options, the same repository.
	again := filepath.Join(t.TempDir(), "h.git")
	History(t, again, o)
	if a, b := Git(t, dir, "rev-parse", "main"), Git(t, again, "rev-parse", "main"); a != b {
		t.Fatalf("not deterministic: %s vs %s", a, b)
	}
}

func packOf(t *testing.T, dir string) string {
	m, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	if len(m) != 1 {
		t.Fatalf("%d packs", len(m))
	}
	return m[0]
}
