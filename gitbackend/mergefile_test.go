package gitbackend

import (
	"bytes"
	"context"
	"errors"
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

// The replay's three-way merge is checked against `git merge-file`, the
// oracle, on generated inputs: a seeded generator edits a base file two
// ways (lines of a small vocabulary, so the edits collide; CRLF and
// missing final newlines; now and then a NUL), and the merged bytes and
// the number of conflicts must be git's. A difference is shrunk to a
// minimal case printed as an entry for mergeFileRegressions.

// mergeCase is one three-way input.
type mergeCase struct{ base, ours, theirs string }

// mergeFileRegressions are inputs, named by what they show, with what
// `git merge-file -p -L ours -L base -L theirs` prints and its exit code.
// The two seeds are where the line merge replays used before (a diff3
// walk over an LCS) merged cleanly while git conflicts; the others pin
// xdl_merge's levels and markers.
var mergeFileRegressions = []struct {
	name      string
	in        mergeCase
	want      string
	conflicts int
}{
	{
		name: "insertion beside the other side's deletion conflicts (seed 525)",
		in: mergeCase{
			"}\r\n}\r\na\r\nc\r\nc\r\nb\r\nd e\r\n\r\n--\r\nd e\r\n\r\n  x = 1;\r\n\r\n",
			"d e\r\n}\r\na\r\n--\r\nd e\r\n\r\n  x = 1;\r\n\r\n",
			"}\r\na\r\nc\r\nc\r\nb\r\nd e\r\n\r\n--\r\n"},
		want:      "<<<<<<< ours\r\nd e\r\n=======\r\n>>>>>>> theirs\r\n}\r\na\r\n--\r\n",
		conflicts: 1,
	},
	{
		name: "deletion against an overlapping edit conflicts (seed 658)",
		in: mergeCase{
			"b\n  x = 1;\na\n}\na\n{\n\nreturn y;\n",
			"b\n  x = 1;\na\n}\nreturn y;\nreturn y;\na\n{\n",
			"}\nreturn y;\nreturn y;\na\n{\n{\n\nreturn y;\n"},
		want:      "}\nreturn y;\nreturn y;\na\n{\n<<<<<<< ours\n=======\n{\n\nreturn y;\n>>>>>>> theirs\n",
		conflicts: 1,
	},
	{
		name:      "same insertion both sides is taken once",
		in:        mergeCase{"a\nb\n", "a\nx\nb\n", "a\nx\nb\n"},
		want:      "a\nx\nb\n",
		conflicts: 0,
	},
	{
		name:      "edits two lines apart",
		in:        mergeCase{"a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nD\n"},
		want:      "A\nb\nc\nD\n",
		conflicts: 0,
	},
	{
		// Adjacent changes conflict in git (the hunks touch).
		name:      "adjacent lines conflict",
		in:        mergeCase{"a\nb\n", "A\nb\n", "a\nB\n"},
		want:      "<<<<<<< ours\nA\nb\n=======\na\nB\n>>>>>>> theirs\n",
		conflicts: 1,
	},
	{
		// Conflicts with only non-alphanumeric lines between them join
		// (zealous_alnum).
		name:      "zealous alnum joins conflicts",
		in:        mergeCase{"x\n}\ny\n", "1\n}\n2\n", "3\n}\n4\n"},
		want:      "<<<<<<< ours\n1\n}\n2\n=======\n3\n}\n4\n>>>>>>> theirs\n",
		conflicts: 1,
	},
	{
		name:      "crlf markers follow the file",
		in:        mergeCase{"a\r\nb\r\n", "x\r\nb\r\n", "y\r\nb\r\n"},
		want:      "<<<<<<< ours\r\nx\r\n=======\r\ny\r\n>>>>>>> theirs\r\nb\r\n",
		conflicts: 1,
	},
	{
		name:      "missing final newline on one side",
		in:        mergeCase{"a\nb\nc", "a\nb\nc\n", "A\nb\nc"},
		want:      "A\nb\nc\n",
		conflicts: 0,
	},
}

func TestMergeFileRegressions(t *testing.T) {
	for _, c := range mergeFileRegressions {
		t.Run(c.name, func(t *testing.T) {
			got, n, err := mergeFile(context.Background(), []byte(c.in.base), []byte(c.in.ours), []byte(c.in.theirs))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want || n != c.conflicts {
				t.Fatalf("merged %q (%d conflicts), want %q (%d)", got, n, c.want, c.conflicts)
			}
		})
	}
}

// TestMergeFileRegressionsAreGits checks the recorded answers against git
// itself, so a wrong entry cannot hide a wrong merge.
func TestMergeFileRegressionsAreGits(t *testing.T) {
	g := newMergeFileOracle(t)
	for _, c := range mergeFileRegressions {
		want, n, err := g.merge(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if want != c.want || n != c.conflicts {
			t.Errorf("%s: git merge-file prints %q (exit %d), the entry records %q (%d)", c.name, want, n, c.want, c.conflicts)
		}
	}
}

// mergeFileOracle runs git merge-file in a private directory.
type mergeFileOracle struct{ dir string }

func newMergeFileOracle(t testing.TB) *mergeFileOracle {
	gittest.RequireGit(t)
	return &mergeFileOracle{dir: t.TempDir()}
}

// merge is git merge-file -p's output and exit code (its conflict count;
// -1 for a refusal such as binary content).
func (g *mergeFileOracle) merge(c mergeCase) (string, int, error) {
	for name, data := range map[string]string{"base": c.base, "ours": c.ours, "theirs": c.theirs} {
		if err := os.WriteFile(filepath.Join(g.dir, name), []byte(data), 0o644); err != nil {
			return "", 0, err
		}
	}
	cmd := exec.Command("git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
	cmd.Dir = g.dir
	cmd.Env = gittest.Env(g.dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0, nil
	case errors.As(err, &ee) && strings.Contains(stderr.String(), "binary"):
		return "", -1, nil
	case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128:
		return string(out), ee.ExitCode(), nil
	}
	return "", 0, fmt.Errorf("git merge-file: %v: %s", err, stderr.String())
}

// mergeGen makes three-way inputs from a seed.
type mergeGen struct{ r *rand.Rand }

var mergeWords = []string{"a", "b", "c", "}", "{", "", "  x = 1;", "return y;", "--", "d e", "f"}

func (g mergeGen) lines(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = mergeWords[g.r.Intn(len(mergeWords))]
	}
	return out
}

// edit inserts, deletes and replaces a few lines, in runs.
func (g mergeGen) edit(base []string) []string {
	out := append([]string(nil), base...)
	for k := g.r.Intn(5); k > 0; k-- {
		i := g.r.Intn(len(out) + 1)
		run := 1 + g.r.Intn(3)
		switch g.r.Intn(3) {
		case 0:
			out = append(out[:i], append(g.lines(run), out[i:]...)...)
		case 1:
			out = append(out[:i], out[min(i+run, len(out)):]...)
		default:
			for j := i; j < min(i+run, len(out)); j++ {
				out[j] = mergeWords[g.r.Intn(len(mergeWords))] + "!"
			}
		}
	}
	return out
}

func (g mergeGen) join(ls []string, eol string) string {
	s := strings.Join(ls, eol)
	if len(ls) > 0 && g.r.Intn(6) != 0 {
		s += eol
	}
	return s
}

func (g mergeGen) next() mergeCase {
	eol := "\n"
	if g.r.Intn(6) == 0 {
		eol = "\r\n"
	}
	base := g.lines(g.r.Intn(20))
	c := mergeCase{g.join(base, eol), g.join(g.edit(base), eol), g.join(g.edit(base), eol)}
	if g.r.Intn(40) == 0 {
		c.theirs += "\x00"
	}
	return c
}

// sameAsGit reports whether mergeFile merges c as git merge-file does.
func sameAsGit(t testing.TB, g *mergeFileOracle, c mergeCase) (bool, string) {
	want, wantN, err := g.merge(c)
	if err != nil {
		t.Fatal(err)
	}
	got, n, err := mergeFile(context.Background(), []byte(c.base), []byte(c.ours), []byte(c.theirs))
	if err != nil {
		t.Fatal(err)
	}
	if wantN < 0 { // git refuses binary content: one conflict to the replay
		return n > 0, fmt.Sprintf("git refuses; replay: %d conflicts", n)
	}
	return string(got) == want && n == wantN, fmt.Sprintf("git (exit %d):\n%q\nreplay (%d conflicts):\n%q", wantN, want, n, got)
}

// shrinkMerge drops lines from each input while the difference stays.
func shrinkMerge(c mergeCase, fails func(mergeCase) bool) mergeCase {
	for changed := true; changed; {
		changed = false
		for side := range 3 {
			field := []*string{&c.base, &c.ours, &c.theirs}[side]
			ls := strings.SplitAfter(*field, "\n")
			for i := 0; i < len(ls); i++ {
				if ls[i] == "" {
					continue // SplitAfter's empty tail: dropping it changes nothing
				}
				try := c
				*([]*string{&try.base, &try.ours, &try.theirs}[side]) = strings.Join(append(append([]string(nil), ls[:i]...), ls[i+1:]...), "")
				if fails(try) {
					c, ls, changed = try, append(ls[:i], ls[i+1:]...), true
					i--
				}
			}
		}
	}
	return c
}

// TestMergeFileMatchesGitMergeFile is the differential test:
// TGP_MERGEFILE_SEEDS inputs (default 300) from TGP_MERGEFILE_SEED0.
func TestMergeFileMatchesGitMergeFile(t *testing.T) {
	g := newMergeFileOracle(t)
	n, _ := strconv.Atoi(os.Getenv("TGP_MERGEFILE_SEEDS"))
	if n <= 0 {
		n = 300
	}
	seed0, _ := strconv.ParseInt(os.Getenv("TGP_MERGEFILE_SEED0"), 10, 64)
	conflicted, diffs := 0, 0
	for seed := seed0; seed < seed0+int64(n); seed++ {
		c := mergeGen{rand.New(rand.NewSource(seed))}.next()
		if ok, _ := sameAsGit(t, g, c); !ok {
			diffs++
			if diffs <= 3 {
				small := shrinkMerge(c, func(c mergeCase) bool { ok, _ := sameAsGit(t, g, c); return !ok })
				_, msg := sameAsGit(t, g, small)
				t.Errorf("seed %d merges differently from git merge-file; shrunk, as a mergeFileRegressions entry:\n"+
					"{name: \"seed %d\", in: mergeCase{%q, %q, %q}}\n%s", seed, seed, small.base, small.ours, small.theirs, msg)
			}
			continue
		}
		if _, wantN, _ := g.merge(c); wantN != 0 {
			conflicted++
		}
	}
	if diffs > 0 {
		t.Errorf("%d of %d merges differ from git merge-file", diffs, n)
	}
	if conflicted == 0 || conflicted == n {
		t.Errorf("%d of %d merges conflicted: the generator tests only one outcome", conflicted, n)
	}
	t.Logf("%d merges, %d conflicted or refused", n, conflicted)
}

// TestReplayMergesAsGitMergeFile drives real replays: agent x pushes one
// edit of a file, agent y (behind) persists another, and y's replay must
// leave on the remote what git merge-file makes of the two, or report the
// path as a conflict exactly when git merge-file conflicts.
// TGP_REPLAY_MERGE_SEEDS runs more (default 12), the generator seeded
// from TGP_REPLAY_MERGE_SEED0 (default 1000) on.
func TestReplayMergesAsGitMergeFile(t *testing.T) {
	g := newMergeFileOracle(t)
	n, _ := strconv.Atoi(os.Getenv("TGP_REPLAY_MERGE_SEEDS"))
	if n <= 0 {
		n = 12
	}
	seed0 := int64(1000)
	if v, err := strconv.ParseInt(os.Getenv("TGP_REPLAY_MERGE_SEED0"), 10, 64); err == nil {
		seed0 = v
	}
	clean, conflicts := 0, 0
	for seed := seed0; clean+conflicts < n; seed++ {
		c := mergeGen{rand.New(rand.NewSource(seed))}.next()
		if c.base == c.ours || c.base == c.theirs || strings.Contains(c.theirs, "\x00") || c.base == "" {
			continue // no replay merge happens (or an empty file, which seeds no tree)
		}
		want, wantN, err := g.merge(c)
		if err != nil {
			t.Fatal(err)
		}
		remote := gittest.SeedRemote(t, map[string]string{"tools/f.txt": c.base})
		x, y := newAgent(t, remote, false), newAgent(t, remote, true)
		x.write(t, "tools/f.txt", c.theirs)
		if err := y.fs.WriteFile("tools/f.txt", []byte(c.ours), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := y.repo.Persist(context.Background(), Change{Paths: []string{"tools/f.txt"}, Message: "forge: f"})
		var ce *ConflictError
		switch {
		case wantN != 0:
			if !errors.As(err, &ce) {
				t.Fatalf("seed %d: git merge-file conflicts (exit %d) but the replay gave %+v, %v\n%+v", seed, wantN, res, err, c)
			}
			conflicts++
		case err != nil:
			t.Fatalf("seed %d: git merge-file merges cleanly but the replay failed: %v\n%+v", seed, err, c)
		default:
			if !res.Replayed {
				t.Fatalf("seed %d: no replay: %+v", seed, res)
			}
			if got := gittest.Git(t, remote, "show", "main:tools/f.txt"); got != want {
				t.Fatalf("seed %d: the remote holds %q, git merge-file makes %q\n%+v", seed, got, want, c)
			}
			clean++
		}
	}
	t.Logf("%d replays merged as git merge-file, %d conflicts as git's", clean, conflicts)
}
