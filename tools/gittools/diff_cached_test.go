package gittools

import (
	"strings"
	"testing"

	"github.com/tgp-go/tgp/tools"
)

// TestRegressDiffCachedRefusesRevisions: the tool's specification makes
// cached and from_ref/to_ref exclusive (bad_args), where git diff
// --cached <commit> would compare the index with the commit; nothing in
// the repository changes.
func TestRegressDiffCachedRefusesRevisions(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "one\n")
	f.commitAll(t, "first")
	f.write(t, "a.txt", "two\n")
	f.git(t, "add", "-A")
	f = open(t, f.dir)
	before := f.git(t, "status", "--porcelain=v2")
	for _, args := range []map[string]any{
		{"cached": true, "from_ref": "HEAD"},
		{"cached": true, "to_ref": "HEAD"},
		{"cached": true, "from_ref": "HEAD~1..HEAD"},
		{"cached": true, "from_ref": "HEAD", "to_ref": "HEAD"},
	} {
		if e := f.callErr(t, "git_diff", args); e.Kind != tools.KindBadArgs || !strings.Contains(e.Message, "cached cannot be used with from_ref/to_ref") {
			t.Fatalf("git_diff %v: %+v, want bad_args", args, e)
		}
	}
	if after := f.git(t, "status", "--porcelain=v2"); after != before {
		t.Fatalf("status changed:\n%s\nwas\n%s", after, before)
	}
}
