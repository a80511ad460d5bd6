package gitbackend

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestPersistAndRefreshConvertLineEndingsAsGit: in a repository whose
// .gitattributes asks for CRLF in the worktree, every way bytes cross
// between worktree and objects converts as git does. A write persisted
// with CRLF stores LF (git add's convert_to_git); another agent's change
// arriving by refresh is written with CRLF (git pull's checkout) and does
// not count as a local edit; git status in the root stays clean and the
// root's bytes equal a git clone's, the git CLI being the oracle for both.
func TestPersistAndRefreshConvertLineEndingsAsGit(t *testing.T) {
	gittest.RequireGit(t)
	ctx := context.Background()
	remote := gittest.SeedRemote(t, map[string]string{
		".gitattributes": "*.txt text eol=crlf\n*.bin -text\n",
		"a.txt":          "one\ntwo\n",
		"sub/b.txt":      "b\n",
		"raw.bin":        "x\r\ny\n",
	})
	a := newAgent(t, remote, false)
	if got, _ := a.fs.ReadFile("a.txt"); string(got) != "one\r\ntwo\r\n" {
		t.Fatalf("boot checkout: %q", got)
	}

	// Persist: the CRLF an agent writes is stored as LF; -text is stored raw.
	a.write(t, "a.txt", "one\r\ntwo\r\nthree\r\n")
	a.write(t, "raw.bin", "p\r\nq\r\n")
	if got := gittest.Git(t, remote, "show", "main:a.txt"); got != "one\ntwo\nthree\n" {
		t.Fatalf("remote a.txt = %q, want LF as git add stores it", got)
	}
	if got := gittest.Git(t, remote, "show", "main:raw.bin"); got != "p\r\nq\r\n" {
		t.Fatalf("remote raw.bin = %q, want the bytes as written", got)
	}
	if st := gittest.Git(t, a.fs.Root(), "status", "--porcelain"); st != "" {
		t.Fatalf("git status in the root after persist:\n%s", st)
	}

	// Refresh: another agent's change arrives converted and is not a local edit.
	other := gittest.Clone(t, remote)
	if err := os.WriteFile(filepath.Join(other, "sub", "b.txt"), []byte("b\nb2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "c.txt"), []byte("c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, other, "add", "-A")
	gittest.Git(t, other, "commit", "-qm", "other")
	gittest.Git(t, other, "push", "-q", "origin", "HEAD:main")
	res, err := a.repo.Refresh(ctx)
	if err != nil || !res.Applied || len(res.Blocked) != 0 {
		t.Fatalf("refresh: %+v %v", res, err)
	}
	// Replay: a's own commit over another new remote commit.
	if err := os.WriteFile(filepath.Join(other, "c.txt"), []byte("c\nc2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, other, "commit", "-qam", "other 2")
	gittest.Git(t, other, "push", "-q", "origin", "HEAD:main")
	a.write(t, "sub/d.txt", "d\r\n")

	if st := gittest.Git(t, a.fs.Root(), "status", "--porcelain"); st != "" {
		t.Fatalf("git status in the root after refresh and replay:\n%s", st)
	}
	fresh := gittest.Clone(t, remote)
	for _, p := range []string{"a.txt", "sub/b.txt", "c.txt", "sub/d.txt", "raw.bin"} {
		want, err := os.ReadFile(filepath.Join(fresh, p))
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.fs.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: root has %q, git clone has %q", p, got, want)
		}
	}
	if got := gittest.Git(t, remote, "show", "main:sub/d.txt"); !strings.HasSuffix(got, "d\n") || strings.Contains(got, "\r") {
		t.Fatalf("remote sub/d.txt = %q", got)
	}
}
