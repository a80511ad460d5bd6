package gitbackend

// Signed commits. Every place of the kernel that encodes a commit object
// (a persist's commit, a replay's, git_commit's, git_stash's) goes
// through EncodeCommit with one CommitSigner, so no commit leaves
// unsigned when a key is configured.
//
// The signature is git's SSH signature (gpg.format=ssh): an armored
// "SSH SIGNATURE" block in the commit's gpgsig header, made with the
// namespace "git" and sha512 over the commit object without that header,
// which `git verify-commit` checks against gpg.ssh.allowedSignersFile.
// The sshsig wire format and its armor come from github.com/hiddeco/sshsig
// (a small, maintained implementation of OpenSSH's PROTOCOL.sshsig on top
// of golang.org/x/crypto/ssh), not from an encoder of our own.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/tgp-go/tgp/internal/gitconfig"
)

// CommitSigner signs a commit: message is the commit object encoded
// without its signature header, the result is the armored signature that
// goes in the gpgsig header. It has the shape of go-git's git.Signer, so
// one serves as the other.
type CommitSigner interface {
	Sign(message io.Reader) ([]byte, error)
}

// SSHSigner makes git's SSH commit signatures with one private key.
type SSHSigner struct {
	key ssh.Signer
}

// sshNamespace is the namespace git signs commits in.
const sshNamespace = "git"

// NewSSHSigner reads an unencrypted OpenSSH (or PEM) private key.
func NewSSHSigner(pemBytes []byte) (*SSHSigner, error) {
	k, err := ssh.ParsePrivateKey(pemBytes)
	if err != nil {
		var pe *ssh.PassphraseMissingError
		if errors.As(err, &pe) {
			return nil, errors.New("the key is encrypted: an unencrypted key is needed (the kernel does not ask for passphrases)")
		}
		return nil, err
	}
	return &SSHSigner{key: k}, nil
}

// LoadSSHSigner reads the private key at path; a path to a public key
// (KEY.pub, as user.signingkey often names) reads the private key beside it.
func LoadSSHSigner(path string) (*SSHSigner, error) {
	b, err := os.ReadFile(path)
	if err == nil && strings.HasSuffix(path, ".pub") && isPublicKey(b) {
		if priv, perr := os.ReadFile(strings.TrimSuffix(path, ".pub")); perr == nil {
			path, b = strings.TrimSuffix(path, ".pub"), priv
		}
	}
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	s, err := NewSSHSigner(b)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return s, nil
}

func isPublicKey(b []byte) bool {
	_, _, _, _, err := ssh.ParseAuthorizedKey(b)
	return err == nil
}

// PublicKey is the key's public half, in authorized_keys form (what an
// allowed_signers line names).
func (s *SSHSigner) PublicKey() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.key.PublicKey())))
}

// Sign returns the armored SSH signature of message.
func (s *SSHSigner) Sign(message io.Reader) ([]byte, error) {
	sig, err := sshsig.Sign(message, s.key, sshsig.HashSHA512, sshNamespace)
	if err != nil {
		return nil, err
	}
	return sshsig.Armor(sig), nil
}

// SignCommit sets c's signature (the gpgsig header) to signer's over c
// encoded without it. A nil signer leaves c as it is.
func SignCommit(c *object.Commit, signer CommitSigner) error {
	if signer == nil {
		return nil
	}
	c.PGPSignature = ""
	payload := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(payload); err != nil {
		return err
	}
	rd, err := payload.Reader()
	if err != nil {
		return err
	}
	sig, err := signer.Sign(rd)
	if err != nil {
		return fmt.Errorf("signing the commit: %w", err)
	}
	c.PGPSignature = string(sig)
	return nil
}

// EncodeCommit stores c, signed by signer when signer is not nil. Every
// commit the kernel makes is written here.
func EncodeCommit(s storer.EncodedObjectStorer, c *object.Commit, signer CommitSigner) (plumbing.Hash, error) {
	if err := SignCommit(c, signer); err != nil {
		return plumbing.ZeroHash, err
	}
	obj := s.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// ResolveSigner says which key signs the commits of repo: configured (the
// kernel's git.signing_key) when set; else git's own settings, read as
// the identity is (the repository's config, global, system, the
// GIT_CONFIG_* variables): commit.gpgsign=true with gpg.format=ssh signs
// with user.signingkey, a path to a private key (or to KEY.pub with KEY
// beside it; ~/ is the home directory). With commit.gpgsign=true and
// another gpg.format (openpgp, x509) the kernel, which has no gpg, makes
// unsigned commits as before. Nil: unsigned.
func ResolveSigner(configured string, repo *git.Repository, environ []string) (CommitSigner, error) {
	env := gitconfig.Environ(environ)
	if configured != "" {
		return LoadSSHSigner(expandHome(configured, env))
	}
	var raw []byte
	if repo != nil {
		if cfg, err := repo.Config(); err == nil {
			raw, _ = cfg.Marshal()
		}
	}
	conf := gitconfig.Load(environ, raw, "")
	if !conf.Bool("commit.gpgsign", false) || !strings.EqualFold(conf.String("gpg.format", "openpgp"), "ssh") {
		return nil, nil
	}
	key := strings.TrimSpace(conf.String("user.signingkey", ""))
	switch {
	case key == "":
		return nil, errors.New("commit.gpgsign is true with gpg.format=ssh but user.signingkey is not set")
	case strings.HasPrefix(key, "key::") || strings.HasPrefix(key, "ssh-") || strings.HasPrefix(key, "ecdsa-") || strings.HasPrefix(key, "sk-"):
		return nil, fmt.Errorf("user.signingkey %q is a literal public key, which needs ssh-agent: set it (or git.signing_key) to the path of an unencrypted private key", key)
	}
	return LoadSSHSigner(expandHome(key, env))
}

// expandHome expands a leading ~/ as git does for paths in its config.
func expandHome(p string, env map[string]string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home := env["HOME"]
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		return filepath.Join(home, strings.TrimPrefix(p[1:], "/"))
	}
	return p
}
