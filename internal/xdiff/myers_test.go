package xdiff

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// sameAsGitMyers compares Diff's Myers script (indent heuristic on, tail
// trimmed: what blame and -U0 run) with git diff --no-index -U0.
func sameAsGitMyers(t *testing.T, g *gitDiffRunner, name string, a, b []byte) {
	t.Helper()
	want, err := g.headers(a, b, "myers", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := ourHeaders(a, b, "myers", true); got != want {
		t.Errorf("%s: hunks differ\n  git:  %q\n  ours: %q", name, want, got)
	}
}

// Random pairs of files built from a few repeated lines ("}", blank lines:
// where every LCS algorithm picks differently), with long common tails
// (the 1 KiB trim) too.
func TestMyersRepeatedLines(t *testing.T) {
	gittest.RequireGit(t)
	g := newGitDiffRunner(t)
	words := []string{"}", "{", "", "\tx", "        y", "a", "b", "c", "  z", "\n"}
	r := rand.New(rand.NewSource(7))
	for n := 0; n < 60; n++ {
		mk := func(k int) string {
			var b strings.Builder
			for i := 0; i < k; i++ {
				b.WriteString(words[r.Intn(len(words))])
				b.WriteByte('\n')
			}
			return b.String()
		}
		a, b := mk(r.Intn(60)), mk(r.Intn(60))
		if n%3 == 0 {
			tail := mk(300)
			a, b = a+tail, b+tail
		}
		if n%5 == 0 {
			b = strings.TrimSuffix(b, "\n")
		}
		sameAsGitMyers(t, g, fmt.Sprint("case ", n), []byte(a), []byte(b))
	}
}

// editedPair is a file of n words from vocab and a copy with edits
// random insertions, deletions and replacements.
func editedPair(r *rand.Rand, vocab, n, edits int) (a, b []byte) {
	mk := func(k int) []string {
		var out []string
		for i := 0; i < k; i++ {
			out = append(out, fmt.Sprint("w", r.Intn(vocab)))
		}
		return out
	}
	al := mk(n)
	bl := append([]string(nil), al...)
	for e := 0; e < edits; e++ {
		at := r.Intn(len(bl) + 1)
		switch r.Intn(3) {
		case 0:
			bl = append(bl[:at], append(mk(1+r.Intn(5)), bl[at:]...)...)
		case 1:
			if at < len(bl) {
				bl = append(bl[:at], bl[at+1:]...)
			}
		default:
			if at < len(bl) {
				bl[at] = mk(1)[0]
			}
		}
	}
	if edits < 0 {
		bl = mk(len(al))
	}
	return []byte(strings.Join(al, "\n") + "\n"), []byte(strings.Join(bl, "\n") + "\n")
}

// Large files with many edits drive xdiff's cost cut-offs (the snake
// heuristic past 256 steps, the give-up at sqrt of the size) and the
// discard pre-pass; the hunks must still be git's.
func TestMyersLarge(t *testing.T) {
	gittest.RequireGit(t)
	g := newGitDiffRunner(t)
	for n := 0; n < 12; n++ {
		r := rand.New(rand.NewSource(int64(n)))
		vocab := 5 + r.Intn(3000)
		lines, edits := 500+r.Intn(4000), r.Intn(2000)
		if n%4 == 0 {
			edits = -1 // a file replaced by another
		}
		a, b := editedPair(r, vocab, lines, edits)
		sameAsGitMyers(t, g, fmt.Sprintf("case %d (vocab %d, %d lines, %d edits)", n, vocab, lines, edits), a, b)
	}
}

// Files over 32k lines raise xdiff's give-up cost above its heuristic
// threshold, so the "good snake" shortcut (both directions) decides the
// split: checked on two 40k-line files with thousands of edits.
func TestMyersHuge(t *testing.T) {
	gittest.RequireGit(t)
	g := newGitDiffRunner(t)
	for n := 0; n < 2; n++ {
		r := rand.New(rand.NewSource(int64(n)))
		vocab := 100000 + r.Intn(3000)
		lines, edits := 40000+r.Intn(4000), 2000+r.Intn(3000)
		a, b := editedPair(r, vocab, lines, edits)
		sameAsGitMyers(t, g, fmt.Sprintf("case %d (vocab %d, %d lines, %d edits)", n, vocab, lines, edits), a, b)
	}
}
