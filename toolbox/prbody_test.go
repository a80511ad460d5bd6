package toolbox

import (
	"strings"
	"testing"
)

func TestPRBodyListsToolsAndChecks(t *testing.T) {
	body := PRBody("Session summary", []ToolChange{{Path: "tools/a.ts", Description: "Adds.", Valid: true}, {Path: "tools/b.ts", Description: "Bad.", Errors: []string{"no-any at 2:3"}}})
	for _, want := range []string{"`tools/a.ts` — Adds.", "✅ check_tool passed", "❌ check_tool failed", "error: no-any at 2:3"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}
