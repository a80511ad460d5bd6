package gittools

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestLogPathRandomHistories compares git_log with a path against git log
// -- <path> on random histories made for history simplification: merges
// whose sides made the same change (TREESAME to both parents) or none,
// merges resolved to one side, renames, deletes and re-adds of the same
// content, type changes between a file, a link and a directory, mode
// changes, and now and then a commit-graph with changed-path filters.
// Paths are files, directories (with and without a slash), gone paths and
// globs, each without and with --follow. TGP_LOGPATH_SEEDS / TGP_LOGPATH_SEED0 run more (seeds 0-39 and
// 100-159 agree with git).
func TestLogPathRandomHistories(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TGP_LOGPATH_SEEDS"))
	if n == 0 {
		n = 2
	}
	s0, _ := strconv.Atoi(os.Getenv("TGP_LOGPATH_SEED0"))
	for seed := s0; seed < s0+n; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { fuzzLogPaths(t, int64(seed)) })
	}
}

func fuzzLogPaths(t *testing.T, seed int64) {
	r := rand.New(rand.NewSource(seed))
	f := blameFixture(t)
	names := []string{"a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "l", "x"}
	bodies := []string{"one\n", "two\n", "one\ntwo\n", "three\n"}
	put := func(p string, kind int, body string) {
		full := filepath.Join(f.dir, p)
		_ = os.RemoveAll(full)
		_ = os.MkdirAll(filepath.Dir(full), 0o755)
		var err error
		switch kind {
		case 0:
			err = os.WriteFile(full, []byte(body), 0o644)
		case 1:
			err = os.WriteFile(full, []byte(body), 0o755)
		case 2:
			err = os.Symlink(strings.TrimSpace(body), full)
		default: // a directory in its place
			_ = os.MkdirAll(full, 0o755)
			err = os.WriteFile(filepath.Join(full, "in.txt"), []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ncommit := 0
	skew := r.Intn(3) == 0 // committer clocks out of order
	stamp := func() string {
		ncommit++
		if skew && r.Intn(3) == 0 {
			return fmt.Sprintf("2023-11-%02d %02d:00:00 +0000", 1+r.Intn(27), r.Intn(24))
		}
		return fmt.Sprintf("2023-11-%02d %02d:%02d:00 +0000", 1+ncommit/60%27, ncommit%24, ncommit%60)
	}
	commit := func(args ...string) {
		date := stamp()
		env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
		f.git(t, "add", "-A")
		if _, e, err := bgit(t, f.dir, env, append([]string{"commit", "-q", "--allow-empty", "-m", fmt.Sprint("c", ncommit)}, args...)...); err != nil {
			t.Fatalf("commit: %v %s", err, e)
		}
	}
	change := func() {
		p := names[r.Intn(len(names))]
		switch r.Intn(8) {
		case 0:
			_ = os.RemoveAll(filepath.Join(f.dir, p))
		case 1: // rename
			q := names[r.Intn(len(names))]
			if _, err := os.Lstat(filepath.Join(f.dir, p)); err == nil && q != p {
				_ = os.RemoveAll(filepath.Join(f.dir, q))
				_ = os.MkdirAll(filepath.Dir(filepath.Join(f.dir, q)), 0o755)
				_ = os.Rename(filepath.Join(f.dir, p), filepath.Join(f.dir, q))
			}
		case 2:
			put(p, 1+r.Intn(3), bodies[r.Intn(len(bodies))])
		default:
			put(p, 0, bodies[r.Intn(len(bodies))])
		}
	}
	put("a.txt", 0, "one\n")
	put("d/c.txt", 0, "two\n")
	commit()
	branches := []string{"main"}
	cur := "main"
	for step := 0; step < 20+r.Intn(20); step++ {
		switch x := r.Intn(10); {
		case x < 5:
			for k := 1 + r.Intn(2); k > 0; k-- {
				change()
			}
			commit()
		case x == 5:
			commit() // empty
		case x == 6: // branch or switch
			if r.Intn(2) == 0 || len(branches) == 1 {
				b := fmt.Sprint("br", len(branches))
				f.git(t, "checkout", "-q", "-b", b)
				branches, cur = append(branches, b), b
			} else if b := branches[r.Intn(len(branches))]; b != cur {
				f.git(t, "checkout", "-q", "-f", b)
				cur = b
			}
		default: // merge
			b := branches[r.Intn(len(branches))]
			if b == cur {
				continue
			}
			date := stamp()
			env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
			strategy := [][]string{{}, {"-s", "ours"}, {"-X", "theirs"}, {"-X", "ours"}}[r.Intn(4)]
			args := append(append([]string{"merge", "-q", "--no-edit"}, strategy...), b)
			if o := branches[r.Intn(len(branches))]; o != b && o != cur && r.Intn(4) == 0 && len(strategy) == 0 {
				args = append(args, o) // an octopus
			}
			if r.Intn(2) == 0 {
				args = append(args[:2], append([]string{"--no-ff"}, args[2:]...)...)
			}
			if _, _, err := bgit(t, f.dir, env, args...); err != nil {
				// Resolve what is left by taking the worktree as it is.
				_, _, _ = bgit(t, f.dir, nil, "add", "-A")
				if _, e, err := bgit(t, f.dir, env, "commit", "-q", "--no-edit"); err != nil {
					_, _, _ = bgit(t, f.dir, nil, "merge", "--abort")
					_, _, _ = bgit(t, f.dir, nil, "reset", "-q", "--hard")
					_ = e
				}
			}
		}
	}
	if r.Intn(3) == 0 {
		f.git(t, "commit-graph", "write", "--reachable", "--changed-paths")
	}
	paths := append([]string{}, names...)
	paths = append(paths, "d", "d/", "d/e", "d/.", "*.txt", "d/*", "l/in.txt", "x/in.txt", ":(glob)**/f.txt", ".")
	sort.Strings(paths)
	for _, p := range paths {
		compareTool(t, f, "git_log", map[string]any{"path": p, "format": "%h %s"}, "", "log", "--format=%h %s", "--", p)
		compareTool(t, f, "git_log", map[string]any{"path": p, "format": "%h %s", "follow": true}, "", "log", "--follow", "--format=%h %s", "--", p)
	}
	for _, b := range branches[1:] {
		if r.Intn(2) == 0 {
			continue
		}
		f.git(t, "checkout", "-q", "-f", b)
		p := paths[r.Intn(len(paths))]
		compareTool(t, f, "git_log", map[string]any{"path": p, "format": "%h %s"}, "", "log", "--format=%h %s", "--", p)
	}
}
