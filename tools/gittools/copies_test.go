package gittools

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCopyDetectionMatchesGit drives diff.renames=copies with generated
// changes (exact and edited copies of modified, deleted and renamed
// files, one source copied twice) and compares git_status, git_diff and
// git_show with the git CLI byte for byte.
//
// TGP_COPIES_SEEDS (default 30) is how many seeds run (make test runs
// fewer, make fuzz-git more), from TGP_COPIES_SEED0 (default 1).
func TestCopyDetectionMatchesGit(t *testing.T) {
	n := int64(30)
	if v, err := strconv.Atoi(os.Getenv("TGP_COPIES_SEEDS")); err == nil && v > 0 {
		n = int64(v)
	}
	seed0 := int64(1)
	if v, err := strconv.ParseInt(os.Getenv("TGP_COPIES_SEED0"), 10, 64); err == nil {
		seed0 = v
	}
	for seed := seed0; seed < seed0+n; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			f := newRepo(t)
			f.git(t, "config", "diff.renames", "copies")
			body := func(n int) string {
				var b strings.Builder
				for i := 0; i < n; i++ {
					fmt.Fprintf(&b, "line %d of %d\n", r.Intn(1000), n)
				}
				return b.String()
			}
			names := []string{"a.txt", "b.txt", "dir/c.txt", "dir/d.txt", "e.txt"}
			content := map[string]string{}
			for _, n := range names[:2+r.Intn(4)] {
				content[n] = body(20 + r.Intn(30))
				f.write(t, n, content[n])
			}
			f.commitAll(t, "base")
			var srcs []string
			for n := range content {
				srcs = append(srcs, n)
			}
			for i := 0; i < 2+r.Intn(4); i++ {
				src := srcs[r.Intn(len(srcs))]
				data, err := os.ReadFile(filepath.Join(f.dir, src))
				if err != nil {
					continue // deleted by an earlier step
				}
				dst := fmt.Sprintf("copy%d/%s", i, filepath.Base(src))
				switch r.Intn(6) {
				case 0, 1: // exact copy
					f.write(t, dst, string(data))
				case 2: // copy with an edit
					f.write(t, dst, string(data)+"edited\n")
				case 3: // the source changes
					f.write(t, dst, string(data))
					f.write(t, src, string(data)+"source changed\n")
				case 4: // the source goes
					f.write(t, dst, string(data))
					_ = os.Remove(filepath.Join(f.dir, src))
				default: // a rename
					f.write(t, dst, string(data))
					_ = os.Remove(filepath.Join(f.dir, src))
					f.write(t, dst+".2", string(data))
				}
			}
			f.git(t, "add", "-A")
			g := open(t, f.dir)
			same(t, "status", g.call(t, "git_status", map[string]any{"porcelain": true, "branch": false}), f.git(t, "status", "--porcelain"))
			same(t, "long status", g.call(t, "git_status", map[string]any{"porcelain": false}), f.git(t, "status"))
			same(t, "diff --cached", g.call(t, "git_diff", map[string]any{"cached": true}), f.git(t, "diff", "--cached"))
			same(t, "diff --cached --stat", g.call(t, "git_diff", map[string]any{"cached": true, "stat": true}), f.git(t, "diff", "--cached", "--stat"))
			same(t, "diff --cached --name-only", g.call(t, "git_diff", map[string]any{"cached": true, "name_only": true}), f.git(t, "diff", "--cached", "--name-only"))
			f.commitAll(t, "copies")
			same(t, "show", g.call(t, "git_show", map[string]any{}), f.git(t, "show"))
			same(t, "show --stat", g.call(t, "git_show", map[string]any{"stat": true}), f.git(t, "show", "--stat"))
			same(t, "diff HEAD~1 HEAD", g.call(t, "git_diff", map[string]any{"from_ref": "HEAD~1", "to_ref": "HEAD"}), f.git(t, "diff", "HEAD~1", "HEAD"))
		})
	}
}
