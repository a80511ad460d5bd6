package gittools

import (
	"strings"
	"testing"

	"github.com/tgp-go/tgp/tools"
)

// TestKnownMCPGitServerCommitCases: the MCP git servers' git_commit
// (modelcontextprotocol/servers' mcp-server-git) takes {repo_path,
// message}, commits the message as it is, commits an empty index too
// (GitPython's index.commit) and answers "Changes committed successfully
// with hash <sha>". The Git Tools SRD this tool follows does not allow
// those cases: type and message are required and additionalProperties is
// false (FR-GIT-COMMIT-01/02), the message is `type(scope): message`
// (FR-GIT-COMMIT-04), an empty staging area is "nothing to commit"
// (FR-GIT-COMMIT-05) and the result is git's own summary. This test keeps
// the specification's answers to the MCP server's cases.
func TestKnownMCPGitServerCommitCases(t *testing.T) {
	f := history(t)
	// The MCP server's arguments: no type, an unknown repo_path.
	if e := f.callErr(t, "git_commit", map[string]any{"repo_path": f.dir, "message": "stage a file"}); e.Kind != tools.KindBadArgs {
		t.Fatalf("MCP server's arguments: %+v", e)
	}
	if e := f.callErr(t, "git_commit", map[string]any{"message": "Update README"}); e.Kind != tools.KindBadArgs || e.Field != "type" {
		t.Fatalf("a message without a type: %+v", e)
	}
	out := f.call(t, "git_commit", map[string]any{"type": "docs", "message": "Update README"})
	if strings.Contains(out, "committed successfully") || !strings.HasPrefix(out, "[main ") || !strings.Contains(out, "] docs: Update README\n") {
		t.Fatalf("the result is not git's summary: %q", out)
	}
	// mcp-server-git commits an empty index; the specification refuses.
	if e := f.callErr(t, "git_commit", map[string]any{"type": "chore", "message": "empty"}); e.Message != "nothing to commit" {
		t.Fatalf("an empty commit: %+v", e)
	}
	// history's three commits and docs: Update README.
	if n := f.git(t, "rev-list", "--count", "HEAD"); n != "4\n" {
		t.Fatalf("commits: %q", n)
	}
}
