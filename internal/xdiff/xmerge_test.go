package xdiff

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestMergeMatchesMergeFile compares the xdl_merge port with git
// merge-file (level zealous_alnum, Myers, as merge-file runs it) on random
// three-way inputs made of few distinct lines, in the three conflict
// styles, with CRLF and missing final newlines. TGP_XMERGE_SEEDS runs
// more, from TGP_XMERGE_SEED0 (default 0).
func TestMergeMatchesMergeFile(t *testing.T) {
	gittest.RequireGit(t)
	n, _ := strconv.Atoi(os.Getenv("TGP_XMERGE_SEEDS"))
	if n == 0 {
		n = 300
	}
	seed0, _ := strconv.Atoi(os.Getenv("TGP_XMERGE_SEED0"))
	dir := t.TempDir()
	words := []string{"a", "b", "c", "}", "", "x y", "--", "d", "e"}
	diffs, conflicted := 0, 0
	for seed := seed0; seed < seed0+n; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		eol := "\n"
		if r.Intn(6) == 0 {
			eol = "\r\n"
		}
		base := make([]string, r.Intn(15))
		for i := range base {
			base[i] = words[r.Intn(len(words))]
		}
		edit := func() []string {
			out := append([]string(nil), base...)
			for k := r.Intn(5); k > 0; k-- {
				i := r.Intn(len(out) + 1)
				switch r.Intn(3) {
				case 0:
					out = append(out[:i], append([]string{words[r.Intn(len(words))]}, out[i:]...)...)
				case 1:
					if i < len(out) {
						out = append(out[:i], out[i+1:]...)
					}
				default:
					if i < len(out) {
						out[i] = words[r.Intn(len(words))] + "!"
					}
				}
			}
			return out
		}
		join := func(ls []string) []byte {
			s := strings.Join(ls, eol)
			if len(ls) > 0 && r.Intn(5) != 0 {
				s += eol
			}
			return []byte(s)
		}
		o, a, b := join(base), join(edit()), join(edit())
		style := r.Intn(3)
		for i, data := range [][]byte{o, a, b} {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args := []string{"merge-file", "-p", "-L", "ours side", "-L", "base", "-L", "theirs"}
		args = append(args, []string{"", "--diff3", "--zdiff3"}[style], filepath.Join(dir, "1"), filepath.Join(dir, "0"), filepath.Join(dir, "2"))
		if args[8] == "" {
			args = append(args[:8], args[9:]...)
		}
		cmd := exec.Command("git", args...)
		want, err := cmd.Output()
		wantN := 0
		if ee, ok := err.(*exec.ExitError); ok {
			wantN = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		got, gotN, err := Merge(context.Background(), o, a, b, MergeParams{Algorithm: "myers", Level: LevelZealousAlnum, Style: ConflictStyle(style), Ancestor: "base", Name1: "ours side", Name2: "theirs"})
		if err != nil {
			t.Fatal(err)
		}
		if wantN > 0 {
			conflicted++
		}
		if string(got) != string(want) || gotN != wantN {
			diffs++
			if diffs <= 3 {
				t.Errorf("seed %d style %d: conflicts %d, git %d\nbase %q\nours %q\ntheirs %q\n--- git\n%s--- port\n%s", seed, style, gotN, wantN, o, a, b, want, got)
			}
		}
	}
	if diffs > 0 {
		t.Errorf("%d of %d merges differ from git merge-file", diffs, n)
	}
	if conflicted == 0 {
		t.Errorf("no merge of %d conflicted: the inputs test nothing", n)
	}
	t.Logf("%d merges, %d with conflicts", n, conflicted)
}
