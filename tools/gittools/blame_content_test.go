package gittools

// A randomized differential test of git_blame against git blame on the
// kinds of content real repositories hold.

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

// TestBlameRandomContent builds random histories whose files are what
// real repositories hold besides plain text (CRLF and lone CR line ends,
// CR CR LF, no newline at the end, empty files, binaries with NULs, long
// lines, symbolic links and type changes between a link and a file,
// deletes and re-adds, renames of each, long histories) and compares
// git_blame with git blame for every path at HEAD, in the working tree,
// over line ranges and at older commits. TGP_BLAMEC_SEEDS /
// TGP_BLAMEC_SEED0 run more (seeds 0-29 agree with git).
func TestBlameRandomContent(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TGP_BLAMEC_SEEDS"))
	if n == 0 {
		n = 2
	}
	s0, _ := strconv.Atoi(os.Getenv("TGP_BLAMEC_SEED0"))
	for seed := s0; seed < s0+n; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { fuzzBlameContent(t, int64(seed)) })
	}
}

// blameContent is one random file body: lines of a few words joined by
// one kind of line end, now and then a binary or nothing at all.
func blameContent(r *rand.Rand, old string) string {
	words := []string{"alpha", "beta", "}", "{", "", "\treturn x;", "  two", "// c", "ünï", "x\x00y", "gamma", strings.Repeat("long ", 40)}
	ends := []string{"\n", "\n", "\n", "\r\n", "\r", "\r\r\n"}
	switch r.Intn(12) {
	case 0:
		return ""
	case 1:
		return "\x00\x01\x02bin\x00" + fmt.Sprint(r.Intn(3)) + "\n"
	case 2, 3, 4, 5, 6:
		if old != "" {
			// An edit of the old body: keep most of its lines.
			ls := strings.SplitAfter(old, "\n")
			at := r.Intn(len(ls))
			switch r.Intn(3) {
			case 0:
				ls = append(ls[:at], append([]string{words[r.Intn(len(words))] + ends[r.Intn(len(ends))]}, ls[at:]...)...)
			case 1:
				ls = append(ls[:at], ls[at+1:]...)
			default:
				ls[at] = words[r.Intn(len(words))] + ends[r.Intn(len(ends))]
			}
			return strings.Join(ls, "")
		}
	}
	end := ends[r.Intn(len(ends))]
	var b strings.Builder
	for i, k := 0, 1+r.Intn(12); i < k; i++ {
		b.WriteString(words[r.Intn(len(words))])
		if i < k-1 || r.Intn(5) > 0 {
			b.WriteString(end)
		}
	}
	return b.String()
}

func fuzzBlameContent(t *testing.T, seed int64) {
	r := rand.New(rand.NewSource(seed))
	f := blameFixture(t)
	names := []string{"a.txt", "b.txt", "d/c.txt", "l", "d/m", "e.bin"}
	if r.Intn(3) == 0 {
		f.write(t, ".gitattributes", []string{"*.txt text\n", "*.txt -text\n", "* text=auto\n", "*.bin binary\n", "*.txt eol=crlf\n"}[r.Intn(5)])
	}
	if r.Intn(4) == 0 {
		f.git(t, "config", "core.autocrlf", []string{"true", "input"}[r.Intn(2)])
	}
	kinds := map[string]bool{} // path -> is a symbolic link
	body := map[string]string{}
	put := func(p string, link bool, data string) {
		full := filepath.Join(f.dir, p)
		_ = os.RemoveAll(full)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if link {
			if data == "" || strings.ContainsAny(data, "\x00") {
				data = "target"
			}
			if err := os.Symlink(data, full); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		kinds[p], body[p] = link, data
	}
	ncommit := 0
	commit := func() {
		ncommit++
		date := fmt.Sprintf("2023-11-%02d %02d:%02d:00 +0000", 1+ncommit/60%27, ncommit%24, ncommit%60)
		env := []string{"GIT_AUTHOR_NAME=" + fmt.Sprint("Au", r.Intn(4)), "GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
		f.git(t, "add", "-A")
		if _, e, err := bgit(t, f.dir, env, "commit", "-q", "--allow-empty", "-m", fmt.Sprint("c", ncommit)); err != nil {
			t.Fatalf("commit: %v %s", err, e)
		}
	}
	for _, p := range names[:3] {
		put(p, false, blameContent(r, ""))
	}
	commit()
	paths := func() []string {
		var ps []string
		for p := range kinds {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		return ps
	}
	steps := 15 + r.Intn(30)
	if r.Intn(4) == 0 {
		steps = 150 // a long history
	}
	for step := 0; step < steps; step++ {
		ps := paths()
		switch x := r.Intn(10); {
		case x < 5 && len(ps) > 0: // edit, keeping the type
			p := ps[r.Intn(len(ps))]
			put(p, kinds[p], blameContent(r, body[p]))
		case x == 5 && len(ps) > 0: // type change: link <-> file
			p := ps[r.Intn(len(ps))]
			if kinds[p] {
				put(p, false, body[p]+[]string{"", "\n", "more\n"}[r.Intn(3)])
			} else {
				put(p, true, strings.SplitN(body[p], "\n", 2)[0])
			}
		case x == 6 && len(ps) > 0: // rename, maybe edited
			p, q := ps[r.Intn(len(ps))], names[r.Intn(len(names))]
			if _, ok := kinds[q]; ok {
				continue
			}
			link, data := kinds[p], body[p]
			_ = os.Remove(filepath.Join(f.dir, p))
			delete(kinds, p)
			if r.Intn(2) == 0 && !link {
				data = blameContent(r, data)
			}
			put(q, link, data)
		case x == 7 && len(ps) > 1: // delete
			p := ps[r.Intn(len(ps))]
			_ = os.Remove(filepath.Join(f.dir, p))
			delete(kinds, p)
		default: // add, or re-add, maybe a copy
			q := names[r.Intn(len(names))]
			if _, ok := kinds[q]; ok {
				continue
			}
			if len(ps) > 0 && r.Intn(2) == 0 {
				p := ps[r.Intn(len(ps))]
				put(q, kinds[p], body[p])
			} else {
				put(q, r.Intn(4) == 0, blameContent(r, ""))
			}
		}
		commit()
	}
	// Uncommitted changes for the working-tree blame.
	if ps := paths(); len(ps) > 0 && r.Intn(2) == 0 {
		p := ps[r.Intn(len(ps))]
		put(p, kinds[p], blameContent(r, body[p]))
	}
	for _, p := range paths() {
		sameBlame(t, f, map[string]any{"path": p}, "", "--", p)
		sameBlame(t, f, map[string]any{"path": p, "commit": "HEAD"}, "", "HEAD", "--", p)
		s := 1 + r.Intn(4)
		e := s + r.Intn(4)
		sameBlame(t, f, map[string]any{"path": p, "start_line": s, "end_line": e}, "", "-L", fmt.Sprintf("%d,%d", s, e), "--", p)
		if ncommit > 3 {
			c := fmt.Sprintf("HEAD~%d", 1+r.Intn(3))
			sameBlame(t, f, map[string]any{"path": p, "commit": c}, "", c, "--", p)
		}
	}
}
