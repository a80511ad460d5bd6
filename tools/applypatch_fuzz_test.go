package tools_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzApplyPatchRoundTrip: an envelope made by diffing two generated files
// (every unchanged line kept as context, split into chunks at generated
// points, the last marked *** End of File when chosen) applied to the
// first file gives the second exactly.
func FuzzApplyPatchRoundTrip(f *testing.F) {
	f.Add([]byte("abcabc"), []byte("acbd"), uint8(3))
	f.Add([]byte(""), []byte("xyz"), uint8(1))
	f.Add([]byte("aaaa"), []byte(""), uint8(0))
	f.Add([]byte(" a b\tc"), []byte("a b c d e"), uint8(200))
	f.Fuzz(func(t *testing.T, from, to []byte, cuts uint8) {
		a, b := genLines(from), genLines(to)
		if len(a) > 60 || len(b) > 60 {
			return
		}
		patch := envelopeFromDiff("f.txt", a, b, cuts)
		if patch == "" {
			return // identical files: no patch to make
		}
		e := newEnv(t, true)
		e.write(t, "f.txt", joinFile(a))
		raw, _ := json.Marshal(map[string]string{"patch": patch})
		if _, err := e.call("apply_patch", string(raw)); err != nil {
			t.Fatalf("patch of %q -> %q did not apply: %v\n%s", a, b, err, patch)
		}
		if got, want := e.read(t, "f.txt"), joinFile(b); got != want {
			t.Fatalf("%q -> %q: got %q\n%s", a, b, got, patch)
		}
	})
}

// genLines maps bytes to lines from a small vocabulary, so that repeated
// lines (the hard case for context matching) are common.
func genLines(bs []byte) []string {
	words := []string{"alpha", "beta", "gamma", "", "  indented", "beta ", "}", "return x;"}
	out := make([]string, 0, len(bs))
	for _, c := range bs {
		out = append(out, words[int(c)%len(words)])
	}
	return out
}

func joinFile(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// envelopeFromDiff builds an Update File envelope from an LCS diff of a
// and b; cuts chooses where chunks split (after a context line, so every
// chunk but a trailing pure addition has old lines).
func envelopeFromDiff(path string, a, b []string, cuts uint8) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte
		text string
	}
	var ops []op
	changed := false
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, op{'+', b[j]})
			j, changed = j+1, true
		default:
			ops = append(ops, op{'-', a[i]})
			i, changed = i+1, true
		}
	}
	if !changed {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("*** Begin Patch\n*** Update File: " + path + "\n@@\n")
	hasOld := false
	for k, o := range ops {
		sb.WriteByte(o.kind)
		sb.WriteString(o.text)
		sb.WriteByte('\n')
		if o.kind != '+' {
			hasOld = true
		}
		// Split after a context line when the bits say so and both sides
		// of the split keep old lines.
		if o.kind == ' ' && hasOld && k+1 < len(ops) && cuts&(1<<(k%8)) != 0 {
			rest := false
			for _, r := range ops[k+1:] {
				if r.kind != '+' {
					rest = true
				}
			}
			if rest {
				sb.WriteString("@@\n")
				hasOld = false
			}
		}
	}
	if cuts&1 != 0 && hasOld {
		sb.WriteString("*** End of File\n")
	}
	sb.WriteString("*** End Patch\n")
	return sb.String()
}
