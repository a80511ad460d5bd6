package kernel

import (
	"os"
	"testing"
)

// TestRepositoryConfigIsTheTemplate: the tgp.config.yaml at the top of the
// repository is the commented default `tgp init` writes, as the README
// says.
func TestRepositoryConfigIsTheTemplate(t *testing.T) {
	b, err := os.ReadFile("../tgp.config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != ConfigTemplate {
		t.Fatal("tgp.config.yaml differs from kernel.ConfigTemplate: regenerate it from the template")
	}
}
