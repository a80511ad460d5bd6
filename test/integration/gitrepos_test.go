package integration

// The differential suite's checks on existing repositories: the
// development corpus of real histories (merges, annotated tags, mailmaps,
// long files, years of commits), which CI does not have. See
// docs/git-fidelity.md for how to fetch and run it.

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
)

// TestGitDifferentialOnRepos runs the suite's read and mutating checks on
// the work trees TGP_GIT_REPOS names (comma-separated): each is copied
// once, its worktree changed a little by the generator's file operations
// (edits, new files, deletions, staged changes; TGP_GIT_SEED0 picks
// them), then checks are generated until TGP_GIT_CASES (default 200) per
// repository and compared with git as the suite compares them.
// TGP_GIT_TOOLS limits the tools. Skipped without TGP_GIT_REPOS.
func TestGitDifferentialOnRepos(t *testing.T) {
	requireGit(t)
	list := os.Getenv("TGP_GIT_REPOS")
	if list == "" {
		t.Skip("TGP_GIT_REPOS names no repository")
	}
	n := envInt("TGP_GIT_CASES", 200)
	seed0 := int64(envInt("TGP_GIT_SEED0", 1))
	only := os.Getenv("TGP_GIT_TOOLS")
	for _, repo := range strings.Split(list, ",") {
		repo = strings.TrimSpace(repo)
		if repo == "" {
			continue
		}
		t.Run(repo, func(t *testing.T) {
			start := time.Now()
			dir := copyDir(t, repo)
			r := rand.New(rand.NewSource(seed0))
			b := &builder{t: t, dir: dir, clock: time.Now().Unix(), zone: "+0000", who: identities[0]}
			for k := 1 + r.Intn(6); k > 0; k-- {
				switch r.Intn(5) {
				case 0:
					b.apply(op{Kind: "write", Path: genName(r), Content: r.Intn(9), Seed: r.Int63()})
				case 1:
					b.apply(op{Kind: "delete", Sel: r.Intn(1 << 20)})
				case 2:
					b.apply(op{Kind: "stage", Sel: r.Intn(1 << 20), Flag: r.Intn(2) == 0})
				default:
					b.apply(op{Kind: "edit", Sel: r.Intn(1 << 20), Content: r.Intn(9), Seed: r.Int63()})
				}
			}
			f := facts(dir)
			var cs []check
			for s := seed0; len(cs) < n; s++ {
				for _, c := range genChecksWith(rand.New(rand.NewSource(s)), dir, f) {
					if only == "" || strings.Contains(","+only+",", ","+c.Tool+",") {
						cs = append(cs, c)
					}
				}
			}
			cs = cs[:n]
			differing := 0
			for _, c := range cs {
				if bad, detail := runCheck(t, dir, c); bad {
					differing++
					t.Errorf("DIFF %s :: %s", c, firstLine(strings.SplitN(detail, "\n", 2)[0]+" "+strings.Join(strings.SplitN(detail, "\n", 4)[1:], " | ")))
				}
			}
			fmt.Fprintf(os.Stderr, "git differential suite on %s: %d checks, %d differing, %s\n", repo, len(cs), differing, time.Since(start).Round(time.Second))
		})
	}
}
