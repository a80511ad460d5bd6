package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestPRSessionSharedAcrossProcesses (issue #19): one-shot kernels on one
// root (`tgp call` processes) resuming the recorded session add their
// commits to one branch and one pull request; once the PR is closed the
// next change starts a new session; EndSession does so on demand; kernels
// given the same session name share a branch from different roots.
func TestPRSessionSharedAcrossProcesses(t *testing.T) {
	e := newPREnv(t)
	root := t.TempDir()
	oneShot := func(opts ...Option) *Kernel {
		t.Helper()
		k := e.kernelAt(t, root, append([]Option{WithResumeSession()}, opts...)...)
		return k
	}
	k1 := oneShot()
	p1 := writeTool(t, k1, "tools/a.ts", "/** A. */\nexport default () => 1;\n")
	_ = k1.Shutdown(context.Background())
	k2 := oneShot()
	p2 := writeTool(t, k2, "tools/b.ts", "/** B. */\nexport default () => 2;\n")
	_ = k2.Shutdown(context.Background())
	if p1.Branch == "" || p2.Branch != p1.Branch || p2.PRURL != p1.PRURL || len(e.gh.PRs()) != 1 {
		t.Fatalf("two calls: %+v %+v, %d PRs", p1, p2, len(e.gh.PRs()))
	}
	if n := gittest.Git(t, e.remoteDir, "rev-list", "--count", "main.."+p1.Branch); strings.TrimSpace(n) != "2" {
		t.Fatalf("branch has %s commits, want 2", n)
	}

	e.gh.ClosePR(e.gh.PRs()[0].Number)
	k3 := oneShot()
	p3 := writeTool(t, k3, "tools/c.ts", "/** C. */\nexport default () => 3;\n")
	_ = k3.Shutdown(context.Background())
	if p3.Branch == p1.Branch || len(e.gh.PRs()) != 2 {
		t.Fatalf("after the PR closed: %+v, %d PRs", p3, len(e.gh.PRs()))
	}
	k4 := oneShot()
	if ended := k4.EndSession(); ended != p3.Branch {
		t.Fatalf("EndSession ended %q, want %q", ended, p3.Branch)
	}
	p4 := writeTool(t, k4, "tools/d.ts", "/** D. */\nexport default () => 4;\n")
	_ = k4.Shutdown(context.Background())
	if p4.Branch == p3.Branch {
		t.Fatal("EndSession did not start a new session")
	}

	a := e.kernelAt(t, t.TempDir(), WithSession("Alpha Team"))
	b := e.kernelAt(t, t.TempDir(), WithSession("Alpha Team"))
	pa := writeTool(t, a, "tools/x.ts", "/** X. */\nexport default () => 5;\n")
	pb := writeTool(t, b, "tools/y.ts", "/** Y. */\nexport default () => 6;\n")
	if pa.Branch != "tgp/session-alpha-team" || pb.Branch != pa.Branch || pb.PRURL != pa.PRURL {
		t.Fatalf("named session: %+v %+v", pa, pb)
	}
}

// TestPRModeChecksTheTokenBeforePushing: with provider github and no
// token, the write fails naming the variable, and nothing reached the
// remote.
func TestPRModeChecksTheTokenBeforePushing(t *testing.T) {
	e := newPREnv(t)
	// The git remote is reached without a token (a local path); the
	// GitHub API needs one.
	k := e.kernelAt(t, t.TempDir(), WithEnviron([]string{}), WithSetting("git.remote", e.remoteDir))
	raw, _ := json.Marshal(map[string]string{"path": "tools/a.ts", "content": "/** A. */\nexport default () => 1;\n"})
	_, err := k.Call(context.Background(), "write_file", raw)
	var te *tools.Error
	if !errors.As(err, &te) || !strings.Contains(te.Message, "GH_TOKEN") || !strings.Contains(te.Message, "nothing was pushed") {
		t.Fatalf("want an error naming GH_TOKEN, got %v", err)
	}
	if refs := gittest.Git(t, e.remoteDir, "for-each-ref", "refs/heads/tgp"); refs != "" {
		t.Fatalf("a branch was pushed without a token:\n%s", refs)
	}
}
