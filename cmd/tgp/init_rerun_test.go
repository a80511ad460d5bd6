package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestInitRerunFixesTheRemote: a mistyped --remote fails the
// first init and leaves nothing (TestInitAllOrNothing); init with the
// right one then works. A re-run with other flags updates tgp.config.yaml
// in place (and says so), keeping every other byte of the file (comments
// included), and boots against the new remote. With a clone of the old
// remote already in the root, a re-run with another remote changes nothing
// and stops with the command to use.
func TestInitRerunFixesTheRemote(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/seed.ts": "/** Seed. */\nexport default () => 1;\n"})
	dir := t.TempDir()
	bad := filepath.Join(dir, "no-such-remote.git")
	if code, out, errOut := tgp(t, dir, "init", "--remote", bad); code == 0 {
		t.Fatalf("init with a bad remote succeeded: %s %s", out, errOut)
	}
	if code, out, errOut := tgp(t, dir, "init"); code != 0 {
		t.Fatalf("init without a remote: %d %s %s", code, out, errOut)
	}
	cfg := filepath.Join(dir, "tgp.config.yaml")
	before, _ := os.ReadFile(cfg)
	code, out, errOut := tgp(t, dir, "init", "--remote", remote, "--branch", "main")
	if code != 0 {
		t.Fatalf("re-run: %d %s %s", code, out, errOut)
	}
	if !strings.Contains(out, `git.remote updated: "" -> "`+remote+`"`) || !strings.Contains(out, `git.branch updated: "" -> "main"`) {
		t.Fatalf("re-run did not say what changed:\n%s", out)
	}
	after, _ := os.ReadFile(cfg)
	want := strings.Replace(strings.Replace(string(before), `remote: ""`, `remote: "`+remote+`"`, 1), `branch: ""`, `branch: "main"`, 1)
	if string(after) != want {
		t.Fatalf("the file changed beyond the two values:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tgp", ".git", "HEAD")); err != nil {
		t.Fatalf("no clone of the new remote: %v", err)
	}
	if code, out, _ := tgp(t, dir, "init", "--remote", remote, "--branch", "main"); code != 0 || !strings.Contains(out, "already initialised; nothing changed") {
		t.Fatalf("same flags again: %d %s", code, out)
	}
	other := gittest.BareRemote(t)
	code, out, errOut = tgp(t, dir, "init", "--remote", other)
	if code == 0 || !strings.Contains(errOut, "nothing was changed") || !strings.Contains(errOut, "mv .tgp .tgp.old && tgp init --remote "+other) {
		t.Fatalf("remote change over an existing clone: %d %s %s", code, out, errOut)
	}
	if now, _ := os.ReadFile(cfg); string(now) != want {
		t.Fatalf("a refused re-run changed the configuration:\n%s", now)
	}
}
