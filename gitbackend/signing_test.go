package gitbackend

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

// signingAgent is newAgent (an OS root) whose commits key signs.
func signingAgent(t *testing.T, remote, key string) *agent {
	t.Helper()
	f, err := vfs.NewOS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), f.Billy(), Config{Remote: remote, Branch: "main",
		Author: Identity{Name: "Agent", Email: "agent@example.com"}, SigningKey: key,
		Retry: RetryConfig{MaxAttempts: 50, BaseDelay: 2 * time.Millisecond}}, WithLockFile(LockFilePath(f.Root())))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &agent{fs: f, repo: r}
}

// TestSignedCommitChangesNothingElse: a signature adds the gpgsig header
// and nothing else; the commit read back has the same people, times,
// tree, parents and message bytes as the unsigned one, and what it signs
// is the unsigned encoding.
func TestSignedCommitChangesNothingElse(t *testing.T) {
	key := gittest.NewSSHKey(t)
	s, err := LoadSSHSigner(key.Path)
	if err != nil {
		t.Fatal(err)
	}
	if s.PublicKey() != key.PublicKey {
		t.Fatalf("public key %q, want %q", s.PublicKey(), key.PublicKey)
	}
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600))
	mk := func() *object.Commit {
		return &object.Commit{Author: object.Signature{Name: "A", Email: "a@x", When: when},
			Committer: object.Signature{Name: "C", Email: "c@x", When: when.Add(time.Minute)},
			Message:   "subject\n\n  body with  spaces \n", TreeHash: plumbing.NewHash(strings.Repeat("ab", 20)),
			ParentHashes: []plumbing.Hash{plumbing.NewHash(strings.Repeat("cd", 20))}}
	}
	plain := &plumbing.MemoryObject{}
	if err := mk().Encode(plain); err != nil {
		t.Fatal(err)
	}
	signed := &plumbing.MemoryObject{}
	c := mk()
	if err := SignCommit(c, s); err != nil {
		t.Fatal(err)
	}
	if err := c.Encode(signed); err != nil {
		t.Fatal(err)
	}
	back := &object.Commit{}
	if err := back.Decode(signed); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(back.PGPSignature, "-----BEGIN SSH SIGNATURE-----\n") {
		t.Fatalf("signature %q", back.PGPSignature)
	}
	unsigned := &plumbing.MemoryObject{}
	if err := back.EncodeWithoutSignature(unsigned); err != nil {
		t.Fatal(err)
	}
	if readAll(t, unsigned) != readAll(t, plain) {
		t.Fatalf("signed commit without its signature:\n%s\nwant\n%s", readAll(t, unsigned), readAll(t, plain))
	}
	if err := SignCommit(c, nil); err != nil || c.PGPSignature == "" {
		t.Fatalf("a nil signer changed the commit: %v", err)
	}
}

func readAll(t *testing.T, o *plumbing.MemoryObject) string {
	t.Helper()
	r, err := o.Reader()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// TestPersistAndReplayCommitsAreSigned: with git.signing_key, the commit
// a persist makes and the one a replay makes (two roots racing on one
// remote, local and over HTTP: the second recreates its change on the
// first's commit) verify with git verify-commit, and keep their people
// and message.
func TestPersistAndReplayCommitsAreSigned(t *testing.T) {
	key := gittest.NewSSHKey(t)
	for _, transport := range []string{"local", "http"} {
		t.Run(transport, func(t *testing.T) {
			bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
			remote := bare
			if transport == "http" {
				remote = gittest.NewHTTPServer(t, filepath.Dir(bare), "").URL(filepath.Base(bare))
			}
			a := signingAgent(t, remote, key.Path)
			b := signingAgent(t, remote, key.Path)
			if res := a.write(t, "tools/a.ts", "export const a = 1;\n"); res.Replayed {
				t.Fatalf("first writer replayed: %+v", res)
			}
			gittest.RequireSigned(t, bare, key.AllowedSigners, "main")
			res := b.write(t, "tools/b.ts", "export const b = 2;\n")
			if !res.Replayed {
				t.Fatalf("second writer did not replay: %+v", res)
			}
			gittest.RequireSigned(t, bare, key.AllowedSigners, "main")
			gittest.RequireSigned(t, bare, key.AllowedSigners, "main~1")
			if got := gittest.Git(t, bare, "log", "-2", "--format=%an <%ae>|%cn <%ce>|%s"); got != "Agent <agent@example.com>|Agent <agent@example.com>|forge: tools/b.ts\nAgent <agent@example.com>|Agent <agent@example.com>|forge: tools/a.ts\n" {
				t.Fatalf("people or message changed: %q", got)
			}
			if _, err := gittest.VerifyCommit(t, bare, key.AllowedSigners, "main~2"); err == nil {
				t.Fatal("the seed commit, unsigned, verified: the oracle accepts anything")
			}
		})
	}
}

// TestGitConfigSigningKeyHonoured: with no git.signing_key, the
// repository's commit.gpgsign=true + gpg.format=ssh + user.signingkey
// (a KEY.pub path, as git users write it) signs; gpg.format=openpgp, for
// which the kernel has no gpg, leaves commits unsigned; an encrypted key
// fails the persist and says why.
func TestGitConfigSigningKeyHonoured(t *testing.T) {
	key := gittest.NewSSHKey(t)
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	a := signingAgent(t, bare, "")
	root := a.fs.Root()
	a.write(t, "one.txt", "1\n")
	if _, err := gittest.VerifyCommit(t, bare, key.AllowedSigners, "main"); err == nil {
		t.Fatal("signed with no key configured")
	}
	gittest.Git(t, root, "config", "commit.gpgsign", "true")
	gittest.Git(t, root, "config", "gpg.format", "ssh")
	gittest.Git(t, root, "config", "user.signingkey", key.Path+".pub")
	a.write(t, "two.txt", "2\n")
	gittest.RequireSigned(t, bare, key.AllowedSigners, "main")
	gittest.Git(t, root, "config", "gpg.format", "openpgp")
	a.write(t, "three.txt", "3\n")
	if raw := gittest.Git(t, bare, "cat-file", "commit", "main"); strings.Contains(raw, "gpgsig") {
		t.Fatalf("openpgp format signed: %s", raw)
	}
	gittest.Git(t, root, "config", "gpg.format", "ssh")
	enc := filepath.Join(t.TempDir(), "enc")
	if out, err := runSSHKeygen("-q", "-t", "ed25519", "-N", "secret", "-f", enc); err != nil {
		t.Skipf("ssh-keygen: %v %s", err, out)
	}
	gittest.Git(t, root, "config", "user.signingkey", enc)
	_ = a.fs.WriteFile("four.txt", []byte("4\n"), 0o644)
	if _, err := a.repo.Persist(context.Background(), Change{Paths: []string{"four.txt"}}); err == nil || !strings.Contains(err.Error(), "encrypted") {
		t.Fatalf("encrypted key: %v", err)
	}
}

func runSSHKeygen(args ...string) (string, error) {
	out, err := exec.Command("ssh-keygen", args...).CombinedOutput()
	return string(out), err
}

// TestCarriedCommitsAreSigned: a push that loses leaves its commit for
// the winner to land (carry.go); with both roots signing, every commit
// the landing puts on main (B's, and A's landed by B) verifies.
func TestCarriedCommitsAreSigned(t *testing.T) {
	key := gittest.NewSSHKey(t)
	bare, _, a, b := lostRace(t, race{})
	a.repo.cfg.SigningKey, b.repo.cfg.SigningKey = key.Path, key.Path
	var landed string
	sleep := a.repo.sleep
	a.repo.sleep = func(ctx context.Context, d time.Duration) error {
		if landed == "" {
			b.write(t, "tools/b1.ts", "b1\n")
			landed = gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
		}
		return sleep(ctx, d)
	}
	a.write(t, "tools/a1.ts", "a1\n")
	if !strings.Contains(landed, "tools/a1.ts") {
		t.Fatalf("B's push did not land A's carry:\n%s", landed)
	}
	// seed and "other machine" were made by the git CLI, unsigned.
	revs := strings.Fields(gittest.Git(t, bare, "rev-list", "main~2..main"))
	if len(revs) != 2 {
		t.Fatalf("%d commits after the unsigned ones, want 2 (b1, a1)", len(revs))
	}
	for _, rev := range revs {
		gittest.RequireSigned(t, bare, key.AllowedSigners, rev)
	}
	if got := gittest.Git(t, bare, "log", "-2", "--format=%s", "main"); !strings.Contains(got, "forge: tools/a1.ts") || !strings.Contains(got, "forge: tools/b1.ts") {
		t.Fatalf("main: %q", got)
	}
}
