package kernel

import (
	"slices"
	"strings"
	"testing"
)

// appendToList changes the list's text only: every other line stays, the
// list reads back with the item added, and a list the file lacks is
// written with the effective list plus the item.
func TestAppendToList(t *testing.T) {
	eff := []string{"mkdir", "touch"}
	cases := []struct {
		name, in string
		want     []string
	}{
		{"flow", "# top\nshell:\n  categories:\n    # c\n    safe_write: [mkdir, touch] # trailing\n    dangerous: [rm]\n", []string{"mkdir", "touch", "id"}},
		{"flow empty", "shell:\n  categories:\n    safe_write: []\n", []string{"id"}},
		{"flow trailing comma", "shell:\n  categories:\n    safe_write: [a, b, ]\n", []string{"a", "b", "id"}},
		{"flow multiline", "shell:\n  categories:\n    safe_write: [\n      a, \"b]\", # x]\n      c\n    ]\n  deny: [x]\n", []string{"a", "b]", "c", "id"}},
		{"block", "shell:\n  categories:\n    safe_write:\n      - a   # one\n      # between\n      - b\n    dangerous: [rm]\n", []string{"a", "b", "id"}},
		{"block flush", "shell:\n  categories:\n    safe_write:\n    - a\n    - b\n", []string{"a", "b", "id"}},
		{"null", "shell:\n  categories:\n    safe_write: # none yet\n", []string{"mkdir", "touch", "id"}},
		{"tilde", "shell:\n  categories:\n    safe_write: ~\n", []string{"mkdir", "touch", "id"}},
		{"key missing", "shell:\n  categories:\n    read_only: [ls]\n  deny: [curl]\n# foot\n", []string{"mkdir", "touch", "id"}},
		{"section missing", "shell:\n  deny: [curl]\ngit:\n  remote: x\n", []string{"mkdir", "touch", "id"}},
		{"shell missing", "git:\n  remote: x # r\n", []string{"mkdir", "touch", "id"}},
		{"shell empty", "shell:\ngit:\n  remote: x\n", []string{"mkdir", "touch", "id"}},
		{"empty file", "", []string{"mkdir", "touch", "id"}},
		{"comments only", "# nothing\n", []string{"mkdir", "touch", "id"}},
		{"no final newline", "shell:\n  categories:\n    read_only: [ls]", []string{"mkdir", "touch", "id"}},
		{"four spaces", "shell:\n    categories:\n        read_only: [ls]\n", []string{"mkdir", "touch", "id"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := appendToList([]byte(c.in), "shell.categories.safe_write", "id", eff)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := listAt(out, "shell.categories.safe_write")
			if !ok || !slices.Equal(got, c.want) {
				t.Fatalf("list %v, want %v\n%s", got, c.want, out)
			}
			// Every line of the input is still there but the list's own.
			have := map[string]bool{}
			for _, l := range strings.Split(string(out), "\n") {
				have[l] = true
			}
			missing := 0
			for _, l := range strings.Split(c.in, "\n") {
				if !have[l] {
					missing++
				}
			}
			if missing > 1 {
				t.Fatalf("%d lines changed:\n%s", missing, out)
			}
			for _, l := range strings.Split(c.in, "\n") {
				if i := strings.Index(l, "#"); i >= 0 && !strings.Contains(string(out), l[i:]) {
					t.Fatalf("comment %q lost:\n%s", l[i:], out)
				}
			}
		})
	}
	// Values YAML would read as something else are quoted.
	out, err := appendToList([]byte("shell:\n  paths:\n    read: [docs]\n"), "shell.paths.read", "**/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := listAt(out, "shell.paths.read"); !slices.Equal(got, []string{"docs", "**/x"}) {
		t.Fatalf("pattern: %v\n%s", got, out)
	}
	out, err = appendToList([]byte("shell:\n  categories:\n    read_only: [ls]\n"), "shell.categories.read_only", "true", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := listAt(out, "shell.categories.read_only"); !slices.Equal(got, []string{"ls", "true"}) {
		t.Fatalf("true: %v\n%s", got, out)
	}
	if _, err := appendToList([]byte("shell: {categories: {read_only: [ls]}}\n"), "shell.categories.read_only", "id", nil); err == nil {
		t.Fatal("a flow mapping was edited")
	}
}
