package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestGlobalIdentityAndNoHalfState: with only a global git identity (HOME)
// write_file and git_commit commit under it, the same resolver for both;
// a write whose commit cannot be made (user.useConfigOnly, no identity)
// is reported uncommitted, leaves the remote and meta.json untouched, and
// lands with the next change, never in between.
func TestGlobalIdentityAndNoHalfState(t *testing.T) {
	for _, crossProcess := range []bool{false, true} {
		t.Run(map[bool]string{false: "same kernel", true: "next process"}[crossProcess], func(t *testing.T) {
			globalIdentityAndNoHalfState(t, crossProcess)
		})
	}
}

func globalIdentityAndNoHalfState(t *testing.T, crossProcess bool) {
	remote := gittest.BareRemote(t)
	home := t.TempDir()
	gitconfig := filepath.Join(home, ".gitconfig")
	writeCfg := func(s string) {
		if err := os.WriteFile(gitconfig, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeCfg("[user]\n\tname = Global User\n\temail = global@example.com\n")
	env := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_COMMITTER_NAME=Env Committer", "GIT_COMMITTER_EMAIL=c@example.com"}
	k, err := New(context.Background(), WithEnviron(env), WithSetting("git.remote", remote), WithRoot(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })

	call(t, k, "write_file", map[string]string{"path": "tools/a.ts", "content": "/** A. */\nexport default () => 1;\n"})
	const want = "Global User <global@example.com>|Env Committer <c@example.com>\n"
	if got := gittest.Git(t, remote, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "main"); got != want {
		t.Fatalf("write_file commit: %q", got)
	}
	if err := os.WriteFile(filepath.Join(k.fs.Root(), "notes.txt"), []byte("n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	call(t, k, "git_add", map[string]any{"paths": []string{"notes.txt"}})
	call(t, k, "git_commit", map[string]any{"type": "chore", "message": "notes"})
	if got := gittest.Git(t, k.fs.Root(), "log", "-1", "--format=%an <%ae>|%cn <%ce>"); got != want {
		t.Fatalf("git_commit commit: %q (write_file made %q)", got, want)
	}

	before := gittest.Git(t, remote, "rev-parse", "main")
	writeCfg("[user]\n\tuseConfigOnly = true\n")
	raw, _ := json.Marshal(map[string]string{"path": "tools/b.ts", "content": "/** B. */\nexport default () => 2;\n"})
	_, err = k.Call(context.Background(), "write_file", raw)
	var te *tools.Error
	if !errors.As(err, &te) || !strings.Contains(te.Message, "not committed") {
		t.Fatalf("want an uncommitted error, got %v", err)
	}
	if got := gittest.Git(t, remote, "rev-parse", "main"); got != before {
		t.Fatal("the remote moved on a failed commit")
	}
	st, err := k.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(st.Uncommitted, ",") != "meta.json,tools/b.ts" {
		t.Fatalf("status uncommitted = %v", st.Uncommitted)
	}
	if out := gittest.Git(t, k.fs.Root(), "diff", "--cached", "--name-only"); out != "" {
		t.Fatalf("a failed commit left staged changes: %q", out)
	}

	writeCfg("[user]\n\tname = Global User\n\temail = global@example.com\n")
	if crossProcess {
		// A later process (the next `tgp call`) finds the uncommitted
		// change on boot.
		root := k.fs.Root()
		_ = k.Shutdown(context.Background())
		k, err = New(context.Background(), WithEnviron(env), WithSetting("git.remote", remote), WithRoot(root))
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Boot(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
		if st, _ := k.Status(context.Background()); strings.Join(st.Uncommitted, ",") != "meta.json,tools/b.ts" {
			t.Fatalf("after reboot, status uncommitted = %v", st.Uncommitted)
		}
	}
	call(t, k, "write_file", map[string]string{"path": "tools/c.ts", "content": "/** C. */\nexport default () => 'c';\n"})
	tree := gittest.Git(t, remote, "ls-tree", "-r", "--name-only", "main")
	for _, p := range []string{"tools/a.ts", "tools/b.ts", "tools/c.ts"} {
		if !strings.Contains(tree, p+"\n") {
			t.Fatalf("%s not on the remote after the next change:\n%s", p, tree)
		}
		if meta := gittest.Git(t, remote, "show", "main:meta.json"); !strings.Contains(meta, p) {
			t.Fatalf("meta.json on the remote lacks %s", p)
		}
	}
	if st, _ := k.Status(context.Background()); len(st.Uncommitted) != 0 {
		t.Fatalf("still uncommitted: %v", st.Uncommitted)
	}
}
