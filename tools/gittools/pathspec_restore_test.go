package gittools

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestRestorePathspecRandom compares git_restore with git restore (and
// git_checkout from HEAD with git checkout HEAD --) for random pathspecs
// (magic, globs, names holding glob characters, directories, paths that
// match nothing) from random directories, staged, worktree or both: the
// outcome, the message, the index and the worktree must be git's.
// TGP_RESTORESPEC_SEEDS runs more.
func TestRestorePathspecRandom(t *testing.T) {
	gittest.RequireGit(t)
	n, _ := strconv.Atoi(os.Getenv("TGP_RESTORESPEC_SEEDS"))
	if n == 0 {
		n = 60
	}
	s0, _ := strconv.Atoi(os.Getenv("TGP_RESTORESPEC_SEED0"))
	base, paths, magics, wds := pathspecFixture(t)
	// Something staged too, so --staged has work.
	gittest.Git(t, base, "add", "a.txt", "new.txt")
	diffs := 0
	for seed := s0; seed < s0+n; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		var spec []string
		for k := 1 + r.Intn(2); k > 0; k-- {
			spec = append(spec, magics[r.Intn(len(magics))]+paths[r.Intn(len(paths))])
		}
		wd := wds[r.Intn(len(wds))]
		staged, worktree := r.Intn(2) == 0, r.Intn(3) > 0
		if !staged && !worktree {
			worktree = true
		}
		gitDir, toolDir := copyTree(t, base), copyTree(t, base)
		_ = os.MkdirAll(filepath.Join(gitDir, wd), 0o755)
		_ = os.MkdirAll(filepath.Join(toolDir, wd), 0o755)
		gargs := []string{"restore"}
		if staged {
			gargs = append(gargs, "--staged")
		}
		if staged && worktree {
			gargs = append(gargs, "--worktree")
		}
		args := map[string]any{"paths": anySlice(spec), "staged": staged, "worktree": worktree}
		if wd != "" {
			args["working_dir"] = wd
		}
		tool := "git_restore"
		if r.Intn(4) == 0 {
			// git checkout HEAD -- paths: the same checkout_paths, in
			// overlay mode, from a tree.
			tool, gargs = "git_checkout", []string{"checkout", "-q", "HEAD"}
			args = map[string]any{"paths": anySlice(spec), "commit": "HEAD"}
			if wd != "" {
				args["working_dir"] = wd
			}
		}
		gargs = append(append(gargs, "--"), spec...)
		gout, gerr := gittest.GitErr(filepath.Join(gitDir, wd), gargs...)
		g := open(t, toolDir)
		raw, _ := json.Marshal(args)
		_, terr := g.set.Call(context.Background(), tool, raw)
		if te, ok := terr.(*tools.Error); ok && gerr != nil && strings.TrimSpace(te.Message) != gitMessage(gout) {
			diffs++
			t.Errorf("seed %d: git %s (in %q): message %q, git's %q", seed, strings.Join(gargs, " "), wd, te.Message, gout)
		}
		view := func(dir string) string {
			st, _ := gittest.GitErr(dir, "status", "--porcelain=2", "-uall")
			ls, _ := gittest.GitErr(dir, "ls-files", "-s")
			return st + ls
		}
		gv, tv := view(gitDir), view(toolDir)
		what := fmt.Sprintf("seed %d: git %s (in %q)", seed, strings.Join(gargs, " "), wd)
		switch {
		case (gerr == nil) != (terr == nil):
			diffs++
			t.Errorf("%s: git error %v, tool error %v", what, gerr, terr)
		case gv != tv:
			diffs++
			t.Errorf("%s: state differs:\n--- git\n%s--- tool\n%s", what, gv, tv)
		}
	}
	if diffs > 0 {
		t.Errorf("%d of %d differ", diffs, n)
	}
}
