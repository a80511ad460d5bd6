package main

import (
	"strings"
	"testing"
)

// A mistyped tool name gets the name meant, as a mistyped configuration
// key does (one "did you mean" for both).
func TestCallUnknownToolDidYouMean(t *testing.T) {
	code, out, _ := tgp(t, "", "call", "wirte_file", "{}", "--root", t.TempDir())
	r := decodeCall(t, out)
	if code != 1 || r.OK || r.Error == nil || r.Error.Kind != "not_found" || !strings.Contains(r.Error.Message, "did you mean write_file?") {
		t.Fatalf("code %d out %s", code, out)
	}
	code, out, _ = tgp(t, "", "call", "frobnicate", "{}", "--root", t.TempDir())
	if r := decodeCall(t, out); code != 1 || strings.Contains(r.Error.Message, "did you mean") {
		t.Fatalf("a name like no tool's: code %d out %s", code, out)
	}
}

// A broken schema rule reads as the rule, not as the validator's
// "5/1 is less than 100.000000".
func TestCallSchemaErrorReadsAsRule(t *testing.T) {
	root := t.TempDir()
	code, out, _ := tgp(t, "", "call", "git_log", `{"timeout_ms":5}`, "--root", root)
	r := decodeCall(t, out)
	if code != 1 || r.Error == nil || r.Error.Kind != "bad_args" || r.Error.Field != "timeout_ms" || r.Error.Message != "timeout_ms: must be >= 100 (got 5)" {
		t.Fatalf("code %d out %s", code, out)
	}
}
