package diffcore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// record_if_better replaces the first of the worst slots, so of equal
// candidates the later ones stay when a better one arrives: not the
// first four of a sorted list.
func TestBestKeepsAsRecordIfBetter(t *testing.T) {
	var b Best
	for i, s := range []int{5, 3, 3, 3, 3, 4} {
		b.Record(Candidate{Src: i, Score: s})
	}
	got := fmt.Sprint(b.Ranked())
	want := fmt.Sprint([]Candidate{{Src: 0, Score: 5}, {Src: 5, Score: 4}, {Src: 2, Score: 3}, {Src: 3, Score: 3}})
	if got != want {
		t.Fatalf("kept %s, want %s", got, want)
	}
}

func TestBestRanksSameNameFirstOnTies(t *testing.T) {
	var b Best
	b.Record(Candidate{Src: 0, Score: 7})
	b.Record(Candidate{Src: 1, Score: 7, SameName: true})
	b.Record(Candidate{Src: 2, Score: 9})
	r := b.Ranked()
	if len(r) != 3 || r[0].Src != 2 || r[1].Src != 1 || r[2].Src != 0 {
		t.Fatalf("ranked %v", r)
	}
	var empty Best
	if len(empty.Ranked()) != 0 {
		t.Fatal("an empty Best ranks candidates")
	}
}

func TestEstimate(t *testing.T) {
	text := strings.Repeat("a line of text\n", 40)
	if got := Estimate([]byte(text), []byte(text), DefaultScore); got != MaxScore {
		t.Errorf("identical: %d, want %d", got, MaxScore)
	}
	// A change of line endings keeps a text file's chunks.
	crlf := strings.ReplaceAll(text, "\n", "\r\n")
	if got := Estimate([]byte(text), []byte(crlf), DefaultScore); got*100/MaxScore < 60 {
		t.Errorf("CRLF copy scores %d", got)
	}
	// Sizes too far apart are cut before any hashing.
	if got := Estimate([]byte(text), []byte(text[:len(text)/3]), DefaultScore); got != 0 {
		t.Errorf("a third of the file scores %d past the size cut", got)
	}
	if got := Estimate([]byte(text), nil, 0); got != 0 {
		t.Errorf("empty destination scores %d", got)
	}
	half := text[:len(text)/2] + strings.Repeat("other content!\n", 20)
	if got := Estimate([]byte(text), []byte(half), DefaultScore); got < MaxScore/2-MaxScore/20 || got > MaxScore/2+MaxScore/20 {
		t.Errorf("half kept scores %d, want about %d", got, MaxScore/2)
	}
}

func TestModesPair(t *testing.T) {
	if !ModesPair(filemode.Regular, filemode.Executable) {
		t.Error("regular and executable do not pair")
	}
	if ModesPair(filemode.Symlink, filemode.Regular) || !ModesPair(filemode.Symlink, filemode.Symlink) {
		t.Error("a symlink pairs only with a symlink")
	}
}

// find_identical_files takes the first of the best (unused, then same
// basename) and looks at no more than 100 identical sources.
func TestIdentical(t *testing.T) {
	type src struct{ ok, unused, same bool }
	pick := func(ss []src) int {
		return Identical(len(ss), func(i int) (bool, bool, bool) { return ss[i].ok, ss[i].unused, ss[i].same })
	}
	if got := pick([]src{{ok: false, unused: true, same: true}, {ok: true}, {ok: true, unused: true}, {ok: true, unused: true}}); got != 2 {
		t.Errorf("picked %d, want the first unused source (2)", got)
	}
	if got := pick([]src{{ok: true, unused: true}, {ok: true, same: true}, {ok: true, unused: true, same: true}}); got != 2 {
		t.Errorf("picked %d, want the unused source with the same basename (2)", got)
	}
	many := make([]src, 150)
	for i := range many {
		many[i] = src{ok: true}
	}
	many[120] = src{ok: true, unused: true, same: true}
	if got := pick(many); got != 0 {
		t.Errorf("picked %d: the best past the 100th identical source was looked at", got)
	}
	if got := pick(nil); got != -1 {
		t.Errorf("picked %d from no sources", got)
	}
}

// TestBasenameMatches: only a basename unique among the sources and
// among the destinations pairs, at MinBasenameScore, and an irrelevant
// source is not looked at.
func TestBasenameMatches(t *testing.T) {
	srcs := []string{"a/x.txt", "b/y.txt", "c/y.txt", "d/z.txt", "e/w.txt"}
	dsts := []string{"n/x.txt", "n/y.txt", "n/z.txt", "m/w.txt", "o/w.txt"}
	scores := map[[2]int]int{{0, 0}: MinBasenameScore(DefaultScore), {1, 1}: MaxScore, {3, 2}: MinBasenameScore(DefaultScore) - 1}
	var asked []int
	got := BasenameMatches(srcs, dsts, func(i int) bool { return i != 3 }, DefaultScore, func(s, d, min int) int {
		if min != MinBasenameScore(DefaultScore) {
			t.Errorf("asked with min %d", min)
		}
		asked = append(asked, s)
		return scores[[2]int{s, d}]
	})
	if len(got) != 1 || got[0].Src != 0 || got[0].Dst != 0 || got[0].Score != MinBasenameScore(DefaultScore) {
		t.Fatalf("got %+v: want a/x.txt -> n/x.txt only", got)
	}
	// y.txt is two sources' basename, z.txt's source is irrelevant, w.txt
	// two destinations'.
	if len(asked) != 1 {
		t.Fatalf("sources scored: %v, want only a/x.txt", asked)
	}
	if MinBasenameScore(DefaultScore) != 45000 {
		t.Fatalf("MinBasenameScore(50%%) = %d, want 75%%", MinBasenameScore(DefaultScore))
	}
}
