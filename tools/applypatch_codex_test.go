package tools_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestApplyPatchMatchesCodex is a differential test of apply_patch against
// OpenAI Codex's own apply_patch, the reference models are trained on: a
// seeded generator writes files (LF, CRLF and mixed line ends, with and
// without a last newline) and envelopes over them (updates with context,
// anchors and *** End of File, adds, deletes, moves, *** Environment ID
// lines empty, blank, doubled or misplaced, blank lines, padded markers,
// and line ends LF, CRLF, CR CR LF or mixed), runs the Codex binary
// named by TGP_CODEX_APPLY_PATCH (the codex executable from the npm package
// @openai/codex, called as apply_patch) in one directory and the tool in
// another, and compares the outcome and the tree. Codex applies hunk by
// hunk and leaves the ones before a failure; the tool applies none (the
// documented difference), so after a refusal only the tool's tree is
// checked, unchanged. TGP_CODEX_SEEDS (default 300) and TGP_CODEX_SEED0 pick
// the seeds. Without the binary the test is skipped; the differences it
// found are scenarios under testdata/applypatch, which always run.
func TestApplyPatchMatchesCodex(t *testing.T) {
	bin := os.Getenv("TGP_CODEX_APPLY_PATCH")
	if bin == "" {
		t.Skip("TGP_CODEX_APPLY_PATCH names no Codex binary")
	}
	link := filepath.Join(t.TempDir(), "apply_patch")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(os.Getenv("TGP_CODEX_SEEDS"))
	if n == 0 {
		n = 300
	}
	s0, _ := strconv.Atoi(os.Getenv("TGP_CODEX_SEED0"))
	diffs, documented := 0, map[string]int{}
	for seed := s0; seed < s0+n && diffs < 10; seed++ {
		files, patch := genCodexCase(rand.New(rand.NewSource(int64(seed))))
		ref := t.TempDir()
		for p, c := range files {
			full := filepath.Join(ref, p)
			_ = os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(link, patch)
		cmd.Dir = ref
		out, cerr := cmd.CombinedOutput()
		e := newEnv(t, false)
		for p, c := range files {
			e.write(t, p, c)
		}
		raw, _ := json.Marshal(map[string]string{"patch": patch})
		_, terr := e.call("apply_patch", string(raw))
		got := readTree(t, e.dir)
		what := fmt.Sprintf("seed %d: patch %q on %q", seed, patch, files)
		if why := codexDocumented(patch, string(out), cerr, terr); why != "" {
			documented[why]++
			continue
		}
		switch {
		case cerr != nil && terr == nil:
			diffs++
			t.Errorf("%s: Codex refused (%s), the tool applied it", what, strings.TrimSpace(string(out)))
		case cerr == nil && terr != nil:
			diffs++
			t.Errorf("%s: Codex applied it, the tool refused: %v", what, terr)
		case cerr != nil:
			if d := treeDiff(files, got); d != "" {
				diffs++
				t.Errorf("%s: refused, but the tree changed:\n%s", what, d)
			}
		default:
			if d := treeDiff(readTree(t, ref), got); d != "" {
				diffs++
				t.Errorf("%s: trees differ (want Codex's):\n%s", what, d)
			}
		}
	}
	t.Logf("%d seeds, documented differences met: %v", n, documented)
	if diffs > 0 {
		t.Errorf("%d of the seeds differ from Codex", diffs)
	}
}

// codexDocumented names the deliberate difference a case meets, or "":
// the tool refuses a patch that touches one file twice (Codex applies the
// hunks in turn), keeps a file moved onto itself (Codex deletes it), and
// takes blank lines between hunks (Codex refuses one after Begin or
// after an Add File's lines).
func codexDocumented(patch, codexOut string, cerr, terr error) string {
	norm := strings.ReplaceAll(strings.ReplaceAll(patch, "\r", ""), "\n", "\n")
	lines := strings.Split(norm, "\n")
	for i := 1; i < len(lines); i++ {
		from, ok := strings.CutPrefix(strings.TrimSpace(lines[i-1]), "*** Update File: ")
		if to, ok2 := strings.CutPrefix(strings.TrimSpace(lines[i]), "*** Move to: "); ok && ok2 && from == to {
			return "move onto itself"
		}
	}
	if terr != nil && strings.Contains(terr.Error(), "touches this file twice") {
		return "one file twice"
	}
	if cerr != nil && terr == nil && strings.Contains(codexOut, "'' is not a valid hunk header") {
		return "blank line between hunks"
	}
	return ""
}

// genCodexCase makes a tree and an envelope over it.
func genCodexCase(r *rand.Rand) (map[string]string, string) {
	words := []string{"alpha", "beta", "gamma", "", "  indented", "beta ", "}", "return x;", "\tx"}
	fileEOL := []string{"\n", "\n", "\r\n", "mixed"}
	files := map[string]string{}
	lines := map[string][]string{}
	names := []string{"a.txt", "b.txt", "d/c.txt"}
	for _, p := range names[:1+r.Intn(3)] {
		var ls []string
		for k := 1 + r.Intn(8); k > 0; k-- {
			ls = append(ls, words[r.Intn(len(words))])
		}
		eol := fileEOL[r.Intn(len(fileEOL))]
		var b strings.Builder
		for i, l := range ls {
			b.WriteString(l)
			e := eol
			if eol == "mixed" {
				e = []string{"\n", "\r\n"}[r.Intn(2)]
			}
			if i < len(ls)-1 || r.Intn(5) > 0 {
				b.WriteString(e)
			}
		}
		files[p], lines[p] = b.String(), ls
	}
	var pl []string
	pl = append(pl, "*** Begin Patch")
	switch r.Intn(8) {
	case 0:
		pl = append(pl, "*** Environment ID: env_1")
	case 1:
		pl = append(pl, []string{"*** Environment ID:", "*** Environment ID: ", "*** Environment ID:   \t"}[r.Intn(3)])
	case 2:
		pl = append(pl, "*** Environment ID: e1", "*** Environment ID: e2")
	case 3:
		pl = append(pl, " *** Environment ID: env_2 ")
	}
	late := r.Intn(12) == 0
	for k := 1 + r.Intn(2); k > 0; k-- {
		p := names[r.Intn(len(names))]
		ls, ok := lines[p]
		switch x := r.Intn(6); {
		case x == 0 || !ok && x < 4: // add
			pl = append(pl, "*** Add File: "+p)
			for j := 1 + r.Intn(3); j > 0; j-- {
				pl = append(pl, "+"+words[r.Intn(len(words))])
			}
		case x == 1: // delete
			pl = append(pl, "*** Delete File: "+p)
		default: // update
			pl = append(pl, "*** Update File: "+p)
			if r.Intn(5) == 0 {
				pl = append(pl, "*** Move to: "+names[r.Intn(len(names))])
			}
			if len(ls) == 0 {
				ls = []string{"alpha"} // a file that is not there
			}
			at := r.Intn(len(ls))
			end := at + 1 + r.Intn(len(ls)-at)
			if r.Intn(3) == 0 {
				pl = append(pl, "@@")
			} else if r.Intn(4) == 0 && at > 0 {
				pl = append(pl, "@@ "+ls[at-1])
			}
			for i := at; i < end; i++ {
				switch r.Intn(3) {
				case 0:
					pl = append(pl, " "+ls[i])
				default:
					pl = append(pl, "-"+ls[i])
				}
			}
			for j := r.Intn(3); j > 0; j-- {
				pl = append(pl, "+"+words[r.Intn(len(words))])
			}
			if end == len(ls) && r.Intn(3) == 0 {
				pl = append(pl, "*** End of File")
			}
		}
		if r.Intn(6) == 0 {
			pl = append(pl, "")
		}
	}
	if late {
		pl = append(pl, "*** Environment ID: late")
	}
	pl = append(pl, "*** End Patch")
	eols := []string{"\n", "\n", "\r\n", "\r\r\n", "mixed"}
	eol := eols[r.Intn(len(eols))]
	var b strings.Builder
	for i, l := range pl {
		b.WriteString(l)
		e := eol
		if eol == "mixed" {
			e = []string{"\n", "\r\n", "\r\r\n"}[r.Intn(3)]
		}
		if i < len(pl)-1 || r.Intn(4) > 0 {
			b.WriteString(e)
		}
	}
	return files, b.String()
}
