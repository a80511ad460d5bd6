// Package docs holds the documentation's checks: architecture.md must
// name every package of the module, so that the map stays the territory.
package docs

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "github.com/tgp-go/tgp/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(p, "github.com/tgp-go/tgp/")
		// A line of the layout starts with the package's path.
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(rel) + `\s`).Match(doc) {
			t.Errorf("docs/architecture.md's layout has no line for %s", rel)
		}
	}
}
