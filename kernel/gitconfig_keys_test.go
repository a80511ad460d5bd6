package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	for i := 0; i < 300; i++ {
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(fmt.Sprintln(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, dir, "add", "f.txt")
		gittest.Git(t, dir, "-c", "user.name=U", "-c", "user.email=u@x", "commit", "-q", "-m", fmt.Sprint("commit ", i))
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
