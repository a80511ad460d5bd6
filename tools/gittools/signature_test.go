package gittools

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// signedCommit writes a commit object carrying sig in its gpgsig header.
func signedCommit(t *testing.T, f *fixture, parent, sig, msg string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n")
	if parent != "" {
		b.WriteString("parent " + parent + "\n")
	}
	b.WriteString("author A U Thor <a@example.com> 1700000000 +0000\ncommitter A U Thor <a@example.com> 1700000000 +0000\n")
	b.WriteString("gpgsig " + strings.ReplaceAll(sig, "\n", "\n ") + "\n\n" + msg + "\n")
	cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Dir, cmd.Env = f.dir, gittest.Env(t.TempDir())
	cmd.Stdin = strings.NewReader(b.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestRegressSignatureFieldsAsGit: the %G placeholders print what git
// prints with gpg and without the signer's key: E and the key id from the
// OpenPGP signature packet, N for an SSH signature (no
// gpg.ssh.allowedSignersFile), and %GT stops git on a BUG.
func TestRegressSignatureFieldsAsGit(t *testing.T) {
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Skip("gpg not installed: git verifies nothing without it")
	}
	f := newRepo(t)
	f.git(t, "hash-object", "-t", "tree", "-w", "/dev/null") // the empty tree
	c1 := signedCommit(t, f, "", gittest.PGPSignature, "pgp signed")
	c2 := signedCommit(t, f, c1, gittest.SSHSignature, "ssh signed")
	f.git(t, "update-ref", "refs/heads/main", c2)
	f = open(t, f.dir)
	for _, format := range []string{"%G?|%GK|%GF|%GP|%GS|", "%l %L %GS %GK", "%s %G?"} {
		compareTool(t, f, "git_log", map[string]any{"format": format}, "", "log", "--format="+format)
	}
	compareTool(t, f, "git_show", map[string]any{"format": "%GK", "commit": "HEAD^"}, "", "show", "-s", "--format=%GK", "HEAD^")
	compareTool(t, f, "git_log", map[string]any{"format": "%GT", "max_count": 1}, "", "log", "-n", "1", "--format=%GT")
	compareTool(t, f, "git_log", map[string]any{"format": "%GT"}, "", "log", "--format=%GT")
}
