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
