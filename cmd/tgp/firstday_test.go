package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"

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

// A boot over the network shows, on a terminal, the pack it receives
// between "cloning" and "cloned" (objects and bytes, a counter rewritten
// in place); where stderr is no terminal (a log), the counter is left
// out.
func TestBootShowsTransferOnATerminal(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/seed.ts": "/** Seed. */\nexport default () => 1;\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(remote), "")
	env := []string{"HOME=" + t.TempDir(), "TGP_GIT_REMOTE=" + srv.URL(filepath.Base(remote))}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptmx.Close()
	var shown bytes.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&shown, ptmx); close(copied) }()
	var out bytes.Buffer
	code := inDir(t, t.TempDir(), func() int {
		return run(context.Background(), []string{"boot"}, strings.NewReader(""), &out, tty, env)
	})
	tty.Close()
	<-copied
	s := shown.String()
	counter := strings.Index(s, "\r\033[Kreceiving ")
	if code != 0 || counter < 0 || counter > strings.LastIndex(s, "cloned ") || counter < strings.Index(s, "cloning ") ||
		!regexp.MustCompile(`receiving \d+ objects: \d+ bytes`).MatchString(s) {
		t.Fatalf("boot on a terminal: %d %q", code, s)
	}

	var errb bytes.Buffer
	code = inDir(t, t.TempDir(), func() int {
		return run(context.Background(), []string{"boot"}, strings.NewReader(""), &out, &errb, env)
	})
	if code != 0 || !strings.Contains(errb.String(), "cloned ") || strings.Contains(errb.String(), "receiving") {
		t.Fatalf("boot with stderr in a file: %d %q", code, errb.String())
	}
}
