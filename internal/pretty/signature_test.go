package pretty

import (
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// The key id of an OpenPGP signature is read from its packet, as gpg
// reports it (%GK).
func TestOpenPGPKeyID(t *testing.T) {
	if got := openPGPKeyID(gittest.PGPSignature); got != "F53463A4D297C983" {
		t.Errorf("key id %q", got)
	}
}
