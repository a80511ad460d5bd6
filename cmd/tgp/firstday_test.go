package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
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

// A command run in a subdirectory of a project finds the project upward,
// as git finds .git: its configuration and its root, not "not a tgp
// project", and no .tgp/ made in the subdirectory.
func TestCommandsFindTheProjectUpward(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/seed.ts": "/** Seed. */\nexport default () => 1;\n"})
	dir := t.TempDir()
	if code, out, errOut := tgp(t, dir, "init", "--remote", remote); code != 0 {
		t.Fatalf("init: %d %s %s", code, out, errOut)
	}
	sub := filepath.Join(dir, "src", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := tgp(t, sub, "status")
	if code != 0 || !strings.Contains(out, "root:     "+filepath.Join(dir, ".tgp")) || !strings.Contains(out, "tools:    1") {
		t.Fatalf("status in a subdirectory: %d %s %s", code, out, errOut)
	}
	code, out, _ = tgp(t, sub, "call", "read_file", `{"path":"tools/seed.ts"}`)
	if r := decodeCall(t, out); code != 0 || !r.OK {
		t.Fatalf("call in a subdirectory: %d %s", code, out)
	}
	if ents, _ := os.ReadDir(sub); len(ents) != 0 {
		t.Fatalf("a command in the subdirectory left %v", ents)
	}
}
