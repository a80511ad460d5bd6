package vfs

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

func commitThroughBilly(t *testing.T, f *FS) string {
	t.Helper()
	wt := f.Billy()
	dot, err := wt.Chroot(".git")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := git.Init(filesystem.NewStorage(dot, cache.NewObjectLRUDefault()), wt)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("tools/hello.ts", []byte("export default () => 'hi';\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Add("tools/hello.ts"); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "T", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	h, err := w.Commit("forge: tools/hello.ts", &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		t.Fatal(err)
	}
	st, err := w.Status()
	if err != nil || !st.IsClean() {
		t.Fatalf("status after commit: %v %v", st, err)
	}
	return h.String()
}

func TestGoGitInMemory(t *testing.T) {
	f := NewMemory()
	commitThroughBilly(t, f)
	b, err := f.ReadFile("tools/hello.ts")
	if err != nil || !strings.Contains(string(b), "hi") {
		t.Fatal(err)
	}
	if _, err := f.Stat(".git/HEAD"); err != nil {
		t.Fatalf(".git not in the jail: %v", err)
	}
}

func TestGoGitOnDiskReadByGitCLI(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	f, err := NewOS(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := commitThroughBilly(t, f)
	for _, args := range [][]string{{"fsck", "--strict"}, {"log", "--format=%H %s"}} {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		if args[0] == "log" && strings.TrimSpace(string(out)) != h+" forge: tools/hello.ts" {
			t.Fatalf("git log: %s", out)
		}
	}
}

func TestBillyRefusesEscapes(t *testing.T) {
	f, _, _ := jailWithOutside(t)
	b := f.Billy()
	for _, p := range []string{"out/canary", "../outside/canary", "sub/rel/canary"} {
		if _, err := b.Open(p); err == nil {
			t.Errorf("billy Open(%q) escaped", p)
		}
	}
	// billy paths are rooted: "../x" from the root is clamped to the root, like chroot.
	if _, err := b.Create("out/pwned"); err == nil {
		t.Error("billy Create through a link out")
	}
}
