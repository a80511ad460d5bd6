package registry

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/vfs"
)

func TestExtractDescription(t *testing.T) {
	cases := map[string]string{
		"/**\n * Adds two numbers.\n * @param a first\n */\nexport default (a: number) => a;\n":                    "Adds two numbers.",
		"#!/usr/bin/env node\n// lint\n/** First. */\n/**\n * Closest wins.\n *   Second line.\n */\nconst x = 1;": "Closest wins. Second line.",
		"const s = '/** not a doc */';\nexport default () => s;":                                                   NoDescription,
		"import x from './x';\n\n/** Doubles x. */\nexport default (n: number) => n * 2;\n":                        "Doubles x.",
		"/* plain block */\nexport default 1;":                                                                     NoDescription,
		"":                                                                                                         NoDescription,
		"/** unterminated":                                                                                         NoDescription,
		"/** @internal */\n/** Real doc. */ module.exports = 1":                                                    "Real doc.",
	}
	for src, want := range cases {
		if got := ExtractDescription([]byte(src)); got != want {
			t.Errorf("ExtractDescription(%q) = %q, want %q", src, got, want)
		}
	}
}

func FuzzExtractDescription(f *testing.F) {
	f.Add("/** a */ export default 1")
	f.Add("/*/**/*/export default")
	f.Fuzz(func(t *testing.T, s string) {
		d := ExtractDescription([]byte(s))
		if d == "" || strings.Contains(d, "\n") {
			t.Fatalf("empty description for %q", s)
		}
	})
}

func TestBlobHashMatchesGit(t *testing.T) {
	dir := t.TempDir()
	content := []byte("export default () => 42;\n")
	p := filepath.Join(dir, "t.ts")
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "hash-object", p).Output()
	if err != nil {
		t.Skipf("git not available: %v", err)
	}
	if got := BlobHash(content); got != strings.TrimSpace(string(out)) {
		t.Fatalf("%s vs %s", got, out)
	}
}

func seed(t *testing.T) *vfs.FS {
	t.Helper()
	f := vfs.NewMemory()
	files := map[string]string{
		"tools/math/add.ts":         "/** Add two numbers and return the sum. */\nexport default (a: number, b: number) => a + b;\n",
		"tools/text/slugify.ts":     "/** Turn a title into a URL slug. */\nexport default (s: string) => s;\n",
		"tools/dates/formatDate.ts": "/** Format a date as ISO text; numbers are not used. */\nexport default () => '';\n",
		"tools/finance/taxRate.ts":  "/** Compute the tax for an amount, add it to the total. */\nexport default () => 0;\n",
		"tools/types.d.ts":          "export type X = number;\n",
		"tools/node_modules/x/a.js": "module.exports = 1;\n",
		"README.md":                 "not a tool",
	}
	for p, c := range files {
		if err := f.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestBuildLoadAndStaleness(t *testing.T) {
	f := seed(t)
	r, err := Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 4 {
		t.Fatalf("tools %v", r.Entries())
	}
	e, _ := r.Get("tools/math/add.ts")
	if e.Name != "add" || e.Description != "Add two numbers and return the sum." || e.Hash != BlobHash([]byte("/** Add two numbers and return the sum. */\nexport default (a: number, b: number) => a + b;\n")) {
		t.Fatalf("entry %+v", e)
	}
	// Missing meta.json: rebuilt, stale.
	if _, stale, err := Load(f, nil); err != nil || !stale {
		t.Fatalf("missing meta.json: stale=%v err=%v", stale, err)
	}
	if err := f.WriteFile(FileName, r.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	r2, stale, err := Load(f, nil)
	if err != nil || stale || string(r2.Marshal()) != string(r.Marshal()) {
		t.Fatalf("fresh meta.json: stale=%v err=%v", stale, err)
	}
	// A tool edited behind the registry's back: stale, entry recomputed.
	if err := f.WriteFile("tools/math/add.ts", []byte("/** Add numbers. */\nexport default 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r3, stale, err := Load(f, nil)
	if err != nil || !stale {
		t.Fatalf("edited tool: stale=%v err=%v", stale, err)
	}
	if e, _ := r3.Get("tools/math/add.ts"); e.Description != "Add numbers." {
		t.Fatalf("not recomputed: %+v", e)
	}
	// Known hashes from git let Load skip reading files that match.
	hashes := map[string]string{}
	for _, e := range r.Entries() {
		hashes[e.Path] = e.Hash
	}
	if _, stale, _ := Load(f, hashes); stale {
		t.Fatal("hashes from git matching meta.json must not be stale")
	}
	// Corrupt file: rebuilt.
	if err := f.WriteFile(FileName, []byte("{nope"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r4, stale, err := Load(f, nil); err != nil || !stale || r4.Len() != 4 {
		t.Fatalf("corrupt: %v %v", stale, err)
	}
}

func TestMarshalDeterministic(t *testing.T) {
	f := seed(t)
	a, _ := Build(f)
	b, _ := Build(f)
	if string(a.Marshal()) != string(b.Marshal()) || !strings.HasSuffix(string(a.Marshal()), "}\n") {
		t.Fatal("marshal not deterministic")
	}
	if !strings.Contains(string(a.Marshal()), "\n  \"tools\": {\n    \"tools/dates/formatDate.ts\": {") {
		t.Fatalf("layout:\n%s", a.Marshal())
	}
	if string(New().Marshal()) != "{\n  \"tools\": {}\n}\n" {
		t.Fatalf("empty: %q", New().Marshal())
	}
}

// TestParseReadsMarshal: Parse gives back the registry Marshal wrote,
// entry for entry, and refuses what is not meta.json.
func TestParseReadsMarshal(t *testing.T) {
	a, err := Build(seed(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(a.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if string(b.Marshal()) != string(a.Marshal()) || b.Len() != 4 {
		t.Fatalf("parsed\n%s\nfrom\n%s", b.Marshal(), a.Marshal())
	}
	for _, bad := range []string{"", "{", "[]", "{}", `{"tools": 1}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
}

func TestFindRanking(t *testing.T) {
	r, err := Build(seed(t))
	if err != nil {
		t.Fatal(err)
	}
	hits := r.Find("add", 10)
	if len(hits) < 2 || hits[0].Path != "tools/math/add.ts" || hits[1].Path != "tools/finance/taxRate.ts" {
		t.Fatalf("name match must beat description mention: %+v", hits)
	}
	hits = r.Find("format dates", 10)
	if len(hits) == 0 || hits[0].Path != "tools/dates/formatDate.ts" {
		t.Fatalf("camelCase/plural: %+v", hits)
	}
	if hits := r.Find("tax rate", 1); len(hits) != 1 || hits[0].Entry.Name != "taxRate" {
		t.Fatalf("limit/camel: %+v", hits)
	}
	if hits := r.Find("kubernetes", 10); len(hits) != 0 {
		t.Fatalf("no match expected: %+v", hits)
	}
	r.Update("tools/net/kube.ts", []byte("/** Scale a kubernetes deployment. */\nexport default 1;"))
	if hits := r.Find("kubernetes", 10); len(hits) != 1 {
		t.Fatalf("update not indexed: %+v", hits)
	}
	r.Remove("tools/net/kube.ts")
	if hits := r.Find("kubernetes", 10); len(hits) != 0 {
		t.Fatalf("remove not indexed: %+v", hits)
	}
}
