package pretty

import (
	"fmt"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// The %G placeholders of a signed commit, as git prints them on a machine
// with gpg and without the signer's key: the tools verify no signature.
// For an OpenPGP signature gpg reports ERRSIG (no public key) with the
// issuer's key id, read here from the signature packet itself, so %G? is
// E and %GK the key id; %GS, %GF and %GP stay empty. For an SSH
// signature with no gpg.ssh.allowedSignersFile configured git verifies
// nothing: %G? is N and the rest empty. Either way %GT makes git 2.39
// stop on a BUG (the trust level is left unset).

// signatureKind names the format of a commit's signature.
type signatureKind int

const (
	sigNone signatureKind = iota
	sigOpenPGP
	sigSSH
	sigX509
)

func kindOfSignature(sig string) signatureKind {
	switch {
	case sig == "":
		return sigNone
	case strings.HasPrefix(sig, "-----BEGIN SSH SIGNATURE-----"):
		return sigSSH
	case strings.HasPrefix(sig, "-----BEGIN SIGNED MESSAGE-----"):
		return sigX509
	}
	return sigOpenPGP
}

// openPGPKeyID is the issuer key id gpg prints for a signature (16
// upper-case hex digits): the issuer subpacket's, else the last 8 bytes
// of the issuer fingerprint's. "" when the packet cannot be read.
func openPGPKeyID(sig string) string {
	block, err := armor.Decode(strings.NewReader(sig))
	if err != nil {
		return ""
	}
	p, err := packet.Read(block.Body)
	if err != nil {
		return ""
	}
	s, ok := p.(*packet.Signature)
	if !ok || s.IssuerKeyId == nil {
		return ""
	}
	return fmt.Sprintf("%016X", *s.IssuerKeyId)
}
