package tools_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestApplyPatchScenarios runs the data-driven scenarios under
// testdata/applypatch, modelled on the scenario suite of OpenAI Codex's
// apply_patch (the reference models are trained against) plus our own:
// each has patch.txt, input/ (the tree before), expected/ (the tree
// after) and, for a refusal, error.txt (a part of the message; the tree
// must then be unchanged). NOTE.md records a deliberate difference from
// the reference.
func TestApplyPatchScenarios(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "applypatch", "[0-9]*"))
	if err != nil || len(dirs) < 30 {
		t.Fatalf("scenarios: %v (%d)", err, len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			both(t, func(t *testing.T, e *env) {
				input := readTree(t, filepath.Join(dir, "input"))
				for p, c := range input {
					e.write(t, p, c)
				}
				patch, err := os.ReadFile(filepath.Join(dir, "patch.txt"))
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := json.Marshal(map[string]string{"patch": string(patch)})
				_, callErr := e.call("apply_patch", string(raw))
				want := readTree(t, filepath.Join(dir, "expected"))
				if msg, err := os.ReadFile(filepath.Join(dir, "error.txt")); err == nil {
					if callErr == nil || !strings.Contains(callErr.Error(), string(msg)) {
						t.Fatalf("want a refusal containing %q, got %v", msg, callErr)
					}
					want = input
				} else if callErr != nil {
					t.Fatalf("apply_patch: %v", callErr)
				}
				got := map[string]string{}
				_ = e.fs.Walk(".", func(p string, info fs.FileInfo, err error) error {
					if err == nil && !info.IsDir() {
						b, _ := e.fs.ReadFile(p)
						got[p] = string(b)
					}
					return nil
				})
				if d := treeDiff(want, got); d != "" {
					t.Fatalf("tree after the patch differs:\n%s", d)
				}
			})
		})
	}
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".keep" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func treeDiff(want, got map[string]string) string {
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		w, inW := want[k]
		g, inG := got[k]
		switch {
		case !inG:
			b.WriteString("missing " + k + "\n")
		case !inW:
			b.WriteString("unexpected " + k + "\n")
		case w != g:
			b.WriteString(k + ": want " + strconvQuote(w) + ", got " + strconvQuote(g) + "\n")
		}
	}
	return b.String()
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
