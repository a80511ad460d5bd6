package merge

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMergeCases(t *testing.T) {
	base := "func a() {\n  return 1\n}\n\nfunc b() {\n  return 2\n}\n"
	cases := []struct {
		name, ours, theirs, want string
		conflict                 bool
	}{
		{"different functions", strings.Replace(base, "return 1", "return 10", 1), strings.Replace(base, "return 2", "return 20", 1),
			"func a() {\n  return 10\n}\n\nfunc b() {\n  return 20\n}\n", false},
		{"same line differently", strings.Replace(base, "return 1", "return 10", 1), strings.Replace(base, "return 1", "return 11", 1), "", true},
		{"same change both", strings.Replace(base, "return 1", "return 10", 1), strings.Replace(base, "return 1", "return 10", 1),
			strings.Replace(base, "return 1", "return 10", 1), false},
		{"append and prepend", "// top\n" + base, base + "// end\n", "// top\n" + base + "// end\n", false},
		{"no newline at end", base + "x", base + "x", base + "x", false},
		{"delete vs edit elsewhere", strings.Replace(base, "\nfunc b() {\n  return 2\n}\n", "", 1), strings.Replace(base, "return 1", "return 5", 1),
			"func a() {\n  return 5\n}\n", false},
		{"delete vs edit same", strings.Replace(base, "  return 1\n", "", 1), strings.Replace(base, "return 1", "return 5", 1), "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Merge([]byte(base), []byte(c.ours), []byte(c.theirs))
			if c.conflict {
				if !errors.Is(err, ErrConflict) {
					t.Fatalf("want conflict, got %q %v", got, err)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("got %q %v\nwant %q", got, err, c.want)
			}
		})
	}
	if _, err := Merge([]byte("a\x00"), []byte("b\x00"), []byte("c\x00")); !errors.Is(err, ErrConflict) {
		t.Fatal("binary must conflict")
	}
}

// TestAgainstGitMergeFile compares clean merges with `git merge-file -p` on
// random edits of disjoint regions.
func TestAgainstGitMergeFile(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	rng := rand.New(rand.NewSource(7))
	dir := t.TempDir()
	for n := 0; n < 60; n++ {
		var lines []string
		for i := 0; i < 40; i++ {
			lines = append(lines, fmt.Sprintf("line %d %d", i, rng.Intn(5)))
		}
		edit := func(from, to int) string {
			l := append([]string{}, lines...)
			for i := from; i < to; i++ {
				switch rng.Intn(3) {
				case 0:
					l[i] = l[i] + " changed"
				case 1:
					l[i] = ""
				default:
					l[i] = l[i] + "\ninserted"
				}
			}
			return strings.Join(l, "\n") + "\n"
		}
		base := strings.Join(lines, "\n") + "\n"
		ours, theirs := edit(2, 12), edit(25, 35)
		paths := map[string]string{"base": base, "ours": ours, "theirs": theirs}
		for name, c := range paths {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, gitErr := exec.Command("git", "merge-file", "-p", filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs")).Output()
		got, err := Merge([]byte(base), []byte(ours), []byte(theirs))
		if gitErr != nil {
			if err == nil {
				t.Fatalf("case %d: git conflicts, we merged", n)
			}
			continue
		}
		if err != nil || string(got) != string(want) {
			t.Fatalf("case %d: differs from git merge-file\n%s\n---\n%s (%v)", n, want, got, err)
		}
	}
}

func FuzzMerge(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n")
	f.Add("", "x\n", "")
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		got, err := Merge([]byte(base), []byte(ours), []byte(theirs))
		if err != nil {
			return
		}
		// Merging with an unchanged side must give the other side exactly.
		if ours == base && string(got) != theirs {
			t.Fatalf("unchanged ours: %q", got)
		}
		if theirs == base && string(got) != ours {
			t.Fatalf("unchanged theirs: %q", got)
		}
		// Merge is symmetric for clean results.
		back, err := Merge([]byte(base), []byte(theirs), []byte(ours))
		if err != nil || string(back) != string(got) {
			t.Fatalf("asymmetric: %q vs %q (%v)", got, back, err)
		}
	})
}
