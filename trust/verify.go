package trust

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/hiddeco/sshsig"
)

// Namespace is the sshsig namespace git signs commits in.
const Namespace = "git"

// Why a commit is not trusted. Verify wraps one of them.
var (
	ErrUnsigned      = errors.New("the commit is not signed")
	ErrNotSSH        = errors.New("the commit's signature is not an SSH signature")
	ErrUnknownSigner = errors.New("its key is not listed for the committer in the trusted signers")
	ErrNotValid      = errors.New("its key is listed for the committer but not for this namespace or time")
	ErrBadSignature  = errors.New("the signature does not verify")
)

// Verify checks the SSH signature of the raw commit object (as stored,
// gpgsig header included) against the keys listed for the committer's
// email, at the committer's time, in namespace "git". It returns that
// email (the principal the key verified for) or an error wrapping one of
// the Err values above.
func (a *AllowedSigners) Verify(raw []byte) (principal string, err error) {
	payload, armored, committer, when, err := splitSigned(raw)
	if err != nil {
		return "", err
	}
	if err := a.VerifySignature(payload, armored, committer, when); err != nil {
		return "", err
	}
	return committer, nil
}

// VerifySignature checks an armored SSH signature of payload made by a
// key listed for principal, valid at when, in namespace "git" (what
// `ssh-keygen -Y verify -n git -I principal -Overify-time=when` checks).
func (a *AllowedSigners) VerifySignature(payload []byte, armored, principal string, when time.Time) error {
	if armored == "" {
		return ErrUnsigned
	}
	if !strings.HasPrefix(armored, "-----BEGIN SSH SIGNATURE-----") {
		return ErrNotSSH
	}
	sig, err := sshsig.Unarmor([]byte(armored))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	want := sig.PublicKey.Marshal()
	reason := ErrUnknownSigner
	for _, s := range a.Signers {
		if s.CertAuthority || matchPatternList(principal, s.Principals) != 1 || !bytes.Equal(s.Key.Marshal(), want) {
			continue
		}
		if s.Namespaces != "" && matchPatternList(Namespace, s.Namespaces) != 1 ||
			!s.ValidAfter.IsZero() && when.Before(s.ValidAfter) ||
			!s.ValidBefore.IsZero() && when.After(s.ValidBefore) {
			reason = ErrNotValid
			continue
		}
		if err := sshsig.Verify(bytes.NewReader(payload), sig, s.Key, sig.HashAlgorithm, Namespace); err != nil {
			return fmt.Errorf("%w: %v", ErrBadSignature, err)
		}
		return nil
	}
	return reason
}

// splitSigned separates a raw commit into what was signed (the object
// without its gpgsig header, as git's parse_signed_commit does), the
// armored signature, and the committer's email and time.
func splitSigned(raw []byte) (payload []byte, sig, email string, when time.Time, err error) {
	head, body, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		head, body = raw, nil
	}
	var out bytes.Buffer
	var sigb strings.Builder
	inSig := false
	for _, line := range strings.SplitAfter(string(head), "\n") {
		if line == "" {
			continue
		}
		if inSig && strings.HasPrefix(line, " ") {
			sigb.WriteString(strings.TrimPrefix(line, " "))
			continue
		}
		inSig = false
		if v, ok := strings.CutPrefix(line, "gpgsig "); ok {
			inSig = true
			sigb.WriteString(v)
			continue
		}
		if v, ok := strings.CutPrefix(line, "committer "); ok {
			email, when, err = parseIdent(strings.TrimSuffix(v, "\n"))
			if err != nil {
				return nil, "", "", time.Time{}, err
			}
		}
		out.WriteString(line)
	}
	if ok {
		if !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
			out.WriteByte('\n')
		}
		out.WriteByte('\n')
		out.Write(body)
	}
	if email == "" && when.IsZero() {
		return nil, "", "", time.Time{}, errors.New("the commit has no committer")
	}
	return out.Bytes(), sigb.String(), email, when, nil
}

// parseIdent reads "Name <email> 1700000000 +0000".
func parseIdent(v string) (string, time.Time, error) {
	lt, gt := strings.LastIndexByte(v, '<'), strings.LastIndexByte(v, '>')
	if lt < 0 || gt < lt {
		return "", time.Time{}, fmt.Errorf("malformed committer %q", v)
	}
	fields := strings.Fields(v[gt+1:])
	var secs int64
	if len(fields) == 0 {
		return "", time.Time{}, fmt.Errorf("malformed committer %q", v)
	}
	if _, err := fmt.Sscan(fields[0], &secs); err != nil {
		return "", time.Time{}, fmt.Errorf("malformed committer time %q", v)
	}
	return v[lt+1 : gt], time.Unix(secs, 0), nil
}

// RawObject reads an object's bytes as stored.
func RawObject(o plumbing.EncodedObject) ([]byte, error) {
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}
