package analysis

import (
	"strings"
	"testing"
)

// TestReportShowsPermissions: check_tool reports what exec_tool will
// enforce, and refuses an export exec_tool could not read.
func TestReportShowsPermissions(t *testing.T) {
	src := "/** Reports. */\nexport const permissions = { fetch: [\"https://api.example.com/v1/\"], secrets: [\"API\"], sql: \"read\", write: [\"data/reports/\"] };\n" +
		"export default () => 1;\n"
	rep := Analyze("tools/r.ts", []byte(src), Config{})
	if !rep.Valid || rep.Permissions == nil || rep.Permissions.SQL != "read" || rep.Permissions.Fetch[0] != "https://api.example.com/v1/" ||
		rep.Permissions.Secrets[0] != "API" || rep.Permissions.Write[0] != "data/reports/" {
		t.Fatalf("%+v %+v", rep, rep.Permissions)
	}

	bad := "/** Reports. */\nconst base = 'https://api.example.com/';\nexport const permissions = { fetch: [base] };\nexport default () => 1;\n"
	rep = Analyze("tools/r.ts", []byte(bad), Config{})
	if rep.Valid || !has(rep, RulePermissions, 3) {
		t.Fatalf("a computed permissions export must be an error at its line: %+v", rep)
	}

	none := "/** Reports. */\nexport default () => 1;\n"
	if rep := Analyze("tools/r.ts", []byte(none), Config{}); rep.Permissions != nil || has(rep, RulePermissions, 0) {
		t.Fatalf("%+v", rep)
	}
	rep = Analyze("tools/r.ts", []byte(none), Config{RequirePermissions: true})
	if !rep.Valid || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0].Message, "require_permissions") {
		t.Fatalf("require_permissions: want one warning, got %+v", rep)
	}
}
