package main

import (
	"strings"
	"testing"
)

// `tgp --version` prints what `tgp version` prints.
func TestVersionFlag(t *testing.T) {
	code, out, errOut := tgp(t, "", "--version")
	_, want, _ := tgp(t, "", "version")
	if code != 0 || out != want || !strings.HasPrefix(out, "tgp ") {
		t.Fatalf("--version: code %d out %q stderr %q; version prints %q", code, out, errOut, want)
	}
}

// Arguments that are not JSON are a usage error (exit 2), found before the
// kernel boots, with the JSON error object still on stdout.
func TestCallInvalidJSONIsUsageError(t *testing.T) {
	root := t.TempDir()
	for _, raw := range []string{`{path:"a"}`, `{"path":"a"`, ``} {
		code, out, errOut := tgp(t, "", "call", "read_file", raw, "--root", root)
		if code != 2 {
			t.Fatalf("%q: exit %d, want 2 (stdout %q stderr %q)", raw, code, out, errOut)
		}
		r := decodeCall(t, out)
		if r.OK || r.Error == nil || r.Error.Kind != "bad_args" || !strings.Contains(errOut, "not JSON") {
			t.Fatalf("%q: stdout %q stderr %q", raw, out, errOut)
		}
	}
}

// init --help says what an empty --branch does (the remote's HEAD, as git
// clone), not a default the code does not apply.
func TestInitHelpBranchDefault(t *testing.T) {
	_, out, _ := tgp(t, "", "init", "--help")
	if strings.Contains(out, "default main") || !strings.Contains(out, "remote's HEAD") {
		t.Fatalf("init --help on --branch:\n%s", out)
	}
}
