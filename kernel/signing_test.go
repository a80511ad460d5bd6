package kernel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestSigningKeySignsTheKernelsCommits: git.signing_key (here relative
// to the config file's directory, WithBaseDir) signs the commit a file
// tool persists and the one git_commit pushes, and the remote's tip
// verifies with git verify-commit; without it the kernel's commits do
// not verify. A key that cannot be read is a configuration error naming
// git.signing_key, at New.
func TestSigningKeySignsTheKernelsCommits(t *testing.T) {
	key := gittest.NewSSHKey(t)
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})

	plain := bootKernel(t, bare, true)
	call(t, plain, "write_file", map[string]string{"path": "data/plain.txt", "content": "p\n"})
	if _, err := gittest.VerifyCommit(t, bare, key.AllowedSigners, "main"); err == nil {
		t.Fatal("a commit verified with no signing key configured")
	}

	root := t.TempDir()
	k := bootKernel(t, bare, false, WithRoot(root), WithBaseDir(filepath.Dir(key.Path)),
		WithSetting("git.signing_key", filepath.Base(key.Path)))
	call(t, k, "write_file", map[string]string{"path": "data/a.txt", "content": "a\n"})
	gittest.RequireSigned(t, bare, key.AllowedSigners, "main")
	if got := gittest.Git(t, bare, "log", "-1", "--format=%an|%s", "main"); !strings.HasPrefix(got, "Agent|") {
		t.Fatalf("author %q", got)
	}

	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	call(t, k, "git_add", map[string]any{"paths": []string{"notes.txt"}})
	call(t, k, "git_commit", map[string]any{"type": "docs", "message": "notes"})
	if got := gittest.Git(t, bare, "log", "-1", "--format=%s", "main"); got != "docs: notes\n" {
		t.Fatalf("git_commit not pushed: tip %q", got)
	}
	gittest.RequireSigned(t, bare, key.AllowedSigners, "main")

	_, err := New(context.Background(), WithEnviron([]string{}), WithMemoryFS(), WithSetting("git.remote", bare),
		WithSetting("git.signing_key", filepath.Join(t.TempDir(), "missing")))
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "git.signing_key" {
		t.Fatalf("missing key: %v", err)
	}
}
