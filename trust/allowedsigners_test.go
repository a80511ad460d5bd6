package trust

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

type testKey struct {
	signer  ssh.Signer
	pub     string // authorized_keys form
	privPEM []byte
}

func newTestKey(t testing.TB) testKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return testKey{signer: s, pub: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey()))), privPEM: pem.EncodeToMemory(block)}
}

func (k testKey) sign(t testing.TB, msg []byte) string {
	t.Helper()
	sig, err := sshsig.Sign(strings.NewReader(string(msg)), k.signer, sshsig.HashSHA512, Namespace)
	if err != nil {
		t.Fatal(err)
	}
	return string(sshsig.Armor(sig))
}

func TestParseAllowedSigners(t *testing.T) {
	k := newTestKey(t)
	file := "# team\n\n" +
		"alice@example.com " + k.pub + " laptop\n" +
		`"bob@example.com,carol@example.com" namespaces="git,file",valid-after="20200101Z" ` + k.pub + "\r\n" +
		"*@example.com,!eve@example.com Valid-Before=\"20991231235959Z\" " + k.pub + "\n"
	a, err := ParseAllowedSigners([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Signers) != 3 {
		t.Fatalf("%d signers", len(a.Signers))
	}
	s := a.Signers[1]
	if s.Principals != "bob@example.com,carol@example.com" || s.Namespaces != "git,file" || s.Line != 4 ||
		!s.ValidAfter.Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("line 4: %+v", s)
	}
	if got := a.Signers[2].ValidBefore; !got.Equal(time.Date(2099, 12, 31, 23, 59, 59, 0, time.UTC)) {
		t.Fatalf("valid-before %v", got)
	}
	for _, tc := range []struct{ who string }{{"bob@example.com"}, {"dave@example.com"}} {
		if matchPatternList(tc.who, a.Signers[2].Principals) != 1 && tc.who != "eve@example.com" {
			t.Fatalf("%s does not match %s", tc.who, a.Signers[2].Principals)
		}
	}
	if matchPatternList("eve@example.com", a.Signers[2].Principals) != -1 {
		t.Fatal("a negated principal matched")
	}

	for _, bad := range []string{
		"alice@example.com",                             // no key
		"alice@example.com ssh-ed25519",                 // no key material
		"alice@example.com ssh-rsa " + k.pub[12:],       // key type does not match
		`alice@example.com namespaces=git ` + k.pub,     // unquoted value
		`alice@example.com namespaces="git ` + k.pub,    // unterminated
		`alice@example.com permit-pty ` + k.pub,         // authorized_keys' option
		`alice@example.com valid-after="2020" ` + k.pub, // bad time
		`"alice@example.com ` + k.pub,                   // unterminated principals
		`alice@example.com cert-authority=yes ` + k.pub, // flag with a value
		`x valid-after="20300101",valid-before="20200101" ` + k.pub,
	} {
		_, err := ParseAllowedSigners([]byte(bad + "\n"))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != 1 {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestMatchPattern(t *testing.T) {
	for _, tc := range []struct {
		s, p string
		want bool
	}{
		{"alice@x.com", "alice@x.com", true},
		{"alice@x.com", "*", true},
		{"alice@x.com", "*@x.com", true},
		{"alice@y.com", "*@x.com", false},
		{"alice@x.com", "al?ce@x.com", true},
		{"alice@x.com", "a*e*x*m", true},
		{"alice@x.com", "[a]lice@x.com", false}, // no classes in OpenSSH's patterns
		{"", "*", true},
		{"", "?", false},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", "*a*a*a*a*a*a*a*a*c", false},
	} {
		if got := matchPattern(tc.s, tc.p); got != tc.want {
			t.Errorf("matchPattern(%q, %q) = %v", tc.s, tc.p, got)
		}
	}
}

// FuzzParseAllowedSigners: the parser never panics, and what it accepts
// renders (Signer.String) to lines that parse back to the same signers.
func FuzzParseAllowedSigners(f *testing.F) {
	k := newTestKey(f)
	for _, seed := range []string{
		"alice@example.com " + k.pub,
		`"a b" namespaces="git",valid-after="20200101",valid-before="20300101Z" ` + k.pub + " comment",
		`*,!x cert-authority,NAMESPACES="fi\"le" ` + k.pub,
		"# comment\n\n  x " + k.pub + "\r\n",
		`x valid-before="209912312359UTC" ` + k.pub,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAllowedSigners(data)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, s := range a.Signers {
			if s.Principals == "" || s.Key == nil {
				t.Fatalf("accepted a signer without principals or key: %+v", s)
			}
			b.WriteString(s.String() + "\n")
		}
		again, err := ParseAllowedSigners([]byte(b.String()))
		if err != nil {
			t.Fatalf("rendered file does not parse: %v\n%s", err, b.String())
		}
		if len(again.Signers) != len(a.Signers) {
			t.Fatalf("%d signers, %d after rendering", len(a.Signers), len(again.Signers))
		}
		for i := range a.Signers {
			x, y := a.Signers[i], again.Signers[i]
			x.Line, y.Line = 0, 0
			if x.Principals != y.Principals || x.Namespaces != y.Namespaces || x.CertAuthority != y.CertAuthority ||
				!x.ValidAfter.Equal(y.ValidAfter) || !x.ValidBefore.Equal(y.ValidBefore) ||
				!reflect.DeepEqual(x.Key.Marshal(), y.Key.Marshal()) {
				t.Fatalf("signer %d changed by rendering:\n%+v\n%+v", i, x, y)
			}
		}
	})
}

// TestVerifySignatureAgreesWithSSHKeygen: for allowed_signers lines of
// every shape, VerifySignature accepts exactly when `ssh-keygen -Y
// verify` (what git verify-commit runs) does, for the same principal,
// namespace and time.
func TestVerifySignatureAgreesWithSSHKeygen(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	k, other := newTestKey(t), newTestKey(t)
	msg := []byte("tree 0000\n\nthe payload\n")
	armored := k.sign(t, msg)
	dir := t.TempDir()
	sigPath, msgPath := filepath.Join(dir, "msg.sig"), filepath.Join(dir, "msg")
	for p, b := range map[string][]byte{sigPath: []byte(armored), msgPath: msg} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	when := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	const who = "alice@example.com"
	lines := []string{
		who + " " + k.pub,
		`"` + who + `" ` + k.pub,
		"*@example.com " + k.pub,
		"*,!alice@* " + k.pub,
		"bob@example.com " + k.pub,
		who + " " + other.pub,
		`alice@example.com namespaces="git" ` + k.pub,
		`alice@example.com namespaces="file" ` + k.pub,
		`alice@example.com namespaces="file,g?t" ` + k.pub,
		`alice@example.com NameSpaces="git" ` + k.pub,
		`alice@example.com valid-after="20250601120001Z" ` + k.pub,
		`alice@example.com valid-after="20250601120000Z" ` + k.pub,
		`alice@example.com valid-before="20250601115959Z" ` + k.pub,
		`alice@example.com valid-before="20250601120000Z" ` + k.pub,
		`alice@example.com valid-after="20240101Z",valid-before="20260101Z" ` + k.pub,
		`alice@example.com cert-authority ` + k.pub,
		`alice@example.com namespaces=git ` + k.pub,
		`alice@example.com permit-pty ` + k.pub,
		"bob@example.com " + other.pub + "\n" + who + " " + k.pub,
	}
	for _, line := range lines {
		allowed := filepath.Join(dir, "allowed")
		if err := os.WriteFile(allowed, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(msgPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", who, "-n", Namespace, "-s", sigPath,
			"-Overify-time="+when.Format("20060102150405")+"Z")
		cmd.Stdin = in
		out, sshErr := cmd.CombinedOutput()
		in.Close()
		var ours error
		a, perr := ParseAllowedSigners([]byte(line + "\n"))
		if perr != nil {
			ours = perr
		} else {
			ours = a.VerifySignature(msg, armored, who, when)
		}
		if (sshErr == nil) != (ours == nil) {
			t.Errorf("%s\n  ssh-keygen: %v %s\n  ours: %v", line, sshErr, strings.TrimSpace(string(out)), ours)
		}
	}
}
