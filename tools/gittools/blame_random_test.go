package gittools

// A randomized differential test of git_blame against git blame.

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

// TestBlameRandomHistories builds random histories with the git CLI
// (edits of files made of few repeated lines, renames with and without
// edits, copies, deletes, branches, --no-ff merges with conflicts resolved
// by hand, committer dates out of order) and compares git_blame with git
// blame for every file, at HEAD, in the working tree and over a range. A few seeds run
// by default; TGP_BLAME_SEEDS / TGP_BLAME_SEED0 run more (seeds 1000-1199
// passed when this was written).
func TestBlameRandomHistories(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TGP_BLAME_SEEDS"))
	if n == 0 {
		n = 4
	}
	s0, _ := strconv.Atoi(os.Getenv("TGP_BLAME_SEED0"))
	for seed := s0; seed < s0+n; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { fuzzHistory(t, int64(seed)) })
	}
}

func fuzzHistory(t *testing.T, seed int64) {
	r := rand.New(rand.NewSource(seed))
	f := blameFixture(t)
	words := []string{"}", "{", "", "\treturn x;", "  two", "alpha", "beta", "// c", "func f() {", "end", "gamma", "delta"}
	gen := func(k int) []string {
		var out []string
		for i := 0; i < k; i++ {
			out = append(out, words[r.Intn(len(words))])
		}
		return out
	}
	files := map[string][]string{}
	names := []string{"a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g.txt", "h h.txt"}
	write := func(p string, ls []string) {
		files[p] = ls
		f.write(t, p, strings.Join(ls, "\n")+"\n")
	}
	for i := 0; i < 3; i++ {
		write(names[i], gen(5+r.Intn(30)))
	}
	f.git(t, "add", "-A")
	ncommit := 0
	commit := func() {
		ncommit++
		day := 1 + r.Intn(27)
		date := fmt.Sprintf("2023-11-%02d %02d:00:00 +0000", day, r.Intn(24))
		env := []string{"GIT_AUTHOR_NAME=" + fmt.Sprint("Au", r.Intn(5)), "GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
		if _, e, err := bgit(t, f.dir, env, "commit", "-q", "--allow-empty", "-m", fmt.Sprint("c", ncommit)); err != nil {
			t.Fatalf("commit: %v %s", err, e)
		}
	}
	commit()
	keys := func() []string {
		var ks []string
		for k := range files {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	branches := []string{"main"}
	cur := "main"
	for step := 0; step < 40; step++ {
		ks := keys()
		x := r.Intn(10)
		if (x == 4 || x == 3) && len(branches) > 1 && r.Intn(2) == 0 {
			x = 7
		}
		if x == 2 {
			x = 6
		}
		switch {
		case x < 5 && len(ks) > 0: // edit
			p := ks[r.Intn(len(ks))]
			ls := append([]string(nil), files[p]...)
			for e := 0; e < 1+r.Intn(4); e++ {
				at := r.Intn(len(ls) + 1)
				switch r.Intn(3) {
				case 0:
					ls = append(ls[:at], append(gen(1+r.Intn(3)), ls[at:]...)...)
				case 1:
					if at < len(ls) {
						ls = append(ls[:at], ls[at+1:]...)
					}
				default:
					if at < len(ls) {
						ls[at] = words[r.Intn(len(words))]
					}
				}
			}
			write(p, ls)
			f.git(t, "add", "-A")
			commit()
		case x == 5 && len(ks) > 0: // rename (maybe with edit)
			p := ks[r.Intn(len(ks))]
			q := names[r.Intn(len(names))]
			if _, ok := files[q]; ok || q == p {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(f.dir, q)), 0o755); err != nil {
				t.Fatal(err)
			}
			f.git(t, "mv", p, q)
			files[q] = files[p]
			delete(files, p)
			if r.Intn(2) == 0 {
				write(q, append(files[q], gen(2)...))
			}
			f.git(t, "add", "-A")
			commit()
		case x == 6: // branch or switch
			if r.Intn(2) == 0 || len(branches) == 1 {
				b := fmt.Sprint("br", len(branches))
				f.git(t, "checkout", "-q", "-b", b)
				branches = append(branches, b)
				cur = b
			} else {
				b := branches[r.Intn(len(branches))]
				if b == cur {
					continue
				}
				f.git(t, "checkout", "-q", b)
				cur = b
			}
			files = map[string][]string{}
			for _, p := range strings.Split(strings.TrimSpace(f.git(t, "ls-files")), "\n") {
				if p == "" {
					continue
				}
				p = strings.Trim(p, "\"")
				data, err := os.ReadFile(filepath.Join(f.dir, p))
				if err != nil {
					continue
				}
				files[p] = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			}
		case x == 7 && len(branches) > 1: // merge
			b := branches[r.Intn(len(branches))]
			if b == cur {
				continue
			}
			day := 1 + r.Intn(27)
			date := fmt.Sprintf("2023-11-%02d 12:00:00 +0000", day)
			env := []string{"GIT_AUTHOR_NAME=Merger", "GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
			if _, _, err := bgit(t, f.dir, env, "merge", "-q", "--no-ff", "--no-edit", b); err != nil {
				// Resolve by hand: take ours with some theirs lines.
				out, _, _ := bgit(t, f.dir, nil, "diff", "--name-only", "--diff-filter=U")
				for _, p := range strings.Fields(out) {
					ours, _, _ := bgit(t, f.dir, nil, "show", ":2:"+p)
					theirs, _, _ := bgit(t, f.dir, nil, "show", ":3:"+p)
					f.write(t, p, ours+theirs)
				}
				f.git(t, "add", "-A")
				if _, e, err := bgit(t, f.dir, env, "commit", "-q", "--no-edit"); err != nil {
					t.Fatalf("merge commit: %v %s", err, e)
				}
			}
			files = map[string][]string{}
			for _, p := range strings.Split(strings.TrimSpace(f.git(t, "ls-files")), "\n") {
				if p == "" {
					continue
				}
				p = strings.Trim(p, "\"")
				data, _ := os.ReadFile(filepath.Join(f.dir, p))
				files[p] = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			}
		case x == 8: // new file, maybe a copy
			q := names[r.Intn(len(names))]
			if _, ok := files[q]; ok {
				continue
			}
			if len(ks) > 0 && r.Intn(2) == 0 {
				write(q, files[ks[r.Intn(len(ks))]])
			} else {
				write(q, gen(3+r.Intn(10)))
			}
			f.git(t, "add", "-A")
			commit()
		case x == 9 && len(ks) > 1: // delete
			p := ks[r.Intn(len(ks))]
			f.git(t, "rm", "-q", p)
			delete(files, p)
			commit()
		}
	}
	// Uncommitted edits and a staged rename for the working-tree blame.
	ks := keys()
	if len(ks) > 0 && r.Intn(2) == 0 {
		p := ks[r.Intn(len(ks))]
		write(p, append(gen(2), files[p]...))
	}
	for _, p := range keys() {
		sameBlame(t, f, map[string]any{"path": p}, "", "--", p)
		sameBlame(t, f, map[string]any{"path": p, "commit": "HEAD"}, "", "HEAD", "--", p)
	}
	// Ranges: A..B blames from B with A's history its boundary, A...B
	// from the one side that is no merge base (else git's error).
	revs := append([]string{"HEAD~1", "HEAD~3", ""}, branches...)
	for _, p := range keys() {
		a, b := revs[r.Intn(len(revs))], revs[r.Intn(len(revs))]
		rng := a + [...]string{"..", "..."}[r.Intn(2)] + b
		sameBlame(t, f, map[string]any{"path": p, "commit": rng}, "", rng, "--", p)
	}
}
