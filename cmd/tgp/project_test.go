package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// A command run where no project is says so and creates nothing: no
// .tgp/ (with its lock) in the working directory, no directory at a
// mistyped --root.
func TestNotATGPProject(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"call", "list_dir", "{}"},
		{"status"},
		{"boot"},
		{"tools", "list"},
		{"check"},
		{"serve"},
	} {
		code, out, errOut := tgp(t, dir, args...)
		if code != 1 || !strings.Contains(out+errOut, "not a tgp project") || !strings.Contains(out+errOut, "tgp init") {
			t.Fatalf("%v: code %d stdout %q stderr %q", args, code, out, errOut)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("commands outside a project left %v", ents)
	}
	missing := filepath.Join(dir, "no", "such", "root")
	code, out, errOut := tgp(t, "", "status", "--root", missing)
	if code != 1 || !strings.Contains(errOut, "not a tgp project: the root "+missing+" does not exist") {
		t.Fatalf("--root missing: code %d stdout %q stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Fatal("--root to a missing directory created it")
	}
}

// A fresh clone of a project holds tgp.config.yaml and not the root (it is
// git-ignored): that is a project, and boot clones the root.
func TestProjectWithoutRootBoots(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/seed.ts": "/** Seed. */\nexport default () => 1;\n"})
	dir := t.TempDir()
	if code, out, errOut := tgp(t, dir, "init", "--remote", remote); code != 0 {
		t.Fatalf("init: %d %s %s", code, out, errOut)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".tgp")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := tgp(t, dir, "status")
	if code != 0 || !strings.Contains(out, "tools:    1") {
		t.Fatalf("status in a project without its root: %d %s %s", code, out, errOut)
	}
}

// A failed init changes nothing: no configuration with the bad remote, no
// half root, no .gitignore entry; over an existing configuration the file
// keeps its bytes.
func TestInitAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "no-such-remote.git")
	if code, out, errOut := tgp(t, dir, "init", "--remote", bad); code == 0 {
		t.Fatalf("init with a bad remote succeeded: %s %s", out, errOut)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a failed init left %v", ents)
	}
	nested := filepath.Join(dir, "a", "b")
	if code, _, _ := tgp(t, dir, "init", "--remote", bad, "--root", nested); code == 0 {
		t.Fatal("init with a bad remote succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a failed init with --root left %v", ents)
	}
	if code, out, errOut := tgp(t, dir, "init"); code != 0 {
		t.Fatalf("init: %d %s %s", code, out, errOut)
	}
	before := snapshot(t, dir)
	if code, out, errOut := tgp(t, dir, "init", "--remote", bad); code == 0 {
		t.Fatalf("re-run with a bad remote succeeded: %s %s", out, errOut)
	}
	if after := snapshot(t, dir); after != before {
		t.Fatalf("a failed re-run changed the project:\n%s", lineDiff(before, after))
	}
}

// lineDiff lists the lines only one side has.
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !mb[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ma[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// A new --root with a remote configured is a fresh instance's root: it is
// cloned into. Without a remote it is refused (TestNotATGPProject).
func TestNewRootWithARemoteIsCloned(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/seed.ts": "/** Seed. */\nexport default () => 1;\n"})
	env := []string{"HOME=" + t.TempDir(), "TGP_GIT_REMOTE=" + remote}
	var out, errb bytes.Buffer
	fresh := filepath.Join(t.TempDir(), "m0", "a0", "root")
	if code := run(context.Background(), []string{"status", "--root", fresh}, strings.NewReader(""), &out, &errb, env); code != 0 || !strings.Contains(out.String(), "tools:    1") {
		t.Fatalf("fresh root with a remote: %d %s %s", code, out.String(), errb.String())
	}
}

// tgp tools list shows each tool's last commit, as git log finds it:
// whole in --json, abbreviated in text.
func TestToolsListCommit(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/seed.ts": "/** Seed. */\nexport default () => 1;\n"})
	clone := gittest.Clone(t, remote)
	gittest.WriteFile(t, clone, "tools/later.ts", "/** Later. */\nexport default () => 2;\n")
	gittest.Git(t, clone, "add", "-A")
	gittest.Git(t, clone, "commit", "-q", "-m", "later")
	gittest.Git(t, clone, "push", "-q", "origin", "HEAD:main")
	want := map[string]string{}
	for _, p := range []string{"tools/seed.ts", "tools/later.ts"} {
		want[p] = strings.TrimSpace(gittest.Git(t, remote, "log", "-1", "--format=%H", "main", "--", p))
	}
	if want["tools/seed.ts"] == want["tools/later.ts"] {
		t.Fatal("both tools in one commit: the test needs two")
	}
	dir := t.TempDir()
	if code, out, errOut := tgp(t, dir, "init", "--remote", remote); code != 0 {
		t.Fatalf("init: %d %s %s", code, out, errOut)
	}
	code, out, errOut := tgp(t, dir, "tools", "list", "--json")
	var rows []struct {
		Path   string `json:"path"`
		Commit string `json:"commit"`
	}
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 2 {
		t.Fatalf("tools list --json: %d %v %s %s", code, err, out, errOut)
	}
	for _, r := range rows {
		if r.Commit != want[r.Path] {
			t.Errorf("%s: commit %q, git log says %s", r.Path, r.Commit, want[r.Path])
		}
	}
	code, out, _ = tgp(t, dir, "tools", "list")
	for p, c := range want {
		if code != 0 || !strings.Contains(out, p+strings.Repeat(" ", 40-len(p))+" "+c[:7]+" ") {
			t.Errorf("tools list: no line %s %s in\n%s", p, c[:7], out)
		}
	}
}
