package rawobj

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestReadsWhatGitWrote: on a history with merges, subdirectories, an
// executable, a symbolic link and an annotated tag, the commits, trees and
// tag read as git itself reads them (log's %T %P %ct, ls-tree, cat-file).
func TestReadsWhatGitWrote(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	commit := func(msg string) {
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", msg)
	}
	gittest.WriteFile(t, dir, "a.txt", "a\n")
	gittest.WriteFile(t, dir, "d/e/f.txt", "f\n")
	commit("one")
	gittest.Git(t, dir, "checkout", "-q", "-b", "side")
	gittest.WriteFile(t, dir, "side.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "side.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit("side")
	gittest.Git(t, dir, "checkout", "-q", "main")
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	commit("two")
	gittest.Git(t, dir, "merge", "-q", "--no-edit", "side")
	gittest.Git(t, dir, "tag", "-a", "-m", "v1", "v1")

	for _, line := range strings.Split(strings.TrimSpace(gittest.Git(t, dir, "log", "--all", "--format=%H %T %ct %P")), "\n") {
		f := strings.Fields(line)
		c, ok := ParseCommit([]byte(gittest.Git(t, dir, "cat-file", "commit", f[0])))
		if !ok {
			t.Fatalf("commit %s refused", f[0])
		}
		got := fmt.Sprint(c.Tree, " ", c.Time)
		for _, p := range c.Parents {
			got += " " + p.String()
		}
		if want := strings.Join(append([]string{f[1]}, f[2:]...), " "); got != want {
			t.Fatalf("commit %s: read %q, git %q", f[0], got, want)
		}
		checkTree(t, dir, f[1])
	}
	target, ok := TagTarget([]byte(gittest.Git(t, dir, "cat-file", "tag", "v1")))
	if want := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "v1^{commit}")); !ok || target.String() != want {
		t.Fatalf("tag target %s (%v), git %s", target, ok, want)
	}
	if _, ok := ParseCommit([]byte("tree " + strings.Repeat("A", 40) + "\n")); ok {
		t.Fatal("a tree name in upper case read")
	}
	if _, ok := TagTarget([]byte("type commit\n")); ok {
		t.Fatal("a tag with no object line read")
	}
}

// checkTree compares the entries NextTreeEntry reads off the raw tree h
// (and its subtrees) with git ls-tree's.
func checkTree(t *testing.T, dir, h string) {
	t.Helper()
	raw := gittest.Git(t, dir, "cat-file", "tree", h)
	var got []string
	data := []byte(raw)
	for len(data) > 0 {
		mode, name, eh, rest, ok := NextTreeEntry(data)
		if !ok {
			t.Fatalf("tree %s: entry refused at %d bytes from its end", h, len(data))
		}
		data = rest
		got = append(got, fmt.Sprintf("%06s %s\t%s", strconv.FormatUint(uint64(mode), 8), eh, name))
		if mode.String() == "0040000" {
			checkTree(t, dir, eh.String())
		}
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(gittest.Git(t, dir, "ls-tree", h)), "\n") {
		mode, rest, _ := strings.Cut(l, " ")
		_, rest, _ = strings.Cut(rest, " ") // the type
		want = append(want, mode+" "+rest)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tree %s read as\n%s\ngit ls-tree:\n%s", h, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
