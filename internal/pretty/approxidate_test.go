package pretty

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// approxidate: ParseDate reads every date git rev-parse --since reads the
// same way (git prints the timestamp it took as --max-age).
func TestParseDateAsGit(t *testing.T) {
	gittest.RequireGit(t)
	home, repo := t.TempDir(), t.TempDir()
	// rev-parse wants a repository, whatever the directory the test runs in.
	gittest.Git(t, repo, "init", "-q")
	for _, d := range []string{"@0", "@1700050000", "1700050000", "Nov 15 2023", "15 Nov 2023", "11/15/2023", "last friday",
		"2023-11-15", "2023-11-14 23:00:00", "2.weeks.ago", "yesterday", "now", "2023.11.16", "10:00", "noon yesterday",
		"2023-11-15T10:00:00Z", "12345", "1 month 2 days ago", "3 years ago", "15.11.2023", "11/15", "Dec 02", "midnight",
		"5pm", "tea", "last monday", "two weeks ago", "2023-11-15 10:00 +0200", "Wed, 15 Nov 2023 10:00:00 +0200"} {
		before := time.Now()
		cmd := exec.Command("git", "rev-parse", "--since="+d)
		cmd.Dir, cmd.Env = repo, gittest.Env(home)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("rev-parse --since=%s: %v", d, err)
		}
		want, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(string(out)), "--max-age="), 10, 64)
		if err != nil {
			t.Fatalf("rev-parse --since=%s printed %q", d, out)
		}
		got, _ := ParseDate(d, before)
		// git read its own clock a moment later: a relative date may be
		// a second or two ahead of ours, never more.
		if diff := want - got.Unix(); diff < 0 || diff > 2 {
			t.Errorf("%q: tool %d, git %d", d, got.Unix(), want)
		}
	}
}
