package gittest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// SSHKey is a fresh ed25519 key for signing commits, written in a temp
// dir: Path is the unencrypted OpenSSH private key (Path+".pub" the
// public one), AllowedSigners a gpg.ssh.allowedSignersFile trusting it
// for any principal.
type SSHKey struct {
	Path, PublicKey, AllowedSigners string
}

// NewSSHKey generates a signing key.
func NewSSHKey(t testing.TB) SSHKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "test signing key")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	k := SSHKey{Path: filepath.Join(dir, "id_ed25519"), AllowedSigners: filepath.Join(dir, "allowed_signers"),
		PublicKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))}
	for p, b := range map[string][]byte{
		k.Path:           pem.EncodeToMemory(block),
		k.Path + ".pub":  []byte(k.PublicKey + "\n"),
		k.AllowedSigners: []byte("* " + k.PublicKey + "\n"),
	} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// VerifyCommit is the oracle for signed commits: `git verify-commit` of
// rev in the repository at dir, trusting the keys of allowedSigners. It
// returns git's report (stdout and stderr) and its failure.
func VerifyCommit(t testing.TB, dir, allowedSigners, rev string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ssh-keygen missing: git verify-commit needs it for SSH signatures")
		}
		t.Skip("ssh-keygen not installed")
	}
	cmd := exec.Command("git", "-c", "gpg.ssh.allowedSignersFile="+allowedSigners, "verify-commit", "-v", rev)
	cmd.Dir = dir
	home := filepath.Join(os.TempDir(), "tgp-gittest-home")
	_ = os.MkdirAll(home, 0o755)
	cmd.Env = Env(home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// RequireSigned fails the test unless rev verifies (VerifyCommit) as a
// good signature ("Good \"git\" signature").
func RequireSigned(t testing.TB, dir, allowedSigners, rev string) {
	t.Helper()
	out, err := VerifyCommit(t, dir, allowedSigners, rev)
	if err != nil || !strings.Contains(out, `Good "git" signature`) {
		t.Fatalf("git verify-commit %s: %v\n%s", rev, err, out)
	}
}
