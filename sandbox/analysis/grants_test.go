package analysis

import (
	"strings"
	"testing"
)

// A permissions.fetch prefix disjoint from sandbox.allowed_fetch_urls,
// and a secret sandbox.secrets does not configure, are warnings at their
// string; a prefix under, or above, an allowed one is not.
func TestPermissionsOutsideConfiguration(t *testing.T) {
	src := "/** Fetches. */\nexport const permissions = {\n  fetch: [\"https://api.example.com/v1/\", \"https://example.com/\", \"https://evil.example.net/\"],\n" +
		"  secrets: [\"API\", \"NOPE\"],\n};\nexport default () => 1;\n"
	cfg := Config{FetchURLs: []string{"https://api.example.com/", "https://example.com/docs/"}, Secrets: []string{"API"}, Configured: true}
	rep := Analyze("tools/f.ts", []byte(src), cfg)
	if !rep.Valid {
		t.Fatalf("errors: %+v", rep.Errors)
	}
	var got []string
	for _, w := range rep.Warnings {
		if w.Rule == RulePermissions {
			got = append(got, w.Message)
			if w.Line < 3 || w.Line > 4 || w.Column < 2 {
				t.Errorf("warning at %d:%d: %s", w.Line, w.Column, w.Message)
			}
		}
	}
	if len(got) != 2 || !strings.Contains(got[0], "evil.example.net") || !strings.Contains(got[1], `"NOPE"`) {
		t.Fatalf("warnings %q", got)
	}

	// Nothing allowed: every prefix is useless.
	rep = Analyze("tools/f.ts", []byte(src), Config{Secrets: []string{"API", "NOPE"}, Configured: true})
	if n := countRule(rep.Warnings, RulePermissions); n != 3 {
		t.Fatalf("%d permission warnings with no allowed URL: %+v", n, rep.Warnings)
	}
	// No configuration given (a host analysing alone): no such warning.
	rep = Analyze("tools/f.ts", []byte(src), Config{})
	if n := countRule(rep.Warnings, RulePermissions); n != 0 {
		t.Fatalf("%d permission warnings without a configuration: %+v", n, rep.Warnings)
	}
}

func countRule(fs []Finding, rule string) int {
	n := 0
	for _, f := range fs {
		if f.Rule == rule {
			n++
		}
	}
	return n
}
