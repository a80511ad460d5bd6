package pathspec

import (
	"errors"
	"strings"
	"testing"
)

func TestMatchAsGit(t *testing.T) {
	for _, c := range []struct {
		wd    string
		items []string
		yes   []string
		no    []string
	}{
		{"", []string{"a"}, []string{"a", "a/b"}, []string{"ab", "b/a"}},
		{"d", []string{"x"}, []string{"d/x", "d/x/y"}, []string{"x"}},
		{"d", []string{":/x"}, []string{"x"}, []string{"d/x"}},
		// Without FNM_PATHNAME a "*" crosses "/"; :(glob) keeps it in
		// one directory.
		{"", []string{"*.go"}, []string{"b.go", "a/b.go"}, []string{"b.c"}},
		{"", []string{":(glob)*.go"}, []string{"b.go"}, []string{"a/b.go"}},
		{"", []string{":(glob)**/b.go"}, []string{"b.go", "a/c/b.go"}, []string{"a/c.go"}},
		{"", []string{":(literal)*.go"}, []string{"*.go"}, []string{"b.go"}},
		// Excludes only: from the whole tree.
		{"", []string{":!a"}, []string{"b", "c/d"}, []string{"a", "a/x"}},
		{"", []string{"d", ":^d/x"}, []string{"d/y"}, []string{"d/x", "e"}},
		// icase folds ASCII only.
		{"", []string{":(icase)A.TXT"}, []string{"a.txt", "A.txt"}, []string{"b.txt"}},
		{"", []string{":(icase)Ü.TXT"}, []string{"Ü.txt"}, []string{"ü.txt"}},
		// A trailing slash names a directory only.
		{"", []string{"d/"}, []string{"d/x"}, []string{"d"}},
	} {
		ps, err := Parse(c.wd, c.items, nil)
		if err != nil {
			t.Fatalf("%q in %q: %v", c.items, c.wd, err)
		}
		for _, p := range c.yes {
			if !ps.Match(p) {
				t.Errorf("%q in %q does not match %q", c.items, c.wd, p)
			}
		}
		for _, p := range c.no {
			if ps.Match(p) {
				t.Errorf("%q in %q matches %q", c.items, c.wd, p)
			}
		}
	}
}

func TestMatchesDir(t *testing.T) {
	ps, err := Parse("", []string{"a/b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{"a": true, "a/b": true, "a/b/c": true, "c": false, "a/c": false} {
		if got := ps.MatchesDir(dir); got != want {
			t.Errorf("MatchesDir(%q) = %v", dir, got)
		}
	}
}

func TestParseRefusesAsGit(t *testing.T) {
	for item, want := range map[string]string{
		"":        "fatal: empty string is not a valid pathspec",
		"../x":    "fatal: ../x: '../x' is outside repository",
		":(foo)x": "fatal: Invalid pathspec magic 'foo' in ':(foo)x'",
		":(top":   "fatal: Missing ')' at the end of pathspec magic in ':(top'",
		":#x":     "fatal: Unimplemented pathspec magic '#' in ':#x'",
	} {
		_, err := Parse("", []string{item}, nil)
		var pe *Error
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Message, want) {
			t.Errorf("%q: %v, want %q", item, err, want)
		}
	}
}

// The check's error stops the parse at its item and is returned as it is.
func TestParseCheckStops(t *testing.T) {
	stop := errors.New("stop")
	var seen []string
	_, err := Parse("", []string{"a", "b", "c"}, func(it Item) error {
		seen = append(seen, it.Raw)
		if it.Raw == "b" {
			return stop
		}
		return nil
	})
	if err != stop || strings.Join(seen, ",") != "a,b" {
		t.Errorf("err %v, checked %q", err, seen)
	}
}

// IndexMatcher: an item that named a path exactly is not tried on the
// paths after it (checkout's "seen" array).
func TestIndexMatcherExactFirst(t *testing.T) {
	ps, err := Parse("", []string{"g/[ab].txt"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := NewIndexMatcher(ps)
	got := []bool{m.Match("g/[ab].txt"), m.Match("g/a.txt")}
	if !got[0] || got[1] {
		t.Errorf("got %v", got)
	}
}
