package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every error is said with one prefix per layer: `tgp init --remote` with
// a path that does not exist printed "tgp: boot: boot: ...", `tgp tools
// find` "tgp: tgp tools ...", and a missing tool's path came twice.
func TestErrorsHaveOnePrefix(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-remote.git")
	code, _, errOut := tgp(t, dir, "init", "--remote", missing)
	if code != 1 || !strings.HasPrefix(errOut, "tgp: boot: remote "+missing+" is not a git repository") {
		t.Fatalf("init --remote missing: %d %q", code, errOut)
	}
	checkOnePrefix(t, errOut)
	if code, out, errOut := tgp(t, dir, "init"); code != 0 {
		t.Fatalf("init: %d %s %s", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string // on stdout or stderr
	}{
		{[]string{"tools", "find"}, "tgp: tools find needs a QUERY"},
		{[]string{"check", "tools/nope.ts"}, "tgp: not_found: read tools/nope.ts: no such file or directory"},
		{[]string{"exec", "tools/nope.ts"}, `"cannot read tools/nope.ts: no such file or directory"`},
	} {
		_, out, errOut := tgp(t, dir, c.args...)
		if !strings.Contains(out+errOut, c.want) {
			t.Errorf("%v: stdout %q stderr %q, want %q", c.args, out, errOut, c.want)
		}
		checkOnePrefix(t, out+errOut)
	}
}

// checkOnePrefix fails on a line where a "word: " prefix, or a path,
// comes twice in a row.
func checkOnePrefix(t *testing.T, s string) {
	t.Helper()
	for _, line := range strings.Split(s, "\n") {
		parts := strings.Split(line, ": ")
		for i := 1; i < len(parts); i++ {
			prev, cur := parts[i-1], parts[i]
			if prev == cur || strings.HasPrefix(cur, prev+" ") && !strings.Contains(prev, " ") {
				t.Errorf("prefix %q twice in %q", prev, line)
			}
		}
	}
}

// A --config that does not exist is named once.
func TestMissingConfigNamedOnce(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := tgp(t, dir, "status", "--config", "nope.yaml")
	if code != 1 || !strings.HasPrefix(errOut, "tgp: config file nope.yaml: no such file or directory\n") {
		t.Fatalf("%d %q", code, errOut)
	}
	checkOnePrefix(t, errOut)
}
