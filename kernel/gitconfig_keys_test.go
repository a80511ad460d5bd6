package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/gittools"
)

// TestGitToolConfigKeysApply: tools.git.max_bytes and tools.git.timeout_ms
// are the defaults of the git tools' max_bytes and timeout_ms (they were
// shadowed by the schemas' own defaults); an argument still overrides them.
func TestGitToolConfigKeysApply(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	// 300 commits of f.txt, made by one git fast-import (an add and a
	// commit each were 600 git processes), then checked out.
	var stream strings.Builder
	for i := 0; i < 300; i++ {
		body, msg := fmt.Sprintln(i), fmt.Sprint("commit ", i)
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter U <u@x> %d +0000\ndata %d\n%s\nM 100644 inline f.txt\ndata %d\n%s\n",
			1700000000+i, len(msg), msg, len(body), body)
	}
	imp := exec.Command("git", "fast-import", "--quiet")
	imp.Dir, imp.Stdin = dir, strings.NewReader(stream.String())
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	gittest.Git(t, dir, "reset", "-q", "--hard")
	if n := strings.TrimSpace(gittest.Git(t, dir, "rev-list", "--count", "HEAD")); n != "300" {
		t.Fatalf("%s commits, want 300", n)
	}
	boot := func(settings map[string]any) *Kernel {
		opts := []Option{WithEnviron([]string{}), WithRoot(dir)}
		for k, v := range settings {
			opts = append(opts, WithSetting(k, v))
		}
		k, err := New(context.Background(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Boot(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
		return k
	}
	logText := func(k *Kernel, args map[string]any) (string, error) {
		raw, _ := json.Marshal(args)
		res, err := k.Call(context.Background(), "git_log", raw)
		if err != nil {
			return "", err
		}
		return res.Value.(string), nil
	}

	full, err := logText(boot(nil), map[string]any{"max_count": 300})
	if err != nil {
		t.Fatal(err)
	}
	small := boot(map[string]any{"tools.git.max_bytes": 50})
	cut, err := logText(small, map[string]any{"max_count": 300})
	if err != nil {
		t.Fatal(err)
	}
	if len(full) <= 200 || len(cut) > 200 || !strings.HasPrefix(full, cut[:20]) {
		t.Fatalf("tools.git.max_bytes: 50 did not cut: %d bytes (uncut %d)", len(cut), len(full))
	}
	if over, err := logText(small, map[string]any{"max_count": 300, "max_bytes": 5000000}); err != nil || over != full {
		t.Fatalf("the max_bytes argument must override the configured default (%d bytes, %v)", len(over), err)
	}

	// One millisecond is less than walking 300 commits with a path takes
	// on any machine: the call ends in a timeout (an error, or the tools'
	// partial output with its marker).
	out, err := logText(boot(map[string]any{"tools.git.timeout_ms": 1}), map[string]any{"max_count": 300, "path": "f.txt"})
	var te *tools.Error
	timedOut := (errors.As(err, &te) && te.Kind == tools.KindTimeout && strings.Contains(te.Message, "after 1ms")) ||
		(err == nil && strings.HasSuffix(out, gittools.TimeoutMarker))
	if !timedOut {
		t.Fatalf("tools.git.timeout_ms: 1: want a timeout, got %d bytes, %v", len(out), err)
	}
}
